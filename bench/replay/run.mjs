#!/usr/bin/env node
// The replay benchmark (issue 10): replays this repository's own git history and the
// demo repository's as coding sessions under every caching strategy, scored by the
// provider's prompt-cache simulator, then names the cheapest Strata policy and checks
// the chat-mode targets (issue 18): the cheapest Strata strategy below every non-oracle
// baseline and within 1.15x of the oracle (the content bound, docs/replay.md), on every
// history. Policies are compared in the default journal
// layout; when they cost the same there (within 0.1%), the seed layout's costs break the
// tie (each history is replayed a second time with --layout seed for that). Runs the
// built CLI (packages/cli/dist/bin.js: `strata replay`, a thin command over @strata/replay;
// the table is printed with the package's formatTable).
//
//   node bench/replay/run.mjs                       # anthropic: the first 121 commits of this repository, every commit of the demo
//   node bench/replay/run.mjs --provider openai     # any `strata replay` flag is passed through
//   node bench/replay/run.mjs --repo-only demo      # just one history (demo | self)
//
// With --session agent it runs the agent-mode benchmark instead (bench/replay/agent.mjs:
// the same histories as a coding agent's tasks, and recorded sessions; issue 18's
// agent targets).
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { formatTable } from "../../packages/replay/dist/index.js"
import { makeDemoRepo } from "../../scripts/make-demo-repo.mjs"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
const BIN = join(ROOT, "packages", "cli", "dist", "bin.js")

const args = process.argv.slice(2)
if (args[args.indexOf("--session") + 1] === "agent" && args.includes("--session")) {
  const { runAgentBench } = await import("./agent.mjs")
  await runAgentBench(args.filter((a, i) => a !== "--session" && args[i - 1] !== "--session"))
  process.exit(process.exitCode ?? 0)
}
const only = args.includes("--repo-only") ? args[args.indexOf("--repo-only") + 1] : undefined
const passThrough = args.filter((a, i) => a !== "--repo-only" && args[i - 1] !== "--repo-only")

// This repository's history grows with every commit; its first SELF_TURNS commits after
// the root never change, so replaying those keeps the figures (and the policy choice)
// reproducible. --turns N overrides it for both histories.
const SELF_TURNS = 121
// The chat-mode target: at most this many times the oracle bound.
const TARGET = 1.15
const userTurns = passThrough.includes("--turns")

// `strata replay --turns N` replays the last N commits; the benchmark starts at the root
// commit (the first N commits never change), unless --from is passed through.
const rootOf = (repo) => execFileSync("git", ["-C", repo, "rev-list", "--max-parents=0", "--first-parent", "HEAD"], { encoding: "utf8" }).trim().split("\n")[0]
const userFrom = passThrough.includes("--from")

const replay = (repo, extra = []) => {
  const started = performance.now()
  const from = userFrom ? [] : ["--from", rootOf(repo)]
  const out = execFileSync(process.execPath, [BIN, "replay", "--repo", repo, "--json", ...from, ...extra, ...passThrough], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  return { report: JSON.parse(out), seconds: (performance.now() - started) / 1000 }
}

const histories = []
const demoDir = mkdtempSync(join(tmpdir(), "strata-bench-replay-"))
try {
  if (only === undefined || only === "self") histories.push({ name: "this repository", repo: ROOT, extra: userTurns ? [] : ["--turns", String(SELF_TURNS)] })
  if (only === undefined || only === "demo") histories.push({ name: "demo repository", repo: makeDemoRepo({ out: join(demoDir, "demo"), replace: true }).out, extra: [] })
  const results = histories.map((h) => ({ ...h, ...replay(h.repo, h.extra), seed: replay(h.repo, [...h.extra, "--layout", "seed"]).report }))
  for (const { name, report, seconds } of results) {
    console.log(`\n${name}: ${report.turns} turns from ${report.start.slice(0, 12)}, ${report.provider} ${report.model}, ${report.gapSeconds} s apart (${seconds.toFixed(1)} s)`)
    console.log(formatTable(report.rows))
  }
  // The default policy: the Strata strategy with the lowest total cost over all histories (relative to each oracle).
  const policies = ["strata-threshold", "strata-gated", "strata-flux"]
  const score = (p, which = "report") => results.reduce((sum, r) => sum + (r[which].rows.find((row) => row.strategy === p)?.vsOracle ?? Infinity), 0)
  const tied = (a, b) => Math.abs(score(a) - score(b)) <= 0.001 * Math.min(score(a), score(b))
  const best = [...policies].sort((a, b) => (tied(a, b) ? score(a, "seed") - score(b, "seed") : score(a) - score(b)))[0]
  console.log("\nmean cost relative to the oracle, per policy (journal layout | seed layout):")
  for (const p of policies) console.log(`  ${p.padEnd(17)} ${(score(p) / results.length).toFixed(3)}x | ${(score(p, "seed") / results.length).toFixed(3)}x`)
  const ties = policies.filter((p) => p !== best && tied(p, best))
  console.log(`cheapest Strata policy over these histories: ${best} (mean ${(score(best) / results.length).toFixed(2)}x oracle${ties.length > 0 ? `; tied with ${ties.join(", ")} in the journal layout, cheapest of them in the seed layout` : ""})`)
  for (const { name, report } of results) {
    const row = (s) => report.rows.find((r) => r.strategy === s)
    const strata = row(best)
    const baselines = report.rows.filter((r) => !r.strategy.startsWith("strata-") && r.strategy !== "oracle")
    const beaten = baselines.filter((b) => strata.vsOracle < b.vsOracle).map((b) => b.strategy)
    const lost = baselines.filter((b) => strata.vsOracle >= b.vsOracle).map((b) => `${b.strategy} ${b.vsOracle.toFixed(2)}x`)
    const within = strata.vsOracle <= TARGET
    console.log(`${name}: ${best} ${strata.vsOracle.toFixed(3)}x oracle (target <= ${TARGET}x); below ${beaten.join(", ") || "no baseline"}${lost.length > 0 ? `; not below ${lost.join(", ")}` : ""}; target ${lost.length === 0 && within ? "met" : "NOT met"}`)
    // Where the cost above the bound goes: token differences by kind, and the turns that cost most above it.
    const oracle = row("oracle")
    const signed = (n) => `${n >= 0 ? "+" : "-"}${Math.abs(n).toLocaleString("en-US")}`
    console.log(`  above the bound: read ${signed(strata.cacheRead - oracle.cacheRead)}, write ${signed(strata.cacheWrite - oracle.cacheWrite)}, uncached ${signed(strata.uncached - oracle.uncached)} tokens; ${strata.supersededTokens.toLocaleString("en-US")} superseded tokens carried`)
    const money = (v) => (report.costUnit === "usd" ? `$${v.toFixed(4)}` : `${Math.round(v)} tokens`)
    const excess = report.perTurn.map((t) => ({ t, over: (t.cost[best] ?? 0) - (t.cost.oracle ?? 0) })).sort((a, b) => b.over - a.over).slice(0, 5)
    console.log(`  costliest turns above the bound: ${excess.map(({ t, over }) => `#${t.index + 1} ${money(over)} (${t.subject.slice(0, 40)})`).join("; ")}`)
  }
} finally {
  rmSync(demoDir, { recursive: true, force: true })
}
