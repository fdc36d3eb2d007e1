// The work after a reply (the as-sent simulator, the store commit) runs off the request
// path: the next request of a session is planned from the state its previous request left
// in memory, not from the store. Here the store holds every commit until the test lets it
// go: the requests must still get the bytes a sequential proxy sends, the proxy's close
// must wait for the commits, and a store that fails must not break forwarding.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import fc from "fast-check"
import { Effect, Layer, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StateStore, StateStoreError } from "@strata/core"
import { makeMemoryStateStore } from "@strata/core/effect"
import { ProxySessionRecord, startProxy, type ProxyLogLine } from "@strata/proxy"
import { makeIdleQueue, nextTurn } from "../src/internal/idle.ts"
import { driveAnthropic } from "./drive.ts"

type Json = Record<string, unknown>
const KEY = "sk-ant-queue-test-key-0123456789"
const SYSTEM = [{ type: "text", text: "You are a coding agent. ".repeat(300), cache_control: { type: "ephemeral" } }]
const TOOLS = ["Read", "Bash"].map((name) => ({ name, description: name, input_schema: { type: "object", properties: {} } }))

/** A tool loop: file 1 read twice, then commands; the agent marks its last block. */
const STEPS: ReadonlyArray<readonly ["Read" | "Bash", number]> = [["Read", 1], ["Bash", 0], ["Read", 1], ["Bash", 2], ["Bash", 3], ["Bash", 0], ["Bash", 1]]
const bodies: ReadonlyArray<Json> = (() => {
  const messages: Array<Json> = [{ role: "user", content: [{ type: "text", text: "Fix the bug." }] }]
  const out: Array<Json> = []
  STEPS.forEach(([tool, arg], i) => {
    const last = messages[messages.length - 1]!
    const content = [...(last["content"] as Array<Json>)]
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: "ephemeral" } }
    out.push({ model: "claude-sonnet-4-5", max_tokens: 4096, stream: true, system: SYSTEM, tools: TOOLS, messages: [...messages.slice(0, -1), { ...last, content }] })
    const input = tool === "Bash" ? { command: `make test${arg}` } : { file_path: `/r/f${arg}.ts` }
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `toolu_${i}`, name: tool, input }] })
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `${tool} ${arg} #${i}\n` + "line of output\n".repeat(300) }] })
  })
  return out
})()
// Seconds: a burst, then a pause past the 5-minute lifetime (edit mode clears toolu_0 then).
const TIMES = [0, 5, 10, 15, 20, 25, 925]

let upstream: Server
let upstreamUrl = ""
/** Resolves when the upstream sees a hung request (`x-hang`) closed by the proxy. */
let hungClosed: Promise<void> = Promise.resolve()
beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume()
    if (req.headers["x-overloaded"] !== undefined) {
      res.writeHead(529, { "content-type": "application/json" })
      res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))
      return
    }
    if (req.headers["x-hang"] !== undefined) {
      hungClosed = new Promise((resolve) => res.on("close", () => resolve()))
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`event: ping\ndata: {"type":"ping"}\n\n`)
      return
    }
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}}}\n\n`)
      res.end(`event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}\n\n`)
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())))

/** A memory store whose commits wait for `release()` (or fail, with `fail`), counting those that landed. */
const heldStore = (options: { readonly fail?: boolean } = {}) => {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const state = { landed: 0 }
  const layer = Layer.effect(
    StateStore,
    Effect.map(makeMemoryStateStore, (store) => ({
      ...store,
      commit: (turn: Parameters<typeof store.commit>[0]) =>
        options.fail === true
          ? Effect.fail(new StateStoreError({ store: "held", operation: "commit", reason: "the disk is full", retryable: false }))
          : Effect.promise(() => released).pipe(
              Effect.flatMap(() => store.commit(turn)),
              Effect.tap(() => Effect.sync(() => state.landed++))
            )
    }))
  )
  return { layer, release: () => release(), state }
}

const post = async (url: string, body: string): Promise<string> => {
  const res = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY }, body })
  expect(res.status).toBe(200)
  return res.text()
}

/** Send the session one request after the other (each after the previous reply), at TIMES. */
const runSession = async (store: ReturnType<typeof heldStore>, lines: Array<ProxyLogLine> = [], count = bodies.length) => {
  const clock = { now: 0 }
  const forwarded: Array<string> = []
  const proxy = await startProxy({
    port: 0,
    upstream: upstreamUrl,
    mode: "edit",
    store: store.layer,
    now: () => clock.now,
    log: (l) => lines.push(l),
    onForward: ({ forwarded: f }) => forwarded.push(f.toString("utf8"))
  })
  for (const [i, body] of bodies.slice(0, count).entries()) {
    clock.now = TIMES[i]!
    expect(await post(proxy.url, JSON.stringify(body))).toContain("message_delta")
  }
  return { proxy, forwarded, clock }
}

describe("the work after a reply", () => {
  it("plans each request from the previous one's state before its commit lands: the bytes of the transform with the whole session state; close waits for the commits", async () => {
    const held = heldStore()
    const { proxy, forwarded } = await runSession(held)
    // No commit has landed: every request after the first was planned from memory.
    expect(held.state.landed).toBe(0)
    expect(proxy.sessions()).toEqual([])
    // What the transform sends with the whole session state, request after request.
    const driven = driveAnthropic("edit", bodies, TIMES)
    expect(forwarded).toEqual(driven.map((o) => JSON.stringify(o.body)))
    // The pause before the last request cost the cache: the re-read file's first result was cleared.
    expect(forwarded[6]).toContain("[strata proxy: cleared the superseded result of Read (toolu_0)")
    let closed = false
    const closing = proxy.close().then(() => (closed = true))
    await nextTurn()
    await nextTurn()
    expect(closed).toBe(false)
    held.release()
    await closing
    expect(held.state.landed).toBe(bodies.length)
    // The commits, in order, leave the record a sequential proxy leaves.
    const [record] = proxy.sessions()
    expect(record?.totals.requests).toBe(bodies.length)
    expect(record?.exchanges.map((e) => e.n)).toEqual(bodies.map((_, i) => i + 1))
    expect(record?.gaps).toEqual(TIMES.slice(1).map((t, i) => t - TIMES[i]!))
    expect(record?.ledger).toEqual(driven.at(-1)!.ledger)
  })

  /**
   * The session up to its last request, which fails at 200 s (`fail`) and is retried at
   * 450 s: 425 s after the last answered request, the cache is gone. The retry must be
   * planned as if the failed request had never been sent.
   */
  const failThenRetry = async (fail: (url: string, body: string) => Promise<void>) => {
    const held = heldStore()
    const { proxy, forwarded, clock } = await runSession(held, [], bodies.length - 1)
    const last = JSON.stringify(bodies.at(-1))
    clock.now = 200
    await fail(proxy.url, last)
    clock.now = 450
    expect(await post(proxy.url, last)).toContain("message_delta")
    const retried = driveAnthropic("edit", bodies, [...TIMES.slice(0, -1), 450]).at(-1)!
    const remembered = driveAnthropic("edit", [...bodies, bodies.at(-1)!], [...TIMES.slice(0, -1), 200, 450]).at(-1)!
    // The scenario tells the two apart: planned from the failed request, the bytes differ.
    expect(JSON.stringify(remembered.body)).not.toBe(JSON.stringify(retried.body))
    expect(forwarded.at(-1)).toBe(JSON.stringify(retried.body))
    held.release()
    await proxy.settled()
    await proxy.close()
    const [record] = proxy.sessions()
    expect(record?.gaps.at(-1)).toBe(425)
    expect(record?.ledger).toEqual(retried.ledger)
    return record
  }

  it("forgets a request whose client left before the reply: the retry is planned as if it had never been sent", async () => {
    const record = await failThenRetry(async (url, body) => {
      const aborted = new AbortController()
      const reply = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, "x-hang": "1" }, body, signal: aborted.signal })
      expect(reply.status).toBe(200)
      aborted.abort()
      await hungClosed
    })
    expect(record?.totals.requests).toBe(bodies.length)
  })

  it("records a request the provider refused but plans the retry as if it had not been sent, even before the refusal's commit lands", async () => {
    const record = await failThenRetry(async (url, body) => {
      const refused = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, "x-overloaded": "1" }, body })
      expect(refused.status).toBe(529)
      expect(await refused.text()).toContain("overloaded_error")
    })
    // The refused exchange is in the record; the session's state skips it.
    expect(record?.exchanges.map((e) => e.status)).toEqual([...bodies.slice(1).map(() => 200), 529, 200])
  })

  it("forwards every request when the store fails, says so once per request, and never prints the key", async () => {
    const lines: Array<ProxyLogLine> = []
    const failing = heldStore({ fail: true })
    const { proxy, forwarded } = await runSession(failing, lines)
    await proxy.settled()
    await proxy.close()
    expect(forwarded).toHaveLength(bodies.length)
    const notices = lines.flatMap((l) => (l.kind === "notice" ? [l.message] : []))
    expect(notices).toHaveLength(bodies.length)
    for (const n of notices) expect(n).toMatch(/the state store failed \(Session store held failed to commit: the disk is full\); the reply was forwarded, its record is lost/)
    expect(JSON.stringify(lines)).not.toContain(KEY)
    // Nothing was stored, so each request was planned as its session's first: the cache-only
    // transform of that body alone, never a clearing.
    for (const f of forwarded) expect(f).not.toContain("[strata proxy: cleared")
  })
})

describe("several proxies on one store", () => {
  it("plans and commits a session that alternates between two proxies as one proxy would: the same bytes, every commit kept", async () => {
    // One store, two proxies (two processes sharing PostgreSQL, in miniature): the session
    // alternates between them, so each request but the first is planned by a proxy that
    // did not see the one before, and committed against a version it has not seen.
    const shared = await Effect.runPromise(makeMemoryStateStore)
    const layer = Layer.succeed(StateStore, shared)
    const clock = { now: 0 }
    const lines: Array<ProxyLogLine> = []
    const forwarded: Array<string> = []
    const open = () =>
      startProxy({
        port: 0,
        upstream: upstreamUrl,
        mode: "edit",
        store: layer,
        now: () => clock.now,
        log: (l) => lines.push(l),
        onForward: ({ forwarded: f }) => forwarded.push(f.toString("utf8"))
      })
    const proxies = [await open(), await open()] as const
    // The pause comes before the second proxy's last request: it clears, the first proxy's
    // next request must carry the same placeholder.
    const times = [0, 5, 10, 15, 20, 920, 925]
    for (const [i, body] of bodies.entries()) {
      clock.now = times[i]!
      const proxy = proxies[i % 2]!
      expect(await post(proxy.url, JSON.stringify(body))).toContain("message_delta")
      await proxy.settled()
    }
    for (const proxy of proxies) await proxy.close()
    expect(lines.filter((l) => l.kind === "notice")).toEqual([])
    // What one proxy sends for the whole session: the gaps, the block counts and the
    // clearing ledger another proxy's requests left are planned from.
    const driven = driveAnthropic("edit", bodies, times)
    expect(forwarded).toEqual(driven.map((o) => JSON.stringify(o.body)))
    for (const f of forwarded.slice(5)) expect(f).toContain("[strata proxy: cleared the superseded result of Read (toolu_0)")
    const [listed] = await Effect.runPromise(shared.sessions())
    expect(listed?.version).toBe(bodies.length)
    const { snapshot } = await Effect.runPromise(shared.load(listed!.key))
    const record = Schema.decodeUnknownSync(ProxySessionRecord)(snapshot.record)
    expect(record.totals.requests).toBe(bodies.length)
    expect(record.exchanges.map((e) => e.n)).toEqual(bodies.map((_, i) => i + 1))
    expect(record.gaps).toEqual(times.slice(1).map((t, i) => t - times[i]!))
    expect(record.ledger).toEqual(driven.at(-1)!.ledger)
    const page = await Effect.runPromise(shared.requests(listed!.key, { from: 0, limit: 10 }))
    expect(page.requests).toHaveLength(bodies.length)
  })
})

describe("sessions in memory", () => {
  it("keeps the latest sessions' records in memory and plans an older session from the store when it sends again, as if it had never left", async () => {
    const shared = await Effect.runPromise(makeMemoryStateStore)
    const clock = { now: 0 }
    const lines: Array<ProxyLogLine> = []
    const forwarded: Array<string> = []
    const proxy = await startProxy({
      port: 0,
      upstream: upstreamUrl,
      mode: "edit",
      store: Layer.succeed(StateStore, shared),
      maxSessionsInMemory: 2,
      now: () => clock.now,
      log: (l) => lines.push(l),
      onForward: ({ forwarded: f }) => forwarded.push(f.toString("utf8"))
    })
    const send = async (at: number, body: Json) => {
      clock.now = at
      expect(await post(proxy.url, JSON.stringify(body))).toContain("message_delta")
      await proxy.settled()
    }
    for (const [i, body] of bodies.slice(0, -1).entries()) await send(TIMES[i]!, body)
    // Two other sessions (other tasks) push the first one out of memory.
    for (const k of [1, 2]) await send(30 + k, { ...bodies[0], messages: [{ role: "user", content: [{ type: "text", text: `Another task ${k}.` }] }] })
    expect(proxy.sessions()).toHaveLength(2)
    expect(proxy.sessions().map((r) => r.totals.requests)).toEqual([1, 1])
    // Its last request comes after the pause: planned from the stored record (gaps,
    // ledger), it clears what a proxy that never let go of the session clears.
    await send(TIMES.at(-1)!, bodies.at(-1)!)
    await proxy.close()
    expect(lines.filter((l) => l.kind === "notice")).toEqual([])
    const driven = driveAnthropic("edit", bodies, TIMES)
    expect(forwarded.at(-1)).toBe(JSON.stringify(driven.at(-1)!.body))
    expect(forwarded.at(-1)).toContain("[strata proxy: cleared the superseded result of Read (toolu_0)")
    const [latest] = proxy.sessions()
    expect(latest?.totals.requests).toBe(bodies.length)
    expect(latest?.exchanges.map((e) => e.n)).toEqual(bodies.map((_, i) => i + 1))
    expect(latest?.ledger).toEqual(driven.at(-1)!.ledger)
    expect(await Effect.runPromise(shared.sessions())).toHaveLength(3)
  })
})

describe("the idle queue", () => {
  it("runs every job once, a key's jobs in order and one at a time, other keys alongside (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 40 }), async (jobs) => {
        const queue = makeIdleQueue({ maxQueued: 4, maxRunning: 3 })
        const ran: Array<[number, number]> = []
        const active = new Map<number, number>()
        let maxActive = 0
        const done = jobs.map(([key, turns], i) =>
          queue.push(String(key), async () => {
            expect(active.get(key) ?? 0).toBe(0)
            active.set(key, 1)
            maxActive = Math.max(maxActive, [...active.values()].reduce((a, b) => a + b, 0))
            for (let t = 0; t < turns; t++) await nextTurn()
            if (i % 5 === 4) throw new Error("a failing job")
            ran.push([key, i])
            active.set(key, 0)
          }).then(() => active.set(key, 0))
        )
        await queue.drained()
        await Promise.all(done)
        expect(queue.size()).toBe(0)
        // At most `maxRunning` at once while the queue is within its bound (over it, the
        // queue catches up past `maxRunning`: the next test).
        if (jobs.length <= 4) expect(maxActive).toBeLessThanOrEqual(3)
        const expected = jobs.flatMap(([key], i) => (i % 5 === 4 ? [] : [[key, i] as [number, number]]))
        for (let key = 0; key <= 3; key++) expect(ran.filter(([k]) => k === key)).toEqual(expected.filter(([k]) => k === key))
      }),
      { numRuns: 50 }
    )
  })

  it("over its bound, starts every job whose key is free at once, so the waiting jobs never outgrow the bound", async () => {
    const queue = makeIdleQueue({ maxQueued: 4, maxRunning: 3 })
    let release = (): void => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    let started = 0
    // 20 sessions, each with one job that waits on the gate (a slow store).
    const done = Array.from({ length: 20 }, (_, k) =>
      queue.push(String(k), async () => {
        started++
        await gate
      })
    )
    await nextTurn()
    await nextTurn()
    // Within the bound it would have started one job a turn, at most 3 at once.
    expect(started).toBeGreaterThanOrEqual(20 - 4)
    release()
    await Promise.all(done)
    await queue.drained()
    expect(started).toBe(20)
    expect(queue.size()).toBe(0)
  })
})
