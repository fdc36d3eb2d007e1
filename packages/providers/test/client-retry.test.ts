import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { retryAfterMs, simpleBody, type Failure } from "../src/index.ts"
import { backoffMs, DEFAULT_RETRY, isRetryable, nextDelayMs } from "../src/clients/retry.ts"

const http = (status: number, extra: Partial<Failure> = {}): Failure => ({ kind: "http", status, detail: "x", ...extra })

describe("retry policy", () => {
  it("retries 408, 409, 429, 5xx, timeouts and connection errors only", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) expect(isRetryable(http(status))).toBe(true)
    for (const status of [400, 401, 403, 404, 413, 422]) expect(isRetryable(http(status))).toBe(false)
    expect(isRetryable({ kind: "timeout", detail: "" })).toBe(true)
    expect(isRetryable({ kind: "connection", detail: "" })).toBe(true)
    expect(isRetryable({ kind: "credentials", detail: "" })).toBe(false)
    expect(isRetryable({ kind: "other", detail: "" })).toBe(false)
  })

  it("reads retry-after-ms, retry-after seconds and retry-after dates", () => {
    expect(retryAfterMs(http(429, { retryAfterMsHeader: "250" }), 0)).toBe(250)
    expect(retryAfterMs(http(429, { retryAfterHeader: "2" }), 0)).toBe(2000)
    expect(retryAfterMs(http(429, { retryAfterHeader: "0.5" }), 0)).toBe(500)
    // retry-after-ms wins when both are present.
    expect(retryAfterMs(http(429, { retryAfterMsHeader: "10", retryAfterHeader: "5" }), 0)).toBe(10)
    const now = Date.parse("2026-10-01T12:00:00Z")
    expect(retryAfterMs(http(503, { retryAfterHeader: "Thu, 01 Oct 2026 12:00:07 GMT" }), now)).toBe(7000)
    expect(retryAfterMs(http(503, { retryAfterHeader: "Thu, 01 Oct 2026 11:00:00 GMT" }), now)).toBe(0)
    expect(retryAfterMs(http(503, { retryAfterHeader: "soon" }), now)).toBeUndefined()
    expect(retryAfterMs(http(503), now)).toBeUndefined()
  })

  it("honours the server's wait up to maxDelayMs, and stops beyond it", () => {
    const options = { ...DEFAULT_RETRY, maxDelayMs: 10_000 }
    expect(nextDelayMs(http(429, { retryAfterHeader: "3" }), 0, options, 0, 0.5)).toBe(3000)
    expect(nextDelayMs(http(429, { retryAfterHeader: "30" }), 0, options, 0, 0.5)).toBeUndefined()
    expect(nextDelayMs(http(429), options.maxRetries, options, 0, 0.5)).toBeUndefined()
    expect(nextDelayMs(http(400), 0, options, 0, 0.5)).toBeUndefined()
  })

  it("backs off exponentially within 75-100% of the capped delay", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 20 }), fc.double({ min: 0, max: 0.999_999, noNaN: true }), (n, random) => {
      const ceiling = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** n)
      const d = backoffMs(n, DEFAULT_RETRY, random)
      expect(d).toBeGreaterThanOrEqual(Math.floor(ceiling * 0.75))
      expect(d).toBeLessThanOrEqual(ceiling)
    }))
    expect(backoffMs(0, DEFAULT_RETRY, 0.999)).toBe(500)
    expect(backoffMs(1, DEFAULT_RETRY, 0.999)).toBe(1000)
  })
})

describe("simpleBody", () => {
  const chat = { model: "m", system: "Be brief.", messages: [{ role: "user" as const, content: "hi" }], maxTokens: 64 }

  it("renders each provider's plain request", () => {
    expect(simpleBody("anthropic", chat)).toEqual({ model: "m", max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "hi" }] })
    expect(simpleBody("openai", { ...chat, model: "gpt-4o" })).toEqual({
      model: "gpt-4o",
      max_tokens: 64,
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]
    })
    expect(simpleBody("bedrock", chat)).toEqual({
      modelId: "m",
      system: [{ text: "Be brief." }],
      messages: [{ role: "user", content: [{ text: "hi" }] }],
      inferenceConfig: { maxTokens: 64 }
    })
  })

  it("uses max_completion_tokens for OpenAI reasoning models and leaves out an empty system", () => {
    expect(simpleBody("openai", { ...chat, model: "gpt-5-mini" })).toHaveProperty("max_completion_tokens", 64)
    expect(simpleBody("openai", { ...chat, model: "o3" })).not.toHaveProperty("max_tokens")
    expect(simpleBody("anthropic", { ...chat, system: "" })).not.toHaveProperty("system")
    expect(simpleBody("bedrock", { ...chat, system: "" })).not.toHaveProperty("system")
  })
})
