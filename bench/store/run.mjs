// bench/store: concurrent turns against each StateStore. 8 worker processes x 100 turns
// over 20 sessions, each turn a load + commit (a 2-message exchange and realistic tracker,
// journal and record patches), retried on conflict with the same turn id. Reports turns
// committed, conflicts retried, lost or duplicated turns (must be 0) and commit latency.
//
//   node bench/store/run.mjs                      # file store + a throwaway PostgreSQL cluster
//   STRATA_BENCH_PG_URL=postgres://... node bench/store/run.mjs
//   WORKERS=8 TURNS=100 SESSIONS=20 STORES=file,postgres node bench/store/run.mjs
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import process from "node:process"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const storeDist = pathToFileURL(resolve(here, "../../packages/store/dist/index.js")).href
// effect and @strata/core as @strata/store resolves them (pnpm does not hoist them to the root).
const fromStore = createRequire(resolve(here, "../../packages/store/package.json"))
const load = async () => ({
  ...(await import(pathToFileURL(fromStore.resolve("effect")).href)),
  ...(await import(pathToFileURL(fromStore.resolve("@strata/core/effect")).href)),
  store: await import(storeDist)
})
const WORKERS = Number(process.env.WORKERS ?? 8)
const TURNS = Number(process.env.TURNS ?? 100)
const SESSIONS = Number(process.env.SESSIONS ?? 20)
const STORES = (process.env.STORES ?? "file,postgres").split(",")

// ---- worker ---------------------------------------------------------------------------

const filler = (n, seed) => {
  let s = ""
  for (let i = 0; s.length < n; i++) s += `${seed}-${i} lorem ipsum dolor sit amet `
  return s.slice(0, n)
}

/** One turn's payload, about the size the CLI commits: a 2-message exchange, a 200-item tracker, a 30 KB journal. */
const payload = (turnId, version) => ({
  append: [
    { role: "user", content: `question ${turnId} ${filler(400, turnId)}` },
    { role: "assistant", content: `answer ${turnId} ${filler(1200, turnId)}` }
  ],
  patch: {
    tracker: { format: "bench", version, items: Array.from({ length: 200 }, (_, i) => ({ key: `file:src/f${i}.ts`, tier: "L2", n: version % 13, hash: `${i}`.padStart(16, "0"), tokens: 100 + i })) },
    journal: { requests: version, frozen: filler(30_000, "journal") },
    record: { turns: version, last: turnId }
  }
})

const worker = async (task) => {
  const { Effect, Layer, StateStore, store } = await load()
  const layer = task.store.kind === "file" ? store.FileStateStore.layer({ repoRoot: task.store.root }) : store.PostgresStateStore.layer({ url: task.store.url, schema: task.store.schema })
  const stats = { committed: 0, duplicates: 0, conflicts: 0, retries: 0, latencies: [] }
  const program = Effect.gen(function* () {
    const s = yield* StateStore
    for (let t = 0; t < task.turns; t++) {
      const key = task.keys[(task.worker * 7 + t) % task.keys.length]
      const turnId = `w${task.worker}-t${t}`
      for (;;) {
        const { snapshot } = yield* s.load(key)
        const started = performance.now()
        const r = yield* Effect.result(s.commit({ session: key, baseVersion: snapshot.version, turnId, ...payload(turnId, snapshot.version + 1) }))
        if (r._tag === "Success") {
          stats.latencies.push(performance.now() - started)
          if (r.success.duplicate) stats.duplicates++
          else stats.committed++
          break
        }
        if (r.failure._tag === "StateConflict") stats.conflicts++
        else if (r.failure._tag === "StateStoreError" && r.failure.retryable) stats.retries++
        else return yield* Effect.fail(r.failure)
      }
    }
  })
  await Effect.runPromise(program.pipe(Effect.provide(Layer.fresh(layer))))
  process.stdout.write(JSON.stringify(stats))
}

// ---- driver ---------------------------------------------------------------------------

const runWorker = (task) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--worker", JSON.stringify(task)], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolvePromise(JSON.parse(out)) : reject(new Error(`worker ${task.worker} exited ${code}`))))
  })

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

const bench = async (name, storeArg) => {
  const { Effect, Layer, StateStore, store } = await load()
  const run = `${process.pid}-${Date.now()}`
  const keys = Array.from({ length: SESSIONS }, (_, i) => ({ repository: `bench:${run}`, name: `s${i}` }))
  const started = performance.now()
  const results = await Promise.all(Array.from({ length: WORKERS }, (_, worker) => runWorker({ store: storeArg, keys, worker, turns: TURNS })))
  const wall = performance.now() - started
  // Every turn id must occur exactly once over all sessions, each followed by its answer.
  const layer = storeArg.kind === "file" ? store.FileStateStore.layer({ repoRoot: storeArg.root }) : store.PostgresStateStore.layer({ url: storeArg.url, schema: storeArg.schema })
  const snapshots = await Effect.runPromise(Effect.gen(function* () {
    const s = yield* StateStore
    return yield* Effect.forEach(keys, (k) => Effect.map(s.load(k), (l) => l.snapshot))
  }).pipe(Effect.provide(Layer.fresh(layer))))
  const seen = new Map()
  let broken = 0
  let versions = 0
  for (const snap of snapshots) {
    versions += snap.version
    snap.history.forEach((m, i) => {
      if (m.role !== "user") return
      const id = m.content.split(" ")[1]
      seen.set(id, (seen.get(id) ?? 0) + 1)
      if (!String(snap.history[i + 1]?.content ?? "").startsWith(`answer ${id} `)) broken++
    })
  }
  let lost = 0
  let duplicated = 0
  for (let w = 0; w < WORKERS; w++) {
    for (let t = 0; t < TURNS; t++) {
      const n = seen.get(`w${w}-t${t}`) ?? 0
      if (n === 0) lost++
      if (n > 1) duplicated += n - 1
    }
  }
  const sum = (f) => results.reduce((n, r) => n + f(r), 0)
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b)
  return {
    name,
    committed: sum((r) => r.committed),
    conflicts: sum((r) => r.conflicts),
    retries: sum((r) => r.retries),
    duplicates: sum((r) => r.duplicates),
    lost,
    duplicated: duplicated + broken,
    versions,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    wall
  }
}

const main = async () => {
  console.log(`bench/store  ${WORKERS} processes x ${TURNS} turns over ${SESSIONS} sessions; node ${process.version}, ${cpus().length} cpus, load ${loadavg()[0].toFixed(1)}`)
  console.log("turn: load, then commit a 2-message exchange (~1.6 KB), a 200-item tracker (~17 KB), a 30 KB journal, a session record; retried on conflict")
  const rows = []
  if (STORES.includes("file")) {
    const root = mkdtempSync(join(tmpdir(), "strata-bench-store-"))
    try {
      rows.push(await bench("file", { kind: "file", root }))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
  if (STORES.includes("postgres")) {
    let url = process.env.STRATA_BENCH_PG_URL
    let cluster
    if (url === undefined || url === "") {
      const { startCluster } = await import(pathToFileURL(resolve(here, "../../packages/store/scripts/pgCluster.mjs")).href)
      cluster = await startCluster()
      url = cluster.url
    }
    try {
      rows.push(await bench("postgres", { kind: "postgres", url, schema: "strata_bench" }))
    } finally {
      cluster?.stop()
    }
  }
  const pad = (v, n) => String(v).padStart(n)
  console.log(`\nstore      committed  conflicts retried  store retries  lost  duplicated  versions  commit p50 ms  p99 ms   wall s  turns/s`)
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(9)} ${pad(r.committed, 10)} ${pad(r.conflicts, 18)} ${pad(r.retries, 14)} ${pad(r.lost, 5)} ${pad(r.duplicated, 11)} ${pad(r.versions, 9)} ${pad(r.p50.toFixed(2), 14)} ${pad(r.p99.toFixed(2), 7)} ${pad((r.wall / 1000).toFixed(1), 8)} ${pad(Math.round(r.committed / (r.wall / 1000)), 8)}`
    )
  }
  const bad = rows.filter((r) => r.lost > 0 || r.duplicated > 0 || r.committed !== WORKERS * TURNS || r.versions !== WORKERS * TURNS)
  if (bad.length > 0) {
    console.log(`\nFAIL: ${bad.map((r) => r.name).join(", ")} lost or duplicated turns`)
    process.exitCode = 1
  } else console.log("\nevery turn stored exactly once in every store: PASS")
}

if (process.argv[2] === "--worker") await worker(JSON.parse(process.argv[3]))
else await main()
