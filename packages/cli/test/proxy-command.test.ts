// `strata proxy` as a user runs it: the built binary prints where it listens, one JSON line
// per request with --json, never the key, and exits 0 on SIGINT and SIGTERM after the
// stream in flight finished.
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anthropicEvents, startServer, sse, type TestServer } from "@strata/test-support/http"
import { tempDir } from "@strata/test-support"
import { BIN } from "./support.ts"

const KEY = "sk-ant-cli-KEY-0b7e2f19c4"
let upstream: TestServer

beforeAll(async () => {
  upstream = await startServer(async (_r, _n, res) =>
    sse(res, anthropicEvents([], { id: "m", usage: { input_tokens: 12, cache_read_input_tokens: 3000, cache_creation_input_tokens: 40 }, outputTokens: 9 }), { gapMs: 150 })
  )
})
afterAll(() => upstream.close())

const runProxy = async (signal: NodeJS.Signals) => {
  const dir = tempDir("strata-proxy-cli-")
  const child = spawn(process.execPath, [BIN, "proxy", "--port", "0", "--upstream", upstream.url, "--json"], { cwd: dir.path, stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c))
  const lines: Array<string> = []
  const rl = createInterface({ input: child.stdout })
  const next = () => new Promise<string>((resolve) => rl.once("line", (l) => { lines.push(l); resolve(l) }))
  const first = await next()
  const url = /^strata proxy listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(first)?.[1]
  expect(url, first).toBeDefined()
  const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, stream: true, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] })
  const reply = fetch(`${url!}/v1/messages?beta=true`, { method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body }).then((r) => r.text())
  // The signal arrives while the reply is still streaming: it finishes, then the proxy exits.
  await new Promise((r) => setTimeout(r, 100))
  const exchangeLine = next()
  child.kill(signal)
  const text = await reply
  const exchange = JSON.parse(await exchangeLine) as { status: number; usage: { cacheRead: number }; session: string }
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  dir.cleanup()
  return { code, text, exchange, out: lines.join("\n") + stderr }
}

describe("strata proxy", () => {
  it("prints where it listens, one JSON line per request, and exits 0 on SIGTERM after the stream", async () => {
    const r = await runProxy("SIGTERM")
    expect(r.code).toBe(0)
    expect(r.text).toContain("message_stop")
    expect(r.exchange.status).toBe(200)
    expect(Object.keys(r.exchange)[0]).toBe("schemaVersion")
    expect(r.exchange.usage.cacheRead).toBe(3000)
    expect(r.out).not.toContain(KEY)
  })

  it("exits 0 on SIGINT too", async () => {
    const r = await runProxy("SIGINT")
    expect(r.code).toBe(0)
    expect(r.text).toContain("message_stop")
  })
})
