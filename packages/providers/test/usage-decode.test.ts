import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { computeCost, costOf, decodeAnthropicUsage, decodeBedrockUsage, decodeGeminiUsage, decodeOpenAIChatUsage, decodeOpenAIResponsesUsage, decodeUsage, lookupModel, usageFromStream } from "../src/index.ts"
import { cacheHitRate, promptTokens } from "../src/usage.ts"
import { sumUsage, Usage } from "@strata/core"

describe("decoding provider usage into Usage", () => {
  it("anthropic: input is already the uncached tail; the 5m/1h split is kept", () => {
    const u = decodeAnthropicUsage({
      input_tokens: 50,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 10_000,
      output_tokens: 200,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      service_tier: "standard"
    })
    expect(u).toEqual({ input: 50, cacheRead: 10_000, cacheWrite: 3000, output: 200, cacheWriteByTtl: { "5m": 1000, "1h": 2000 } })
    expect(promptTokens(u)).toBe(13_050)
    expect(cacheHitRate(u)).toBeCloseTo(10_000 / 13_050)
  })

  it("openai chat: prompt_tokens includes cached and written tokens", () => {
    expect(decodeOpenAIChatUsage({ prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 } }))
      .toEqual({ input: 86, cacheRead: 1920, cacheWrite: 0, output: 300 })
    // GPT-5.6+ reports writes; LiteLLM forwards Anthropic's cache_creation_input_tokens.
    expect(decodeOpenAIChatUsage({ prompt_tokens: 5000, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 3000 } }))
      .toEqual({ input: 1000, cacheRead: 1000, cacheWrite: 3000, output: 1 })
    expect(decodeOpenAIChatUsage({ prompt_tokens: 5000, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 0 }, cache_creation_input_tokens: 4000 }))
      .toEqual({ input: 1000, cacheRead: 0, cacheWrite: 4000, output: 1 })
    expect(decodeOpenAIChatUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: null }))
      .toEqual({ input: 10, cacheRead: 0, cacheWrite: 0, output: 2 })
  })

  it("openai responses: input_tokens includes cached tokens", () => {
    expect(decodeOpenAIResponsesUsage({ input_tokens: 3000, output_tokens: 40, input_tokens_details: { cached_tokens: 2048 }, output_tokens_details: { reasoning_tokens: 10 } }))
      .toEqual({ input: 952, cacheRead: 2048, cacheWrite: 0, output: 40 })
  })

  it("bedrock: inputTokens is the non-cached part; cacheDetails gives the TTL split", () => {
    expect(decodeBedrockUsage({ inputTokens: 20, outputTokens: 7, totalTokens: 5027, cacheReadInputTokens: 1000, cacheWriteInputTokens: 4000, cacheDetails: [{ ttl: "1h", inputTokens: 4000 }] }))
      .toEqual({ input: 20, cacheRead: 1000, cacheWrite: 4000, output: 7, cacheWriteByTtl: { "1h": 4000 } })
  })

  it("gemini: promptTokenCount includes cached tokens; thinking counts as output; no writes", () => {
    expect(decodeGeminiUsage({ promptTokenCount: 10_000, cachedContentTokenCount: 8000, candidatesTokenCount: 100, thoughtsTokenCount: 50, totalTokenCount: 10_150 }))
      .toEqual({ input: 2000, cacheRead: 8000, cacheWrite: 0, output: 150 })
  })

  it("rejects malformed usage with the path of the bad field", () => {
    expect(() => decodeAnthropicUsage({ input_tokens: "12" })).toThrow(/input_tokens/)
    expect(() => decodeUsage("bedrock", { cacheDetails: "x" })).toThrow(/cacheDetails/)
  })

  it("the decoded value is a valid Usage", () => {
    const u = decodeUsage("gemini", { promptTokenCount: 5 })
    expect(Schema.decodeUnknownSync(Usage)(u)).toEqual({ input: 5, cacheRead: 0, cacheWrite: 0, output: 0 })
    expect(() => Schema.decodeUnknownSync(Usage)({ input: -1, cacheRead: 0, cacheWrite: 0, output: 0 })).toThrow()
  })
})

describe("streaming usage", () => {
  it("anthropic: message_start, then cumulative message_delta counts", () => {
    const events = [
      { type: "message_start", message: { id: "m", usage: { input_tokens: 30, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 0 } } } },
      { type: "content_block_delta", delta: { type: "text_delta", text: "hi" } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 90 } },
      { type: "message_stop" }
    ]
    expect(usageFromStream("anthropic", events)).toEqual({ input: 30, cacheRead: 0, cacheWrite: 2000, output: 90, cacheWriteByTtl: { "5m": 2000 } })
    // Newer servers repeat the input counts in message_delta; they replace the start values.
    const repeated = [...events.slice(0, 2), { type: "message_delta", usage: { input_tokens: 30, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 91 } }]
    expect(usageFromStream("anthropic", repeated)?.output).toBe(91)
  })

  it("openai chat: only the final include_usage chunk carries usage", () => {
    const chunks = [
      { id: "c", choices: [{ index: 0, delta: { content: "a" } }], usage: null },
      { id: "c", choices: [], usage: { prompt_tokens: 1500, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1024 } } }
    ]
    expect(usageFromStream("openai-chat", chunks)).toEqual({ input: 476, cacheRead: 1024, cacheWrite: 0, output: 3 })
    expect(usageFromStream("openai-chat", chunks.slice(0, 1))).toBeUndefined()
  })

  it("openai responses: response.completed", () => {
    const events = [
      { type: "response.output_text.delta", delta: "x" },
      { type: "response.completed", response: { usage: { input_tokens: 100, output_tokens: 2, input_tokens_details: { cached_tokens: 0 } } } }
    ]
    expect(usageFromStream("openai-responses", events)).toEqual({ input: 100, cacheRead: 0, cacheWrite: 0, output: 2 })
  })

  it("bedrock: the metadata event, bare or wrapped", () => {
    const usage = { inputTokens: 5, outputTokens: 6, cacheReadInputTokens: 7, cacheWriteInputTokens: 0 }
    expect(usageFromStream("bedrock", [{ contentBlockDelta: { delta: { text: "x" } } }, { metadata: { usage, metrics: { latencyMs: 1 } } }]))
      .toEqual({ input: 5, cacheRead: 7, cacheWrite: 0, output: 6 })
    expect(usageFromStream("bedrock", [{ usage }])?.cacheRead).toBe(7)
  })

  it("gemini: the last chunk's usageMetadata wins", () => {
    const chunks = [
      { candidates: [], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 1 } },
      { candidates: [], usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 64, candidatesTokenCount: 20 } }
    ]
    expect(usageFromStream("gemini", chunks)).toEqual({ input: 36, cacheRead: 64, cacheWrite: 0, output: 20 })
  })
})

describe("cost from the dated price table", () => {
  it("dated read multipliers: Sonnet 5.5 reads 0.1x until 2026-10-07, 0.05x after", () => {
    const u = { input: 0, cacheRead: 1_000_000, cacheWrite: 0, output: 0 }
    expect(costOf("anthropic", "claude-sonnet-5-5", u, { asOf: "2026-10-01" })!.cacheRead).toBeCloseTo(0.2, 10)
    expect(costOf("anthropic", "claude-sonnet-5-5", u)!.cacheRead).toBeCloseTo(0.1, 10)
    expect(costOf("anthropic", "claude-fable-5-1", u)!.cacheRead).toBeCloseTo(0.25, 10)
  })

  it("anthropic: writes at 1.25x (5m) and 2x (1h), reads at 0.1x, with provenance", () => {
    const limits = lookupModel("anthropic", "claude-sonnet-4-5")
    // 100k of each (prompt 400k would switch to long-context prices): $ per 100k = price / 10.
    const u = { input: 100_000, cacheRead: 100_000, cacheWrite: 200_000, output: 100_000, cacheWriteByTtl: { "5m": 100_000, "1h": 100_000 } }
    const c = computeCost({ ...u, input: 50_000, cacheRead: 50_000, cacheWrite: 100_000, cacheWriteByTtl: { "5m": 50_000, "1h": 50_000 } }, limits)!
    expect(c.input).toBeCloseTo(0.15, 10)
    expect(c.cacheRead).toBeCloseTo(0.015, 10)
    expect(c.cacheWrite).toBeCloseTo(0.1875 + 0.3, 10)
    expect(c.output).toBeCloseTo(1.5, 10)
    expect(c.total).toBeCloseTo(0.15 + 0.015 + 0.4875 + 1.5, 10)
    expect(c.uncachedTotal).toBeCloseTo(0.6 + 1.5, 10)
    // Above 200k prompt tokens Sonnet 4.5 bills at $6 input.
    expect(computeCost(u, limits)!.input).toBeCloseTo(0.6, 10)
    expect(c.priceSource).toMatchObject({ asOf: "2025-09", source: "A3" })
  })

  it("long-context prices apply above the threshold", () => {
    const c = costOf("gemini", "gemini-2.5-pro", { input: 250_000, cacheRead: 0, cacheWrite: 0, output: 1000 })!
    expect(c.input).toBeCloseTo(0.625)
    expect(c.output).toBeCloseTo(0.015)
  })

  it("read multipliers are dated: Gemini 2.5 Pro read 0.25x in 2025, 0.1x from 2026-07; storage per token-hour", () => {
    const u = { input: 0, cacheRead: 100_000, cacheWrite: 0, output: 0 }
    expect(costOf("gemini", "gemini-2.5-pro", u, { asOf: "2025-06" })!.cacheRead).toBeCloseTo(0.03125, 10)
    expect(costOf("gemini", "gemini-2.5-pro", u)!.cacheRead).toBeCloseTo(0.0125, 10)
    expect(costOf("gemini", "gemini-2.5-pro", u, { ttl: "explicit", storageTokenHours: 1_000_000 })!.storage).toBeCloseTo(4.5)
  })

  it("openai: no write fee before GPT-5.6, read discount per model", () => {
    const u = { input: 0, cacheRead: 1_000_000, cacheWrite: 0, output: 0 }
    expect(costOf("openai", "gpt-4o-2024-08-06", u)!.cacheRead).toBeCloseTo(1.25)
    expect(costOf("openai", "gpt-4.1", u)!.cacheRead).toBeCloseTo(0.5)
    expect(costOf("openai", "gpt-5-mini", u)!.cacheRead).toBeCloseTo(0.025)
  })

  it("is undefined when the table has no price, and custom rows price it", () => {
    expect(costOf("openai", "gpt-5.6", { input: 1, cacheRead: 0, cacheWrite: 0, output: 0 })).toBeUndefined()
    const table = [{ provider: "openai" as const, family: "GPT-5.6 (negotiated)", patterns: [/^gpt-5\.6/], revisions: [{ asOf: "2026-10", source: "contract", set: { price: { inputPerMTok: 4, outputPerMTok: 20 } } }] }]
    const c = costOf("openai", "gpt-5.6", { input: 1_000_000, cacheRead: 0, cacheWrite: 0, output: 0 }, { table })!
    expect(c.total).toBeCloseTo(4)
    expect(c.priceSource?.source).toBe("contract")
  })

  it("sumUsage sums parts and TTL splits", () => {
    const a = { input: 1, cacheRead: 2, cacheWrite: 3, output: 4, cacheWriteByTtl: { "5m": 3 } }
    const b = { input: 1, cacheRead: 1, cacheWrite: 1, output: 1, cacheWriteByTtl: { "1h": 1 } }
    expect(sumUsage(a, b)).toEqual({ input: 2, cacheRead: 3, cacheWrite: 4, output: 5, cacheWriteByTtl: { "5m": 3, "1h": 1 } })
  })
})
