// Recorded sessions for `strata replay --transcript` (issue 18): JSONL files with one
// Anthropic Messages body per line and its send time `t`, as a logging proxy in front
// of a coding agent writes them. Generated deterministically, so anyone can rebuild the
// same files: the same inputs give the same bytes.
//
// - agentTranscript: the agent replay of a git history, its `transcript` strategy's
//   bodies (what an append-only agent sends: one trailing breakpoint), tasks some
//   seconds apart, or with idle gaps past the cache lifetime (`gapSeconds`).
// - supersededSession: an agent that reads a file, runs the tests (a long log), edits,
//   runs them again and reads the file again, task after task on the same few files,
//   so superseded reads and old logs pile up in its conversation.
// - parallelReadsSession: an agent that reads twelve files in one step, more blocks than
//   a breakpoint looks back (where a single trailing breakpoint misses).
//
// `lib` is `@strata/replay`'s API (the built one from bench/replay/run.mjs, the
// sources from the tests): `{ runAgentReplay, AGENT_TOOLS }`.
import { readFileSync } from "node:fs"
import { join } from "node:path"

const MODEL = "claude-sonnet-4-5"
// Twelve source files of the demo repository, read at once by `parallelReadsSession`.
const PARALLEL_FILES = [
  "analytics/loader.py", "analytics/metrics.py", "analytics/report.py", "src/api/routes.ts", "src/api/validate.ts", "src/config.ts",
  "src/models/carrier.ts", "src/models/shipment.ts", "src/services/pricing.ts", "src/services/tracking.ts", "src/store/shipmentStore.ts", "worker/queue/queue.go"
]

/**
 * The `transcript` strategy's request bodies of an agent replay, one line each, with `t`.
 * @param {{ runAgentReplay: Function }} lib
 * @param {{ repo: string, tasks?: number, gapSeconds?: number, stepSeconds?: number, from?: string }} options
 */
export const agentTranscript = async (lib, options) => {
  const lines = []
  await lib.runAgentReplay({
    repo: options.repo,
    from: options.from,
    tasks: options.tasks,
    gapSeconds: options.gapSeconds,
    stepSeconds: options.stepSeconds,
    provider: "anthropic",
    model: MODEL,
    strategies: ["transcript"],
    onRequest: (line) => {
      const { t, strategy, request } = JSON.parse(line)
      if (strategy === "transcript") lines.push(JSON.stringify({ t, ...request }))
    }
  })
  return lines.join("\n") + "\n"
}

const SYSTEM = [
  "You are a careful coding agent working in a git repository.",
  "Read a file before you change it, keep edits small and focused, run the tests after every change, and report what you changed.",
  "Prefer the repository's own conventions over your habits. Never touch files outside the repository."
].join("\n\n")

/** A deterministic test-runner log of `count` lines; the last run of a task passes, the first fails with a trace. */
const testLog = (task, run, count, suite) => {
  const lines = [` RUN  v4.0.0 /repo (task ${task}, run ${run})`, ""]
  for (let i = 0; i < count; i++) lines.push(` \u2713 ${suite} > case ${i + 1} of task ${task} ${((i * 7919 + task * 31 + run) % 97) + 1}ms`)
  if (run === 1) {
    lines.push("", ` \u2717 ${suite} > handles the edge case of task ${task}`, "   AssertionError: expected 2 to equal 3", ...Array.from({ length: 12 }, (_, k) => `     at frame${k} (${suite}:${10 + k}:${3 + k})`))
    lines.push("", ` Test Files  1 failed (1)`, `      Tests  1 failed | ${count} passed (${count + 1})`)
  } else {
    lines.push("", ` Test Files  1 passed (1)`, `      Tests  ${count + 1} passed (${count + 1})`)
  }
  return lines.join("\n")
}

/**
 * An agent whose conversation piles up superseded tool output: `tasks` tasks over the
 * same few files of `repo` (its working tree), each reading a file, running the tests
 * (a failing log), editing, running them again and reading the file again. Steps
 * `stepSeconds` apart, tasks `gapSeconds` apart; one trailing breakpoint per request.
 * @param {{ AGENT_TOOLS: ReadonlyArray<{ name: string, description?: string, inputSchema: object }> }} lib
 * @param {{ repo: string, files: ReadonlyArray<string>, tasks?: number, logLines?: number, stepSeconds?: number, gapSeconds?: number }} options
 */
export const supersededSession = (lib, options) => {
  const tasks = options.tasks ?? 12
  const logLines = options.logLines ?? 240
  const gap = options.gapSeconds ?? 30
  const r = recorder(lib, options, options.stepSeconds ?? 6)
  for (let task = 0; task < tasks; task++) {
    const path = options.files[task % options.files.length]
    const suite = `tests/${path.split("/").at(-1).replace(/\.[^.]+$/, "")}.test.ts`
    if (task > 0) r.wait(gap)
    r.ask(`Task ${task + 1}: tighten the error handling in ${path} and make its tests pass.`)
    r.round([["read_file", { path }, r.contents.get(path)]])
    r.round([["run_tests", { path: suite }, testLog(task + 1, 1, logLines, suite)]])
    const next = `${r.contents.get(path)}\n// task ${task + 1}: errors are reported with the input that caused them\n`
    r.round([["edit_file", { path, patch: `@@ -1,0 +1,1 @@\n+// task ${task + 1}: errors are reported with the input that caused them` }, `Applied 1 hunk to ${path}: +1 -0 lines.`]])
    r.contents.set(path, next)
    r.round([["run_tests", { path: suite }, testLog(task + 1, 2, logLines, suite)]])
    r.round([["read_file", { path }, next]])
    r.answer(`Task ${task + 1} is done: ${path} reports errors with their input, and its tests pass.`)
  }
  return r.text()
}

/**
 * An agent that reads many files at once: each task reads `files` in parallel in one
 * step (a `tool_use` and a `tool_result` block per file, more than the 20 blocks
 * Anthropic's breakpoint looks back), then edits one, runs the tests and answers. With
 * one trailing breakpoint, the request after the parallel reads finds no cache entry
 * within its lookback window.
 * @param {{ AGENT_TOOLS: ReadonlyArray<{ name: string, description?: string, inputSchema: object }> }} lib
 * @param {{ repo: string, files: ReadonlyArray<string>, tasks?: number, stepSeconds?: number, gapSeconds?: number }} options
 */
export const parallelReadsSession = (lib, options) => {
  const tasks = options.tasks ?? 8
  const gap = options.gapSeconds ?? 30
  const r = recorder(lib, options, options.stepSeconds ?? 6)
  for (let task = 0; task < tasks; task++) {
    const path = options.files[task % options.files.length]
    if (task > 0) r.wait(gap)
    r.ask(`Task ${task + 1}: find where ${path} is used and make it validate its input.`)
    r.round(options.files.map((f) => ["read_file", { path: f }, r.contents.get(f)]))
    r.round([["edit_file", { path, patch: `@@ -1,0 +1,1 @@\n+// task ${task + 1}: input validated` }, `Applied 1 hunk to ${path}: +1 -0 lines.`]])
    r.contents.set(path, `${r.contents.get(path)}\n// task ${task + 1}: input validated\n`)
    r.round([["run_tests", {}, testLog(task + 1, 2, 40, "tests/all.test.ts")]])
    r.answer(`Task ${task + 1} is done: ${path} validates its input.`)
  }
  return r.text()
}

/**
 * Records an Anthropic agent transcript as a logging proxy would: one body per request
 * (the conversation so far, a breakpoint on its last block), `t` seconds from the start.
 * `round` is one step: the assistant's tool calls (`[name, input, result]` each) and the
 * user turn with their results, `step` seconds after the previous request.
 */
/** The messages with the agent's cache marker on the last block, as Claude Code sends them. */
export const markLast = (messages) => {
  const last = messages.at(-1)
  const content = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content
  return [...messages.slice(0, -1), { role: last.role, content: [...content.slice(0, -1), { ...content.at(-1), cache_control: { type: "ephemeral" } }] }]
}

const recorder = (lib, options, step) => {
  const tools = lib.AGENT_TOOLS.map((t) => ({ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), input_schema: t.inputSchema }))
  const contents = new Map(options.files.map((path) => [path, readFileSync(join(options.repo, path), "utf8")]))
  const messages = []
  const lines = []
  let t = 0
  let id = 0
  const send = () => lines.push(JSON.stringify({ t, model: MODEL, max_tokens: 4096, system: [{ type: "text", text: SYSTEM }], tools, messages: markLast(messages) }))
  return {
    contents,
    wait: (seconds) => {
      t += seconds
    },
    ask: (text) => {
      messages.push({ role: "user", content: text })
      send()
    },
    round: (calls) => {
      const uses = calls.map(([name, input]) => ({ type: "tool_use", id: `toolu_${String(++id).padStart(4, "0")}`, name, input }))
      messages.push({ role: "assistant", content: uses })
      messages.push({ role: "user", content: uses.map((u, k) => ({ type: "tool_result", tool_use_id: u.id, content: calls[k][2] })) })
      t += step
      send()
    },
    answer: (text) => {
      messages.push({ role: "assistant", content: [{ type: "text", text }] })
    },
    text: () => lines.join("\n") + "\n"
  }
}

/**
 * The recorded sessions the replay benchmark reports, from the demo repository: an
 * agent's tasks seconds apart, the same with idle gaps past the cache lifetime, and one
 * where superseded tool output piles up.
 * @param {{ runAgentReplay: Function, AGENT_TOOLS: ReadonlyArray<object> }} lib
 * @param {{ demo: string, tasks?: number }} options
 */
export const recordedSessions = async (lib, options) => {
  const tasks = options.tasks ?? 24
  const files = ["src/services/pricing.ts", "src/services/tracking.ts", "src/api/routes.ts", "src/store/shipmentStore.ts"]
  return [
    { name: "agent, tasks 90 s apart", text: await agentTranscript(lib, { repo: options.demo, tasks, gapSeconds: 90 }) },
    { name: "agent, idle gaps of 10 min", text: await agentTranscript(lib, { repo: options.demo, tasks, gapSeconds: 600 }) },
    { name: "superseded tool output", text: supersededSession(lib, { repo: options.demo, files, tasks: Math.max(4, Math.round(tasks / 2)) }) },
    { name: "parallel reads (past the lookback window)", text: parallelReadsSession(lib, { repo: options.demo, files: PARALLEL_FILES, tasks: Math.max(4, Math.round(tasks / 3)) }) }
  ]
}
