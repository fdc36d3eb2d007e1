// bench/compaction: a 300-turn synthetic coding conversation with topic shifts, run
// through the real tiered pipeline (core's engine and pipeline, the @strata/tiers
// tracker, the @strata/symbols index of a generated repository, the Anthropic placement
// plugin) and the Anthropic prompt-cache simulator, with history compaction off and on.
// Prints total input tokens, cache reads, cache writes and cost for each, per promotion
// policy, and checks that compaction lowers cost without raising cache writes by more
// than the input tokens it saves.
//
// The detection model is a deterministic scripted CompactionModel (no network). In the
// `topics` runs it knows which topic each generated prompt belongs to and answers the
// first prompt of the current topic as the boundary (confidence 0.9) when the
// conversation moved on inside the transcript it is shown, else no boundary; in the
// `summary` runs it never names a boundary, so every compaction summarizes. Its summary
// names the earlier topics (carrying an earlier summary's forward). Everything else
// (compactor, verbatim window, tracker purge, placement, cache simulation) is the
// shipped code.
//
// Run: npx --yes pnpm@10.34.9 --filter @strata/core --filter @strata/tiers --filter @strata/symbols --filter @strata/providers build && node bench/compaction/run.mjs
// Options: --turns=300 --policy=gated,flux,threshold --trigger=24000 --window=4000 --automatic --json
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, Layer } from "../../packages/core/node_modules/effect/dist/index.js"
import { CompactionModel, createContextEngine, makeTokenCounter, SymbolIndex } from "../../packages/core/dist/effect.js"
import { AnthropicPlacement, makeSimulator } from "../../packages/providers/dist/index.js"
import { SymbolIndexer } from "../../packages/symbols/dist/index.js"
import { TrackerLayer } from "../../packages/tiers/dist/index.js"
import { arg, rng } from "../support.mjs"

const TURNS = Number(arg("turns", "300"))
const POLICIES = arg("policy", "gated,flux,threshold").split(",")
const TRIGGER = Number(arg("trigger", "24000"))
const WINDOW = Number(arg("window", "4000"))
const AUTOMATIC = process.argv.includes("--automatic")
const JSON_OUT = process.argv.includes("--json")
const MODEL = "claude-sonnet-4-5"

// ---------------------------------------------------------------------------------------
// The session: a generated repository, topics with their files, prompts and replies.

const WORDS = "parse token tree node visit walk emit cache prefix block tier symbol file import export value key hash index range line error retry stream usage budget window summary request reply layer effect schema test".split(" ")
const TOPICS = [
  "the lexer", "the parser", "type checking", "the CLI flags", "the disk cache", "the HTTP server",
  "structured logging", "the test harness", "release packaging", "the docs site", "error messages", "performance"
]
const AREAS = ["lexer", "parser", "types", "cli", "cache", "server", "log", "harness", "release", "docs", "errors", "perf"]

const generate = (seed) => {
  const random = rng(seed)
  const pick = (xs) => xs[Math.floor(random() * xs.length)]
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(" ")
  const between = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1))

  // 12 areas x 10 modules; each module exports a few functions and calls a sibling.
  const files = []
  for (const [a, area] of AREAS.entries()) {
    for (let m = 0; m < 10; m++) {
      const lines = []
      if (m > 0) lines.push(`import { ${area}${m - 1}a } from "./mod${m - 1}"`)
      for (const suffix of ["a", "b", "c"]) {
        lines.push(`export function ${area}${m}${suffix}(input: string, limit?: number): string {`)
        lines.push(`  // ${words(12)}`)
        lines.push(`  return ${m > 0 ? `${area}${m - 1}a(input, limit)` : "input.trim()"}.slice(0, limit ?? ${40 + a})`, "}", "")
      }
      lines.push(`export class ${area[0].toUpperCase()}${area.slice(1)}State${m} {`, "  private count = 0", "  next(): number {", "    return ++this.count", "  }", "}")
      files.push({ path: `packages/${area}/src/mod${m}.ts`, content: lines.join("\n") + "\n" })
    }
  }

  // Topics of 15-40 turns in a fixed order; each works on two modules of its area.
  const turns = []
  let topic = 0
  while (turns.length < TURNS) {
    const length = between(15, 40)
    const area = AREAS[topic % AREAS.length]
    const working = [`packages/${area}/src/mod${between(0, 4)}.ts`, `packages/${area}/src/mod${between(5, 9)}.ts`]
    for (let k = 0; k < length && turns.length < TURNS; k++) {
      const prompt = `About ${TOPICS[topic % TOPICS.length]} (turn ${turns.length}): ${words(between(25, 90))}?`
      const reply = `${words(between(90, 380))}.`
      // Every 9th turn of a topic edits one of its files.
      const edit = k > 0 && k % 9 === 0 ? working[k % 2] : undefined
      // Three long breaks at topic switches: every cache entry expires (5 minute TTL).
      const gap = k === 0 && topic > 0 && topic % 3 === 0 ? 420 : between(15, 90)
      turns.push({ topic, prompt, reply, working, edit, gap, outputTokens: Math.round(reply.length / 4) })
    }
    topic++
  }
  return { files, turns }
}

// ---------------------------------------------------------------------------------------
// The scripted detection model.

/**
 * Knows each prompt's topic. Boundary: the first prompt of the newest topic, if an
 * earlier topic (or an earlier summary) is visible before it. Summary: the earlier
 * topics named once, with a line of detail each (about 40 tokens per topic).
 */
const scriptedDetector = (topicOf, mode) =>
  Layer.succeed(CompactionModel, {
    complete: (request) =>
      Effect.sync(() => {
        const users = [...request.user.matchAll(/^\[(\d+)\] USER: (.*)$/gm)].map((m) => ({ index: Number(m[1]), text: m[2] }))
        const topics = users.map((u) => (u.text.startsWith("[History Summary]") ? -1 : (topicOf.get(u.text) ?? -1)))
        const current = topics.at(-1)
        let first = topics.length - 1
        while (first > 0 && topics[first - 1] === current) first--
        const boundary = mode === "topics" && first > 0 ? users[first].index : null
        const earlier = new Set()
        const previous = users.find((u) => u.text.startsWith("[History Summary]"))
        for (const m of previous?.text.matchAll(/Topic: ([^.]+)\./g) ?? []) earlier.add(m[1])
        for (const t of topics) if (t >= 0 && t !== current) earlier.add(TOPICS[t % TOPICS.length])
        const summary = [...earlier].map((t) => `Topic: ${t}. Finished; decisions recorded in the modules of that area, tests pass.`).join(" ")
        return JSON.stringify({
          boundary_index: boundary,
          boundary_reason: boundary === null ? "one topic throughout" : "the user moved to a new topic",
          confidence: boundary === null ? 0 : 0.9,
          summary
        })
      })
  })

// ---------------------------------------------------------------------------------------

/** One run; `detector` is "off" (compaction disabled), "topics" or "summary". */
const runSession = async (session, policy, detector) => {
  const compaction = detector !== "off"
  const root = mkdtempSync(join(os.tmpdir(), "strata-bench-compaction-"))
  try {
    for (const f of session.files) {
      mkdirSync(join(root, f.path, ".."), { recursive: true })
      writeFileSync(join(root, f.path), f.content)
    }
    const indexer = await SymbolIndexer.create(root, { cache: false, git: false })
    let map = await indexer.refresh()
    const counter = await makeTokenCounter(MODEL)
    const topicOf = new Map(session.turns.map((t) => [t.prompt, t.topic]))
    const engine = createContextEngine({
      model: MODEL,
      repoRoot: root,
      tokenCounter: counter,
      compaction: { enabled: compaction, triggerTokens: TRIGGER, verbatimWindowTokens: WINDOW },
      tracker: TrackerLayer.memory({ config: { policy, cacheTargetTokens: 1126 } }),
      symbols: Layer.succeed(SymbolIndex, { snapshot: Effect.sync(() => map) }),
      provider: AnthropicPlacement({ maxTokens: 4096, automatic: AUTOMATIC }),
      layers: [scriptedDetector(topicOf, detector)]
    })
    const sim = makeSimulator("anthropic", { model: MODEL, countTokens: (s) => counter.count(s) })
    const totals = { input: 0, uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, usd: 0, equivalent: 0 }
    // writesAfter: the simulator's cache writes on the request right after each compaction,
    // to set against the invalidation the compactor reported.
    const compactions = { count: 0, kinds: {}, saved: 0, invalidated: 0, rewritten: 0, writesAfter: 0, maxHistory: 0, ms: 0 }
    let justCompacted = false
    let selected = []
    let at = 0
    const started = performance.now()
    for (const turn of session.turns) {
      if (turn.edit !== undefined) {
        writeFileSync(join(root, turn.edit), session.files.find((f) => f.path === turn.edit).content + `export const edit${at} = ${at}\n`)
        map = await indexer.refresh()
      }
      if (selected.join() !== turn.working.join()) {
        for (const path of selected) await engine.removeFile(path)
        selected = turn.working
      }
      for (const path of selected) await engine.addFile(path)
      const assembled = await engine.assemble({ prompt: turn.prompt })
      const result = sim.send(assembled.request, at, { outputTokens: turn.outputTokens })
      await assembled.commit({ reply: turn.reply, usage: result.usage, usageSource: "simulated" })
      const u = result.usage
      if (justCompacted) compactions.writesAfter += u.cacheWrite
      justCompacted = false
      totals.input += u.input + u.cacheRead + u.cacheWrite
      totals.uncached += u.input
      totals.cacheRead += u.cacheRead
      totals.cacheWrite += u.cacheWrite
      totals.output += u.output
      totals.usd += result.cost.usd?.total ?? 0
      totals.equivalent += result.cost.inputEquivalentTokens
      compactions.maxHistory = Math.max(compactions.maxHistory, await engine.historyTokenCount())
      // Post-response compaction, as the engine's turn lifecycle runs it (docs/compaction.md).
      const t0 = performance.now()
      const c = await engine.compactHistoryIfNeeded()
      compactions.ms += performance.now() - t0
      if (c.compacted) {
        compactions.count++
        compactions.kinds[c.kind] = (compactions.kinds[c.kind] ?? 0) + 1
        compactions.saved += c.tokensSaved
        compactions.invalidated += c.cacheTokensInvalidated
        compactions.rewritten += c.cacheTokensRewritten
        justCompacted = true
      }
      at += turn.gap
    }
    const ms = performance.now() - started
    await engine.dispose()
    return { policy, detector, compaction, totals, compactions, ms }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const session = generate(20261121)
const topics = new Set(session.turns.map((t) => t.topic)).size
const rows = []
for (const policy of POLICIES) {
  for (const detector of ["off", "topics", "summary"]) rows.push(await runSession(session, policy, detector))
}

const verdicts = rows.filter((r) => r.compaction).map((on) => {
  const off = rows.find((r) => r.policy === on.policy && !r.compaction)
  const saved = off.totals.input - on.totals.input
  const extraWrites = on.totals.cacheWrite - off.totals.cacheWrite
  return {
    policy: on.policy,
    detector: on.detector,
    costRatio: on.totals.usd / off.totals.usd,
    inputSaved: saved,
    extraWrites,
    pass: on.totals.usd < off.totals.usd && extraWrites <= saved
  }
})

if (JSON_OUT) {
  console.log(JSON.stringify({ turns: TURNS, topics, trigger: TRIGGER, window: WINDOW, automatic: AUTOMATIC, model: MODEL, rows, verdicts }, null, 2))
} else {
  const fmt = (n) => Math.round(n).toLocaleString("en-US")
  const pad = (s, n) => String(s).padEnd(n)
  const lpad = (s, n) => String(s).padStart(n)
  console.log(`bench/compaction  turns=${TURNS} topics=${topics} model=${MODEL} trigger=${fmt(TRIGGER)} window=${fmt(WINDOW)} placement=anthropic${AUTOMATIC ? " +automatic" : " (tier breakpoints)"}`)
  console.log("session: 120-file generated repository (real symbol index), two working files per topic, an edit every 9th turn, 15-90 s between turns, three 7-minute breaks")
  console.log("compaction: off, or on with a scripted detector (deterministic; see the header of this file): topics = knows each prompt's topic and names boundaries, summary = never names one\n")
  console.log(`${pad("policy", 10)}${pad("compaction", 12)}${lpad("input tokens", 14)}${lpad("uncached", 12)}${lpad("cache read", 13)}${lpad("cache write", 13)}${lpad("cost USD", 10)}${lpad("compactions", 13)}${lpad("max history", 13)}${lpad("saved", 10)}${lpad("invalidated", 13)}${lpad("rewritten", 11)}${lpad("writes after", 14)}`)
  for (const r of rows) {
    const kinds = Object.entries(r.compactions.kinds).map(([k, v]) => `${v} ${k}`).join(", ")
    console.log(
      `${pad(r.policy, 10)}${pad(r.compaction ? `on/${r.detector}` : "off", 12)}${lpad(fmt(r.totals.input), 14)}${lpad(fmt(r.totals.uncached), 12)}${lpad(fmt(r.totals.cacheRead), 13)}${lpad(fmt(r.totals.cacheWrite), 13)}` +
      `${lpad(r.totals.usd.toFixed(2), 10)}${lpad(r.compaction ? String(r.compactions.count) : "-", 13)}${lpad(fmt(r.compactions.maxHistory), 13)}${lpad(r.compaction ? fmt(r.compactions.saved) : "-", 10)}${lpad(r.compaction ? fmt(r.compactions.invalidated) : "-", 13)}${lpad(r.compaction ? fmt(r.compactions.rewritten) : "-", 11)}${lpad(r.compaction ? fmt(r.compactions.writesAfter) : "-", 14)}` +
      (kinds === "" ? "" : `   (${kinds})`)
    )
  }
  console.log("\ninput tokens = uncached + cache read + cache write, summed over all requests; cost from the dated Anthropic price table (input, writes, reads, output)")
  console.log("saved / invalidated / rewritten: what the compactor reported, summed over its compactions (history tokens removed; cached tokens made useless;")
  console.log("  the part of those that is not history and is written again); writes after: the simulated cache writes of the requests right after them")
  for (const v of verdicts) {
    console.log(
      `${pad(`${v.policy} ${v.detector}`, 18)} cost on/off ${(v.costRatio * 100).toFixed(1)}%; input tokens saved ${fmt(v.inputSaved)}; extra cache writes ${fmt(v.extraWrites)} ` +
      `(requirement: cheaper, and extra writes <= tokens saved: ${v.pass ? "PASS" : "FAIL"})`
    )
  }
  console.log(`\nwall time per run (shared 2-core machine, noisy): ${rows.map((r) => `${r.policy}/${r.detector} ${(r.ms / 1000).toFixed(1)} s`).join(", ")}`)
}
if (verdicts.some((v) => !v.pass)) process.exitCode = 1
