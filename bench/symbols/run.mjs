// bench/symbols: the @strata/symbols indexer on >= 2,000 real source files (TypeScript
// and JavaScript packages copied from this repository's node_modules into a git
// repository under bench/out/): cold index, warm no-change refresh, one-file
// re-index, peak memory, and universal-ctags over the same files in the same run;
// then recall of ctags' class/function/method definitions on the fixture languages.
// Uses the built output of @strata/symbols; build it first (see bench/README.md).
// The machine is shared, so wall times are noisy: CPU times are printed beside them.
/* global console, process, URL */
import { execFileSync, spawnSync } from "node:child_process"
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { median } from "../support.mjs"

const HERE = dirname(fileURLToPath(import.meta.url))
const REPO = join(HERE, "..", "..")
const DIST = join(REPO, "packages", "symbols", "dist", "index.js")
const OUT = join(REPO, "bench", "out", "symbols")
const CORPUS = join(OUT, "corpus")
const FIXTURES = join(REPO, "packages", "symbols", "fixtures")

const MIN_FILES = Number(process.env.MIN_FILES ?? 2000)
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 3)
const WARM_RUNS = Number(process.env.WARM_RUNS ?? 9)
const EDIT_RUNS = Number(process.env.EDIT_RUNS ?? 9)
const MAX_FILE_BYTES = 512 * 1024
const SOURCE = /\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)$/

const ms = (x) => `${x.toFixed(x < 100 ? 1 : 0)} ms`
const pct = (x) => `${(100 * x).toFixed(1)}%`

// ---------------------------------------------------------------- child phases
// A fresh process per cold run, so each pays the WASM compile and reports its own peak RSS.
if (process.argv[2] === "child") {
  const { SymbolIndexer } = await import(DIST)
  const { createHash } = await import("node:crypto")
  const phase = process.argv[3]
  const result = {}
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  // "workers": worker threads (one per core) and no cache, to compare with the default (one thread).
  const indexer = await SymbolIndexer.create(CORPUS, phase === "workers" ? { workers: "auto", cache: false } : {})
  const map = await indexer.refresh()
  const cpu = process.cpuUsage(cpu0)
  result.cold = { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000, stats: map.stats, problems: map.problems.length }
  result.renderHash = createHash("sha256").update(map.render()).update(map.fileTree).digest("hex")
  if (phase === "full") {
    result.warm = []
    for (let i = 0; i < WARM_RUNS; i++) {
      const a = performance.now()
      const m = await indexer.refresh()
      result.warm.push({ wall: performance.now() - a, parsed: m.stats.parsed, timings: m.stats.timings })
    }
    // One-file edits spread over the corpus: append a function, re-index, check only it was parsed.
    const step = Math.max(1, Math.floor(map.symbolFiles.length / EDIT_RUNS))
    const files = map.symbolFiles.filter((_, i) => i % step === Math.min(7, step - 1)).slice(0, EDIT_RUNS)
    const originals = new Map(files.map((f) => [f, readFileSync(join(CORPUS, f), "utf8")]))
    result.edits = []
    for (const [i, f] of files.entries()) {
      appendFileSync(join(CORPUS, f), `\nexport function benchAdded${i}(a, b) { return a }\n`)
      const a = performance.now()
      const c = process.cpuUsage()
      const m = await indexer.refresh()
      const cc = process.cpuUsage(c)
      result.edits.push({ file: f, wall: performance.now() - a, cpu: (cc.user + cc.system) / 1000, parsed: m.stats.parsed, timings: m.stats.timings })
      if (!m.block(f).includes(`benchAdded${i}`)) throw new Error(`edit of ${f} not reflected in its block`)
    }
    // The same edits again, told to the indexer (`refresh({ changed })`): no listing, no stat of other files.
    result.hinted = []
    for (const [i, f] of files.entries()) {
      appendFileSync(join(CORPUS, f), `\nexport function benchHinted${i}(a, b) { return a }\n`)
      const a = performance.now()
      const c = process.cpuUsage()
      const m = await indexer.refresh({ changed: [f] })
      const cc = process.cpuUsage(c)
      result.hinted.push({ file: f, wall: performance.now() - a, cpu: (cc.user + cc.system) / 1000, parsed: m.stats.parsed })
      if (!m.block(f).includes(`benchHinted${i}`)) throw new Error(`hinted edit of ${f} not reflected in its block`)
    }
    for (const [f, text] of originals) writeFileSync(join(CORPUS, f), text)
    await indexer.refresh()
  }
  if (phase === "warmstart") result.warmStart = result.cold
  result.maxRssMb = process.resourceUsage().maxRSS / 1024
  result.heapMb = process.memoryUsage().heapUsed / 1024 / 1024
  console.log(JSON.stringify(result))
  process.exit(0)
}

// ---------------------------------------------------------------- corpus
const pnpmStore = join(REPO, "node_modules", ".pnpm")

/** The package directories under node_modules/.pnpm: effect and zod first, then the rest by name. */
const packageDirs = () => {
  const entries = readdirSync(pnpmStore).filter((d) => !d.startsWith(".") && d !== "node_modules" && d !== "lock.yaml").sort()
  const first = entries.filter((d) => d.startsWith("effect@") || d.startsWith("zod@"))
  const dirs = []
  for (const entry of [...first, ...entries.filter((d) => !first.includes(d))]) {
    const modules = join(pnpmStore, entry, "node_modules")
    if (!existsSync(modules)) continue
    // `@scope+name@1.2.3_peer@4` holds @scope/name; `name@1.2.3` holds name.
    const name = entry.startsWith("@") ? `@${entry.slice(1).split("@")[0].replace("+", "/")}` : entry.split("@")[0]
    const dir = join(modules, ...name.split("/"))
    if (existsSync(dir)) dirs.push({ name, dir })
  }
  return dirs
}

const sourcesUnder = (dir, out = []) => {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if (e.name !== "node_modules") sourcesUnder(p, out)
    } else if (e.isFile() && SOURCE.test(e.name) && !e.name.endsWith(".min.js") && statSync(p).size <= MAX_FILE_BYTES) out.push(p)
  }
  return out
}

const buildCorpus = () => {
  rmSync(CORPUS, { recursive: true, force: true })
  mkdirSync(CORPUS, { recursive: true })
  const taken = []
  let count = 0
  for (const pkg of packageDirs()) {
    if (count >= MIN_FILES) break
    const files = sourcesUnder(pkg.dir)
    for (const f of files) {
      const target = join(CORPUS, pkg.name, relative(pkg.dir, f))
      mkdirSync(dirname(target), { recursive: true })
      cpSync(f, target)
    }
    count += files.length
    taken.push(`${pkg.name} (${files.length})`)
  }
  let git = true
  try {
    const g = (...args) => execFileSync("git", ["-c", "user.email=bench@strata", "-c", "user.name=bench", ...args], { cwd: CORPUS, stdio: "ignore" })
    g("init", "-q")
    g("add", "-A")
    g("commit", "-qm", "corpus")
  } catch {
    git = false
  }
  return { taken, count, git }
}

// ---------------------------------------------------------------- ctags
const ctagsVersion = (() => {
  const r = spawnSync("ctags", ["--version"], { encoding: "utf8" })
  return r.status === 0 && /Universal Ctags/.test(r.stdout) ? r.stdout.split("\n")[0] : undefined
})()

/** Run ctags over `files` (relative to `cwd`); wall and CPU (via the shell's `times`) in ms. */
const runCtags = (cwd, files, out) => {
  const list = join(OUT, "ctags-files.txt")
  writeFileSync(list, files.join("\n") + "\n")
  // ctags refuses to overwrite a file that does not look like a tags file (JSON does not).
  rmSync(out, { force: true })
  const a = performance.now()
  const r = spawnSync("bash", ["-c", `ctags --output-format=json --fields=+nKzZ -f '${out}' -L '${list}' 2>/dev/null; times`], { cwd, encoding: "utf8" })
  const wall = performance.now() - a
  const seconds = (s) => {
    const m = /(\d+)m([\d.]+)s/.exec(s)
    return m ? Number(m[1]) * 60 + Number(m[2]) : 0
  }
  const children = (r.stdout.trim().split("\n").pop() ?? "").split(/\s+/)
  return { wall, cpu: (seconds(children[0] ?? "") + seconds(children[1] ?? "")) * 1000 }
}

const readTags = (path) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((t) => t._type === "tag")

// ---------------------------------------------------------------- recall
const DEFINITION_KINDS = new Set(["class", "function", "func", "method", "generator"])
const LANGUAGE = { ts: "TypeScript", tsx: "TSX", mts: "TypeScript", cts: "TypeScript", js: "JavaScript", jsx: "JavaScript", mjs: "JavaScript", cjs: "JavaScript", py: "Python", go: "Go", rs: "Rust", java: "Java", c: "C", h: "C/C++ header", cpp: "C++", hpp: "C++" }
const ANONYMOUS = /^Anonymous(?:Function|Class|Object)[0-9a-f]+$/
const BODY_KINDS = new Set(["function", "method", "variable", "property", "field"])
const squash = (name) => name.replace(/\s+/g, "")

/** Is this ctags tag a class/function/method definition? (Python methods are kind "member".) */
const isDefinition = (t) => DEFINITION_KINDS.has(t.kind) || (t.kind === "member" && t.path.endsWith(".py"))

/**
 * What our map holds for a file: every name at any depth (`A::m` and `T.m` also as
 * `m`), and the line ranges of function bodies and initializers, inside which a
 * definition is local (a nested function, an object-literal member) and not part of
 * a symbol map.
 */
const ours = (map, path) => {
  const names = new Set()
  const bodies = []
  const visit = (symbols) => {
    for (const s of symbols) {
      for (const n of [s.name, s.name.split(/::|\./).pop(), s.name.replace(/!$/, "")]) names.add(squash(n))
      if (BODY_KINDS.has(s.kind) && s.endLine > s.line) bodies.push([s.line, s.endLine])
      visit(s.children)
    }
  }
  visit(map.symbols(path)?.symbols ?? [])
  return { names, bodies }
}

// Top-level statements that are not type declarations (variables, calls, functions): in
// TypeScript/JavaScript, what is defined inside them after their first line is local.
const TYPE_STATEMENTS = new Set(["class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration", "type_alias_declaration", "internal_module", "module", "ambient_declaration"])
let parsers
const statementBodies = async (root, path) => {
  const { Parsers, languageOf } = await import(DIST)
  const language = languageOf(path)
  if (language !== "typescript" && language !== "tsx" && language !== "javascript") return []
  parsers ??= await Parsers.load(["typescript", "tsx", "javascript"])
  const tree = parsers.parse(language, readFileSync(join(root, path), "utf8"))
  const bodies = []
  for (const node of tree.rootNode.namedChildren) {
    const inner = node.type === "export_statement" ? (node.childForFieldName("declaration") ?? node) : node
    if (!TYPE_STATEMENTS.has(inner.type) && node.endPosition.row > node.startPosition.row) bodies.push([node.startPosition.row + 1, node.endPosition.row + 1])
  }
  tree.delete()
  return bodies
}

const recallOf = async (tags, map, root) => {
  const byLanguage = new Map()
  const misses = []
  const cache = new Map()
  let anonymous = 0
  for (const t of tags) {
    if (!isDefinition(t)) continue
    // ctags names anonymous functions and classes itself; there is nothing to find.
    if (ANONYMOUS.test(t.name)) {
      anonymous++
      continue
    }
    if (!cache.has(t.path)) {
      const mine = ours(map, t.path)
      cache.set(t.path, { names: mine.names, bodies: [...mine.bodies, ...(await statementBodies(root, t.path))] })
    }
    const { names, bodies } = cache.get(t.path)
    const ext = t.path.split(".").pop()
    const language = LANGUAGE[ext] ?? ext
    const local = bodies.some(([from, to]) => t.line > from && t.line <= to)
    const row = byLanguage.get(language) ?? { total: 0, hit: 0, topTotal: 0, topHit: 0 }
    const hit = names.has(squash(t.name))
    row.total++
    if (hit) row.hit++
    if (!local) {
      row.topTotal++
      if (hit) row.topHit++
    }
    if (!hit && !local && misses.length < Number(process.env.MISSES ?? 8)) misses.push(`${t.path}:${t.line} ${t.kind} ${t.name}`)
    byLanguage.set(language, row)
  }
  return { byLanguage, misses, anonymous }
}

const printRecall = (title, { byLanguage, misses, anonymous }) => {
  console.log(`\n${title}`)
  console.log(`${"language".padEnd(14)}${"ctags defs".padStart(11)}${"found".padStart(8)}${"recall".padStart(9)}${"declarations (not local)".padStart(30)}`)
  let total = 0
  let hit = 0
  let topTotal = 0
  let topHit = 0
  let worst = 1
  for (const [language, r] of [...byLanguage].sort()) {
    total += r.total
    hit += r.hit
    topTotal += r.topTotal
    topHit += r.topHit
    worst = Math.min(worst, r.total === 0 ? 1 : r.hit / r.total)
    const top = r.topTotal === 0 ? "-" : `${pct(r.topHit / r.topTotal)} of ${r.topTotal}`
    console.log(`${language.padEnd(14)}${String(r.total).padStart(11)}${String(r.hit).padStart(8)}${pct(r.total === 0 ? 1 : r.hit / r.total).padStart(9)}${top.padStart(30)}`)
  }
  const all = topTotal === 0 ? "-" : `${pct(topHit / topTotal)} of ${topTotal}`
  console.log(`${"all".padEnd(14)}${String(total).padStart(11)}${String(hit).padStart(8)}${pct(total === 0 ? 1 : hit / total).padStart(9)}${all.padStart(30)}`)
  if (anonymous > 0) console.log(`(${anonymous} ctags tags for anonymous functions/classes not counted)`)
  if (misses.length > 0) console.log(`first declaration misses: ${misses.join("; ")}`)
  return { overall: total === 0 ? 1 : hit / total, worst }
}

// ---------------------------------------------------------------- main
const child = (phase) => {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "child", phase], { encoding: "utf8", maxBuffer: 1 << 28 })
  if (r.status !== 0) throw new Error(`child ${phase} failed:\n${r.stderr}`)
  return JSON.parse(r.stdout.trim().split("\n").pop())
}

if (!existsSync(DIST)) {
  console.error(`Build first: npx --yes pnpm@10.34.9 --filter "@strata/symbols..." build   (missing ${relative(REPO, DIST)})`)
  process.exit(2)
}
mkdirSync(OUT, { recursive: true })
const corpus = buildCorpus()
const corpusFiles = sourcesUnder(CORPUS).map((f) => relative(CORPUS, f))
const bytes = corpusFiles.reduce((s, f) => s + statSync(join(CORPUS, f)).size, 0)
console.log(`bench/symbols  corpus: ${corpusFiles.length} files, ${(bytes / 1e6).toFixed(1)} MB from ${corpus.taken.join(", ")}; ${corpus.git ? "git repository" : "no git: directory walk"}`)
console.log(`ctags: ${ctagsVersion ?? "universal-ctags NOT INSTALLED (apt-get update && apt-get install -y universal-ctags); ctags comparison and recall skipped"}`)
console.log(`runs: cold ${COLD_RUNS} (fresh process and empty .strata each), warm ${WARM_RUNS}, one-file edits ${EDIT_RUNS}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)

let failed = false
// RECALL_ONLY=1 skips the timings (handy when working on extraction).
if (process.env.RECALL_ONLY === undefined) {
  const colds = []
  const ctagsRuns = []
  let full
  for (let i = 0; i < COLD_RUNS; i++) {
    rmSync(join(CORPUS, ".strata"), { recursive: true, force: true })
    const r = child(i === 0 ? "full" : "cold")
    if (i === 0) full = r
    colds.push(r)
    if (ctagsVersion !== undefined) ctagsRuns.push(runCtags(CORPUS, corpusFiles, join(OUT, "corpus-tags.json")))
  }
  const warmStart = child("warmstart")
  const threaded = child("workers")

  const coldWall = median(colds.map((r) => r.cold.wall))
  const coldCpu = median(colds.map((r) => r.cold.cpu))
  const warmWall = median(full.warm.map((w) => w.wall))
  const editWall = median(full.edits.map((e) => e.wall))
  const editCpu = median(full.edits.map((e) => e.cpu))
  const peak = Math.max(...colds.map((r) => r.maxRssMb))
  console.log("")
  console.log(`${"measure".padEnd(44)}${"wall".padStart(12)}${"cpu".padStart(12)}`)
  const row = (label, wall, cpu = NaN) => console.log(`${label.padEnd(44)}${ms(wall).padStart(12)}${(Number.isNaN(cpu) ? "" : ms(cpu)).padStart(12)}`)
  row(`cold index, ${full.cold.stats.symbolFiles} files parsed (median of ${COLD_RUNS})`, coldWall, coldCpu)
  row(`cold index, worker threads (workers: "auto", 1 run)`, threaded.cold.wall, threaded.cold.cpu)
  row(`warm, no change (median of ${WARM_RUNS})`, warmWall)
  row(`one file changed, re-index (median of ${EDIT_RUNS})`, editWall, editCpu)
  row(`  best of the ${EDIT_RUNS}`, Math.min(...full.edits.map((e) => e.wall)), Math.min(...full.edits.map((e) => e.cpu)))
  row(`  told which file: refresh({ changed }) (median)`, median(full.hinted.map((e) => e.wall)), median(full.hinted.map((e) => e.cpu)))
  row("warm start, new process, cache on disk", warmStart.warmStart.wall, warmStart.warmStart.cpu)
  const sameOutput = threaded.renderHash === full.renderHash && colds.every((r) => r.renderHash === full.renderHash)
  console.log(`map and tree byte-identical across cold runs, one thread and worker threads: ${sameOutput ? "yes" : "NO"}`)
  if (!sameOutput) process.exitCode = 1
  console.log(`peak RSS ${peak.toFixed(0)} MB (cold, one thread, whole process incl. WASM grammars), ${threaded.maxRssMb.toFixed(0)} MB with worker threads; heap after cold ${full.heapMb.toFixed(0)} MB`)
  console.log(`files re-parsed: warm ${Math.max(...full.warm.map((w) => w.parsed))}, per edit ${[...new Set([...full.edits, ...full.hinted].map((e) => e.parsed))].join("/")}, warm start ${warmStart.warmStart.stats.parsed}; problems reported: ${full.cold.problems} (mostly .d.ts syntax the grammar does not know)`)
  const phases = Object.keys(full.edits[0].timings)
  console.log(`one-file re-index by phase (median ms): ${phases.map((p) => `${p} ${median(full.edits.map((e) => e.timings[p])).toFixed(1)}`).join(", ")}`)

  if (ctagsVersion !== undefined) {
    const ctagsWall = median(ctagsRuns.map((r) => r.wall))
    const ctagsCpu = median(ctagsRuns.map((r) => r.cpu))
    row(`universal-ctags, same files (median of ${ctagsRuns.length})`, ctagsWall, ctagsCpu)
    const ratioCpu = coldCpu / ctagsCpu
    const ratioWall = coldWall / ctagsWall
    console.log(`cold / ctags: ${ratioWall.toFixed(2)}x wall, ${ratioCpu.toFixed(2)}x cpu; with worker threads ${(threaded.cold.wall / ctagsWall).toFixed(2)}x wall, ${(threaded.cold.cpu / ctagsCpu).toFixed(2)}x cpu  (target <= 5x wall: ${ratioWall <= 5 ? "PASS" : "FAIL"})`)
    if (ratioWall > 5) failed = true
  }
  console.log(`one-file re-index median ${ms(editWall)} wall, ${ms(editCpu)} cpu  (target < 50 ms wall: ${editWall < 50 ? "PASS" : "FAIL"})`)
  if (editWall >= 50) failed = true
} else if (ctagsVersion !== undefined) {
  runCtags(CORPUS, corpusFiles, join(OUT, "corpus-tags.json"))
}

if (ctagsVersion !== undefined) {
  const { SymbolIndexer } = await import(DIST)
  // Recall on the fixture languages: ctags over the fixture repositories vs our map of them.
  const fixtureRoot = join(OUT, "fixtures")
  rmSync(fixtureRoot, { recursive: true, force: true })
  cpSync(FIXTURES, fixtureRoot, { recursive: true })
  const fixtureMap = await (await SymbolIndexer.create(fixtureRoot, { git: false, cache: false })).refresh()
  runCtags(fixtureRoot, fixtureMap.symbolFiles, join(OUT, "fixture-tags.json"))
  const fixtureRecall = printRecall("recall of ctags class/function/method definitions, fixtures (packages/symbols/fixtures)", await recallOf(readTags(join(OUT, "fixture-tags.json")), fixtureMap, fixtureRoot))
  console.log(`fixture recall: worst language ${pct(fixtureRecall.worst)}  (target >= 95% per language: ${fixtureRecall.worst >= 0.95 ? "PASS" : "FAIL"})`)
  if (fixtureRecall.worst < 0.95) failed = true
  const corpusMap = await (await SymbolIndexer.create(CORPUS)).refresh()
  printRecall("recall on the benchmark corpus (real TypeScript/JavaScript; local = inside a function body or initializer)", await recallOf(readTags(join(OUT, "corpus-tags.json")), corpusMap, CORPUS))
  // Real code in more languages when the machine has it: Python's standard library and C headers.
  const extra = [
    ["/usr/lib/python3.11", /\.py$/, "python-stdlib"],
    ["/usr/include", /\.h$/, "c-headers"]
  ].filter(([dir]) => existsSync(dir))
  for (const [dir, pattern, name] of extra) {
    const root = join(OUT, name)
    rmSync(root, { recursive: true, force: true })
    const picked = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && pattern.test(e.name) && statSync(join(dir, e.name)).size <= MAX_FILE_BYTES)
      .map((e) => e.name)
      .sort()
      .slice(0, 150)
    mkdirSync(root, { recursive: true })
    for (const f of picked) cpSync(join(dir, f), join(root, f))
    const map = await (await SymbolIndexer.create(root, { git: false, cache: false })).refresh()
    runCtags(root, map.symbolFiles, join(OUT, `${name}-tags.json`))
    printRecall(`recall on ${dir} (${map.symbolFiles.length} files)`, await recallOf(readTags(join(OUT, `${name}-tags.json`)), map, root))
  }
}
process.exit(failed || process.exitCode === 1 ? 1 : 0)
