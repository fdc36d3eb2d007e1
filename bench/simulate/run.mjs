// bench/simulate: a 200-turn coding session placed by each provider plugin, then replayed
// through that provider's prompt-cache simulator. Prints simulated requests per second
// (median of several fresh runs), the time placement takes for the same requests (the last
// stage of assembly, for scale), and the hit rate and input-equivalent cost as a sanity check.
//
// Run: npx --yes pnpm@10.34.9 --filter "@strata/providers..." build && node bench/simulate/run.mjs
import { makeTokenCounter } from "../../packages/core/dist/index.js"
import {
  makeSimulator,
  placeAnthropic,
  placeBedrockConverse,
  placeGemini,
  placeOpenAIChat,
  placeOpenAIResponses
} from "../../packages/providers/dist/index.js"
import { median } from "../support.mjs"

const TURNS = Number(process.env.TURNS ?? 200)
const RUNS = Number(process.env.RUNS ?? 15)
const MIN_RPS = 1000

// ---------------------------------------------------------------------------------
// A deterministic session: words from a fixed-seed generator, tiers that change now and
// then (an edited file demotes L3 every 25 turns, L2 every 60), a sliding active window.

let seed = 0x5eed
const rand = () => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0
  return seed / 2 ** 32
}
const WORDS = "parser token tree node visit walk emit cache prefix block tier symbol file import export function class return const let type interface async await map set value key hash index range line column error retry stream usage".split(" ")
const prose = (tokens) => {
  const out = []
  // About 1.3 tokens per word under tiktoken, 6 chars per word under chars/4.
  for (let i = 0; i < tokens * 0.7; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)])
  return out.join(" ")
}

const tools = [
  { name: "read_file", description: "Read a file from the repository.", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "search", description: "Search the repository for a pattern.", inputSchema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] } },
  { name: "edit_file", description: "Replace text in a file.", inputSchema: { type: "object", properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } } } }
]

const L0 = prose(6000)
const tierText = { L1: prose(4000), L2: prose(3000), L3: prose(2000) }
const history = []
const requests = []
const times = []
let t = 0
for (let turn = 0; turn < TURNS; turn++) {
  if (turn > 0 && turn % 25 === 0) tierText.L3 = prose(2000)
  if (turn > 0 && turn % 60 === 0) tierText.L2 = prose(3000)
  const blocks = [{ tier: "L0", messages: [{ role: "system", content: L0 }], items: [], tokens: 6000 }]
  for (const tier of ["L1", "L2", "L3"]) {
    blocks.push({ tier, messages: [{ role: "user", content: tierText[tier] }, { role: "assistant", content: "Ok." }], items: [], tokens: 0 })
  }
  const active = [...history.slice(-12), { role: "user", content: `Turn ${turn}: ${prose(60)}` }]
  blocks.push({ tier: "active", messages: active, items: [], tokens: 0 })
  const messages = blocks.flatMap((b) => b.messages)
  const breakpoints = []
  let index = -1
  for (const b of blocks) {
    index += b.messages.length
    if (b.tier !== "active") breakpoints.push({ tier: b.tier, messageIndex: index })
  }
  requests.push({ model: "", blocks, messages, breakpoints })
  history.push({ role: "user", content: active.at(-1).content }, { role: "assistant", content: prose(120 + Math.floor(rand() * 300)) })
  times.push(t)
  // 20-120 s between turns; one 10-minute break lets 5-minute entries expire.
  t += turn === TURNS / 2 ? 600 : 20 + Math.floor(rand() * 100)
}

// ---------------------------------------------------------------------------------

const targets = [
  { name: "anthropic", provider: "anthropic", model: "claude-sonnet-4-6", place: (r) => placeAnthropic(r, { tools, cacheTools: true, automatic: true, maxTokens: 1024 }) },
  { name: "bedrock (Converse)", provider: "bedrock", model: "us.anthropic.claude-sonnet-4-6", place: (r) => placeBedrockConverse(r, { tools, cacheTools: true, maxTokens: 1024 }) },
  { name: "openai gpt-4o (Chat)", provider: "openai", model: "gpt-4o", place: (r) => placeOpenAIChat(r, { tools, promptCacheKey: "bench" }) },
  { name: "openai gpt-4.1 (Responses)", provider: "openai", model: "gpt-4.1", place: (r) => placeOpenAIResponses(r, { tools }) },
  { name: "openai gpt-5.6 (breakpoints)", provider: "openai", model: "gpt-5.6", place: (r) => placeOpenAIChat(r, { tools, cacheMode: "implicit" }) },
  { name: "gemini 2.5 flash (implicit)", provider: "gemini", model: "gemini-2.5-flash", place: (r) => placeGemini(r, { tools }) }
]

const time = (f) => {
  const start = performance.now()
  const value = f()
  return { ms: performance.now() - start, value }
}
const fmt = (n, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const pad = (s, n) => String(s).padEnd(n)
const lpad = (s, n) => String(s).padStart(n)

console.log(`bench/simulate  turns=${TURNS} runs=${RUNS} (medians; fresh simulator per run)`)
console.log("session: L0 ~6k tokens, L1-L3 ~9k, sliding 12-message history; L3 edited every 25 turns, L2 every 60; one 10-minute pause\n")
console.log(`${pad("target", 30)}${lpad("sim req/s", 11)}${lpad("µs/req", 9)}${lpad("best µs", 9)}${lpad("+tiktoken req/s", 17)}${lpad("place µs/req", 14)}${lpad("sim/place", 11)}${lpad("hit rate", 10)}${lpad("cost vs none", 14)}`)

// Every target's bodies are placed once up front, and every path runs once untimed, so the
// first row does not pay for JIT warm-up.
const bodiesOf = new Map(targets.map((target) => [target, requests.map((r) => target.place({ ...r, model: target.model }).body)]))
for (const target of targets) {
  const sim = makeSimulator(target.provider, { model: target.model })
  bodiesOf.get(target).forEach((b, i) => sim.send(b, times[i]))
}

let slowest = Number.POSITIVE_INFINITY
for (const target of targets) {
  const bodies = bodiesOf.get(target)
  const placeMs = median(Array.from({ length: RUNS }, () => time(() => requests.map((r) => target.place({ ...r, model: target.model }))).ms))

  const replay = (countTokens) => {
    const sim = makeSimulator(target.provider, countTokens === undefined ? { model: target.model } : { model: target.model, countTokens })
    return bodies.map((b, i) => sim.send(b, times[i], { outputTokens: 300 }))
  }
  const simRuns = Array.from({ length: RUNS }, () => time(() => replay(undefined)))
  const simMs = median(simRuns.map((r) => r.ms))
  const bestMs = Math.min(...simRuns.map((r) => r.ms))
  // Exact counts: a fresh tiktoken counter per run, so every distinct block is encoded once.
  const exactRuns = []
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    const counter = await makeTokenCounter(target.model)
    exactRuns.push(time(() => replay((s) => counter.count(s))).ms)
  }
  const exactMs = median(exactRuns)

  const results = simRuns[0].value
  let prompt = 0
  let read = 0
  let equivalent = 0
  for (const r of results) {
    prompt += r.usage.input + r.usage.cacheRead + r.usage.cacheWrite
    read += r.usage.cacheRead
    equivalent += r.cost.inputEquivalentTokens
  }
  const rps = (TURNS / simMs) * 1000
  slowest = Math.min(slowest, rps)
  console.log(
    `${pad(target.name, 30)}${lpad(fmt(rps), 11)}${lpad(fmt((simMs / TURNS) * 1000, 1), 9)}${lpad(fmt((bestMs / TURNS) * 1000, 1), 9)}${lpad(fmt((TURNS / exactMs) * 1000), 17)}` +
    `${lpad(fmt((placeMs / TURNS) * 1000, 1), 14)}${lpad(`${fmt(simMs / placeMs, 2)}x`, 11)}${lpad(`${fmt((read / prompt) * 100, 1)}%`, 10)}${lpad(`${fmt((equivalent / prompt) * 100, 1)}%`, 14)}`
  )
}

console.log("\nsim req/s, µs/req: median run, chars/4 counting (the simulators' default); best µs: fastest run (least disturbed by other load)")
console.log("+tiktoken: exact counts with a cold counter per run; place: the plugin building the same 200 bodies (assembly's last stage)")
console.log("hit rate: cached input / prompt input; cost vs none: input-equivalent tokens (writes and reads at the model's multipliers) / uncached")
const pass = slowest >= MIN_RPS
console.log(`slowest simulator: ${fmt(slowest)} req/s (target >= ${fmt(MIN_RPS)} req/s, i.e. under 1 ms per request: ${pass ? "PASS" : "FAIL"})`)
if (!pass) process.exitCode = 1
