// Map ranking quality on real histories: for every commit that touched 2+ files with a
// symbol block, each of those files in turn is the focus (what an agent is editing), and
// recall@K is the share of the commit's other files found in the top K of the map's
// ranking (the focus file itself left out). Personalised (`focusRanking`, Aider's
// personalised PageRank) against the global rankings the map uses without a focus:
// PageRank (`map.ranked`) and incoming-reference counts (core's `mapRanking`).
// Repositories: this one and the demo repository (scripts/make-demo-repo.mjs). The index
// is the one at HEAD, so files deleted since a commit do not count.
//
// Run: npx --yes pnpm@10.34.9 turbo run build --filter=@strata/symbols... && node bench/map-ranking/run.mjs
// Options: --k=10 --max-files=30 (commits touching more source files are skipped as bulk edits) --json
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { mapRanking } from "../../packages/core/dist/index.js"
import { focusRanking, referenceData, SymbolIndexer } from "../../packages/symbols/dist/index.js"
import { makeDemoRepo } from "../../scripts/make-demo-repo.mjs"
import { arg } from "../support.mjs"

const K = Number(arg("k", "10"))
const MAX_FILES = Number(arg("max-files", "30"))
const JSON_OUT = process.argv.includes("--json")
const here = dirname(fileURLToPath(import.meta.url))

/** Files changed per commit (merges skipped), oldest first. */
const commits = (root) => {
  const out = execFileSync("git", ["-C", root, "log", "--no-merges", "--reverse", "--name-only", "--format=@%H"], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  const list = []
  for (const chunk of out.split("@").slice(1)) {
    const [hash, ...files] = chunk.split("\n").filter((l) => l.trim() !== "")
    list.push({ hash, files })
  }
  return list
}

const recallAt = (ranking, focus, others) => {
  const top = ranking.filter((f) => f !== focus).slice(0, K)
  const hits = others.filter((f) => top.includes(f)).length
  return hits / Math.min(K, others.length)
}

const measure = async (name, root) => {
  const indexer = await SymbolIndexer.create(root, { cache: false })
  const map = await indexer.refresh()
  const data = referenceData(map)
  const known = new Set(map.symbolFiles)
  const global = map.ranked
  const byRefs = mapRanking(map)
  const sums = { personalised: 0, pagerank: 0, references: 0 }
  let cases = 0
  let used = 0
  for (const commit of commits(root)) {
    const files = [...new Set(commit.files.filter((f) => known.has(f)))]
    if (files.length < 2 || files.length > MAX_FILES) continue
    used++
    for (const focus of files) {
      const others = files.filter((f) => f !== focus)
      sums.personalised += recallAt(focusRanking(data, { files: [focus] }), focus, others)
      sums.pagerank += recallAt(global, focus, others)
      sums.references += recallAt(byRefs, focus, others)
      cases++
    }
  }
  const mean = (x) => (cases === 0 ? 0 : x / cases)
  return { repository: name, files: map.symbolFiles.length, commits: used, cases, personalised: mean(sums.personalised), pagerank: mean(sums.pagerank), references: mean(sums.references) }
}

const demoDir = mkdtempSync(join(os.tmpdir(), "strata-bench-ranking-"))
try {
  const demo = makeDemoRepo({ out: join(demoDir, "demo") })
  const rows = [await measure("strata (this repository)", resolve(here, "..", "..")), await measure("demo repository", demo.out)]
  if (JSON_OUT) {
    console.log(JSON.stringify({ k: K, maxFiles: MAX_FILES, rows }, null, 2))
  } else {
    const pct = (x) => `${(100 * x).toFixed(1)}%`
    console.log(`recall@${K} of a commit's other files in the map's top ${K}, focus = one of its files (commits touching 2-${MAX_FILES} files with symbols)`)
    console.log("repository                  files  commits  cases  personalised  global PageRank  global refs  personalised/PageRank")
    for (const r of rows) {
      console.log(
        `${r.repository.padEnd(26)} ${String(r.files).padStart(6)} ${String(r.commits).padStart(8)} ${String(r.cases).padStart(6)}  ${pct(r.personalised).padStart(12)}  ${pct(r.pagerank).padStart(15)}  ${pct(r.references).padStart(11)}  ${(r.personalised / r.pagerank).toFixed(2).padStart(20)}x`
      )
    }
    const ok = rows.every((r) => r.personalised > r.pagerank && r.personalised > r.references)
    console.log(ok ? "target met: personalised recall is higher than both global rankings on every repository" : "TARGET MISSED: personalised recall is not higher everywhere")
    if (!ok) process.exitCode = 1
  }
} finally {
  rmSync(demoDir, { recursive: true, force: true })
}
