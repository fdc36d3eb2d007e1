import { modelFacts, normalizeModelId as coreNormalizeModelId } from "@strata/core"
import { describe, expect, it } from "vitest"
import { computeCost, costOf, decodeAnthropicUsage, lookupModel, usageFromStream } from "../src/index.ts"
import { normalizeModelId } from "@strata/core/effect"

describe("models table", () => {
  it("normalizes provider-specific model ids", () => {
    expect(normalizeModelId("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe("claude-sonnet-4-5")
    expect(normalizeModelId("openrouter/anthropic/claude-sonnet-4.5")).toBe("claude-sonnet-4.5")
    expect(normalizeModelId("claude-sonnet-4-5@20250929")).toBe("claude-sonnet-4-5")
    expect(normalizeModelId("models/gemini-2.5-pro")).toBe("gemini-2.5-pro")
  })

  it("resolves dated values per provider", () => {
    expect(lookupModel("anthropic", "claude-sonnet-4-6").minCacheTokens).toBe(1024)
    expect(lookupModel("anthropic", "claude-sonnet-4-6", { asOf: "2026-03" }).minCacheTokens).toBe(2048)
    expect(lookupModel("anthropic", "claude-opus-4-7").minCacheTokens).toBe(2048)
    // Bedrock's id for Opus 4.7 has no `-v1:0` suffix (`us.anthropic.claude-opus-4-7`); older models' ids have one.
    expect(lookupModel("bedrock", "us.anthropic.claude-opus-4-7").minCacheTokens).toBe(4096)
    expect(lookupModel("bedrock", "global.anthropic.claude-opus-4-7").family).toBe(lookupModel("bedrock", "us.anthropic.claude-opus-4-7").family)
    expect(lookupModel("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0").family).toBe(lookupModel("anthropic", "claude-sonnet-4-5").family)
    expect(lookupModel("anthropic", "claude-opus-4-1-20250805").family).toBe("Claude Opus 4.1")
    expect(lookupModel("anthropic", "claude-opus-4-20250514").family).toBe("Claude Opus 4")
    expect(lookupModel("anthropic", "claude-3-5-haiku-20241022").minCacheTokens).toBe(2048)
    expect(lookupModel("openai", "gpt-4.1-mini").family).toBe("GPT-4.1 mini")
    expect(lookupModel("openai", "gpt-4.1").family).toBe("GPT-4.1")
    expect(lookupModel("openai", "gpt-5.6").maxBreakpoints).toBe(4)
    expect(lookupModel("openai", "gpt-5").maxBreakpoints).toBe(0)
    const unknown = lookupModel("anthropic", "claude-nonesuch-9")
    expect(unknown.known).toBe(false)
    expect(unknown.provenance.minCacheTokens?.source).toBe("A2")
  })

  it("builds a row of the built-in table once per model and date, frozen; a caller's own table afresh", () => {
    const row = lookupModel("anthropic", "claude-sonnet-4-6")
    expect(lookupModel("anthropic", "claude-sonnet-4-6")).toBe(row)
    expect(Object.isFrozen(row)).toBe(true)
    const dated = lookupModel("anthropic", "claude-sonnet-4-6", { asOf: "2026-03" })
    expect(dated).not.toBe(row)
    expect(dated.minCacheTokens).toBe(2048)
    expect(lookupModel("bedrock", "claude-sonnet-4-6")).not.toBe(row)
    const table = [{ provider: "anthropic" as const, family: "Mine", patterns: [/^claude-sonnet-4-6/], revisions: [{ asOf: "2026-01", source: "default", set: { minCacheTokens: 99 } }] }]
    const mine = lookupModel("anthropic", "claude-sonnet-4-6", { table })
    expect(mine.minCacheTokens).toBe(99)
    expect(mine.family).toBe("Mine")
    expect(lookupModel("anthropic", "claude-sonnet-4-6", { table })).not.toBe(mine)
    expect(lookupModel("anthropic", "claude-sonnet-4-6").minCacheTokens).toBe(1024)
  })

  it("builds on core's model table: one normaliser, the context facts carried along", () => {
    expect(normalizeModelId).toBe(coreNormalizeModelId)
    const limits = lookupModel("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    expect(limits.facts).toEqual(modelFacts("us.anthropic.claude-sonnet-4-5-20250929-v1:0"))
    expect(limits.facts).toMatchObject({ id: "claude-sonnet-4-5", maxInputTokens: 200_000, maxOutputTokens: 64_000 })
  })
})

describe("usage", () => {
  it("decodes anthropic streaming usage cumulatively", () => {
    const u = usageFromStream("anthropic", [
      { type: "message_start", message: { usage: { input_tokens: 10, cache_read_input_tokens: 2048, output_tokens: 1 } } },
      { type: "message_delta", usage: { output_tokens: 42 } }
    ])
    expect(u).toEqual({ input: 10, cacheRead: 2048, cacheWrite: 0, output: 42 })
  })

  it("prices a usage from the dated table", () => {
    const limits = lookupModel("anthropic", "claude-sonnet-4-5")
    const cost = computeCost({ input: 1_000, cacheRead: 100_000, cacheWrite: 0, output: 500 }, limits)
    expect(cost?.total).toBeCloseTo(0.0405, 10)
    const w = decodeAnthropicUsage({ input_tokens: 0, cache_creation_input_tokens: 2000, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 1000 }, output_tokens: 0 })
    expect(costOf("anthropic", "claude-sonnet-4-5", w)?.cacheWrite).toBeCloseTo((1000 * 1.25 + 1000 * 2) * 3 / 1e6, 12)
  })
})
