// Bad input and faults: malformed bodies forwarded unchanged, a client that disconnects
// mid-stream aborts the upstream request and records nothing, an upstream cut reaches the
// client, upstream errors pass through as sent, only the configured upstream is contacted,
// 50 interleaved sessions are never mixed, and the key never appears in any output or file.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anthropicEvents, startServer, sse, json, type TestServer } from "@strata/test-support/http"
import { startProxy, withoutCacheControls, type ProxyLogLine, type ProxyServer } from "@strata/proxy"

const KEY = "sk-ant-fault-KEY-5a0c77e1d3"
const dir = mkdtempSync(join(tmpdir(), "strata-proxy-faults-"))

const usageEvents = (text: string, read: number) =>
  anthropicEvents([{ text }], { id: "m", usage: { input_tokens: 10, cache_read_input_tokens: read, cache_creation_input_tokens: 5 }, outputTokens: 7 })

/** The upstream: behaviour chosen by the request's first user text. */
let upstream: TestServer
let proxy: ProxyServer
const lines: Array<ProxyLogLine> = []
let upstreamAborts = 0

const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; error?: string }> =>
  new Promise((resolve) => {
    const url = new URL(path, proxy.url)
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01", ...headers } }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      res.on("error", (e) => resolve({ status: res.statusCode ?? 0, text, error: e.message }))
      res.on("aborted", () => resolve({ status: res.statusCode ?? 0, text, error: "aborted" }))
    })
    req.on("error", (e) => resolve({ status: 0, text: "", error: e.message }))
    req.end(body)
  })

const firstText = (j: unknown): string => {
  const m = (j as { messages?: Array<{ content?: unknown }> } | undefined)?.messages?.[0]?.content
  if (typeof m === "string") return m
  if (Array.isArray(m) && typeof (m[0] as { text?: unknown })?.text === "string") return (m[0] as { text: string }).text
  return ""
}

beforeAll(async () => {
  upstream = await startServer(async (r, _n, res) => {
    const what = firstText(r.json)
    if (what.startsWith("rate")) return json(res, 429, { type: "error", error: { type: "rate_limit_error", message: "slow down" } }, { "retry-after": "7" })
    if (what.startsWith("cut")) {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1}}}\n\n`)
      setTimeout(() => res.destroy(), 20)
      return
    }
    if (what.startsWith("slow")) {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`event: ping\ndata: {"type":"ping"}\n\n`)
      ;(res as unknown as { on: (e: string, f: () => void) => void }).on("close", () => upstreamAborts++)
      return // never ends: the client gives up
    }
    if (r.json === undefined) return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "bad json" } })
    await sse(res, usageEvents(`echo ${what}`, 1000))
  })
  proxy = await startProxy({ port: 0, upstream: upstream.url, store: "file", stateRoot: dir, recordDir: join(dir, "record"), log: (l) => lines.push(l) })
})

afterAll(async () => {
  await proxy.close()
  await upstream.close()
  rmSync(dir, { recursive: true, force: true })
})

const body = (text: string, extra: ReadonlyArray<unknown> = []) =>
  JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 64, stream: true, system: [{ type: "text", text: "You are terse." }], messages: [{ role: "user", content: [{ type: "text", text }] }, ...extra] })

describe("bad input and faults", () => {
  it("forwards a malformed body byte for byte and passes the provider's answer back", async () => {
    const before = upstream.requests.length
    const bad = '{"model": "claude-sonnet-4-5", "messages": [ oops'
    const res = await post("/v1/messages?beta=true", bad)
    expect(res.status).toBe(400)
    expect(res.text).toContain("bad json")
    const got = upstream.requests[before]!
    expect(got.body).toBe(bad)
    expect(got.path).toBe("/v1/messages?beta=true")
    expect(lines.some((l) => l.kind === "notice" && l.message.includes("not JSON"))).toBe(true)
  })

  it("passes a 429 with retry-after through as sent, once (no retry)", async () => {
    const before = upstream.requests.length
    const res = await post("/v1/messages", body("rate limited please"))
    expect(res.status).toBe(429)
    expect(res.text).toContain("slow down")
    expect(upstream.requests.length - before).toBe(1)
  })

  it("lets the client see an upstream cut", async () => {
    const res = await post("/v1/messages", body("cut me"))
    expect(res.error).toBeDefined()
  })

  it("aborts the upstream request when the client disconnects, and records nothing", async () => {
    const before = upstreamAborts
    await new Promise<void>((resolve) => {
      const req = request(new URL("/v1/messages", proxy.url), { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY } }, (res) => {
        res.once("data", () => {
          req.destroy()
          resolve()
        })
      })
      req.end(body("slow stream"))
    })
    for (let i = 0; i < 100 && upstreamAborts === before; i++) await new Promise((r) => setTimeout(r, 20))
    expect(upstreamAborts).toBe(before + 1)
    const recorded = existsSync(join(dir, "record")) ? readdirSync(join(dir, "record")).map((f) => readFileSync(join(dir, "record", f), "utf8")) : []
    expect(recorded.join("")).not.toContain("slow stream")
  })

  it("forwards count_tokens and unknown paths unchanged, to the configured upstream only", async () => {
    const before = upstream.requests.length
    const raw = JSON.stringify({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "count me" }] })
    await post("/v1/messages/count_tokens?beta=true", raw)
    await post("/v1/some/unknown?x=1", "{}")
    // An absolute URL in the request line (as sent to an HTTP proxy) cannot choose the host:
    // it goes to the configured upstream like any path. The proxy is not an open relay.
    await new Promise<void>((resolve) => {
      const u = new URL(proxy.url)
      const req = request({ host: u.hostname, port: u.port, method: "GET", path: "http://169.254.169.254/latest/meta-data", headers: { host: "169.254.169.254" } }, (res) => {
        res.resume()
        res.on("end", () => resolve())
      })
      req.on("error", () => resolve())
      req.end()
    })
    const got = upstream.requests.slice(before)
    expect(got.map((r) => r.path)).toEqual(["/v1/messages/count_tokens?beta=true", "/v1/some/unknown?x=1", "http://169.254.169.254/latest/meta-data"])
    expect(new Set(got.map((r) => r.headers.host))).toEqual(new Set([new URL(upstream.url).host]))
    expect(got[0]!.body).toBe(raw)
  })

  it("keeps 50 interleaved sessions apart (property)", async () => {
    // Its own proxy on the memory store: the property is about sessions, not durability.
    const main = proxy
    proxy = await startProxy({ port: 0, upstream: upstream.url, store: "memory", recordDir: join(dir, "record"), log: (l) => lines.push(l) })
    try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 49 }), { minLength: 50, maxLength: 100 }), async (order) => {
        const tag = Math.random().toString(36).slice(2, 8)
        const convo = new Map<number, Array<unknown>>()
        const expected = new Map<string, number>()
        const sentStripped = new Set<string>()
        // Each session sends its requests one after the other (as an agent does), all 50 at
        // once, interleaved by the drawn order: session s waits for its previous reply.
        const tails = new Map<number, Promise<unknown>>()
        const results = await Promise.all(
          order.map((s, i) => {
            const run = (tails.get(s) ?? new Promise((r) => setTimeout(r, i))).then(async () => {
            const history = convo.get(s) ?? []
            const first = `session ${tag}-${s}`
            const reqBody = JSON.parse(body(first, history)) as Record<string, unknown>
            // Half the sessions send bodies of ~200 KB: read into the proxy's pooled buffers,
            // which must never mix one request's bytes into another's.
            if (s % 2 === 0) reqBody["system"] = [{ type: "text", text: `You are terse (${s}). ` + "Keep answers short. ".repeat(7_000) }]
            convo.set(s, [...history, { role: "assistant", content: [{ type: "text", text: `echo ${first}` }] }, { role: "user", content: [{ type: "text", text: `step ${history.length / 2 + 1}` }] }])
            sentStripped.add(JSON.stringify(withoutCacheControls(reqBody)))
            const res = await post("/v1/messages", JSON.stringify(reqBody))
            return { s, res }
            })
            tails.set(s, run)
            return run
          })
        )
        for (const { res } of results) expect(res.status).toBe(200)
        await proxy.settled()
        const sessions = proxy.sessions().filter((x) => x.exchanges.length > 0)
        // Every request of a session landed in one record, and no record mixes two sessions.
        const counts = new Map<number, number>()
        for (const s of order) counts.set(s, (counts.get(s) ?? 0) + 1)
        const recordsForTag = sessions.filter((r) => r.startedAt > 0 && r.exchanges.some(() => true))
        for (const [s, n] of counts) {
          const forwarded = upstream.requests.filter((r) => firstText(r.json) === `session ${tag}-${s}`)
          expect(forwarded.length).toBe(n)
          // What the upstream got is the client's request modulo cache controls.
          for (const f of forwarded) expect(sentStripped.has(JSON.stringify(withoutCacheControls(f.json)))).toBe(true)
          expected.set(`${tag}-${s}`, n)
        }
        const ids = new Set<string>()
        for (const r of recordsForTag) ids.add(r.id)
        let matched = 0
        for (const r of recordsForTag) {
          const file = join(dir, "record", `${r.id}.jsonl`)
          let text = ""
          try {
            text = readFileSync(file, "utf8")
          } catch {
            continue
          }
          const firsts = new Set(text.split("\n").filter((l) => l !== "").map((l) => firstText((JSON.parse(l) as { request: unknown }).request)))
          const mine = [...firsts].filter((f) => f.includes(tag))
          if (mine.length === 0) continue
          expect(mine.length).toBe(1) // never two conversations in one session
          expect(r.totals.requests).toBe(expected.get(mine[0]!.replace("session ", "")))
          matched++
        }
        expect(matched).toBe(counts.size)
      }),
      { numRuns: 2 }
    )
    } finally {
      await proxy.close()
      proxy = main
    }
  })

  it("never writes or prints the key", () => {
    expect(JSON.stringify(lines)).not.toContain(KEY)
    const walk = (p: string): Array<string> => (statSync(p).isDirectory() ? readdirSync(p).flatMap((f) => walk(join(p, f))) : [p])
    for (const f of walk(dir)) expect(readFileSync(f, "utf8"), f).not.toContain(KEY)
    expect(JSON.stringify(proxy.sessions())).not.toContain(KEY)
    // ...while it went upstream unchanged.
    expect(upstream.requests.filter((r) => r.method === "POST").every((r) => r.headers["x-api-key"] === KEY)).toBe(true)
  })
})
