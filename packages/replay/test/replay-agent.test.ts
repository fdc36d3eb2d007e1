// `strata replay --session agent` and `--transcript`: the agent replay of a git history
// (deterministic tasks of tool steps, native bodies the real APIs accept, dumps that
// re-score to the same table), the agent baselines, and recorded sessions (decoding,
// malformed lines named and skipped).
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toolCalls, type Message } from "@strata/core/effect"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { agentTranscript, supersededSession } from "../../../bench/replay/sessions.mjs"
import { validateAnthropic, validateChat, validateConverse, validateGemini } from "../../providers/test/wire-validators.ts"
import { runAgentReplay, runRecordedReplay, startAtPrompt, transcriptWindow } from "../src/agentReplay.ts"
import { agentSession, type AgentTask } from "../src/internal/agentSession.ts"
import { CLEARED_PLACEHOLDER, clearOldToolResults } from "../src/internal/agentStrategies.ts"
import { AGENT_TOOLS, readPathOf } from "../src/agentTools.ts"
import { parseRecordedSession } from "../src/recorded.ts"
import { replay } from "../src/run.ts"
import type { ReplayReport } from "../src/replay.ts"
import { formatReport, formatTable, plotSvg } from "../src/report.ts"
import { parseDump, rescoreDump } from "../src/score.ts"
import { AGENT_STRATEGIES, type ReplayProvider } from "../src/strategies.ts"
import { tempDir } from "@strata/test-support"
import { bodyTurns, fidelityProblems, type RealTurns } from "@strata/test-support/fidelity"
import { syntheticTurnsOf } from "../src/synthetic.ts"

const demo = tempDir("strata-agent-demo-")
const scratch = tempDir("strata-agent-out-")
afterAll(() => [demo, scratch].forEach((d) => d.cleanup()))
beforeAll(() => {
  makeDemoRepo({ out: demo.path, replace: true })
})

const MODEL = "claude-sonnet-4-5"
const VALIDATORS: Readonly<Record<ReplayProvider, (body: unknown) => Array<string>>> = {
  anthropic: validateAnthropic,
  bedrock: validateConverse,
  openai: validateChat,
  gemini: validateGemini
}
const count = (t: string) => Math.ceil(t.length / 4)

/**
 * The rules of issue 25 on every dumped body of an agent replay of `tasks` tasks: the
 * session's real turns are its task prompts and the model's replies (calls, "Done: ..."
 * answers); a request after a task's first carries the previous step's tool results.
 * Returns the problems by strategy and request, and each body's synthetic turns.
 */
const fidelityOfDump = async (lines: ReadonlyArray<string>, report: ReplayReport) => {
  const session: Array<AgentTask> = []
  for await (const task of agentSession(demo.path, { from: report.start, tasks: report.turns })) session.push(task)
  const prompts = session.map((t) => t.prompt)
  const real: RealTurns = {
    user: (t) => t.parts.some((p) => prompts.some((prompt) => p.text.startsWith(prompt))),
    assistant: (t) => t.parts.some((p) => p.text.startsWith("Done: "))
  }
  // Request i of the session follows tool results unless it starts a task.
  const afterTools = session.flatMap((t) => t.steps.map((_, k) => k > 0))
  const seen = new Map<string, number>()
  const problems: Array<string> = []
  const synthetic: Array<{ readonly strategy: string; readonly before: number; readonly counted: number }> = []
  for (const { strategy, request } of parseDump(lines.join("\n"))) {
    const i = seen.get(strategy) ?? 0
    seen.set(strategy, i + 1)
    for (const p of fidelityProblems(request, afterTools[i]!, real)) problems.push(`${strategy} request ${i}: ${p}`)
    const turns = bodyTurns(request)
    const firstReal = turns.findIndex((t) => t.role === "user" && real.user(t))
    const before = turns.slice(0, firstReal).filter((t) => t.role === "assistant" && !real.assistant(t) && !t.parts.some((p) => p.kind === "call")).length
    synthetic.push({ strategy, before, counted: syntheticTurnsOf(request, count).messages })
  }
  return { problems, synthetic, requests: afterTools.length, seen, session }
}

describe("the agent session of a git history", () => {
  it("turns each commit into a task: look around, read the touched files, edit with the diff, run the tests, answer", async () => {
    const tasks = []
    for await (const task of agentSession(demo.path, { tasks: 6 })) tasks.push(task)
    expect(tasks).toHaveLength(6)
    for (const task of tasks) {
      const names = task.steps.slice(0, -1).map((s) => toolCalls(s.reply).map((c) => c.toolName))
      expect(["search", "list_files"]).toContain(names[0]![0])
      const reads = names.flat().filter((n) => n === "read_file").length
      expect(reads).toBe(task.turn.selected.length)
      expect(names.at(-1)).toEqual(["run_tests"])
      // Every call is answered by the step's tool message; the last step is the final answer.
      for (const step of task.steps.slice(0, -1)) expect(step.results?.content.map((r) => r.toolCallId)).toEqual(toolCalls(step.reply).map((c) => c.toolCallId))
      expect(task.steps.at(-1)!.results).toBeUndefined()
      expect(typeof task.steps.at(-1)!.reply.content).toBe("string")
      // Reads return the file as it was before the commit; edits carry the commit's hunks.
      for (const step of task.steps) {
        for (const call of toolCalls(step.reply)) {
          if (call.toolName === "read_file") {
            const file = task.turn.selected.find((f) => f.path === call.input["path"])!
            expect(step.results!.content[0]!.output).toEqual({ type: "text", value: file.content === "" ? "(empty)" : file.content })
          }
          if (call.toolName === "edit_file") expect(String(call.input["patch"])).toMatch(/^@@ /)
        }
      }
    }
    expect(tasks.some((t) => t.steps.some((s) => toolCalls(s.reply).some((c) => c.toolName === "edit_file")))).toBe(true)
  })

  it("compacted history starts at a task's prompt, never inside a tool exchange", () => {
    const call: Message = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "run_tests", input: {} }] }
    const result: Message = { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "run_tests", output: { type: "text", value: "ok" } }] }
    const summary: ReadonlyArray<Message> = [{ role: "user", content: "[History Summary]\nEarlier." }, { role: "assistant", content: "Ok, I understand the context from the previous conversation." }]
    const prompt: Message = { role: "user", content: "Next task" }
    expect(startAtPrompt([...summary, result, { role: "assistant", content: "Done." }, prompt, call, result])).toEqual([...summary, prompt, call, result])
    expect(startAtPrompt([result, prompt])).toEqual([prompt])
    expect(startAtPrompt([prompt, call, result])).toEqual([prompt, call, result])
  })
})

describe("agent replay of the example repository's first 5 commits", () => {
  let first: ReplayReport
  const lines: Array<string> = []
  const replay = (onRequest?: (line: string) => void) =>
    runAgentReplay({ repo: demo.path, tasks: 5, provider: "anthropic", model: MODEL, ...(onRequest === undefined ? {} : { onRequest }) })
  beforeAll(async () => {
    first = await replay((line) => void lines.push(line))
  }, 120_000)

  it("is deterministic: the same table twice", async () => {
    const second = await replay()
    expect(formatTable(second.rows)).toBe(formatTable(first.rows))
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    expect(first).toMatchObject({ session: "agent", turns: 5, stepSeconds: 6, gapSeconds: 90 })
    expect(first.requests).toBeGreaterThan(5 * 3)
    // The seed layout may stop (the engine keeps a tool exchange together in the journal layout only, for now); the rest all run.
    const expected = AGENT_STRATEGIES.filter((s) => !(first.failures ?? []).some((f) => f.strategy === s))
    expect(first.rows.map((r) => r.strategy)).toEqual(expected)
    expect(expected.filter((s) => s !== "strata-seed")).toEqual(AGENT_STRATEGIES.filter((s) => s !== "strata-seed"))
    for (const row of first.rows) expect(row.requests).toBe(first.requests)
  })

  it("every dumped body passes the scripted server's validation, with the tools and tool blocks", () => {
    const dump = parseDump(lines.join("\n"))
    expect(dump.length).toBeGreaterThan(0)
    for (const { strategy, request } of dump) {
      expect(VALIDATORS.anthropic(request), strategy).toEqual([])
      expect(JSON.stringify(request)).toContain('"name":"read_file"')
    }
    const last = dump.filter((l) => l.strategy === "strata-flux").at(-1)!.request
    expect(JSON.stringify(last)).toMatch(/"type":"tool_use"/)
    expect(JSON.stringify(last)).toMatch(/"type":"tool_result"/)
  })

  it("re-scoring the dump with the simulators reproduces the table", async () => {
    expect(await rescoredRows(lines, first)).toEqual(first.rows)
  })

  it("requests of a task are the step apart, tasks the gap apart; the baselines and the bound relate as they must", () => {
    const dump = parseDump(lines.join("\n")).filter((l) => l.strategy === "oracle")
    const times = dump.map((l) => l.t)
    const steps = times.slice(1).map((t, i) => t - times[i]!)
    expect(new Set(steps)).toEqual(new Set([6, 90]))
    expect(steps.filter((s) => s === 90)).toHaveLength(4)
    const row = (s: string) => first.rows.find((r) => r.strategy === s)!
    expect(row("none")).toMatchObject({ cacheRead: 0, cacheWrite: 0, vsNone: 1 })
    for (const r of first.rows) {
      expect(r.cacheRead + r.cacheWrite + r.uncached).toBe(r.inputTokens)
      expect(r.vsOracle!).toBeGreaterThanOrEqual(1)
    }
    // The middleware plans over the transcript's own prompts: never above the trailing breakpoint.
    expect(row("middleware").usd!).toBeLessThanOrEqual(row("transcript").usd! * (1 + 1e-9))
    // Below the clearing trigger transcript-clear is the transcript.
    expect(row("transcript-clear")).toMatchObject({ ...row("transcript"), strategy: "transcript-clear" })
    expect(first.perTurn).toHaveLength(5)
    const svg = plotSvg(first)
    expect(svg).toContain("Input cost of each task")
    expect(formatReport(first)).toMatch(/^5 agent tasks \(\d+ requests\) of /)
  })

  it("the transcript is append-only between compactions: each request extends the previous one", () => {
    const bodies = parseDump(lines.join("\n")).filter((l) => l.strategy === "transcript").map((l) => l.request as { messages: ReadonlyArray<{ content: ReadonlyArray<unknown> }> })
    for (let i = 1; i < bodies.length; i++) {
      const previous = bodies[i - 1]!.messages
      const next = bodies[i]!.messages
      // Everything before the previous request's last message is unchanged (the breakpoint moves on).
      expect(JSON.stringify(next.slice(0, previous.length - 1))).toBe(JSON.stringify(previous.slice(0, -1)))
    }
  })
})

describe("agent replay of the demo's last 6 commits (strata replay --session agent --turns 6), files in context", () => {
  let recent: ReplayReport
  let lines: ReadonlyArray<string> = []
  beforeAll(async () => {
    const dump = join(scratch.path, "recent.jsonl")
    recent = await replay({ repo: demo.path, session: "agent", turns: 6, provider: "anthropic", model: MODEL, dump })
    lines = readFileSync(dump, "utf8").trim().split("\n")
  }, 120_000)

  it("starts 6 commits before HEAD", () => {
    expect(recent.start).toBe(execFileSync("git", ["-C", demo.path, "rev-parse", "HEAD~6"], { encoding: "utf8" }).trim())
    expect(recent.turns).toBe(6)
  })

  it("The replay's agent mode with files in context passes the same validation on every dumped body", async () => {
    const { problems, synthetic, requests, seen, session } = await fidelityOfDump(lines, recent)
    expect(problems).toEqual([])
    // Every strategy that ran sent every request; the first, before any read, already carries the task's files.
    for (const row of recent.rows) expect(seen.get(row.strategy)).toBe(requests)
    const k = session.findIndex((t) => t.turn.selected.length > 0)
    expect(k).toBeGreaterThanOrEqual(0)
    const start = session.slice(0, k).reduce((n, t) => n + t.steps.length, 0)
    const dump = parseDump(lines.join("\n"))
    for (const row of recent.rows) {
      const body = JSON.stringify(dump.filter((l) => l.strategy === row.strategy)[start]!.request)
      for (const f of session[k]!.turn.selected) expect(body.includes(JSON.stringify(f.content).slice(1, -1)), `${row.strategy}: ${f.path}`).toBe(true)
    }
    // The synthetic turns counted are those before the first real user message, and the table adds them up.
    for (const s of synthetic) expect(s.counted, s.strategy).toBe(s.before)
    for (const row of recent.rows) {
      expect(row.syntheticMessages, row.strategy).toBe(synthetic.filter((s) => s.strategy === row.strategy).reduce((n, s) => n + s.counted, 0))
    }
    expect(recent.rows.find((r) => r.strategy === "transcript")!.syntheticMessages).toBe(requests)
    expect(formatTable(recent.rows).split("\n")[0]).toMatch(/superseded {2}synthetic$/)
  })

})

describe("agent replay on every provider", () => {
  for (const provider of ["bedrock", "openai", "gemini"] as const) {
    it(`${provider}: native bodies the API accepts, a table that re-scores to itself`, async () => {
      const lines: Array<string> = []
      const report = await runAgentReplay({ repo: demo.path, tasks: 3, provider, onRequest: (l) => void lines.push(l) })
      for (const { strategy, request } of parseDump(lines.join("\n"))) expect(VALIDATORS[provider](request), strategy).toEqual([])
      expect((await fidelityOfDump(lines, report)).problems).toEqual([])
      expect(report.rows.some((r) => r.strategy === "middleware")).toBe(provider === "bedrock")
      expect(await rescoredRows(lines, report)).toEqual(report.rows)
    }, 120_000)
  }
})

describe("the agent baselines", () => {
  const uses = (n: number): ReadonlyArray<Message> =>
    Array.from({ length: n }, (_, i): ReadonlyArray<Message> => [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "read_file", input: { path: `f${i % 2}.ts` } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "read_file", output: { type: "text", value: `content ${i} `.repeat(50) } }] }
    ]).flat()

  it("transcript-clear clears every tool result but the last 3 tool uses' (the calls stay)", () => {
    const messages = [{ role: "user" as const, content: "Task" }, ...uses(6)]
    const { messages: sent, clearedTokens } = clearOldToolResults(messages, 3, count)
    const outputs = sent.flatMap((m) => (m.role === "tool" ? m.content.map((r) => r.output) : []))
    expect(outputs.slice(0, 3)).toEqual(Array(3).fill({ type: "text", value: CLEARED_PLACEHOLDER }))
    expect(outputs.slice(3)).toEqual(messages.slice(1).flatMap((m) => (m.role === "tool" ? m.content.map((r) => r.output) : [])).slice(3))
    expect(sent.filter((m) => m.role === "assistant")).toEqual(messages.filter((m) => m.role === "assistant"))
    expect(clearedTokens).toBe(3 * (count("content 0 ".repeat(50)) - count(CLEARED_PLACEHOLDER)))
    expect(clearOldToolResults(sent, 3, count).clearedTokens).toBe(0)
  })

  it("past a low trigger, transcript-clear clears (and rewrites what follows); the transcript compacts at its window", async () => {
    const report = await runAgentReplay({ repo: demo.path, tasks: 4, provider: "anthropic", model: MODEL, strategies: ["transcript", "transcript-clear"], clearTriggerTokens: 4_000, transcriptWindowTokens: 12_000 })
    const row = (s: string) => report.rows.find((r) => r.strategy === s)!
    expect(row("transcript-clear").clearedTokens).toBeGreaterThan(0)
    expect(row("transcript-clear").inputTokens).toBeLessThan(row("transcript").inputTokens)
    expect(row("transcript").clearedTokens).toBe(0)
    expect(transcriptWindow("claude-sonnet-4-5")).toBe(200_000 - 20_000 - 13_000)
  }, 120_000)

  it("readPathOf knows the leading agents' read tools", () => {
    expect(readPathOf({ toolName: "Read", input: { file_path: "/repo/src/a.ts" } })).toBe("/repo/src/a.ts")
    expect(readPathOf({ toolName: "read_file", input: { path: "a.ts" } })).toBe("a.ts")
    expect(readPathOf({ toolName: "str_replace_based_edit_tool", input: { command: "view", path: "a.ts" } })).toBe("a.ts")
    expect(readPathOf({ toolName: "str_replace_based_edit_tool", input: { command: "str_replace", path: "a.ts" } })).toBeUndefined()
    expect(readPathOf({ toolName: "run_tests", input: { path: "a.ts" } })).toBeUndefined()
  })
})

describe("recorded sessions", () => {
  const anthropicLine = (t: number | undefined, messages: ReadonlyArray<unknown>) =>
    JSON.stringify({ ...(t === undefined ? {} : { t }), model: MODEL, max_tokens: 1024, system: [{ type: "text", text: "Be careful." }], tools: [{ name: "Read", description: "Read a file", input_schema: { type: "object", properties: { file_path: { type: "string" } } } }], messages })

  it("decodes Anthropic and OpenAI bodies into the same conversation, and finds the files read", () => {
    const anthropic = anthropicLine(12, [
      { role: "user", content: "Fix a.ts" },
      { role: "assistant", content: [{ type: "thinking", thinking: "Read it first.", signature: "sig" }, { type: "text", text: "Reading." }, { type: "tool_use", id: "t1", name: "Read", input: { file_path: "./src/a.ts" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "export const a = 1" }, { type: "text", text: "<reminder/>" }] }
    ])
    const openai = JSON.stringify({ request: { model: "gpt-4o", tools: [{ type: "function", function: { name: "Read", parameters: { type: "object" } } }], messages: [
      { role: "system", content: "Be careful." },
      { role: "user", content: "Fix a.ts" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "Read", arguments: '{"file_path":"src/a.ts"}' } }] },
      { role: "tool", tool_call_id: "t1", content: "export const a = 1" }
    ] } })
    const session = parseRecordedSession(`${anthropic}\n\n${openai}\n`)
    expect(session.problems).toEqual([])
    const [a, o] = session.requests
    expect(a).toMatchObject({ line: 1, t: 12, format: "anthropic", systemPrompt: "Be careful.", tools: [{ name: "Read", inputSchema: { type: "object" } }] })
    expect(a!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
    expect(a!.messages[1]!.content).toContainEqual({ type: "reasoning", text: "Read it first.", provider: "anthropic", signature: "sig" })
    expect(o).toMatchObject({ line: 3, t: undefined, format: "openai", systemPrompt: "Be careful." })
    expect(o!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(o!.messages[2]).toEqual(a!.messages[2])
    expect(session.files).toEqual([{ path: "src/a.ts", content: "export const a = 1" }])
  })

  it("names every malformed line and skips it; blocks it cannot carry are noted, not guessed", () => {
    const ok = anthropicLine(0, [{ role: "user", content: "hi" }])
    const text = [
      ok,
      "{ not json",
      JSON.stringify({ model: MODEL }),
      anthropicLine(5, [{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }]),
      anthropicLine(9, [{ role: "user", content: [{ type: "document", source: {} }, { type: "text", text: "hi" }] }]),
      anthropicLine(3, [{ role: "user", content: "too early" }]),
      JSON.stringify({ t: -1, request: { messages: [] } })
    ].join("\n")
    const session = parseRecordedSession(text)
    expect(session.requests.map((r) => r.line)).toEqual([1, 5])
    expect(session.problems.map((p) => [p.line, p.skipped])).toEqual([[2, true], [3, true], [4, true], [5, false], [6, true], [7, true]])
    expect(session.problems[0]!.reason).toMatch(/^not JSON/)
    expect(session.problems[1]!.reason).toMatch(/no "messages" array/)
    expect(session.problems[2]!.reason).toMatch(/tool result "nope" answers no tool call/)
    expect(session.problems[3]!.reason).toMatch(/"document" block: left out/)
    expect(session.problems[4]!.reason).toBe("t 3 is before the previous line's 9")
    expect(session.problems[5]!.reason).toMatch(/^t: /)
  })

  it("replays an agent's recorded transcript under every strategy, the malformed line named and the rest replayed", async () => {
    const recorded = await agentTranscript({ runAgentReplay }, { repo: demo.path, tasks: 3 })
    const lines = recorded.trim().split("\n")
    const broken = [...lines.slice(0, 2), "this line is not JSON", ...lines.slice(2)].join("\n")
    const file = join(scratch.path, "session.jsonl")
    writeFileSync(file, broken)
    const dumped: Array<string> = []
    const report = await runRecordedReplay({ transcript: { path: file }, provider: "anthropic", model: MODEL, onRequest: (l) => void dumped.push(l) })
    expect(report.problems).toEqual([{ line: 3, skipped: true, reason: expect.stringMatching(/^not JSON/) }])
    expect(report).toMatchObject({ session: "recorded", requests: lines.length, turns: 3 })
    expect(report.rows.map((r) => r.strategy)).toEqual(AGENT_STRATEGIES.filter((s) => !(report.failures ?? []).some((f) => f.strategy === s)))
    for (const r of report.rows) expect(r.vsOracle!).toBeGreaterThanOrEqual(1)
    expect(await rescoredRows(dumped, report)).toEqual(report.rows)
    expect(formatReport(report)).toContain("line 3: skipped: not JSON")
  }, 120_000)

  it("replays a session where superseded tool output piles up", async () => {
    const text = supersededSession({ AGENT_TOOLS }, { repo: demo.path, files: ["src/services/pricing.ts", "src/services/tracking.ts"], tasks: 3, logLines: 60 })
    const report = await runRecordedReplay({ transcript: { text, name: "superseded.jsonl" }, provider: "anthropic", model: MODEL })
    expect(report.problems).toEqual([])
    expect(report.turns).toBe(3)
    const row = (s: string) => report.rows.find((r) => r.strategy === s)!
    expect(row("transcript").supersededTokens).toBeGreaterThan(0)
    for (const r of report.rows) expect(r.vsOracle!).toBeGreaterThanOrEqual(1)
  }, 120_000)
})

/** The table a dump re-scores to, without the strategies that stopped (their lines reach only as far as they got). */
async function rescoredRows(lines: ReadonlyArray<string>, report: ReplayReport): Promise<ReplayReport["rows"]> {
  const stopped = new Set((report.failures ?? []).map((f) => f.strategy))
  const kept = parseDump(lines.join("\n")).filter((l) => !stopped.has(l.strategy)).map((l) => JSON.stringify(l))
  return (await rescoreDump(kept.join("\n"), { provider: report.provider, model: report.model })).rows
}
