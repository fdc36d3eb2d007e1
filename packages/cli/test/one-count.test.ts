// One token count per request: `assemble`, the simulator's line, `chat --dry-run`, `hud`,
// `breakdown --json` and the session record show the same number for a request, and the
// simulator's read + write + uncached adds up to it (issue 29, item 2). In-process runs.
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runCli } from "../src/cli.ts"
import { makeTestOutput } from "../src/support/output.ts"
import { storedSession } from "./support.ts"

const dir = tempDir("strata-one-count-")
afterAll(() => dir.cleanup())
const repo = makeDemoRepo({ out: dir.path }).out

const run = async (...args: ReadonlyArray<string>) => {
  const out = makeTestOutput()
  const code = await runCli([...args, "--repo", repo], { output: out.layer, env: { ...process.env, NO_COLOR: "1" } })
  expect(code, out.stderr()).toBe(0)
  return out.stdout()
}

const num = (s: string | undefined): number => Number((s ?? "NaN").replace(/,/g, ""))

/** The headline's tokens and the simulator line's split. */
const summary = (stdout: string) => {
  const head = /(?:request for \S+|would send): \d+ messages, ([\d,]+) tokens|would send \d+ messages, ([\d,]+) tokens/.exec(stdout)
  const sim = /simulated anthropic cache: read ([\d,]+), write ([\d,]+), uncached ([\d,]+)/.exec(stdout)
  const breakpoints = [...stdout.matchAll(/breakpoint L\d at \S+ \(prefix ([\d,]+) tokens/g)].map((m) => num(m[1]))
  expect(head, stdout).not.toBeNull()
  expect(sim, stdout).not.toBeNull()
  return { tokens: num(head![1] ?? head![2]), read: num(sim![1]), write: num(sim![2]), uncached: num(sim![3]), breakpoints }
}

describe("one token count per request", () => {
  it("assemble, its simulator line, the record, the HUD and the breakdown agree", async () => {
    // The next request as each read-only view builds it (an empty prompt): one number.
    const dry = summary(await run("assemble", "--prompt", "", "--dry-run"))
    expect(dry.read + dry.write + dry.uncached).toBe(dry.tokens)
    const breakdown = JSON.parse(await run("breakdown", "--json")) as { total_tokens: number; cached_share: number; cache_hit_rate: number }
    expect(breakdown.total_tokens).toBe(dry.tokens)
    expect(breakdown.cache_hit_rate).toBe(breakdown.cached_share)
    const hud = JSON.parse(await run("hud", "--json")) as { report: { totalTokens: number } }
    expect(hud.report.totalTokens).toBe(dry.tokens)
    expect(await run("hud")).toMatch(new RegExp(`Total: ${dry.tokens.toLocaleString("en-US")} tokens`))

    // Two recorded requests: each one's simulator split adds up to its headline, the
    // write ends at the last breakpoint's prefix, and the record keeps the same numbers.
    const first = summary(await run("assemble", "--prompt", "Where is pricing done?"))
    expect(first.read + first.write + first.uncached).toBe(first.tokens)
    expect(first.read).toBe(0)
    expect(first.write).toBe(first.breakpoints.at(-1))
    let record = (await storedSession(repo)).decodedRecord
    expect(record.last?.promptTokens).toBe(first.tokens)
    expect(record.last?.usage).toMatchObject({ input: first.uncached, cacheRead: first.read, cacheWrite: first.write })

    const second = summary(await run("assemble", "--prompt", "And shipping?"))
    expect(second.read + second.write + second.uncached).toBe(second.tokens)
    expect(second.read).toBeGreaterThan(0)
    record = (await storedSession(repo)).decodedRecord
    expect(record.last?.promptTokens).toBe(second.tokens)
    const t = record.totals
    expect(t.input + t.cacheRead + t.cacheWrite).toBe(first.tokens + second.tokens)

    const hudText = await run("hud")
    expect(hudText).toContain(`Last request: ${second.tokens.toLocaleString("en-US")} prompt tokens`)
    expect(hudText).toContain(`(read ${second.read.toLocaleString("en-US")}, write ${second.write.toLocaleString("en-US")}, uncached ${second.uncached.toLocaleString("en-US")})`)
    expect(hudText).toContain(`Session total: ${(first.tokens + second.tokens).toLocaleString("en-US")} prompt tokens`)
  })

  it("chat --dry-run: the breakpoints' prefixes are the blocks' sums (tools counted once) and the split adds up", async () => {
    const stdout = await run("chat", "--dry-run", "--once", "What does the worker do?", "--no-hud")
    const chat = summary(stdout)
    expect(chat.read + chat.write + chat.uncached).toBe(chat.tokens)
    const report = JSON.parse(await run("chat", "--dry-run", "--once", "What does the worker do?", "--json")) as { report: { tiers: Record<string, { tokens: number }> } }
    // L0 holds the tools, the system prompt and L0's symbols: its breakpoint's prefix is L0's tokens.
    expect(chat.breakpoints[0]).toBe(report.report.tiers["L0"]!.tokens)
  })

  it("chat and assemble build the same prefix: the first chat after assemble reads it; adding a file keeps it", async () => {
    const assembled = JSON.parse(await run("assemble", "--prompt", "Where are labels printed?", "--json")) as { tools?: unknown; system?: unknown }
    expect(assembled.tools).toBeDefined()
    type Dry = { request: { tools?: unknown; system?: unknown }; report: { tiers: Record<string, { tokens: number }> }; simulatedUsage: { cacheRead: number } }
    const chat = JSON.parse(await run("chat", "--dry-run", "--once", "And the queue?", "--json")) as Dry
    expect(chat.request.tools).toEqual(assembled.tools)
    expect(chat.request.system).toEqual(assembled.system)
    const frozen = (d: Dry) => ["L0", "L1", "L2"].reduce((n, t) => n + (d.report.tiers[t]?.tokens ?? 0), 0)
    expect(chat.simulatedUsage.cacheRead).toBeGreaterThanOrEqual(frozen(chat))

    // Adding a file whose symbol block sits in a cached tier does not move that block: the prefix is read.
    const breakdown = JSON.parse(await run("breakdown", "--json")) as { blocks: Array<{ tier: string; contents: Array<{ type: string; files?: Array<string> }> }> }
    const inL1 = breakdown.blocks.find((b) => b.tier === "L1")?.contents.find((c) => c.type === "symbols")?.files?.[0]
    expect(inL1).toBeDefined()
    const added = summary(await run("assemble", "--prompt", "Look at this file", "--file", inL1!))
    expect(added.read).toBeGreaterThanOrEqual(frozen(chat))
  })
})
