// The JSON endpoints on their own: over sessions recorded through core's Promise API into
// the file store, the list, a session and a request answer with the documented Schemas,
// agree with the store's records, push an event when a turn is committed, refuse foreign
// Host headers, and never carry an API key from the environment.
import * as http from "node:http"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDirs } from "@strata/test-support"
import { decodeSessionRecord } from "@strata/core"
import { decodeStoredRequests, PROXY_REPOSITORY, RequestDetail, RequestRowPage, serveDashboard, DashboardSessionSummary as SessionSummary, SessionView, sessionId, type DashboardServer } from "../src/index.ts"
import { makeRepo, openStore, recordSession, XSS_SCRIPT } from "./sessions.ts"

const dirs = tempDirs("strata-ui-api-")
const SECRET = "sk-ant-test-NEVER-ON-THE-PAGE-1234567890"
let root = ""
let server: DashboardServer
let stores: Awaited<ReturnType<typeof openStore>>

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(new URL(path, server.url), { headers })
  return { status: res.status, type: res.headers.get("content-type") ?? "", csp: res.headers.get("content-security-policy") ?? "", text: await res.text() }
}

beforeAll(async () => {
  process.env["ANTHROPIC_API_KEY"] = SECRET
  root = dirs()
  makeRepo(root)
  await recordSession(root, "chat", { turns: 6, gaps: (i) => (i === 3 ? 400 : 30) })
  await recordSession(root, "agent", { turns: 12, agent: true })
  stores = await openStore(root)
  server = await serveDashboard({ ...stores, port: 0, pollMs: 50 })
})

afterAll(async () => {
  delete process.env["ANTHROPIC_API_KEY"]
  await server.close()
})

describe("dashboard endpoints", () => {
  it("lists every session with figures from its record", async () => {
    const res = await get("/_strata/api/sessions")
    expect(res.status).toBe(200)
    const body = Schema.decodeUnknownSync(Schema.Struct({ store: Schema.String, sessions: Schema.Array(SessionSummary) }))(JSON.parse(res.text))
    expect(body.sessions.map((s) => s.name).sort()).toEqual(expect.arrayContaining(["agent", "chat"]))
    for (const s of body.sessions.filter((x) => x.name === "agent" || x.name === "chat")) {
      const { snapshot } = await Effect.runPromise(stores.store.load({ repository: s.repository, name: s.name }))
      const { record } = decodeSessionRecord(snapshot.record)
      expect(s.requests).toBe(record.turns)
      expect(s.version).toBe(snapshot.version)
      const prompt = record.totals.input + record.totals.cacheRead + record.totals.cacheWrite
      expect(s.hitRate).toBeCloseTo(record.totals.cacheRead / prompt, 12)
      expect(s.cost).not.toBeNull()
      expect(s.saved).toBeCloseTo((s.uncachedCost ?? 0) - (s.cost ?? 0), 12)
      expect(s.saved ?? 0).toBeGreaterThan(0)
    }
  })

  it("shows a session's requests: billing split adds up to the usage, running costs, blocks, misses, the cleared ledger", async () => {
    const list = JSON.parse((await get("/_strata/api/sessions")).text) as { sessions: ReadonlyArray<SessionSummary> }
    const chat = list.sessions.find((s) => s.name === "chat")!
    const view = Schema.decodeUnknownSync(SessionView)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(chat.id)}`)).text))
    const { snapshot } = await Effect.runPromise(stores.store.load({ repository: chat.repository, name: "chat" }))
    // Summaries live with the turns; the record keeps the last request's blocks only.
    expect(decodeSessionRecord(snapshot.record).record.requests).toBeUndefined()
    const page = await Effect.runPromise(stores.store.requests({ repository: chat.repository, name: "chat" }, { from: 1, limit: 100 }))
    const recorded = decodeStoredRequests(page.requests).requests
    expect(recorded).toHaveLength(6)
    expect(chat.source).toBe("api")
    expect(view.requests).toHaveLength(6)
    let running = 0
    view.requests.forEach((r, i) => {
      const usage = recorded[i]!.usage!
      expect(r.tokens.read).toBe(usage.cacheRead)
      expect(r.tokens.write5m + r.tokens.write1h).toBe(usage.cacheWrite)
      expect(r.tokens.uncached).toBe(usage.input)
      running += r.cost ?? 0
      expect(r.cumulativeCost).toBeCloseTo(running, 12)
      expect(r.blocks.length).toBeGreaterThan(0)
    })
    expect(view.summary.cost).toBeCloseTo(running, 12)
    // The first request writes every block; the 400 s gap before request 3 expired the cache.
    expect(view.requests[0]!.blocks.every((b) => b.changed)).toBe(true)
    expect(view.requests.filter((r) => r.miss !== null).map((r) => r.index)).toEqual([3])
    expect(view.requests[3]!.tokens.read).toBe(0)
    expect(view.requests.some((r) => r.blocks.some((b) => b.breakpoint !== null))).toBe(true)
    // The charts and the misses come computed: one bar per request here, the misses with their reasons.
    expect(view.total).toBe(6)
    expect(view.misses).toEqual(view.requests.flatMap((r) => (r.miss === null ? [] : [{ index: r.index, miss: r.miss }])))
    expect(view.charts.bucket).toBe(1)
    expect(view.charts.x).toEqual(view.requests.map((r) => r.index))
    expect(view.charts.billing.read).toEqual(view.requests.map((r) => r.tokens.read))
    view.charts.cost.cost.forEach((c, i) => expect(c).toBeCloseTo(view.requests[i]!.cumulativeCost ?? 0, 6))
    // Rows by index, a page at a time.
    const page2 = Schema.decodeUnknownSync(RequestRowPage)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(chat.id)}/requests?from=2&limit=3`)).text))
    expect(page2).toEqual({ total: 6, omitted: 0, requests: view.requests.slice(2, 5) })
    expect((await get(`/_strata/api/sessions/${encodeURIComponent(chat.id)}/requests?from=two`)).status).toBe(400)
  })

  it("reads a record written before summaries moved to the turns, and a proxy session with its as-sent cost", async () => {
    const chat = { repository: (await Effect.runPromise(stores.store.sessions()))[0]!.key.repository, name: "chat" }
    const recorded = decodeStoredRequests((await Effect.runPromise(stores.store.requests(chat, { from: 1, limit: 100 }))).requests).requests
    const { snapshot } = await Effect.runPromise(stores.store.load(chat))
    const { record } = decodeSessionRecord(snapshot.record)
    // The old layout: every request inside the record, none with the turns.
    const old = { repository: chat.repository, name: "old-layout" }
    await Effect.runPromise(stores.store.commit({ session: old, baseVersion: 0, turnId: "old", append: [], patch: { record: { ...record, requests: recorded.map(({ source: _source, ...r }) => r) } } }))
    // A proxy session: the proxy's own record, and summaries with the as-sent usage.
    const proxy = { repository: PROXY_REPOSITORY, name: "agent-1" }
    for (const [i, r] of recorded.entries()) {
      const asSent = { input: (r.usage?.input ?? 0) + (r.usage?.cacheRead ?? 0), cacheRead: 0, cacheWrite: r.usage?.cacheWrite ?? 0, output: r.usage?.output ?? 0 }
      await Effect.runPromise(stores.store.commit({ session: proxy, baseVersion: i, turnId: `p${i}`, append: [], patch: { record: { kind: "strata-proxy-session", id: "agent-1" } }, request: { ...r, source: "proxy", asSent } }))
    }
    const { sessions } = JSON.parse((await get("/_strata/api/sessions")).text) as { sessions: ReadonlyArray<SessionSummary> }
    const byName = new Map(sessions.map((s) => [s.name, s]))
    const views = new Map(await Promise.all(["chat", "old-layout", "agent-1"].map(async (n) => [n, Schema.decodeUnknownSync(SessionView)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(byName.get(n)!.id)}`)).text))] as const)))
    expect(views.get("old-layout")!.requests.map((r) => r.cost)).toEqual(views.get("chat")!.requests.map((r) => r.cost))
    expect(byName.get("old-layout")!.cost).toBe(byName.get("chat")!.cost)
    expect(byName.get("old-layout")!.source).toBe("unknown")
    const agent = views.get("agent-1")!
    expect(agent.summary.source).toBe("proxy")
    expect(agent.warnings).toEqual([])
    expect(agent.summary.requests).toBe(recorded.length)
    expect(agent.summary.cost).toBe(byName.get("chat")!.cost)
    expect(agent.summary.asSentCost).toBeGreaterThan(agent.summary.cost ?? Infinity)
    expect(agent.requests.at(-1)!.cumulativeAsSentCost).toBe(agent.summary.asSentCost)
    expect(byName.get("agent-1")!.asSentCost).toBe(agent.summary.asSentCost)
  })

  it("lists the tool results context editing cleared, with the tool and the placeholder", async () => {
    const { sessions } = JSON.parse((await get("/_strata/api/sessions")).text) as { sessions: ReadonlyArray<SessionSummary> }
    const agent = sessions.find((s) => s.name === "agent")!
    const view = Schema.decodeUnknownSync(SessionView)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(agent.id)}`)).text))
    expect(view.ledger.length).toBeGreaterThan(0)
    for (const e of view.ledger) {
      expect(e.toolName).toBe("read_file")
      expect(e.tokens ?? 0).toBeGreaterThan(1000)
    }
    expect(view.requests.reduce((n, r) => n + r.newlyCleared, 0)).toBe(view.ledger.length)
  })

  it("gives a request's blocks in order, the last request with its text", async () => {
    const { sessions } = JSON.parse((await get("/_strata/api/sessions")).text) as { sessions: ReadonlyArray<SessionSummary> }
    const id = sessionId({ repository: sessions.find((s) => s.name === "chat")!.repository, name: "chat" })
    const last = Schema.decodeUnknownSync(RequestDetail)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(id)}/requests/5`)).text))
    expect(last.blocks.map((b) => b.tier).at(-1)).toBe("active")
    expect(last.blocks.some((b) => b.text?.includes(XSS_SCRIPT) === true)).toBe(true)
    const first = Schema.decodeUnknownSync(RequestDetail)(JSON.parse((await get(`/_strata/api/sessions/${encodeURIComponent(id)}/requests/0`)).text))
    expect(first.blocks.every((b) => b.text === null)).toBe(true)
    expect((await get(`/_strata/api/sessions/${encodeURIComponent(id)}/requests/99`)).status).toBe(404)
    expect((await get(`/_strata/api/sessions/nobody@000000000000`)).status).toBe(404)
  })

  it("pushes a change event when a turn is committed", async () => {
    const controller = new AbortController()
    const res = await fetch(new URL("/_strata/api/events", server.url), { signal: controller.signal })
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let seen = ""
    const until = async (pattern: RegExp) => {
      while (!pattern.test(seen)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`stream ended before ${String(pattern)}`)
        seen += decoder.decode(value)
      }
    }
    await until(/: connected/)
    await recordSession(root, "chat", { turns: 1, start: 1_767_300_000 })
    await until(/event: change\ndata: .*"id":"chat@/)
    controller.abort()
  })

  it("serves the page and its bundle with a strict CSP, refuses foreign hosts and writes, never shows an API key", async () => {
    const page = await get("/")
    expect(page.type).toMatch(/text\/html/)
    expect(page.csp).toContain("script-src 'self'")
    expect((await get("/_strata/assets/app.js")).type).toMatch(/javascript/)
    const foreign = await new Promise<number>((resolve, reject) => {
      const req = http.get(new URL("/_strata/api/sessions", server.url), { headers: { host: "evil.example:80" } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on("error", reject)
    })
    expect(foreign).toBe(403)
    expect((await fetch(new URL("/_strata/api/sessions", server.url), { method: "POST" })).status).toBe(405)
    expect((await get("/_strata/assets/boot.js")).type).toMatch(/javascript/)
    const { sessions } = JSON.parse((await get("/_strata/api/sessions")).text) as { sessions: ReadonlyArray<SessionSummary> }
    const chat = `/_strata/api/sessions/${encodeURIComponent(sessions.find((s) => s.name === "chat")!.id)}`
    for (const path of ["/", "/_strata/assets/boot.js", "/_strata/assets/app.js", "/_strata/api/sessions", chat, `${chat}/requests`, `${chat}/requests/0`]) expect((await get(path)).text).not.toContain(SECRET)
  })
})
