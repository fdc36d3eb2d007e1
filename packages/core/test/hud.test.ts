// The terminal HUD: a pure function of the tier report and usage figures.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cacheHitShare, formatTokens, renderCacheBlocks, renderHud, type TierReport } from "../src/index.ts"
import { MIN_HUD_WIDTH, renderTierChanges, renderTokenBreakdown } from "../src/hud/index.ts"

const tier = (tokens: number, symbols = 0, files = 0, history = 0) => ({ tokens, symbols, files, history, hasTree: false })

const report: TierReport = {
  model: "claude-sonnet-4-5",
  mode: "tiered",
  tiers: {
    L0: { ...tier(8421, 12, 2), hasSystem: true, hasLegend: true },
    L1: tier(6321, 8, 2),
    L2: tier(0),
    L3: tier(3456, 6, 1, 2),
    active: { ...tier(3127, 0, 1, 4), hasTree: true, hasUrls: false, hasHistory: true }
  },
  thresholds: { L0: 12, L1: 9, L2: 6, L3: 3 },
  totalTokens: 21325,
  cachedTokens: 18198,
  categories: { tools: 0, system: 1800, legend: 300, symbols: 9000, files: 6000, tree: 500, urls: 0, review: 0, history: 2000, prompt: 100, other: 0, framing: 1625 },
  emptyTiers: 1,
  emptyTiersSession: 3,
  promotions: [
    { key: "symbol:ac/llm/streaming.py", from: "L3", to: "L2", reason: "promoted" },
    { key: "file:ac/context/manager.py", from: "L3", to: "L2", reason: "promoted" }
  ],
  demotions: [{ key: "file:ac/edit_parser.py", from: "L1", to: "active", reason: "hash changed" }],
  changes: [
    { key: "symbol:ac/llm/streaming.py", from: "L3", to: "L2", reason: "promoted" },
    { key: "file:ac/context/manager.py", from: "L3", to: "L2", reason: "promoted" },
    { key: "file:ac/edit_parser.py", from: "L1", to: "active", reason: "hash changed" },
    { key: "file:old.py", from: "active", to: null, reason: "not in request" }
  ]
}

describe("HUD", () => {
  it("draws the cache-block box for non-empty tiers", () => {
    const box = renderCacheBlocks(report)
    expect(box[0]).toMatch(/^╭─ Cache Blocks ─+╮$/)
    expect(box.at(-1)).toMatch(/^╰─+╯$/)
    expect(new Set(box.map((l) => l.length)).size).toBe(1)
    const text = box.join("\n")
    expect(text).toContain("│ L0 (12+):     8,421 tokens [cached]")
    expect(text).toContain("└─ system + legend + 12 symbols + 2 files")
    expect(text).toContain("└─ 6 symbols + 1 file + history (2 msgs)")
    expect(text).toContain("│ active:       3,127 tokens")
    expect(text).toContain("└─ 1 file + tree + history (4 msgs) + prompt")
    expect(text).not.toContain("L2 (6+)")
    expect(text).toContain("Total: 21,325 tokens | In cached blocks: 85%")
    expect(text).not.toContain("Cache hit")
    expect(text).toContain("Empty tiers skipped: 1 (session total: 3)")
  })

  it("prints the token breakdown; categories add up to the total", () => {
    const lines = renderTokenBreakdown({
      report,
      lastRequest: { input: 4998, output: 34, cacheRead: 21640, cacheWrite: 48070 },
      session: { input: 10000, output: 2000, cacheRead: 90000, cacheWrite: 50000, requests: 3 }
    })
    expect(lines[0]).toBe("Model: claude-sonnet-4-5 (input limit 200,000, output limit 64,000)")
    const figures = lines.slice(1).filter((l) => /^[A-Z][A-Za-z ]+:\s+[\d,]+$/.test(l)).map((l) => Number(l.split(":")[1]?.replace(/[ ,]/g, "")))
    expect(figures.reduce((a, b) => a + b, 0)).toBe(report.totalTokens)
    expect(lines).toContain("Symbol Map:      9,300")
    expect(lines).toContain("Total:          21,325 / 200,000 (11%)")
    expect(lines).toContain("Last request: 74,708 prompt tokens, 34 output")
    expect(lines).toContain("  Cache hit rate 29% (read 21,640, write 48,070, uncached 4,998)")
    expect(lines).toContain("Session total: 150,000 prompt tokens, 2,000 output over 3 requests")
    expect(lines).toContain("  Cache hit rate 60% (read 90,000, write 50,000, uncached 10,000)")
  })

  it("the cache hit rate is what the provider billed as reads over the whole prompt (uncached + read + written)", () => {
    const cacheLine = (session: { input: number; cacheRead: number; cacheWrite: number }) => {
      const lines = renderTokenBreakdown({ report, session: { ...session, output: 0 } })
      return lines[lines.findIndex((l) => l.startsWith("Session total:")) + 1]
    }
    // 3,000 of 4,000 prompt tokens came from the cache: 75%, not 3,000 / 1,000 uncached.
    expect(cacheLine({ input: 1000, cacheRead: 3000, cacheWrite: 0 })).toBe("  Cache hit rate 75% (read 3,000, write 0, uncached 1,000)")
    expect(cacheLine({ input: 1000, cacheRead: 2000, cacheWrite: 1000 })).toContain("hit rate 50%")
    // A fully cached prompt has no uncached input and still gets a rate.
    expect(cacheLine({ input: 0, cacheRead: 5000, cacheWrite: 0 })).toContain("hit rate 100%")
    expect(cacheLine({ input: 0, cacheRead: 0, cacheWrite: 0 })).toBe("  Cache (read 0, write 0, uncached 0)")
    expect(cacheHitShare({ input: 1000, cacheRead: 3000, cacheWrite: 0, output: 9 })).toBe(0.75)
    expect(cacheHitShare({ input: 0, cacheRead: 0, cacheWrite: 0, output: 9 })).toBeUndefined()
  })

  it("fits the box to a terminal width, wrapping rows inside it", () => {
    const long: TierReport = { ...report, tiers: { ...report.tiers, L0: { ...report.tiers.L0, symbols: 1234, files: 56, hasTree: true, history: 12 } } }
    const natural = renderCacheBlocks(long)
    // Without a width the box is as wide as its rows (what a pipe gets: deterministic).
    expect(natural[0]!.length).toBeGreaterThan(52)
    expect(renderCacheBlocks(long, { width: 200 })).toEqual(natural)
    const narrow = renderCacheBlocks(long, { width: 40 })
    expect(new Set(narrow.map((l) => l.length))).toEqual(new Set([40]))
    expect(narrow.join("\n")).toContain("│   └─ system + legend + 1234 symbols")
    expect(narrow.join("\n")).toMatch(/│ {6}\S/)
    // Below the minimum the box stops shrinking.
    expect(renderCacheBlocks(long, { width: 10 })[0]!.length).toBe(MIN_HUD_WIDTH)
  })

  it("a box fitted to any width keeps every word, in order, with every line as wide as the box", () => {
    const count = fc.integer({ min: 0, max: 5_000_000 })
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 120 }), count, count, count, count, (width, symbols, files, history, empty) => {
        const big: TierReport = { ...report, emptyTiersSession: empty, tiers: { ...report.tiers, L0: { ...report.tiers.L0, symbols, files, history, hasTree: true } } }
        const box = renderCacheBlocks(big, { width })
        expect(box.every((l) => l.length === box[0]!.length)).toBe(true)
        expect(box[0]!.length).toBeLessThanOrEqual(Math.max(MIN_HUD_WIDTH, width))
        const words = (lines: ReadonlyArray<string>) => lines.filter((l) => l.startsWith("│")).map((l) => l.slice(2, -2)).join(" ").split(/\s+/).filter(Boolean)
        expect(words(box)).toEqual(words(renderCacheBlocks(big)))
      })
    )
  })

  it("prints promotion and demotion lines, grouped and truncated", () => {
    const lines = renderTierChanges(report)
    expect(lines).toEqual([
      "📈 Promoted to L2: symbol:ac/llm/streaming.py, file:ac/context/manager.py",
      "📉 Demoted to active: file:ac/edit_parser.py (hash changed)",
      "➖ Removed (not in request): file:old.py"
    ])
    expect(renderTierChanges(report, { maxNames: 1 })[0]).toBe("📈 Promoted to L2: symbol:ac/llm/streaming.py, … +1 more")
    const placed = renderTierChanges({ ...report, promotions: [], demotions: [], changes: [
      { key: "symbol:a", from: null, to: "L1", reason: "graduated" },
      { key: "symbol:b", from: null, to: "L3", reason: "graduated" }
    ] })
    expect(placed).toEqual(["🧭 Initial placement: 2 items (L1 1, L3 1)"])
  })

  it("is plain text (no ANSI codes) and has an ASCII mode", () => {
    const hud = renderHud({ report })
    expect(hud.includes(String.fromCharCode(27))).toBe(false)
    const ascii = renderHud({ report }, { ascii: true })
    expect(ascii).toMatch(/^\+- Cache Blocks -+\+$/m)
    // eslint-disable-next-line no-control-regex
    expect(ascii).toMatch(/^[\x00-\x7f…]*$/)
    expect(ascii).toContain("^ Promoted to L2")
    expect(ascii).toContain("v Demoted to active")
  })

  it("formats numbers with thousands separators regardless of locale", () => {
    expect(formatTokens(0)).toBe("0")
    expect(formatTokens(999)).toBe("999")
    expect(formatTokens(1234567)).toBe("1,234,567")
    expect(formatTokens(-4200)).toBe("-4,200")
  })
})
