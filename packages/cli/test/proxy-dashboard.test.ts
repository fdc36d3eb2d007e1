// `strata proxy` with the dashboard at `/`, in process (the CLI's `runProxyWithDashboard`,
// which the command calls): the proxy's own address serves the page and its JSON, the
// proxy's `/strata/sessions` still answers, and provider paths still forward.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anthropicEvents, startServer, sse, type TestServer } from "@strata/test-support/http"
import { runProxyWithDashboard } from "../src/run/proxy.ts"

let upstream: TestServer
let url = ""
let stop: () => void = () => {}
let done: Promise<void> = Promise.resolve()
const exchanges: Array<(line: string) => void> = []

beforeAll(async () => {
  upstream = await startServer(async (r, _n, res) => {
    if (r.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ data: [{ id: "claude-sonnet-4-5" }] }))
      return
    }
    await sse(res, anthropicEvents([], { id: "m", usage: { input_tokens: 12, cache_read_input_tokens: 3000, cache_creation_input_tokens: 40 }, outputTokens: 9 }))
  })
  const listening = new Promise<string>((resolve) => {
    done = runProxyWithDashboard({
      port: 0,
      upstream: upstream.url,
      store: "memory",
      json: true,
      until: new Promise<void>((resolve) => (stop = resolve)),
      stdout: (line) => {
        const m = /^strata proxy listening on (\S+)$/.exec(line)
        if (m !== null) resolve(m[1] ?? "")
        else exchanges.shift()?.(line)
      },
      stderr: () => {}
    })
  })
  url = await listening
})

afterAll(async () => {
  stop()
  await done
  await upstream.close()
})

describe("strata proxy serves the dashboard at its own address", () => {
  it("forwards provider paths, and shows the proxied request on the page's endpoints with its as-sent cost", async () => {
    const exchanged = new Promise<string>((resolve) => exchanges.push(resolve))
    const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, stream: true, system: "You review code. ".repeat(300), messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] })
    const reply = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "x-api-key": "sk-ant-test", "content-type": "application/json" }, body })
    expect(await reply.text()).toContain("message_stop")
    expect(JSON.parse(await exchanged)).toMatchObject({ status: 200 })
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/messages"])

    const models = await fetch(`${url}/v1/models`)
    expect(await models.json()).toEqual({ data: [{ id: "claude-sonnet-4-5" }] })
    expect(upstream.requests.at(-1)?.path).toBe("/v1/models")

    const page = await fetch(`${url}/`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("<title>Strata dashboard</title>")
    expect((await fetch(`${url}/_strata/assets/app.js`)).status).toBe(200)

    const own = (await (await fetch(`${url}/strata/sessions`)).json()) as { sessions: ReadonlyArray<{ id: string; totals: { requests: number } }> }
    expect(own.sessions).toHaveLength(1)
    const listed = (await (await fetch(`${url}/_strata/api/sessions`)).json()) as { sessions: ReadonlyArray<{ name: string; source: string; requests: number; cost: number | null; asSentCost: number | null }> }
    expect(listed.sessions).toHaveLength(1)
    const s = listed.sessions[0]!
    expect(s).toMatchObject({ name: own.sessions[0]!.id, source: "proxy", requests: 1 })
    expect(s.cost).toBeGreaterThan(0)
    expect(s.asSentCost).toBeGreaterThan(0)
    expect(upstream.requests).toHaveLength(2)
  })
})
