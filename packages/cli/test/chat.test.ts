// `strata chat` end to end: the built binary against a local server posing as the provider.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { startFakeProvider } from "./fake-provider.ts"
import { spawn } from "node:child_process"
import { tempDir } from "@strata/test-support"
import { BIN, copyIndexed, indexTemplate, runBin, stateFiles, storedSession, strataFiles } from "./support.ts"

const dirs: Array<{ cleanup: () => void }> = []
let master = ""
let server: Awaited<ReturnType<typeof startFakeProvider>>
beforeAll(async () => {
  const d = tempDir("strata-chat-master-")
  dirs.push(d)
  master = await indexTemplate(makeDemoRepo({ out: join(d.path, "harbor") }).out)
  server = await startFakeProvider()
}, 120_000)
afterAll(async () => {
  await server.close()
  dirs.forEach((d) => d.cleanup())
})

const demo = async (provider = "anthropic"): Promise<string> => {
  const d = tempDir("strata-chat-")
  dirs.push(d)
  const repo = join(d.path, "harbor")
  copyIndexed(master, repo)
  mkdirSync(join(repo, ".strata"), { recursive: true })
  writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider }))
  return repo
}

const PRICING = "src/services/pricing.ts"

describe("strata chat", () => {
  it("without an API key explains what is missing and offers --dry-run (exit 1)", async () => {
    const repo = await demo()
    const r = await runBin(["chat", "--repo", repo, "--once", "hi"])
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split("\n")
    expect(lines.at(-2)).toBe("strata: No credentials for anthropic: set ANTHROPIC_API_KEY to send real requests")
    expect(lines.at(-1)).toMatch(/^hint: .*--dry-run/)
  })

  it("--dry-run shows the request and the HUD, sends nothing and saves nothing", async () => {
    const repo = await demo()
    const before = strataFiles(repo)
    const sent = server.requests.length
    const r = await runBin(["chat", "--repo", repo, "--dry-run", "--once", "Where is pricing done?", "--file", PRICING])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/\(dry run\) would send \d+ messages, [\d,]+ tokens to anthropic claude-sonnet-5/)
    expect(r.stdout).toMatch(/Cache Blocks/)
    expect(r.stdout).toMatch(/Nothing was sent or saved/)
    expect(server.requests.length).toBe(sent)
    expect(strataFiles(repo)).toEqual(before)
  })

  it("the interactive loop reads prompts and commands from stdin", async () => {
    const repo = await demo()
    const r = await runBin(["chat", "--repo", repo, "--dry-run", "--no-hud"], { input: `/add ${PRICING}\n/files\nWhat does quote() do?\nAnd priceFor()?\n/quit\n` })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(new RegExp(PRICING.replace(/\./g, "\\.")))
    const usage = r.stdout.split("\n").filter((l) => l.startsWith("simulated anthropic cache"))
    expect(usage).toHaveLength(2)
    // The second dry turn is simulated against the first: its unchanged prefix is a read.
    expect(usage[0]).toMatch(/read 0, write [1-9]/)
    expect(usage[1]).toMatch(/read [1-9][\d,]*, write/)
  })

  it("sends real requests to the provider, streams the reply and reports its cache usage per turn", async () => {
    const repo = await demo()
    const env = { ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url }
    const first = await runBin(["chat", "--repo", repo, "--once", "Where is pricing done?", "--file", PRICING], { env })
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/^Pricing lives in `quote\(\)` in src\/services\/pricing\.ts\.\n/)
    expect(first.stdout).toMatch(/anthropic: read 0, write [1-9][\d,]*, uncached [\d,]+, output 12/)
    expect(first.stdout).toMatch(/Cache Blocks/)
    const request = server.requests.at(-1)!
    expect(request.path).toBe("/v1/messages")
    expect(request.headers["x-api-key"] ?? request.headers["authorization"]).toMatch(/test-key/)
    expect(request.json["stream"]).toBe(true)
    expect(JSON.stringify(request.json)).toMatch(/"cache_control":\{"type":"ephemeral"/)

    const second = await runBin(["chat", "--repo", repo, "--once", "And on weekends?"], { env })
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toMatch(/anthropic: read [1-9][\d,]*/)
    // History went to the provider: the first exchange is in the second request.
    expect(JSON.stringify(server.requests.at(-1)!.json)).toMatch(/Pricing lives in/)
    const session = (await storedSession(repo)).decodedRecord
    expect(session.turns).toBe(2)
    expect(session.last?.usageSource).toBe("provider")
    const hud = await runBin(["hud", "--repo", repo])
    expect(hud.stdout).toMatch(/Usage source: reported by the provider/)
  })

  it("a failed request leaves the tracker and the session untouched (exit 1)", async () => {
    const repo = await demo()
    const env = { ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url }
    expect((await runBin(["chat", "--repo", repo, "--once", "first"], { env })).code).toBe(0)
    const before = stateFiles(repo)
    expect(Object.keys(before).length).toBeGreaterThan(0)
    server.failNext(400)
    const r = await runBin(["chat", "--repo", repo, "--once", "second"], { env })
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split("\n")
    expect(lines[0]).toMatch(/^strata: anthropic returned HTTP 400: scripted failure/)
    expect(lines).toHaveLength(2)
    expect(stateFiles(repo)).toEqual(before)
  })

  it("talks to OpenAI-compatible endpoints too", async () => {
    const repo = await demo("openai")
    const r = await runBin(["chat", "--repo", repo, "--once", "hi"], { env: { OPENAI_API_KEY: "sk-test", STRATA_BASE_URL: `${server.url}/v1` } })
    expect(r.code, r.stderr).toBe(0)
    expect(server.requests.at(-1)!.path).toBe("/v1/chat/completions")
    expect(r.stdout).toMatch(/^Pricing lives in/)
    expect(r.stdout).toMatch(/openai: read 0, write 0, uncached [1-9][\d,]*/)
  })

  it("compacts the history when it passes budgets.compactionTokens, purging tracker history", async () => {
    const repo = await demo()
    const env = { ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url, STRATA_COMPACTION_TOKENS: "2000" }
    // Long replies fill the history; the detector's answer (the same text) is not JSON, so
    // compaction falls back to truncation without a summary.
    server.setReply(Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: the pricing service applies the carrier tariff and a weekend surcharge. `))
    try {
      let compacted = ""
      for (let turn = 0; turn < 6 && compacted === ""; turn++) {
        const r = await runBin(["chat", "--repo", repo, "--once", `question ${turn}`, "--no-hud"], { env })
        expect(r.code, r.stderr).toBe(0)
        if (/Compacted history/.test(r.stdout)) compacted = r.stdout
      }
      expect(compacted).toMatch(/Compacted history \((truncate|summary|boundary|emergency)[^)]*\): [\d,]+ -> [\d,]+ tokens/)
      const stored = await storedSession(repo)
      expect(stored.history.length).toBeGreaterThan(0)
      expect(JSON.stringify(stored.tracker)).not.toMatch(/"history:/)
    } finally {
      server.setReply(["Pricing lives in ", "`quote()` in src/services/pricing.ts", "."])
    }
  })

  it("Ctrl-C (SIGINT) interrupts the loop and exits 130", async () => {
    const repo = await demo()
    const child = spawn(process.execPath, [BIN, "chat", "--repo", repo, "--dry-run"], { env: { ...process.env, NO_COLOR: "1" } })
    let stderr = ""
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`no exit after SIGINT; stderr: ${stderr}`))
      }, 60_000)
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString("utf8")
        // The banner means the loop is waiting for input: interrupt it there.
        if (/strata chat on/.test(stderr)) child.kill("SIGINT")
      })
      child.on("close", (c) => {
        clearTimeout(timer)
        resolve(c)
      })
    })
    expect(code).toBe(130)
  })

  it("providers without an LLM client are refused with a pointer to --dry-run", async () => {
    const repo = await demo("gemini")
    const r = await runBin(["chat", "--repo", repo, "--once", "hi"], { env: { GEMINI_API_KEY: "x" } })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/--dry-run/)
  })
})
