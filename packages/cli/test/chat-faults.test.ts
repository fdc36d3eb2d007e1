// Fault injection: `strata chat` (the built binary) against a scripted provider on
// 127.0.0.1 that breaks the reply the ways networks and gateways do: streams that end
// early or are cut mid-event, OpenAI streams without finish_reason, non-JSON and empty
// 200s, stalls and resets. A broken reply is never a turn: the exit code is 1, the error
// says what arrived, and every state file under .strata/ (history, tracker, session,
// journal, last request) is byte-identical before and after.
import { mkdirSync, writeFileSync } from "node:fs"
import type { Reply } from "@strata/test-support/http"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { startFakeProvider } from "./fake-provider.ts"
import { tempDir } from "@strata/test-support"
import { copyIndexed, indexTemplate, runBin, strataFiles } from "./support.ts"

const dirs: Array<{ cleanup: () => void }> = []
let server: Awaited<ReturnType<typeof startFakeProvider>>
/** Demo repositories with two recorded turns, per provider, copied for each case. */
const recorded: Record<"anthropic" | "openai", string> = { anthropic: "", openai: "" }

const envFor = (provider: "anthropic" | "openai", extra: Record<string, string> = {}) =>
  provider === "anthropic"
    ? { ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url, ...extra }
    : { OPENAI_API_KEY: "sk-test", STRATA_BASE_URL: `${server.url}/v1`, ...extra }

beforeAll(async () => {
  server = await startFakeProvider()
  // One demo repository, indexed once; each provider's recording starts from a copy.
  const m = tempDir("strata-faults-master-")
  dirs.push(m)
  const master = await indexTemplate(makeDemoRepo({ out: join(m.path, "harbor") }).out)
  for (const provider of ["anthropic", "openai"] as const) {
    const d = tempDir(`strata-faults-${provider}-`)
    dirs.push(d)
    const repo = join(d.path, "harbor")
    copyIndexed(master, repo)
    mkdirSync(join(repo, ".strata"), { recursive: true })
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider }))
    for (const prompt of ["Where is pricing done?", "And on weekends?"]) {
      const r = await runBin(["chat", "--repo", repo, "--once", prompt, "--no-hud", "--file", "src/services/pricing.ts"], { env: envFor(provider) })
      expect(r.code, r.stderr).toBe(0)
    }
    recorded[provider] = repo
  }
}, 180_000)

afterAll(async () => {
  await server.close()
  dirs.forEach((d) => d.cleanup())
})

/** A fresh copy of the recorded repository. */
const copy = (provider: "anthropic" | "openai"): string => {
  const d = tempDir("strata-fault-case-")
  dirs.push(d)
  const repo = join(d.path, "harbor")
  copyIndexed(recorded[provider], repo)
  return repo
}

const sse = (event: string | undefined, data: unknown): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`

const ANTHROPIC_HEAD = [
  sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 900, output_tokens: 1 } } }),
  sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Pricing lives in quote(), which applies the tariff " } }),
  sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "and a surcharge" } })
]
const OPENAI_HEAD = [
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5.4", choices: [{ index: 0, delta: { content: "Pricing lives in quote(), which applies the tariff " }, finish_reason: null }] })}\n\n`,
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5.4", choices: [{ index: 0, delta: { content: "and a surcharge" }, finish_reason: null }] })}\n\n`
]
const TEXT_CHARS = "Pricing lives in quote(), which applies the tariff and a surcharge".length

const streamHead = (res: Reply, provider: "anthropic" | "openai") => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const chunk of provider === "anthropic" ? ANTHROPIC_HEAD : OPENAI_HEAD) res.write(chunk)
}

interface Fault {
  readonly name: string
  readonly answer: (res: Reply) => void
  /** The error line chat prints. */
  readonly error: RegExp
  readonly args?: ReadonlyArray<string>
  /** How many attempts the client makes (retries before the response starts). */
  readonly attempts?: number
}

const faults = (provider: "anthropic" | "openai"): ReadonlyArray<Fault> => {
  const finish = provider === "anthropic" ? "message_stop" : "a finish_reason"
  return [
    {
      name: `a stream that ends without ${finish}`,
      answer: (res) => {
        streamHead(res, provider)
        if (provider === "anthropic") res.write(sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } }))
        res.end()
      },
      error: new RegExp(`^strata: The ${provider} reply is incomplete: the stream ended after ${provider === "anthropic" ? 5 : 2} events without ${finish}; ${TEXT_CHARS} characters of text arrived`)
    },
    {
      name: "a stream cut in the middle of an event",
      answer: (res) => {
        streamHead(res, provider)
        res.end(provider === "anthropic" ? 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"on wee' : 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"on wee')
      },
      error: new RegExp(`^strata: The ${provider} (reply is incomplete|stream failed midway): .*${TEXT_CHARS} characters of text (had )?arrived`)
    },
    {
      name: "a 200 whose body is not JSON",
      answer: (res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end("<html><body>502 Bad Gateway</body></html>")
      },
      error: new RegExp(`^strata: The ${provider} reply is incomplete: a 200 response \\(content-type application/json\\) that is not an event stream, and its 41 bytes are not JSON`)
    },
    {
      name: "an empty 200",
      answer: (res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "0" })
        res.end()
      },
      error: new RegExp(`^strata: The ${provider} reply is incomplete: a 200 response \\(content-type application/json\\) that is not an event stream and has an empty body; 0 characters of text arrived`)
    },
    {
      name: "a stream that stalls midway (--timeout-ms 400)",
      answer: (res) => streamHead(res, provider),
      args: ["--timeout-ms", "400"],
      error: new RegExp(`^strata: ${provider}: the stream stalled: no event within 400 ms`)
    },
    {
      name: "a connection reset midway",
      answer: (res) => {
        streamHead(res, provider)
        setTimeout(() => res.destroy(), 30)
      },
      error: new RegExp(`^strata: The ${provider} stream failed midway: .*\\(after \\d+ events; ${TEXT_CHARS} characters of text had arrived\\)`)
    },
    {
      name: "a server that never answers (timeoutMs in the config, retried)",
      answer: () => undefined,
      args: [],
      attempts: 3,
      error: new RegExp(`^strata: ${provider}: no response within 300 ms \\(3 attempts\\)`)
    }
  ]
}

describe.each(["anthropic", "openai"] as const)("strata chat against a broken %s reply", (provider) => {
  it.each(faults(provider))("$name: exit 1, says what arrived, records nothing", async (fault) => {
    const repo = copy(provider)
    if (fault.attempts !== undefined) {
      writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider, timeoutMs: 300 }))
    }
    const before = strataFiles(repo, { skip: ["symbols"], mtimes: false })
    expect(Object.keys(before)).toEqual(expect.arrayContaining(["last-request.json", expect.stringMatching(/^state\/cli@[0-9a-f]+\/turn-\d+\.json$/)]))
    const sent = server.requests.length
    server.scriptNext(fault.answer, fault.attempts ?? 1)
    const r = await runBin(["chat", "--repo", repo, "--once", "And on public holidays?", "--no-hud", ...(fault.args ?? [])], { env: envFor(provider) })
    expect(r.code, r.stdout + r.stderr).toBe(1)
    const lines = r.stderr.trim().split("\n")
    expect(lines.find((l) => l.startsWith("strata:")), r.stderr).toMatch(fault.error)
    expect(r.stdout).not.toMatch(/no cache simulator|reported no usage|Cache Blocks/)
    expect(server.requests.length - sent).toBe(fault.attempts ?? 1)
    expect(strataFiles(repo, { skip: ["symbols"], mtimes: false })).toEqual(before)
  })

  it("a reply without usage (but finished) is recorded, and says the provider reported no usage", async () => {
    const repo = copy(provider)
    server.scriptNext((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      if (provider === "anthropic") {
        // A gateway that strips usage: message_start without it, and no message_delta.
        res.write(sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [] } }))
        for (const chunk of ANTHROPIC_HEAD.slice(1)) res.write(chunk)
        res.end(sse("message_stop", { type: "message_stop" }))
      } else {
        for (const chunk of OPENAI_HEAD) res.write(chunk)
        res.end(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5.4", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`)
      }
    })
    const before = strataFiles(repo, { skip: ["symbols"], mtimes: false })
    const r = await runBin(["chat", "--repo", repo, "--once", "And on public holidays?", "--no-hud"], { env: envFor(provider) })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`${provider} reported no usage for this request`)
    expect(r.stdout).not.toContain("no cache simulator")
    expect(strataFiles(repo, { skip: ["symbols"], mtimes: false })).not.toEqual(before)
  })
})

describe("the timeout the hint names can be set", () => {
  it("--timeout-ms must be positive; strata config shows timeoutMs and its source", async () => {
    const repo = copy("anthropic")
    const bad = await runBin(["chat", "--repo", repo, "--once", "hi", "--timeout-ms", "0"], { env: envFor("anthropic") })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--timeout-ms must be a positive number/)
    const config = await runBin(["config", "--repo", repo, "--json"], { env: { STRATA_TIMEOUT_MS: "120000" } })
    expect(JSON.parse(config.stdout)).toMatchObject({ values: { timeoutMs: 120000 }, sources: { timeoutMs: "env" } })
  })
})
