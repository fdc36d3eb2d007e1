import { Effect } from "effect"
import fc from "fast-check"
import { Tiktoken } from "js-tiktoken/lite"
import cl100k from "js-tiktoken/ranks/cl100k_base"
import o200k from "js-tiktoken/ranks/o200k_base"
import { describe, expect } from "vitest"
import { makeBpeCounter, makeTokenCounterSync, encodingForModel, estimateTokens, makeCustomCounter, makeTokenCounter, modelInfo, Tokenizer } from "../src/index.ts"
import { MESSAGE_OVERHEAD_TOKENS, LIST_OVERHEAD_TOKENS } from "../src/tokens/TokenCounter.ts"
import { it } from "@strata/test-support"

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
    ["gpt-oss-120b", "o200k_base", true],
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

  it("evicts the least recently used count when the memo is full", () => {
    const seen: Array<string> = []
    const counter = makeCustomCounter("test", (t) => {
      seen.push(t[0]!)
      return 1
    }, { memoSize: 2, memoChars: 0 })
    const [a, b, c] = ["a", "b", "c"].map((ch) => ch.repeat(100)) as [string, string, string]
    counter.count(a)
    counter.count(b)
    counter.count(a) // hit: a is now the most recent
    counter.count(c) // evicts b
    counter.count(a) // still memoized
    counter.count(b) // re-tokenized
    expect(seen).toEqual(["a", "b", "c", "b"])
  })

  it("bounds the text memo by characters and serves equal copies from it", () => {
    const seen: Array<string> = []
    const counter = makeCustomCounter("test", (t) => {
      seen.push(t[0]!)
      return 1
    }, { memoSize: 1, memoChars: 400 })
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((ch) => ch.repeat(100)) as [string, string, string, string, string]
    counter.count(a)
    counter.count(Buffer.from(a).toString()) // an equal string, not the same object
    for (const t of [b, c, d]) counter.count(t) // 400 characters: all fit
    counter.count(e) // 500 > 400: a leaves the text memo (and the 1-entry hash memo)
    counter.count(b) // still in the text memo
    counter.count(a) // gone from both: re-tokenized
    expect(seen).toEqual(["a", "b", "c", "d", "e", "a"])
    expect(counter.stats()).toEqual({ hits: 2, misses: 6 })
  })

  it("memoizes short texts by themselves: a repeat is not re-tokenized, and each text keeps its own count", () => {
    const seen: Array<string> = []
    const counter = makeCustomCounter("test", (t) => {
      seen.push(t)
      return t.length
    })
    const texts = ["\n\n", "# Repository map", "Turn 1 answer.", "Turn 2 answer.", "x".repeat(63)]
    for (const t of [...texts, ...texts]) expect(counter.count(t)).toBe(t.length)
    // Equal copies (not the same objects) and substrings of a larger text are found too.
    const whole = `prefix ${texts.join("|")} suffix`
    for (const t of texts) expect(counter.count(whole.slice(whole.indexOf(t), whole.indexOf(t) + t.length))).toBe(t.length)
    expect(seen).toEqual(texts)
    // More distinct short texts than the memo keeps: still each its own count.
    for (let i = 0; i < 25_000; i++) expect(counter.count(`text ${i}`)).toBe(`text ${i}`.length)
    for (const t of texts) expect(counter.count(t)).toBe(t.length)
  })

  it("has a synchronous twin with the same counts", async () => {
    const sync = makeTokenCounterSync("gpt-4o")
    const async_ = await makeTokenCounter("gpt-4o")
    const text = "The synchronous counter shares the encoder with the async one. ".repeat(4)
    expect(sync.count(text)).toBe(async_.count(text))
    expect(sync.exact).toBe(true)
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

describe("makeBpeCounter", () => {
  // js-tiktoken is the reference: same ranks, same pre-tokenizer, same merge order.
  const encodings = [["o200k_base", o200k], ["cl100k_base", cl100k]] as const
  const alphabet = ["a", "b", "e", "Z", " ", "  ", "\n", "\r\n", "\t", "中", "文", "😀", "é", "e\u0301", "ß", "ａ", "'s", "'", "1", "23", "{", "}", "\"", ":", "=", "-", "_", "/", "<|endoftext|>"]
  const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 80 }).map((parts) => parts.join(""))

  for (const [name, ranks] of encodings) {
    const reference = new Tiktoken(ranks)
    const counter = makeBpeCounter(ranks)
    const expected = (s: string) => reference.encode(s, [], []).length

    it(`${name}: matches js-tiktoken on random mixed text`, () => {
      fc.assert(fc.property(text, (s) => counter.count(s) === expected(s)), { numRuns: 400, seed: 42 })
    })

    it(`${name}: matches js-tiktoken on code, prose, JSON and long pieces`, () => {
      const code = Array.from({ length: 300 }, (_, i) => `export function f${i}(x: number): number {\n  return x * ${i} // the quick brown fox\n}\n`).join("")
      const json = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ["a", "b"], ok: i % 2 === 0 })), null, 2)
      const letters = Array.from({ length: 600 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("")
      for (const sample of [code, json, letters, "中文字符测试".repeat(100), "=".repeat(700), " ".repeat(500) + "x", "\n".repeat(300)]) {
        expect(counter.count(sample)).toBe(expected(sample))
      }
    })

    it(`${name}: its piece memo changes no count (the same pieces again, in other texts and orders)`, () => {
      // The random-text property above shares one counter across runs too; this one names the memo's case.
      const word = (i: number) => {
        let w = ""
        for (let n = i + 1; n > 0; n = Math.floor(n / 26)) w += String.fromCharCode(97 + (n % 26))
        return w
      }
      const words = Array.from({ length: 500 }, (_, i) => word(i * 7))
      const texts = [words.join(" "), words.slice().reverse().join("\n"), words.map((w) => `${w}_${w.length}é`).join("(), ")]
      for (const sample of [...texts, ...texts.slice().reverse()]) expect(counter.count(sample)).toBe(expected(sample))
    })
  }

  it("counts pathological long pieces in milliseconds, exactly", () => {
    // js-tiktoken's quadratic merge takes minutes on these (138 s for the first).
    const counter = makeBpeCounter(o200k)
    const started = performance.now()
    expect(counter.count("a".repeat(50_000))).toBe(6250)
    expect(counter.count("中文字符测试".repeat(833))).toBe(2499)
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

describe("Tokenizer service", () => {
  it.effect("provides a counter for the model", () =>
    Effect.gen(function* () {
      const tokenizer = yield* Tokenizer
      expect(tokenizer.count("hello world")).toBe(2)
    }).pipe(Effect.provide(Tokenizer.layer("gpt-4o"))))
})
