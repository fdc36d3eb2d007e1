// bench/ui: how long the dashboard takes to show a 1,000-request session in headless
// chromium (target < 1 s, reported, not asserted), and what each commit costs. The session
// is built with core's `recordedRequest` and `recordTurn` (what every turn commits) from a
// seeded generator, committed turn by turn to the file store, and served by @strata/ui's
// `serveDashboard`.
//
//   npx --yes pnpm@10.34.9 turbo run build --filter=@strata/ui... && node bench/ui/run.mjs
//   REQUESTS=1000 RUNS=5 node bench/ui/run.mjs
/* global process, console */
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"
import { median, rng } from "../support.mjs"

const here = dirname(fileURLToPath(import.meta.url))
const uiDir = resolve(here, "../../packages/ui")
const fromUi = createRequire(join(uiDir, "package.json"))
const imp = (name) => import(pathToFileURL(fromUi.resolve(name)).href)

const REQUESTS = Number(process.env.REQUESTS ?? 1000)
const RUNS = Number(process.env.RUNS ?? 5)
const CHROMIUM = process.env.STRATA_CHROMIUM ?? "/usr/bin/chromium"

const { Effect } = await imp("effect")
const core = await imp("@strata/core/effect")
const store = await imp("@strata/store")
const ui = await import(pathToFileURL(join(uiDir, "dist/index.js")).href)
const playwright = await imp("playwright-core")
const chromium = playwright.chromium ?? playwright.default.chromium

// ---- a seeded 1,000-request agent session, committed turn by turn -------------------------
// Each commit carries the turn's request summary (`TurnCommit.request`, kept with the turn)
// and the session record (totals and the last request's blocks), as core's turn does.
const random = rng(7)
const categories = (history) => ({ tools: 900, system: 1200, legend: 150, symbols: 6000, files: 4000, tree: 500, urls: 0, review: 0, history, prompt: 40, other: 20, framing: 60 })
const root = mkdtempSync(join(tmpdir(), "strata-bench-ui-"))
const key = { repository: "bench:ui", name: "agent-1000" }
const fileStore = await Effect.runPromise(store.makeFileStateStore({ repoRoot: root }))
let record = core.EMPTY_RECORD
let history = 2000
const commitTimes = []
const commitBytes = []
for (let i = 0; i < REQUESTS; i++) {
  history += Math.floor(200 + random() * 1500)
  const missed = random() < 0.03
  const prompt = 12_870 + history
  const write = missed ? prompt - 1200 : Math.floor(300 + random() * 1500)
  const usage = { input: 60, cacheRead: prompt - write - 60, cacheWrite: write, output: Math.floor(50 + random() * 400), ...(missed ? { cacheWriteByTtl: { "1h": 1200 } } : {}) }
  const blocks = [
    { tier: "L0", tokens: 2250, items: 2, hash: "a".repeat(16), breakpoint: "1h", text: "system" },
    { tier: "L1", tokens: 6000, items: 40, hash: missed ? `b${i}`.padEnd(16, "0") : "b".repeat(16), breakpoint: "5m", text: "map" },
    { tier: "L3", tokens: 4000 + history, items: 10 + i, hash: `c${i}`.padEnd(16, "0"), breakpoint: "5m", text: "journal" },
    { tier: "active", tokens: 100, items: 1, hash: `d${i}`.padEnd(16, "0"), breakpoint: undefined, text: "prompt" }
  ]
  const turn = {
    provider: "anthropic",
    model: "claude-sonnet-4-6",
    at: 1_767_225_600_000 + i * 20_000,
    promptTokens: prompt,
    usage,
    usageSource: "provider",
    changes: [],
    emptyTiers: 1,
    selected: ["src/a.ts"],
    aliases: undefined,
    source: "api",
    ...(missed ? { lastMiss: "the prefix changed at block 2 (L1): file src/a.ts was edited" } : {}),
    shape: { content: categories(history), blocks, cleared: undefined }
  }
  const started = performance.now()
  const request = core.recordedRequest(record, turn)
  record = core.recordTurn(record, turn)
  const commit = { session: key, baseVersion: i, turnId: `t${i}`, append: [], patch: { record }, request }
  commitBytes.push(Buffer.byteLength(JSON.stringify(commit)))
  await Effect.runPromise(fileStore.commit(commit))
  commitTimes.push(performance.now() - started)
}
const recordBytes = Buffer.byteLength(JSON.stringify(record))
const server = await ui.serveDashboard({ store: fileStore, catalog: ui.storeSessionCatalog(fileStore, [key.repository]), port: 0 })
const id = ui.sessionId(key)

// ---- the endpoint, then the page --------------------------------------------------------
const cold = performance.now()
await (await fetch(new URL(`/_strata/api/sessions/${encodeURIComponent(id)}`, server.url))).json()
const coldMs = performance.now() - cold
const viewBytes = Buffer.byteLength(await (await fetch(new URL(`/_strata/api/sessions/${encodeURIComponent(id)}`, server.url))).text())
const apiTimes = []
for (let i = 0; i < RUNS; i++) {
  const t = performance.now()
  await (await fetch(new URL(`/_strata/api/sessions/${encodeURIComponent(id)}`, server.url))).json()
  apiTimes.push(performance.now() - t)
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
})
const renderTimes = []
const scriptTimes = []
const cpuTimes = []
try {
  for (let i = 0; i < RUNS + 1; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const cdp = process.env.DEBUG_PROFILE ? await context.newCDPSession(page) : undefined
    if (cdp) { await cdp.send("Profiler.enable"); await cdp.send("Profiler.start") }
    // The renderer main thread's CPU time: a figure that other processes on a busy machine disturb far less than wall time.
    const metrics = await context.newCDPSession(page)
    await metrics.send("Performance.enable", { timeDomain: "threadTicks" })
    const threadTime = async () => (await metrics.send("Performance.getMetrics")).metrics.find((m) => m.name === "ThreadTime")?.value ?? NaN
    const cpu0 = await threadTime()
    const t = performance.now()
    await page.goto(`${server.url}#/s/${encodeURIComponent(id)}`)
    await page.locator(`#requests tr[data-request="${REQUESTS - 1}"]`).waitFor({ state: "attached", timeout: 60_000 })
    await page.locator("canvas").nth(2).waitFor({ state: "attached" })
    const wall = performance.now() - t
    const cpu = (await threadTime()) - cpu0
    if (cdp) {
      const { profile } = await cdp.send("Profiler.stop")
      const self = new Map()
      const dt = profile.timeDeltas
      const byId = new Map(profile.nodes.map((n) => [n.id, n]))
      profile.samples.forEach((id, k) => { const n = byId.get(id); const key = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.slice(-20)}:${n.callFrame.lineNumber}:${n.callFrame.columnNumber}`; self.set(key, (self.get(key) ?? 0) + (dt[k] ?? 0) / 1000) })
      console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${v.toFixed(0)}ms ${k}`).join("\n"))
    }
    // In-page: from navigation start to the table and charts in the DOM (no test driver round trips).
    const inPage = await page.evaluate("performance.now()")
    if (process.env.DEBUG_TIMING) console.log(await page.evaluate("JSON.stringify(performance.getEntriesByType('resource').map(e => [e.name.slice(-40), Math.round(e.startTime), Math.round(e.responseEnd)]))"), Math.round(inPage))
    if (i > 0) {
      renderTimes.push(wall)
      scriptTimes.push(inPage)
      cpuTimes.push(cpu * 1000)
    }
    await context.close()
  }
} finally {
  await browser.close()
  await server.close()
  rmSync(root, { recursive: true, force: true })
}

const ms = (v) => `${v.toFixed(1)} ms`
console.log(`bench/ui  session of ${REQUESTS} requests, ${RUNS} runs (first page load discarded)`)
console.log(`session record after ${REQUESTS} requests: ${(recordBytes / 1024).toFixed(1)} KiB (totals and the last request's blocks; summaries live with the turns)`)
console.log(`one commit (record + request summary) at the ${REQUESTS}th request: ${(median(commitBytes.slice(-100)) / 1024).toFixed(1)} KiB; file-store commit time (median of the last 100): ${ms(median(commitTimes.slice(-100)))}`)
console.log(`GET /_strata/api/sessions/:id cold (reads ${REQUESTS} summaries from the store): ${ms(coldMs)}; cached (median): ${ms(median(apiTimes))}`)
console.log(`page shows the session (${REQUESTS} requests: figures, 3 charts of at most 250 bars, the requests table at its latest row), wall time from goto (median): ${ms(median(renderTimes))}`)
console.log(`  GET /_strata/api/sessions/:id body: ${(viewBytes / 1024).toFixed(1)} KiB`)
console.log(`  in-page time since navigation start (median): ${ms(median(scriptTimes))}  (target < 1000 ms: ${median(scriptTimes) < 1000 ? "met" : "NOT met"})`)
console.log(`  renderer main-thread CPU time for it (median): ${ms(median(cpuTimes))}`)
console.log(`machine: load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`)
