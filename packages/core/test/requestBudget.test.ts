import fc from "fast-check"
import { describe, expect } from "vitest"
import { FileContext, makeEstimatingCounter, shedFiles, tokenBudget } from "../src/index.ts"
import { it } from "@strata/test-support"

const counter = makeEstimatingCounter()

describe("tokenBudget", () => {
  it("reports maxInputTokens / 16 for history and never a negative remainder", () => {
    expect(tokenBudget(1_000, 128_000, false)).toEqual({
      historyTokens: 1_000,
      maxHistoryTokens: 8_000,
      maxInputTokens: 128_000,
      remaining: 7_000,
      needsSummary: false
    })
    expect(tokenBudget(9_000, 128_000, true).remaining).toBe(0)
    expect(tokenBudget(0, 100, false).maxHistoryTokens).toBe(6)
  })
})

describe("shedFiles (the input limit, docs/pipeline.md#within-the-models-input-limit)", () => {
  const files = FileContext.of([
    { path: "big.txt", content: "b".repeat(8_000) },
    { path: "mid.txt", content: "m".repeat(4_000) },
    { path: "small.txt", content: "s".repeat(400) }
  ])

  it("removes the largest files when the budget is exceeded", () => {
    // Files ~3,000 tokens + 500 margin + 1,000 other = ~4,500 > 90% of 4,000.
    const result = shedFiles({ files, otherTokens: 1_000, maxInputTokens: 4_000, counter })
    expect(result.dropped.map((f) => f.path)).toEqual(["big.txt"])
    expect(result.files.getFiles()).toEqual(["mid.txt", "small.txt"])
    expect(result.finalTokens).toBeLessThanOrEqual(result.limitTokens)
    expect(result.limitTokens).toBe(3_600)
    expect(result.warning).toMatch(/removed this file from context: big\.txt \(2,004 tokens\)/)
  })

  it("keeps dropping, largest first, until the estimate fits", () => {
    const result = shedFiles({ files, otherTokens: 1_000, maxInputTokens: 2_000, counter })
    expect(result.dropped.map((f) => f.path)).toEqual(["big.txt", "mid.txt"])
    expect(result.files.getFiles()).toEqual(["small.txt"])
  })

  it("is a no-op under budget", () => {
    const result = shedFiles({ files, otherTokens: 0, maxInputTokens: 100_000, counter })
    expect(result.dropped).toEqual([])
    expect(result.files).toBe(files)
    expect(result.warning).toBeUndefined()
    expect(result.finalTokens).toBe(result.estimatedTokens)
  })

  it("says so when even with no files the request is over", () => {
    const result = shedFiles({ files, otherTokens: 10_000, maxInputTokens: 4_000, counter })
    expect(result.files.size).toBe(0)
    expect(result.warning).toContain("still")
  })

  it("property: the result fits or has no files, and every kept file is no larger than any dropped one", () => {
    const file = fc.record({ path: fc.stringMatching(/^[a-z]{1,8}\.ts$/), size: fc.nat({ max: 20_000 }) })
    fc.assert(
      fc.property(fc.array(file, { maxLength: 12 }), fc.nat({ max: 5_000 }), fc.integer({ min: 1_000, max: 20_000 }), (specs, other, max) => {
        const fc_ = FileContext.of(specs.map((s) => ({ path: s.path, content: "x".repeat(s.size) })))
        const result = shedFiles({ files: fc_, otherTokens: other, maxInputTokens: max, counter })
        const kept = result.files.getTokensByFile(counter)
        const smallestDropped = Math.min(...result.dropped.map((d) => d.tokens))
        return (
          (result.finalTokens <= result.limitTokens || result.files.size === 0) &&
          [...kept.values()].every((t) => t <= smallestDropped) &&
          result.dropped.length + result.files.size === fc_.size
        )
      }),
      { numRuns: 300, seed: 11 }
    )
  })
})
