// `strata explain` and the HUD's last-miss line: the pure parts, then the built binary
// on a copy of the demo repository.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { compareRequests, explainLines, parseRequestFile, type RequestFile } from "../src/run/explain.ts"
import { tempDir } from "@strata/test-support"
import { copyIndexed, indexTemplate, runBin } from "./support.ts"

const MODEL = "claude-sonnet-4-5"
const text = (label: string, tokens: number) => `${label} `.repeat(Math.ceil((tokens * 4) / (label.length + 1))).slice(0, tokens * 4)

/** A Messages body with tools, a marked 3,000-token system prompt and a marked conversation. */
const body = (tools: ReadonlyArray<string>, turns: number) => ({
  model: MODEL,
  max_tokens: 512,
  tools: tools.map((name) => ({ name, description: `${name} a file`, input_schema: { type: "object" } })),
  system: [{ type: "text", text: text("system", 3000), cache_control: { type: "ephemeral" } }],
  messages: Array.from({ length: turns }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: [{ type: "text", text: text(`turn ${i}`, 200), ...(i === turns - 1 ? { cache_control: { type: "ephemeral" } } : {}) }]
  }))
})

const stored = (at: number, b: unknown, provider = "anthropic"): RequestFile => ({ path: "x", provider, model: MODEL, at, body: b })

describe("explain (pure)", () => {
  it("reads stored requests and bare bodies", () => {
    expect(parseRequestFile("a.json", JSON.stringify({ provider: "anthropic", model: MODEL, at: 5, body: { messages: [] } }))).toMatchObject({ provider: "anthropic", at: 5, body: { messages: [] } })
    expect(parseRequestFile("b.json", JSON.stringify(body(["read"], 1)))).toMatchObject({ provider: undefined, at: undefined, body: { model: MODEL } })
    expect(parseRequestFile("c.json", "{oops")).toEqual({ problem: "c.json is not valid JSON" })
  })

  it("names the first difference and the expected read", () => {
    const c = compareRequests(stored(100, body(["read"], 3)), stored(130, body(["read", "write"], 5)))
    const lines = explainLines(c)
    expect(lines[0]).toMatch(/^miss: tool definitions changed: inserted tool at tools\[1\]; read 0 of [\d,]+ tokens$/)
    expect(lines).toContain(`requests: anthropic ${MODEL}, sent 30 s apart`)
    expect(lines.some((l) => l.startsWith("first difference: inserted tool at tools[1] (block 1;"))).toBe(true)
    expect(lines.some((l) => /^expected \(simulated\): read 0, write [\d,]+/.test(l))).toBe(true)
  })

  it("a TTL gap, a provider change, and the provider's reported usage", () => {
    const expired = compareRequests(stored(0, body(["read"], 3)), stored(600, body(["read"], 5)))
    expect(expired.kind === "explained" && expired.explanation.reason).toEqual({ kind: "ttl-expired", idleSeconds: 600, ttlSeconds: 300 })
    expect(explainLines(compareRequests(stored(0, {}, "openai"), stored(1, {}, "anthropic")))).toEqual([
      "miss: the provider changed (openai -> anthropic); caches are per provider, so nothing could be read"
    ])
    const reported = compareRequests(stored(0, body(["read"], 3)), stored(10, body(["read"], 5)), { input: 400, cacheRead: 0, cacheWrite: 4000, output: 9 })
    const lines = explainLines(reported)
    expect(lines).toContain("reported by the provider: read 0, write 4,000, uncached 400")
    expect(lines.at(-1)).toMatch(/^note: the provider read 0% of the prompt, the simulator expected \d+%/)
  })
})

describe.concurrent("strata explain (binary)", () => {
  const dirs: Array<{ cleanup: () => void }> = []
  let master = ""
  beforeAll(async () => {
    const d = tempDir("strata-explain-master-")
    dirs.push(d)
    master = await indexTemplate(makeDemoRepo({ out: join(d.path, "harbor") }).out)
  }, 120_000)
  afterAll(() => dirs.forEach((d) => d.cleanup()))
  const demo = () => {
    const d = tempDir("strata-explain-")
    dirs.push(d)
    const repo = join(d.path, "harbor")
    copyIndexed(master, repo)
    mkdirSync(join(repo, ".strata"), { recursive: true })
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "anthropic", model: MODEL }))
    return repo
  }

  it("needs two requests; then compares the session's last two", async () => {
    const repo = demo()
    const none = await runBin(["explain", "--repo", repo])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/^strata: the session has fewer than two recorded requests\nhint: run `strata assemble`/)
    for (const prompt of ["Where is pricing done?", "And the taxes?"]) expect((await runBin(["assemble", "--repo", repo, "--prompt", prompt])).code).toBe(0)
    // In-process runs come within a second of each other, which the simulator rightly calls
    // too soon for the first request's cache to be readable: date the first 30 s earlier.
    const previousPath = join(repo, ".strata", "previous-request.json")
    const previous = JSON.parse(readFileSync(previousPath, "utf8")) as { at: number }
    writeFileSync(previousPath, JSON.stringify({ ...previous, at: previous.at - 30 }))
    const r = await runBin(["explain", "--repo", repo])
    expect(r.code, r.stderr).toBe(0)
    // A new prompt in place of the previous one: everything cached before it is read.
    expect(r.stdout).toMatch(/^hit: nothing lost: it read all it shares with what the previous request cached; read [\d,]+ of [\d,]+ tokens, new from messages\[\d+\]\.content\[0\] on\n/)
    const json = JSON.parse((await runBin(["explain", "--repo", repo, "--json"])).stdout) as { verdict: string; provider: string; usage: { expected: { cacheRead: number } } }
    expect(json).toMatchObject({ verdict: "hit", provider: "anthropic" })
    expect(json.usage.expected.cacheRead).toBeGreaterThan(0)
  })

  it("--before/--after compare two files inside the repository", async () => {
    const repo = demo()
    writeFileSync(join(repo, "a.json"), JSON.stringify(body(["read"], 3)))
    writeFileSync(join(repo, "b.json"), JSON.stringify(body(["read", "write"], 5)))
    const r = await runBin(["explain", "--repo", repo, "--before", join(repo, "a.json"), "--after", join(repo, "b.json")])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^miss: tool definitions changed: inserted tool at tools\[1\]/)
    const alone = await runBin(["explain", "--repo", repo, "--before", join(repo, "a.json")])
    expect(alone.code).toBe(2)
    expect(alone.stderr).toMatch(/--before and --after go together/)
    const outside = await runBin(["explain", "--repo", repo, "--before", master, "--after", join(repo, "b.json")])
    expect(outside.code).toBe(2)
    expect(outside.stderr).toMatch(/is outside the repository/)
  })

  it("the HUD shows why the last request missed", async () => {
    const repo = demo()
    const write = (file: string, at: number, b: unknown) => writeFileSync(join(repo, ".strata", file), JSON.stringify({ provider: "anthropic", model: MODEL, at, body: b }))
    write("previous-request.json", 1_000, body(["read"], 3))
    write("last-request.json", 1_900, body(["read"], 5))
    const hud = await runBin(["hud", "--repo", repo])
    expect(hud.code, hud.stderr).toBe(0)
    expect(hud.stdout).toMatch(/^Last miss: cache expired: 900 s idle, longer than the 300 s TTL$/m)
    const json = JSON.parse((await runBin(["hud", "--repo", repo, "--json"])).stdout) as { lastMiss: string | null }
    expect(json.lastMiss).toBe("cache expired: 900 s idle, longer than the 300 s TTL")
    write("last-request.json", 1_010, body(["read"], 5))
    expect((await runBin(["hud", "--repo", repo])).stdout).not.toMatch(/Last miss/)
  })
})
