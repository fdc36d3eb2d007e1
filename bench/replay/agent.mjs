// The agent-mode replay benchmark (issue 18): this repository's first 121 commits and
// the demo repository's whole history replayed as a coding agent's tasks (one request
// per tool step), and three recorded sessions (bench/replay/sessions.mjs), under every
// agent strategy. It checks the agent targets: the default Strata strategy below 0.9x
// the cheaper of `transcript` and `transcript-clear`, at most 1.25x the bound, and on
// every recorded session never above `transcript`; and it prints where the cost goes
// (reads, writes, uncached; first requests of tasks, after a compaction, tool steps).
// Runs the built @strata/replay (packages/replay/dist).
//
//   node bench/replay/run.mjs --session agent                    # anthropic, both histories and the recorded sessions
//   node bench/replay/run.mjs --session agent --provider openai  # another provider (bedrock, openai, gemini)
//   node bench/replay/run.mjs --session agent --repo-only demo   # one part: self | demo | recorded
//
// Other flags: --model M, --turns N (tasks of each history), --gap-seconds S, --step-seconds S,
// --plot-dir DIR (an SVG per history and session), --compaction-step N (the session's
// compaction waits until N history tokens can go; core's default is a quarter of the
// 24,000-token trigger), to measure that engine setting; --no-files replays the git
// histories without the task's files in context (the agent replay's shape before issue 25).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { AGENT_TOOLS, formatReport, plotSvg, runAgentReplay, runRecordedReplay } from "../../packages/replay/dist/index.js"
import { lookupModel, ttlSpec } from "../../packages/providers/dist/index.js"
import { DEFAULT_POLICY } from "../../packages/tiers/dist/index.js"
import { makeDemoRepo } from "../../scripts/make-demo-repo.mjs"
import { recordedSessions } from "./sessions.mjs"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
// This repository's first SELF_TASKS commits never change, so the figures are reproducible.
const SELF_TASKS = 121
const DEFAULT = `strata-${DEFAULT_POLICY}`
const TARGET_VS_BASELINE = 0.9
const TARGET_VS_BOUND = 1.25

const flag = (args, name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const money = (v) => `$${(Math.abs(v) < 5e-5 ? 0 : v).toFixed(4)}`
const ratio = (a, b) => (b === 0 ? Infinity : a / b)

/** Per strategy: the cost split by kind of token and by kind of request (collect with `onScore`, read once the model is known). */
const breakdown = () => {
  const entries = []
  const by = new Map()
  const add = (read, strategy, kind, s) => {
    const perToken = s.equivalentTokens === 0 ? 0 : (s.usd ?? s.equivalentTokens) / s.equivalentTokens
    const reads = s.cacheRead * read * perToken
    const uncached = s.uncached * perToken
    const cost = s.usd ?? s.equivalentTokens
    for (const key of [`${strategy}|all`, `${strategy}|${kind}`]) {
      const e = by.get(key) ?? { requests: 0, cost: 0, reads: 0, writes: 0, uncached: 0, readTokens: 0, writeTokens: 0 }
      e.requests++
      e.cost += cost
      e.reads += reads
      e.uncached += uncached
      e.writes += cost - reads - uncached
      e.readTokens += s.cacheRead
      e.writeTokens += s.cacheWrite
      by.set(key, e)
    }
  }
  return {
    onScore: (entry) => void entries.push(entry),
    /** Aggregate what was collected, with the read price of the report's model. */
    of: (report) => {
      const read = ttlSpec(lookupModel(report.provider, report.model)).read
      by.clear()
      for (const { score, step, compacted } of entries) add(read, score.strategy, step === 0 ? (compacted ? "first after compaction" : "first of a task") : "tool step", score)
      return (strategy, kind = "all") => by.get(`${strategy}|${kind}`) ?? { requests: 0, cost: 0, reads: 0, writes: 0, uncached: 0, readTokens: 0, writeTokens: 0 }
    }
  }
}

const row = (report, strategy) => report.rows.find((r) => r.strategy === strategy)
const costOf = (r) => r.usd ?? r.equivalentTokens

/** The targets and where the cost goes, for one agent history. */
const explain = (name, report, parts) => {
  const strata = row(report, DEFAULT)
  const oracle = row(report, "oracle")
  const baselines = ["transcript", "transcript-clear"].map((s) => row(report, s)).filter((r) => r !== undefined)
  const cheaper = baselines.reduce((a, b) => (costOf(b) < costOf(a) ? b : a))
  const vsBaseline = ratio(costOf(strata), costOf(cheaper))
  const vsBound = strata.vsOracle
  console.log(`${name}: ${DEFAULT} ${money(costOf(strata))} = ${vsBaseline.toFixed(3)}x ${cheaper.strategy} (the cheaper of ${baselines.map((b) => `${b.strategy} ${money(costOf(b))}`).join(", ")}; target < ${TARGET_VS_BASELINE}x: ${vsBaseline < TARGET_VS_BASELINE ? "met" : "NOT met"}), ${vsBound.toFixed(3)}x the bound (target <= ${TARGET_VS_BOUND}x: ${vsBound <= TARGET_VS_BOUND ? "met" : "NOT met"})`)
  const middleware = row(report, "middleware")
  const transcript = row(report, "transcript")
  if (middleware !== undefined) console.log(`  middleware (strataCache over the transcript): ${ratio(costOf(middleware), costOf(transcript)).toFixed(4)}x transcript (${middleware.cacheRead - transcript.cacheRead >= 0 ? "+" : ""}${(middleware.cacheRead - transcript.cacheRead).toLocaleString("en-US")} tokens read, ${(middleware.cacheWrite - transcript.cacheWrite).toLocaleString("en-US")} written)`)
  console.log("  where the cost goes (reads | writes | uncached; by request):")
  for (const s of [DEFAULT, "transcript", "oracle"]) {
    const all = parts(s)
    const kinds = ["first of a task", "first after compaction", "tool step"].map((k) => ({ k, e: parts(s, k) })).filter(({ e }) => e.requests > 0)
    console.log(`    ${s.padEnd(17)} ${money(all.reads)} | ${money(all.writes)} | ${money(all.uncached)};  ${kinds.map(({ k, e }) => `${k} x${e.requests} ${money(e.cost)} (writes ${money(e.writes)}, ${e.writeTokens.toLocaleString("en-US")} tokens)`).join("; ")}`)
  }
  const excess = report.perTurn.map((t) => ({ t, over: (t.cost[DEFAULT] ?? 0) - (t.cost.oracle ?? 0) })).sort((a, b) => b.over - a.over).slice(0, 5)
  console.log(`  costliest tasks above the bound: ${excess.map(({ t, over }) => `#${t.index + 1} ${money(over)} (${t.subject.slice(0, 40)})`).join("; ")}`)
  console.log(`  superseded tokens carried: ${DEFAULT} ${strata.supersededTokens.toLocaleString("en-US")}, transcript ${transcript.supersededTokens.toLocaleString("en-US")}; cleared: ${baselines.map((b) => `${b.strategy} ${b.clearedTokens.toLocaleString("en-US")}`).join(", ")}, ${DEFAULT} ${strata.clearedTokens.toLocaleString("en-US")}`)
  return { vsBaseline, vsBound }
}

export const runAgentBench = async (args) => {
  const only = flag(args, "--repo-only")
  const provider = flag(args, "--provider") ?? "anthropic"
  const model = flag(args, "--model")
  const turns = flag(args, "--turns")
  const gapSeconds = flag(args, "--gap-seconds")
  const stepSeconds = flag(args, "--step-seconds")
  const plotDir = flag(args, "--plot-dir")
  const compactionStep = flag(args, "--compaction-step")
  const noFiles = args.includes("--no-files")
  const common = {
    provider,
    ...(model === undefined ? {} : { model }),
    ...(stepSeconds === undefined ? {} : { stepSeconds: Number(stepSeconds) })
  }
  const plot = (name, report) => {
    if (plotDir !== undefined) writeFileSync(join(plotDir, `agent-${provider}-${name}.svg`), plotSvg(report))
  }
  const work = mkdtempSync(join(tmpdir(), "strata-bench-agent-"))
  const results = []
  try {
    const demo = makeDemoRepo({ out: join(work, "demo"), replace: true }).out
    const histories = [
      ...(only === undefined || only === "self" ? [{ name: "this repository", key: "self", repo: ROOT, tasks: turns === undefined ? SELF_TASKS : Number(turns) }] : []),
      ...(only === undefined || only === "demo" ? [{ name: "demo repository", key: "demo", repo: demo, tasks: turns === undefined ? undefined : Number(turns) }] : [])
    ]
    for (const h of histories) {
      const parts = breakdown()
      const started = performance.now()
      const report = await runAgentReplay({
        ...common,
        repo: h.repo,
        tasks: h.tasks,
        ...(gapSeconds === undefined ? {} : { gapSeconds: Number(gapSeconds) }),
        ...(compactionStep === undefined ? {} : { compaction: { minStepTokens: Number(compactionStep) } }),
        ...(noFiles ? { filesInContext: false } : {}),
        onScore: parts.onScore
      })
      console.log(`\n${h.name} (${((performance.now() - started) / 1000).toFixed(1)} s)${compactionStep === undefined ? "" : `, compaction minStepTokens ${compactionStep}`}${noFiles ? ", no files in context" : ""}`)
      console.log(formatReport(report))
      console.log("")
      results.push({ name: h.name, ...explain(h.name, report, parts.of(report)) })
      plot(h.key, report)
    }
    if (only === undefined || only === "recorded") {
      console.log("\nrecorded sessions (bench/replay/sessions.mjs: Anthropic bodies with t, one per line)")
      const sessions = await recordedSessions({ runAgentReplay, AGENT_TOOLS }, { demo })
      for (const [i, session] of sessions.entries()) {
        const file = join(work, `session-${i}.jsonl`)
        writeFileSync(file, session.text)
        const report = await runRecordedReplay({ ...common, transcript: { path: file } })
        console.log(`\n${session.name}: ${(session.text.length / 1e6).toFixed(1)} MB`)
        console.log(formatReport(report))
        const strata = row(report, DEFAULT)
        const transcript = row(report, "transcript")
        const r = ratio(costOf(strata), costOf(transcript))
        const middleware = row(report, "middleware")
        const m = middleware === undefined ? undefined : ratio(costOf(middleware), costOf(transcript))
        console.log(`${session.name}: ${DEFAULT} ${r.toFixed(3)}x transcript (target <= 1: ${r <= 1 ? "met" : "NOT met"}); transcript ${transcript.vsOracle.toFixed(3)}x the bound, ${DEFAULT} ${strata.vsOracle.toFixed(3)}x${m === undefined ? "" : `; middleware ${m.toFixed(3)}x transcript`}`)
        results.push({ name: session.name, recorded: r, middleware: m })
        plot(`recorded-${i}`, report)
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  console.log("\nsummary:")
  for (const r of results) {
    console.log(r.recorded === undefined
      ? `  ${r.name}: ${DEFAULT} ${r.vsBaseline.toFixed(3)}x the cheaper transcript (target < ${TARGET_VS_BASELINE}), ${r.vsBound.toFixed(3)}x the bound (target <= ${TARGET_VS_BOUND})`
      : `  recorded, ${r.name}: ${DEFAULT} ${r.recorded.toFixed(3)}x transcript (target <= 1)${r.middleware === undefined ? "" : `, middleware ${r.middleware.toFixed(3)}x`}`)
  }
}
