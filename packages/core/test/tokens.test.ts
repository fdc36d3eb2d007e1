import { Effect } from "effect"
import { describe, expect } from "vitest"
import {
  encodingForModel,
  estimateTokens,
  makeCustomCounter,
  makeTokenCounter,
  modelInfo,
  Tokenizer,
  MESSAGE_OVERHEAD_TOKENS,
  LIST_OVERHEAD_TOKENS
} from "../src/index.ts"
import { it } from "./support.ts"

describe("encodingForModel", () => {
  it.each([
    ["gpt-4o", "o200k_base", true],
    ["gpt-4o-mini", "o200k_base", true],
    ["gpt-4.1-nano", "o200k_base", true],
    ["gpt-4.5-preview", "o200k_base", true],
    ["o1-mini", "o200k_base", true],
    ["o3", "o200k_base", true],
    ["o4-mini", "o200k_base", true],
    ["gpt-5", "o200k_base", true],
    ["gpt-5.6-codex", "o200k_base", true],
    ["openai/gpt-5.2", "o200k_base", true],
    ["gpt-4", "cl100k_base", true],
    ["gpt-4-turbo", "cl100k_base", true],
    ["gpt-3.5-turbo", "cl100k_base", true],
    ["claude-sonnet-4-5", "cl100k_base", false],
    ["gemini-2.5-pro", "cl100k_base", false],
    ["some-unknown-model", "cl100k_base", false]
  ] as const)("%s -> %s (exact %s)", (model, encoding, exact) => {
    expect(encodingForModel(model)).toEqual({ encoding, exact })
  })
})

describe("modelInfo", () => {
  it("knows families and defaults the rest", () => {
    expect(modelInfo("gpt-4o")).toMatchObject({ maxInputTokens: 128_000, maxOutputTokens: 16_384 })
    expect(modelInfo("claude-opus-4-5").maxOutputTokens).toBe(128_000)
    expect(modelInfo("claude-sonnet-4-5").maxOutputTokens).toBe(64_000)
    expect(modelInfo("mystery")).toMatchObject({ maxInputTokens: 128_000, maxOutputTokens: 4_096 })
  })
})

describe("makeTokenCounter", () => {
  it("counts exactly with the model's encoding", async () => {
    const counter = await makeTokenCounter("gpt-4o")
    expect(counter.exact).toBe(true)
    expect(counter.encoding).toBe("o200k_base")
    expect(counter.count("hello world")).toBe(2)
    expect(counter.count("")).toBe(0)
  })

  it("treats special-token text as plain text instead of throwing", async () => {
    const counter = await makeTokenCounter("gpt-4")
    expect(counter.count("<|endoftext|>")).toBeGreaterThan(1)
  })

  it("flags approximations for non-OpenAI models", async () => {
    const counter = await makeTokenCounter("claude-sonnet-4-5")
    expect(counter.exact).toBe(false)
    expect(counter.count("hello world")).toBeGreaterThan(0)
  })

  it("memoizes by content hash so unchanged content is not re-tokenized", () => {
    let calls = 0
    const counter = makeCustomCounter("test", (t) => {
      calls++
      return t.length
    })
    const text = "x".repeat(1000)
    expect(counter.count(text)).toBe(1000)
    expect(counter.count(text)).toBe(1000)
    expect(calls).toBe(1)
    expect(counter.stats()).toEqual({ hits: 1, misses: 1 })
  })

  it("falls back to chars/4 when the encoder throws", () => {
    const counter = makeCustomCounter("test", () => {
      throw new Error("boom")
    }, { exact: true })
    const text = "abcdefgh".repeat(20)
    expect(counter.count(text)).toBe(estimateTokens(text))
    expect(counter.exact).toBe(false)
  })

  it("counts messages and lists with overhead", async () => {
    const counter = await makeTokenCounter("gpt-4o")
    const m = { role: "user" as const, content: "hello world" }
    expect(counter.countMessage(m)).toBe(MESSAGE_OVERHEAD_TOKENS + 2)
    expect(counter.countMessages([m, m])).toBe(LIST_OVERHEAD_TOKENS + 2 * (MESSAGE_OVERHEAD_TOKENS + 2))
    expect(counter.countMessages([])).toBe(0)
    const multimodal = { role: "user" as const, content: [{ type: "text" as const, text: "hello world" }, { type: "image" as const, url: "data:image/png;base64,AAAA" }] }
    expect(counter.countMessage(multimodal)).toBe(MESSAGE_OVERHEAD_TOKENS + 2 + 1000)
  })
})

describe("Tokenizer service", () => {
  it.effect("provides a counter for the model", () =>
    Effect.gen(function* () {
      const tokenizer = yield* Tokenizer
      expect(tokenizer.count("hello world")).toBe(2)
    }).pipe(Effect.provide(Tokenizer.layer("gpt-4o"))))
})
