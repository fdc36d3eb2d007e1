// End-to-end on a copy of the example repository: the built binary as a real process.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { tempDir } from "@strata/test-support"
import { copyIndexed, indexTemplate, runBin, storedSession } from "./support.ts"

const dirs: Array<{ cleanup: () => void }> = []
let master = ""
beforeAll(async () => {
  const d = tempDir("strata-demo-master-")
  dirs.push(d)
  master = await indexTemplate(makeDemoRepo({ out: join(d.path, "harbor") }).out)
}, 120_000)
afterAll(() => dirs.forEach((d) => d.cleanup()))

/**
 * A fresh copy of the demo repository (with its .git and a warm symbol cache) and, by default, the config file
 * `strata init` writes (written directly: `init` has its own tests, and a spawn costs seconds).
 */
const demo = async (init = true): Promise<string> => {
  const d = tempDir("strata-demo-")
  dirs.push(d)
  const repo = join(d.path, "harbor")
  copyIndexed(master, repo)
  if (init) {
    mkdirSync(join(repo, ".strata"), { recursive: true })
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "anthropic", policy: "threshold" }))
  }
  return repo
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[/
const PRICING = "src/services/pricing.ts"

/**
 * Every file under .strata/ with its size and mtime, to prove a command changed nothing;
 * `withCache: false` leaves out the symbol index cache, which read-only commands refresh.
 */
const snapshot = (repo: string, options: { readonly withCache?: boolean } = {}): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    if (!existsSync(dir)) return
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) {
        if (options.withCache !== false || e.name !== "symbols") walk(p)
      }
      else {
        const s = statSync(p)
        out[p] = `${s.size}:${s.mtimeMs}`
      }
    }
  }
  walk(join(repo, ".strata"))
  return out
}

describe.concurrent("strata map and tree", () => {
  it("map prints the symbol map as the model sees it; --budget keeps fewer files", async () => {
    const repo = await demo(false)
    const full = await runBin(["map", "--repo", repo])
    expect(full.code).toBe(0)
    expect(full.stdout).toMatch(/^# Repository Structure\n/)
    expect(full.stdout).toMatch(/src\/services\/pricing\.ts: ←\d+/)
    expect(full.stdout).toMatch(/f quote\(shipment,day\?\)->Quote/)
    expect(full.stdout).toMatch(/worker\/queue\/backoff\.go/)
    expect(full.stdout).not.toMatch(ANSI)
    const cut = await runBin(["map", "--repo", repo, "--budget", "300", "--json"])
    expect(cut.code).toBe(0)
    const json = JSON.parse(cut.stdout) as { files: Array<{ path: string; block: string }>; omitted: number; tokens: number }
    expect(json.omitted).toBeGreaterThan(0)
    expect(json.tokens).toBeLessThanOrEqual(300)
    expect(json.files.length).toBeGreaterThan(0)
    expect((await runBin(["map", "--repo", repo, "--budget", "0"])).code).toBe(2)
  })

  it("tree lists every file, the binary one included", async () => {
    const repo = await demo(false)
    const r = await runBin(["tree", "--repo", repo])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^# Repository Files\n/)
    const json = JSON.parse((await runBin(["tree", "--json", "--repo", repo])).stdout) as { files: Array<string> }
    expect(json.files).toContain("assets/logo.png")
    expect(json.files).toContain("worker/jobs/notify.go")
    expect(json.files).not.toContain("src/legacy/csvExport.ts")
    expect([...json.files].sort()).toEqual(json.files)
  })
})

describe("strata assemble", () => {
  const shapes: Record<string, (body: Record<string, unknown>) => void> = {
    anthropic: (b) => {
      expect(Array.isArray(b["system"])).toBe(true)
      expect(JSON.stringify(b)).toMatch(/"cache_control":\{"type":"ephemeral"/)
    },
    bedrock: (b) => {
      expect(JSON.stringify(b)).toMatch(/"cachePoint":\{"type":"default"/)
      expect(Array.isArray(b["messages"])).toBe(true)
    },
    openai: (b) => {
      expect(Array.isArray(b["messages"])).toBe(true)
      expect(JSON.stringify(b)).not.toMatch(/cache_control/)
    },
    gemini: (b) => {
      expect(Array.isArray(b["contents"])).toBe(true)
    },
    "openai-compatible": (b) => {
      const messages = b["messages"] as Array<{ role: string }>
      expect(messages[0]?.role).toBe("system")
      expect(JSON.stringify(b)).toMatch(/"cache_control":\{"type":"ephemeral"\}/)
    },
    "ai-sdk": (b) => {
      expect(JSON.stringify(b)).toMatch(/providerOptions/)
    }
  }

  let shared = ""
  it.each(Object.keys(shapes))("--provider %s --json prints that provider's request body, with the file once", async (provider) => {
    if (shared === "") shared = await demo()
    const repo = shared
    const r = await runBin(["assemble", "--repo", repo, "--provider", provider, "--prompt", "Where is pricing done?", "--file", PRICING, "--json", "--dry-run"])
    expect(r.code, r.stderr).toBe(0)
    const body = JSON.parse(r.stdout) as Record<string, unknown>
    shapes[provider]!(body)
    const text = JSON.stringify(body)
    const marker = "export function cheapestQuote(weightGrams: number)"
    expect(text.split(marker).length - 1).toBe(1)
    expect(text).toMatch(/Where is pricing done\?/)
  })

  it("records turns: the tracker advances, the session counts, history keeps replies", async () => {
    const repo = await demo()
    const first = await runBin(["assemble", "--repo", repo, "--prompt", "Where is pricing done?", "--file", PRICING, "--reply", "In quote()."])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/Cache Blocks/)
    expect(first.stdout).toMatch(/simulated anthropic cache: read 0, write [\d,]+/)
    // A fresh repository: the journal layout freezes its tiers from the tracker's placement.
    expect(first.stdout).toMatch(/journal \(L3\): rebuilt \(first request\), [\d,]+ tokens, 0 superseded/)
    expect(first.stdout).toMatch(/Turn 1 recorded/)
    const second = await runBin(["assemble", "--repo", repo, "--prompt", "And the weekend surcharge?"])
    expect(second.code).toBe(0)
    expect(second.stdout).toMatch(/simulated anthropic cache: read [1-9][\d,]*/)
    // The journal memory the first run saved carries over: this request appends.
    expect(second.stdout).toMatch(/journal \(L3\): appended, [\d,]+ tokens/)
    expect(second.stdout).toMatch(/Turn 2 recorded/)
    // One store holds the whole session: two commits, nothing in the old per-part files.
    const stored = await storedSession(repo)
    expect(stored.version).toBe(2)
    expect(stored.decodedRecord.turns).toBe(2)
    expect(stored.decodedRecord.selected).toEqual([PRICING])
    expect(stored.history).toEqual([{ role: "user", content: "Where is pricing done?" }, { role: "assistant", content: "In quote()." }])
    expect(stored.tracker).not.toBeNull()
    expect(stored.journal).not.toBeNull()
    for (const old of ["session.json", "tracker.json", "journal.json", "sessions"]) expect(existsSync(join(repo, ".strata", old))).toBe(false)
  })

  it("--dry-run leaves .strata/ untouched", async () => {
    const repo = await demo()
    expect((await runBin(["assemble", "--repo", repo, "--prompt", "one", "--file", PRICING])).code).toBe(0)
    const before = snapshot(repo)
    const r = await runBin(["assemble", "--repo", repo, "--prompt", "two", "--file", "src/server.ts", "--reply", "x", "--dry-run"])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/Dry run: nothing in \.strata\/ was changed/)
    expect(snapshot(repo)).toEqual(before)
  })

  it.each([
    [["--file", "../outside.ts"], 2, /outside the repository/],
    [["--file", "/etc/passwd"], 2, /outside the repository/],
    [["--file", "src/nope.ts"], 2, /not found/],
    [["--file", "assets/logo.png"], 2, /binary/],
    [[], 2, /Missing required flag: --prompt/]
  ] as const)("bad input %j exits %i with one line and a hint", async (args, code, message) => {
    const repo = await demo()
    const r = await runBin(["assemble", "--repo", repo, ...(args.length === 0 ? [] : ["--prompt", "x"]), ...args])
    expect(r.code).toBe(code)
    const lines = r.stderr.trim().split("\n")
    expect(lines[0]).toMatch(/^strata: /)
    expect(lines[0]).toMatch(message)
    expect(lines[1]).toMatch(/^hint: /)
    expect(lines).toHaveLength(2)
  })

  it("a corrupt config is a failure (exit 1) naming the file", async () => {
    const repo = await demo()
    writeFileSync(join(repo, ".strata", "config.json"), '{"version": 1, "provider": 7}')
    const r = await runBin(["assemble", "--repo", repo, "--prompt", "x"])
    expect(r.code).toBe(1)
    expect(r.stderr.split("\n")[0]).toBe('strata: Invalid configuration in .strata/config.json: provider: Expected "anthropic" | "bedrock" | "openai" | "gemini" | "openai-compatible" | "ai-sdk"')
  })

  it("a corrupt session file of an earlier version is a warning, never fatal", async () => {
    const repo = await demo()
    writeFileSync(join(repo, ".strata", "session.json"), "{ truncated")
    const r = await runBin(["assemble", "--repo", repo, "--prompt", "x"])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/warning: \.strata\/session\.json is damaged \(not valid JSON\)/)
  })

  it("an unknown model is assembled with default limits and one warning naming it", async () => {
    const repo = await demo()
    const r = await runBin(["assemble", "--repo", repo, "--prompt", "x", "--model", "llama-3.3-70b", "--json"])
    expect(r.code, r.stderr).toBe(0)
    const warnings = r.stderr.split("\n").filter((line) => line.includes("llama-3.3-70b"))
    expect(warnings).toEqual([
      'warning: Model "llama-3.3-70b" is not in the model table; assumed an input limit of 128000 tokens, 4096 output tokens and approximate token counts (cl100k_base).'
    ])
  })
})

describe.concurrent("strata hud and breakdown", () => {
  it("hud shows the cache blocks, the token breakdown and the last request's usage", async () => {
    const repo = await demo()
    for (const prompt of ["a", "b", "c"]) expect((await runBin(["assemble", "--repo", repo, "--prompt", prompt, "--file", PRICING])).code).toBe(0)
    const r = await runBin(["hud", "--repo", repo])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/after 3 requests/)
    expect(r.stdout).toMatch(/Cache Blocks/)
    expect(r.stdout).toMatch(/L0 \(12\+\):/)
    expect(r.stdout).toMatch(/Total: [\d,]+ tokens \| In cached blocks: \d+%/)
    expect(r.stdout).toMatch(/^ {2}Cache hit rate \d+% \(read [\d,]+, write [\d,]+, uncached [\d,]+\)$/m)
    expect(r.stdout).toMatch(/Model: claude-sonnet-5/)
    expect(r.stdout).toMatch(/Session total: .* over 3 requests/)
    expect(r.stdout).not.toMatch(ANSI)
    const ascii = await runBin(["hud", "--repo", repo, "--ascii"])
    expect(ascii.stdout).toMatch(/^\+- Cache Blocks/m)
  })

  it("breakdown --json is the context breakdown (docs/pipeline.md#reports-breakdown-and-hud), consistent with itself", async () => {
    const repo = await demo()
    expect((await runBin(["assemble", "--repo", repo, "--prompt", "a", "--file", PRICING])).code).toBe(0)
    const r = await runBin(["breakdown", "--json", "--repo", repo])
    expect(r.code, r.stderr).toBe(0)
    const b = JSON.parse(r.stdout) as {
      blocks: Array<{ tier: string; name: string; tokens: number; cached: boolean; contents: Array<{ type: string; tokens: number; files?: Array<string> }> }>
      total_tokens: number
      cached_tokens: number
      cached_share: number
      promotions: Array<string>
      demotions: Array<string>
      empty_tiers_this_request: number
      empty_tiers_session_total: number
    }
    expect(b.blocks.map((x) => x.tier)).toEqual(["L0", "L1", "L2", "L3", "active"].filter((t) => b.blocks.some((x) => x.tier === t)))
    expect(b.blocks.reduce((n, x) => n + x.tokens, 0)).toBe(b.total_tokens)
    expect(b.blocks.filter((x) => x.cached).reduce((n, x) => n + x.tokens, 0)).toBe(b.cached_tokens)
    expect(b.cached_share).toBeCloseTo(b.cached_tokens / b.total_tokens, 5)
    for (const block of b.blocks) expect(block.contents.reduce((n, c) => n + c.tokens, 0)).toBe(block.tokens)
    // The CLI offers tools (an agent's loop): the selected file entered the journal once, cached.
    const files = b.blocks.flatMap((x) => x.contents.filter((c) => c.type === "files").map((c) => ({ tier: x.tier, cached: x.cached, files: c.files })))
    expect(files).toEqual([{ tier: "L3", cached: true, files: [PRICING] }])
    // The selected file's symbol block is nowhere.
    expect(b.blocks.flatMap((x) => x.contents.filter((c) => c.type === "symbols").flatMap((c) => c.files ?? []))).not.toContain(PRICING)
    // The synthetic turns ("Ok." acknowledgements) are counted, in the JSON and the readable form.
    const synthetic: { synthetic_messages?: number; synthetic_tokens?: number } = JSON.parse(r.stdout)
    expect(synthetic.synthetic_messages).toBeGreaterThan(0)
    expect(synthetic.synthetic_tokens).toBeGreaterThanOrEqual(synthetic.synthetic_messages!)
    const text = await runBin(["breakdown", "--repo", repo])
    expect(text.stdout).toContain(`Synthetic turns ("Ok."): ${synthetic.synthetic_messages} (`)
  })

  it("hud and breakdown change no session state", async () => {
    const repo = await demo()
    expect((await runBin(["assemble", "--repo", repo, "--prompt", "a"])).code).toBe(0)
    const before = snapshot(repo, { withCache: false })
    expect((await runBin(["hud", "--repo", repo])).code).toBe(0)
    expect((await runBin(["breakdown", "--repo", repo])).code).toBe(0)
    expect(snapshot(repo, { withCache: false })).toEqual(before)
  })
})
