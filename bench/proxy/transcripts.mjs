// bench/proxy/transcripts.mjs: bench/replay's recorded sessions (an agent's tasks seconds
// apart, the same with 10-minute idle gaps, superseded tool output, parallel reads past the
// lookback window), one of its own (big files read whole, edited, checked with short
// commands, no idle gap: where clearing pays while the prefix is cached) and the proxy's
// own Claude Code recording (bench/proxy/claude-code.jsonl, when present), as the agent
// sent them and as `strata proxy` would forward them.
//
// 1. `strata replay --transcript` with the `transcript`, `proxy` and `proxy-edit` strategies
//    (the replay lab's own scorer): proxy and proxy-edit relative to transcript.
// 2. The agent's own bodies through the proxy's transform (`priceTranscript`, the
//    provider's simulator), with edit mode's saving split into breakpoint placement (cache
//    mode, every lifetime 5m), clearing (edit mode, every lifetime 5m) and lifetimes (the
//    rest: the 1h lifetimes the session's credit paid for),
//    and where the cache-only saving lies: a perfect lifetime per request (1h exactly
//    where the next request comes 5-60 minutes later) and a prediction from the session's
//    rhythm (1h when the request looks like a task's last step: the agent's tool steps
//    come seconds apart, a final answer waits for a person).
//
//   npx --yes pnpm@10.34.9 turbo run build --concurrency=1 --filter=@strata/replay... && node bench/proxy/transcripts.mjs
//   TASKS=24 node bench/proxy/transcripts.mjs
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { priceTranscript } from "../../packages/proxy/dist/index.js"
import { AGENT_TOOLS, runAgentReplay, runRecordedReplay } from "../../packages/replay/dist/index.js"
import { makeDemoRepo } from "../../scripts/make-demo-repo.mjs"
import { markLast, recordedSessions } from "../replay/sessions.mjs"

const TASKS = Number(process.env.TASKS ?? 12)
const here = new URL(".", import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), "strata-bench-proxy-transcripts-"))

const linesOf = (text) =>
  text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)).map((j) => {
    if ("request" in j) return { t: j.t ?? 0, request: j.request }
    const { t, ...request } = j
    return { t: t ?? 0, request }
  })

/** Did the agent answer (no tool call) after request `i`? The next request starts with a person's prompt. */
const answeredAfter = (lines, i) => {
  const next = lines[i + 1]?.request
  const last = next?.messages?.at(-1)
  if (last === undefined || last.role !== "user") return false
  return typeof last.content === "string" || !last.content.some((b) => b.type === "tool_result")
}

/** Steps since the task's prompt, as seen in request `i` (tool rounds after the last person's prompt). */
const stepsIn = (request) => {
  const ms = request.messages ?? []
  let steps = 0
  for (let k = ms.length - 1; k >= 0; k--) {
    const m = ms[k]
    if (m.role === "user" && (typeof m.content === "string" || !m.content.some((b) => b.type === "tool_result"))) break
    if (m.role === "assistant") steps++
  }
  return steps
}

/**
 * The rhythm prediction: 1h for request `i` when, from what the session showed before it,
 * it looks like a task's last step (at least as many tool rounds as the shortest finished
 * task so far) and answers in this session were followed by a person's pause past 5
 * minutes at least half the time.
 */
const rhythm = (lines) => {
  const lengths = []
  let pauses = 0
  let answers = 0
  return (i) => {
    // What was known before request i: tasks finished and the pauses after their answers.
    if (i > 0 && answeredAfter(lines, i - 1)) {
      lengths.push(stepsIn(lines[i - 1].request))
      answers++
      const gap = lines[i].t - lines[i - 1].t
      if (gap > 300 && gap <= 3600) pauses++
    }
    if (lengths.length === 0 || pauses * 2 < answers) return "5m"
    return stepsIn(lines[i].request) >= Math.min(...lengths) ? "1h" : "5m"
  }
}

const perfect = (lines) => (i) => {
  const next = lines[i + 1]
  if (next === undefined) return "5m"
  const gap = next.t - lines[i].t
  return gap > 300 && gap <= 3600 ? "1h" : "5m"
}

/**
 * An agent that reads big files whole, edits them and checks with short commands, steps 6 s
 * and tasks 30 s apart (no idle gap), one trailing breakpoint per request as bench/replay's
 * recorder sends: each read is superseded by its edit and the steps after it are small,
 * so clearing it pays at once when the prefix before it is read from the cache. Files of
 * 500 generated lines (about 10,000 tokens each), four of them, edited in turn.
 */
const bigReadsSession = (tasks) => {
  const tools = AGENT_TOOLS.map((t) => ({ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), input_schema: t.inputSchema }))
  const system = [{ type: "text", text: "You are a careful coding agent working in a git repository. Read a file before you change it, keep edits small, run the tests after every change." }]
  const edits = [0, 0, 0, 0]
  const file = (f) =>
    Array.from({ length: 500 }, (_, i) => `export const handler${f}_${i} = (input: Input${i % 7}): Output => transform(input, ${(i * 7919 + f * 31) % 1000})`).join("\n") +
    Array.from({ length: edits[f] }, (_, e) => `\n// edit ${e + 1}: inputs are validated`).join("")
  const messages = []
  const lines = []
  let t = 0
  let id = 0
  const send = () => lines.push(JSON.stringify({ t, model: "claude-sonnet-4-5", max_tokens: 4096, system, tools, messages: markLast(messages) }))
  const round = (name, input, result) => {
    const use = { type: "tool_use", id: `toolu_${String(++id).padStart(4, "0")}`, name, input }
    messages.push({ role: "assistant", content: [use] })
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: result }] })
    t += 6
    send()
  }
  for (let task = 0; task < tasks; task++) {
    const f = task % 4
    const path = `src/handlers/module${f}.ts`
    if (task > 0) t += 30
    messages.push({ role: "user", content: `Task ${task + 1}: validate the inputs of ${path} and check its tests.` })
    send()
    round("read_file", { path }, file(f))
    edits[f]++
    round("edit_file", { path, patch: `@@ -500,0 +501,1 @@\n+// edit ${edits[f]}: inputs are validated` }, `Applied 1 hunk to ${path}: +1 -0 lines.`)
    round("run_tests", { path: `tests/module${f}.test.ts` }, Array.from({ length: 12 }, (_, i) => ` \u2713 module${f} > case ${i + 1}`).join("\n") + "\n\n Tests  12 passed (12)")
    round("search", { pattern: `handler${f}_1` }, `${path}:2: export const handler${f}_1\n${path}:11: export const handler${f}_10`)
    messages.push({ role: "assistant", content: [{ type: "text", text: `Task ${task + 1} is done: ${path} validates its inputs and its tests pass.` }] })
  }
  return lines.join("\n") + "\n"
}

const fmt = (n) => Math.round(n).toLocaleString("en-US")
const x = (r) => `${r.toFixed(4)}x`

try {
  const demo = makeDemoRepo({ out: join(work, "demo"), replace: true }).out
  const sessions = await recordedSessions({ runAgentReplay, AGENT_TOOLS }, { demo, tasks: TASKS })
  const own = join(here, "claude-code.jsonl")
  sessions.push({ name: "big reads edited, small steps (no idle gap)", text: bigReadsSession(TASKS) })
  if (existsSync(own)) sessions.push({ name: "Claude Code through the proxy (recorded)", text: readFileSync(own, "utf8") })

  console.log(`bench/proxy/transcripts: recorded sessions (${TASKS} tasks each for bench/replay's)`)
  console.log("")
  console.log("1. strata replay --transcript (the replay lab's scorer, input cost in base-input tokens)")
  const replayRatios = { proxy: [], "proxy-edit": [] }
  for (const s of sessions) {
    const report = await runRecordedReplay({ transcript: { text: s.text, name: s.name }, provider: "anthropic", model: "claude-sonnet-4-5", strategies: ["transcript", "proxy", "proxy-edit"] })
    const row = (name) => report.rows.find((r) => r.strategy === name)
    const t = row("transcript").equivalentTokens
    const p = row("proxy").equivalentTokens / t
    const e = row("proxy-edit").equivalentTokens / t
    replayRatios.proxy.push(p)
    replayRatios["proxy-edit"].push(e)
    console.log(`  ${s.name.padEnd(44)} ${String(report.requests).padStart(4)} requests  transcript ${fmt(t).padStart(12)}  proxy ${x(p)}  proxy-edit ${x(e)}  (cleared ${fmt(row("proxy-edit").clearedTokens)} tokens)`)
  }
  const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length
  console.log(`  mean: proxy ${x(mean(replayRatios.proxy))} (worst ${x(Math.max(...replayRatios.proxy))}), proxy-edit ${x(mean(replayRatios["proxy-edit"]))} (worst ${x(Math.max(...replayRatios["proxy-edit"]))})`)
  console.log("")
  console.log("2. the agent's own bodies through the proxy's transform (priceTranscript), relative to as sent")
  console.log("   placement: cache mode, every lifetime 5m; cache / edit: the modes as shipped;")
  console.log("   perfect: 1h exactly where the next gap is 5-60 min; rhythm: 1h on a task's predicted last step (neither bounded by credit)")
  const shares = []
  for (const s of sessions) {
    const lines = linesOf(s.text)
    const sent = priceTranscript(lines, { mode: "observe" })
    const placement = priceTranscript(lines, { mode: "cache", lifetime: () => "5m" })
    const cache = priceTranscript(lines, { mode: "cache" })
    const edit = priceTranscript(lines, { mode: "edit" })
    const clearOnly = priceTranscript(lines, { mode: "edit", lifetime: () => "5m" })
    const best = priceTranscript(lines, { mode: "cache", lifetime: perfect(lines) })
    const predicted = priceTranscript(lines, { mode: "cache", lifetime: rhythm(lines) })
    const a = sent.asSent
    const saved = a - edit.forwarded
    const part = (v) => (saved <= 0 ? "  -  " : `${((100 * v) / saved).toFixed(0).padStart(3)}%`)
    shares.push(edit.forwarded / a)
    console.log(`  ${s.name.padEnd(44)} as sent ${fmt(a).padStart(12)}  placement ${x(placement.forwarded / a)}  cache ${x(cache.forwarded / a)}  edit ${x(edit.forwarded / a)}  | perfect lifetimes ${x(best.forwarded / a)}  rhythm ${x(predicted.forwarded / a)}`)
    console.log(`  ${"".padEnd(44)} edit's saving split: placement ${part(a - placement.forwarded)}, clearing ${part(placement.forwarded - clearOnly.forwarded)}, lifetimes ${part(clearOnly.forwarded - edit.forwarded)}`)
  }
  console.log(`  mean edit ${x(mean(shares))}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
