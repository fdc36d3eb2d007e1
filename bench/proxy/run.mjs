// bench/proxy: the proxy's overhead against a local upstream. SESSIONS concurrent streamed
// sessions (Anthropic Messages, SSE) of STEPS requests each, every body about TOKENS tokens
// (a large system prompt plus a growing tool loop), sent once directly to the upstream and
// once through the proxy (a child process, so its CPU and memory are its own; the upstream
// has a process of its own too, so the clients' writes here do not delay its replies; the
// bodies are the same bytes as JSON.stringify's, sent as pieces encoded once, so a send
// costs the clients no 0.8 MB serialisation). Reports the
// time to first byte direct and proxied (p50, p99, and the difference of the two), the
// proxy's CPU per request, and its memory after each tenth of the requests. A breakdown
// follows the targets: for each request, from the client's first write to the upstream
// seeing its headers (direct: the connection; proxied: the whole body into the proxy, its
// planning and the forward), the upstream's read of the body, and from the upstream's first
// reply byte to the client's (the reply path); plus the proxy's event-loop delay. Requests
// carry an `x-bench-request` header so the proxy's breakdown can tell them apart, and the
// upstream's replies an `x-bench-marks` header with its own timestamps (measurement only).
//
//   PROXY_PROF=DIR node bench/proxy/run.mjs   # also writes a CPU profile of the proxy to DIR
//   PROXY_NODE_ARGS=--trace-gc node bench/proxy/run.mjs   # Node flags for the proxy's process
//   PROXY_HEAP=DIR node bench/proxy/run.mjs   # a heap snapshot of the proxy after the run
//   WARMUP=1 node bench/proxy/run.mjs         # one unmeasured pass through each path first
//   PROXY_FLOOR=1 node bench/proxy/run.mjs    # a bare store-and-forward proxy in its place (the floor)
//   PROXY_HEAP_TUNING=default node bench/proxy/run.mjs   # Strata on V8's heap defaults, not strata proxy's
//   PACE=agent node bench/proxy/run.mjs       # at an agent's pace (below), not back to back
//
// By default each session sends its next request the moment the previous reply ends, and
// the upstream answers at once: the 50 sessions keep the machine saturated, so the figures
// are those of a throughput test (a request waits behind the others' CPU). PACE=agent runs
// the same sessions at the pace an agent keeps: the upstream streams each reply over
// REPLY_MS (default 1000; its first event at once, so the direct time to first byte stays
// the path's own), the client then runs a tool step of 0-2 x TOOL_MS (default 250), and the
// sessions start spread over one such cycle. The waits come from a seeded generator per
// session, so the direct and the proxied pass keep the same schedule.
//
//   npx --yes pnpm@10.34.9 turbo run build --filter=@strata/proxy... && node bench/proxy/run.mjs
//   SESSIONS=50 STEPS=20 TOKENS=200000 STORE=memory node bench/proxy/run.mjs
import { fork } from "node:child_process"
import { Agent, createServer, request } from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import process from "node:process"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const SESSIONS = Number(process.env.SESSIONS ?? 50)
const STEPS = Number(process.env.STEPS ?? 20)
const TOKENS = Number(process.env.TOKENS ?? 200_000)
const STORE = process.env.STORE ?? "memory"
// WARMUP=1: one unmeasured pass of the same workload (other sessions) through each path
// first, so the figures are those of a warm process (JIT, caches) as a long-running proxy is.
const WARMUP = Number(process.env.WARMUP ?? 0)
const PACE = process.env.PACE ?? "none"
if (PACE !== "none" && PACE !== "agent") throw new Error(`bench: PACE is "none" or "agent", not "${PACE}"`)
const REPLY_MS = PACE === "agent" ? Number(process.env.REPLY_MS ?? 1000) : 0
const TOOL_MS = PACE === "agent" ? Number(process.env.TOOL_MS ?? 250) : 0

if (process.argv[2] === "--upstream") {
  // Upstream: reads the body, answers an SSE stream with usage at once (TTFB = its read time).
  // The reply's `x-bench-marks` header says when the request's headers and the end of its
  // body reached it (epoch milliseconds: the clients' process reads them on its own clock).
  const now = () => performance.timeOrigin + performance.now()
  // `x-bench-reply-ms` (PACE=agent): the deltas spread over that long, as a model writes them.
  const upstream = createServer((req, res) => {
    const headers = now()
    const replyMs = Number(req.headers["x-bench-reply-ms"] ?? 0)
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-bench-marks": `${headers},${now()}` })
      res.write(`event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":10,"cache_read_input_tokens":${TOKENS},"cache_creation_input_tokens":100,"output_tokens":1}}}\n\n`)
      const delta = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}\n\n`
      const end = `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}\n\n`
      if (!(replyMs > 0)) {
        res.write(delta)
        res.end(end)
        return
      }
      const deltas = 10
      let sent = 0
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer)
        res.write(delta)
        if (++sent < deltas) return
        clearInterval(timer)
        res.end(end)
      }, replyMs / deltas)
    })
  })
  upstream.keepAliveTimeout = 60_000
  await new Promise((r) => upstream.listen(0, "127.0.0.1", r))
  process.on("message", (m) => {
    if (m === "stop") {
      upstream.close()
      upstream.closeAllConnections()
      process.exit(0)
    }
  })
  process.send({ url: `http://127.0.0.1:${upstream.address().port}` })
} else if (process.argv[2] === "--child") {
  // The proxy, alone in this process.
  // PROXY_DIST: another build of the package (an A/B comparison on the same machine).
  // PROXY_FLOOR=1: instead of Strata, the least a store-and-forward proxy in Node does (read
  // the whole body, forward it unchanged, pipe the reply): the floor under the figures.
  const { startProxy, tuneHeapForProxy } = process.env.PROXY_FLOOR === "1"
    ? { startProxy: startFloorProxy }
    : await import(pathToFileURL(resolve(process.env.PROXY_DIST ?? resolve(here, "../../packages/proxy/dist"), "index.js")).href)
  // The process as `strata proxy` runs it (`runProxy` sizes the heap for the proxy). The
  // floor keeps V8's defaults: it keeps nothing between requests, so its collections are
  // young ones. PROXY_HEAP_TUNING=default: Strata on V8's defaults too (an A/B of the setting).
  if (tuneHeapForProxy !== undefined && process.env.PROXY_HEAP_TUNING !== "default") tuneHeapForProxy()
  const stateRoot = mkdtempSync(join(tmpdir(), "strata-bench-proxy-"))
  const proxy = await startProxy({ port: 0, upstream: process.argv[3], store: process.argv[4], stateRoot })
  const { monitorEventLoopDelay } = await import("node:perf_hooks")
  const loop = monitorEventLoopDelay({ resolution: 1 })
  // Inside the proxy (Node's HTTP diagnostics channels, the bench's request id): from the
  // last body byte to the upstream request (reading done, planning, the loop's queue), and
  // from there to the body handed to the kernel; from the upstream's reply headers to the
  // reply headers written to the client.
  const dc = await import("node:diagnostics_channel")
  const inside = new Map()
  const times = { plan: [], send: [], reply: [] }
  dc.subscribe("http.server.request.start", ({ request, response }) => {
    const id = request.headers["x-bench-request"]
    if (id === undefined) return
    const t = { end: 0 }
    inside.set(id, t)
    request.once("end", () => (t.end = performance.now()))
    const writeHead = response.writeHead
    response.writeHead = function (...args) {
      if (t.replyIn !== undefined) times.reply.push(performance.now() - t.replyIn)
      inside.delete(id)
      return writeHead.apply(this, args)
    }
  })
  dc.subscribe("http.client.request.start", ({ request }) => {
    const t = inside.get(request.getHeader("x-bench-request"))
    if (t === undefined) return
    const start = performance.now()
    times.plan.push(start - t.end)
    request.once("finish", () => times.send.push(performance.now() - start))
  })
  dc.subscribe("http.client.response.finish", ({ request }) => {
    const t = inside.get(request.getHeader("x-bench-request"))
    if (t !== undefined) t.replyIn = performance.now()
  })
  process.on("message", async (m) => {
    if (m === "stats") process.send({ kind: m, cpu: process.cpuUsage(), mem: process.memoryUsage() })
    if (m === "loop-start") {
      for (const k of Object.keys(times)) times[k] = []
      loop.reset()
      loop.enable()
      process.send({ kind: m })
    }
    if (m === "loop") {
      loop.disable()
      process.send({ kind: m, p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, times })
    }
    if (m === "stop") {
      // PROXY_HEAP=DIR: a heap snapshot of the proxy once every request is answered and committed.
      if (process.env.PROXY_HEAP !== undefined) {
        await proxy.settled?.()
        const { writeHeapSnapshot } = await import("node:v8")
        writeHeapSnapshot(join(process.env.PROXY_HEAP, `proxy-${process.pid}.heapsnapshot`))
      }
      await proxy.close()
      rmSync(stateRoot, { recursive: true, force: true })
      process.exit(0)
    }
  })
  process.send({ url: proxy.url })
} else {
  await main()
}

/** A seeded generator of numbers in [0, 1) (mulberry32). */
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms))
}

/** The floor (PROXY_FLOOR=1): store and forward with nothing else, on the same agent settings. */
async function startFloorProxy({ upstream }) {
  const base = new URL(upstream)
  const agent = new Agent({ keepAlive: true })
  // Bodies read into reused buffers, as the proxy does (a fresh megabyte costs page faults).
  const free = []
  const server = createServer((req, res) => {
    const declared = Number(req.headers["content-length"])
    let buffer = free.find((b) => b.length >= declared)
    if (buffer === undefined) buffer = Buffer.allocUnsafe(Math.max(declared, 2 ** 21))
    else free.splice(free.indexOf(buffer), 1)
    let size = 0
    req.on("data", (c) => (size += c.copy(buffer, size)))
    req.on("end", () => {
      const body = buffer.subarray(0, size)
      const headers = { ...req.headers, host: base.host, "content-length": String(body.length) }
      const up = request({ hostname: base.hostname, port: base.port, method: req.method, path: req.url, headers, agent }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers)
        ur.pipe(res)
      }).on("socket", (s) => s.setNoDelay(true))
      up.on("error", () => res.destroy())
      up.once("finish", () => free.push(buffer))
      up.end(body)
    })
  })
  server.on("connection", (s) => s.setNoDelay(true))
  server.keepAliveTimeout = 65_000
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
      agent.destroy()
    }
  }
}

async function main() {
  // The upstream runs in a process of its own, as the proxy does, so the clients' work in
  // this one (writing 50 bodies of 0.8 MB at once) does not delay its replies.
  const up = fork(fileURLToPath(import.meta.url), ["--upstream"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const { url: upstreamUrl } = await new Promise((r) => up.once("message", r))

  const prof = process.env.PROXY_PROF
  const child = fork(fileURLToPath(import.meta.url), ["--child", upstreamUrl, STORE], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: [...(prof === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${prof}`]), ...(process.env.PROXY_NODE_ARGS ?? "").split(" ").filter((a) => a !== "")]
  })
  // Replies carry the question's kind: two questions in flight (the tenths of two sessions
  // reached at once) each get their own answer.
  const ask = (m) =>
    new Promise((r) => {
      const on = (x) => {
        if (x?.kind !== m) return
        child.off("message", on)
        r(x)
      }
      child.on("message", on)
      child.send(m)
    })
  const { url: proxyUrl } = await new Promise((r) => child.once("message", r))

  // ~4 characters a token: a system prompt of most of the budget, then a tool loop.
  const system = "You are a careful coding agent. ".repeat(Math.floor((TOKENS * 4 * 0.9) / 32))
  const result = "x".repeat(Math.floor((TOKENS * 4 * 0.1) / STEPS))
  // A session's messages: its task, then a tool call and its result per step; the last
  // block of a request carries the agent's cache marker.
  const marker = { cache_control: { type: "ephemeral" } }
  const task = (s) => ({ role: "user", content: [{ type: "text", text: `Task ${s}: fix the bug.` }] })
  const call = (s, k) => ({ role: "assistant", content: [{ type: "tool_use", id: `t${s}_${k}`, name: "Read", input: { path: `src/f${k}.ts` } }] })
  const answer = (s, k) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${s}_${k}`, content: result }] })
  const marked = (m) => ({ ...m, content: [{ ...m.content[0], ...marker }] })
  const messagesOf = (s, step) => {
    const messages = [task(s)]
    for (let k = 0; k < step; k++) messages.push(call(s, k), answer(s, k))
    return [...messages.slice(0, -1), marked(messages.at(-1))]
  }
  const envelope = { model: "claude-sonnet-4-6", max_tokens: 8192, stream: true, system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }], tools: [{ name: "Read", input_schema: { type: "object" } }] }
  /** The request body of session `s` at `step`: what the agent would send (the definition). */
  const bodyFor = (s, step) => JSON.stringify({ ...envelope, messages: messagesOf(s, step) })
  // The same bytes, sent as pieces encoded once and shared (the envelope with the system
  // prompt by every request, each message by every later step of its session): a send
  // allocates and copies no 0.8 MB string, which on this kind of VM costs the clients
  // milliseconds of page faults per request and delayed every reply they read.
  const encode = (m) => Buffer.from(JSON.stringify(m))
  const head = Buffer.from(JSON.stringify(envelope).slice(0, -1) + ',"messages":[')
  const comma = Buffer.from(",")
  const tail = Buffer.from("]}")
  const bodyPieces = (() => {
    const memo = new Map() // each session's messages so far, encoded unmarked
    return (s, step) => {
      let done = memo.get(s)
      if (done === undefined || step === 0) memo.set(s, (done = [encode(task(s))]))
      // Steps only append: the earlier steps' messages, encoded unmarked, once.
      while (done.length < 2 * step - 1) {
        const k = (done.length - 1) / 2
        done.push(encode(call(s, k)), encode(answer(s, k)))
      }
      const messages = step === 0 ? [encode(marked(task(s)))] : [...done.slice(0, 2 * step - 1), encode(call(s, step - 1)), encode(marked(answer(s, step - 1)))]
      return [head, ...messages.flatMap((m, i) => (i === 0 ? [m] : [comma, m])), tail]
    }
  })()
  for (const [s, step] of [[0, 0], [0, 1], [0, 2], [1, 1], [2, STEPS - 1], [2, 0]]) {
    if (Buffer.concat(bodyPieces(s, step)).toString("utf8") === bodyFor(s, step)) continue
    // The children would keep this process alive.
    up.kill()
    child.kill()
    throw new Error(`bench: the pieces of session ${s} step ${step} differ from JSON.stringify's body`)
  }

  // One keep-alive agent per path (the server keeps idle sockets for 60 s).
  const agent = new Agent({ keepAlive: true })
  const errors = []
  let nextId = 0
  const send = (base, pieces, parts) =>
    new Promise((resolve) => {
      const id = String(nextId++)
      const t0 = performance.now()
      const req = request(new URL("/v1/messages?beta=true", base), { method: "POST", agent, headers: { "content-type": "application/json", "x-api-key": "bench", "x-bench-request": id, "x-bench-reply-ms": String(REPLY_MS), "content-length": pieces.reduce((n, p) => n + p.length, 0) } }, (res) => {
        let ttfb
        res.once("data", () => {
          const t = performance.now()
          ttfb = t - t0
          const [headers, end] = String(res.headers["x-bench-marks"]).split(",").map((x) => Number(x) - performance.timeOrigin)
          if (end !== undefined) parts.push([headers - t0, end - headers, t - end])
        })
        res.on("data", () => {})
        res.on("end", () => resolve(ttfb))
      })
      req.on("error", (e) => {
        errors.push(e.code ?? e.message)
        resolve(undefined)
      })
      for (const p of pieces) req.write(p)
      req.end()
    })

  const run = async (base, parts, onTenth, first = 0) => {
    const ttfb = []
    let done = 0
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, k) => {
        const s = first + k
        // PACE=agent: session k's waits, the same on every pass (the seed is k, not s).
        const random = mulberry32(k + 1)
        if (PACE === "agent") await sleep(random() * (REPLY_MS + TOOL_MS))
        for (let step = 0; step < STEPS; step++) {
          if (PACE === "agent" && step > 0) await sleep(random() * 2 * TOOL_MS)
          const t = await send(base, bodyPieces(s, step), parts)
          if (t !== undefined) ttfb.push(t)
          done++
          if (onTenth !== undefined && done % Math.max(1, Math.floor((SESSIONS * STEPS) / 10)) === 0) await onTenth(done)
        }
      })
    )
    return ttfb
  }

  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b)
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
  }
  const ms = (x) => `${x.toFixed(2)} ms`

  console.log(`load average ${(await import("node:os")).loadavg().map((x) => x.toFixed(1)).join(" ")} on ${(await import("node:os")).cpus().length} cores`)
  console.log(`bench/proxy: ${SESSIONS} concurrent sessions x ${STEPS} streamed requests, ~${TOKENS.toLocaleString("en-US")}-token bodies (${(bodyFor(0, STEPS - 1).length / 1e6).toFixed(2)} MB), store ${STORE}, ${PACE === "agent" ? `at an agent's pace (replies streamed over ${REPLY_MS} ms, tool steps of 0-${2 * TOOL_MS} ms)` : "back to back (saturated)"}`)
  const directParts = []
  for (let w = 1; w <= WARMUP; w++) {
    await run(upstreamUrl, [], undefined, w * 100_000)
    await run(proxyUrl, [], undefined, w * 100_000)
  }
  if (WARMUP > 0) console.log(`warm-up: ${WARMUP} unmeasured pass(es) through each path`)
  const direct = await run(upstreamUrl, directParts)
  console.log(`direct: ${direct.length} requests answered, ${errors.length} failed (${[...new Set(errors)].join(", ")})`)
  errors.length = 0
  const cpu0 = (await ask("stats")).cpu
  const memory = []
  const proxiedParts = []
  await ask("loop-start")
  const proxied = await run(proxyUrl, proxiedParts, async (n) => {
    const { mem } = await ask("stats")
    memory.push([n, mem.rss, mem.heapUsed])
  })
  console.log(`proxied: ${proxied.length} requests answered, ${errors.length} failed (${[...new Set(errors)].join(", ")})`)
  const { cpu: cpu1 } = await ask("stats")
  const loop = await ask("loop")
  const n = SESSIONS * STEPS
  const cpuPerRequest = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1000 / n
  console.log(`time to first byte   direct p50 ${ms(pct(direct, 50))} p99 ${ms(pct(direct, 99))}`)
  console.log(`                     proxy  p50 ${ms(pct(proxied, 50))} p99 ${ms(pct(proxied, 99))}`)
  console.log(`added by the proxy   p50 ${ms(pct(proxied, 50) - pct(direct, 50))} p99 ${ms(pct(proxied, 99) - pct(direct, 99))}   (targets: < 5 ms, < 25 ms)`)
  console.log(`proxy CPU per request (mean over ${n}) ${ms(cpuPerRequest)}   (target p50 < 10 ms)   user ${ms((cpu1.user - cpu0.user) / 1000 / n)} system ${ms((cpu1.system - cpu0.system) / 1000 / n)}`)
  const part = (rows, i, p) => pct(rows.map((r) => r[i]), p)
  console.log(`breakdown (p50 / p99)  client -> upstream headers | upstream reads the body | upstream reply -> client`)
  for (const [name, rows] of [["direct", directParts], ["proxy ", proxiedParts]]) {
    console.log(`  ${name}               ${[0, 1, 2].map((i) => `${ms(part(rows, i, 50))} / ${ms(part(rows, i, 99))}`).join(" | ")}`)
  }
  console.log(`inside the proxy (p50 / p99): body read -> upstream request ${ms(pct(loop.times.plan, 50))} / ${ms(pct(loop.times.plan, 99))} | body to the kernel ${ms(pct(loop.times.send, 50))} / ${ms(pct(loop.times.send, 99))} | upstream reply -> client headers ${ms(pct(loop.times.reply, 50))} / ${ms(pct(loop.times.reply, 99))}`)
  console.log(`proxy event-loop delay p50 ${ms(loop.p50)} p99 ${ms(loop.p99)} max ${ms(loop.max)}`)
  console.log(`proxy memory after each tenth of the requests (MB rss / heap):`)
  console.log("  " + memory.map(([k, rss, heap]) => `${k}: ${(rss / 1e6).toFixed(0)}/${(heap / 1e6).toFixed(0)}`).join("  "))
  // The child answers "stop" by exiting (after the proxy's graceful close).
  agent.destroy()
  await new Promise((r) => {
    child.once("exit", r)
    child.send("stop")
  })
  up.send("stop")
}
