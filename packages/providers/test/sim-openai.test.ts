import { describe, expect, it } from "vitest"
import { decodeOpenAIChatUsage, decodeOpenAIResponsesUsage, makeSimulator, type OpenAIChatNativeUsage } from "../src/index.ts"
import { chars, text } from "./sim-helpers.ts"

const sim = (model: string) => makeSimulator("openai", { model, countTokens: chars })

const chat = (model: string, system: number, turns: ReadonlyArray<[string, number]>, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [
    { role: "system", content: text(system, "sys") },
    ...turns.map(([role, n], i) => ({ role, content: text(n, `${role}${i}`) }))
  ],
  ...extra
})

describe("openai simulator, automatic caching (before GPT-5.6)", () => {
  it("hits the longest cached prefix in 128-token steps above 1,024", () => {
    const s = sim("gpt-4o")
    const first = s.send(chat("gpt-4o", 3000, [["user", 10]]), 0, { outputTokens: 40 })
    expect(first.native).toEqual({ prompt_tokens: 3010, completion_tokens: 40, total_tokens: 3050, prompt_tokens_details: { cached_tokens: 0 } })
    const second = s.send(chat("gpt-4o", 3000, [["user", 10], ["assistant", 20], ["user", 15]]), 10)
    // The first request's whole prompt (3,010 tokens) is cached; hits round down to 23 x 128.
    expect((second.native as OpenAIChatNativeUsage).prompt_tokens_details).toEqual({ cached_tokens: 2944 })
    expect(second.usage).toEqual({ input: 101, cacheRead: 2944, cacheWrite: 0, output: 0 })
    expect(decodeOpenAIChatUsage(second.native)).toEqual(second.usage)
  })

  it("caches nothing below 1,024 tokens", () => {
    const s = sim("gpt-4o")
    s.send(chat("gpt-4o", 900, [["user", 10]]), 0)
    const r = s.send(chat("gpt-4o", 900, [["user", 10]]), 10)
    expect(r.usage.cacheRead).toBe(0)
    expect(r.trace.skipped[0]?.reason).toMatch(/below the minimum of 1024/)
  })

  it("any earlier prefix hits, not only marked ones", () => {
    const s = sim("gpt-4.1")
    s.send(chat("gpt-4.1", 2000, [["user", 500], ["assistant", 500]]), 0)
    // A different last user turn: the prefix through the system message (2,000) is still cached.
    const r = s.send(chat("gpt-4.1", 2000, [["user", 700]]), 10)
    expect(r.usage.cacheRead).toBe(1920)
  })

  it("in-memory retention: 5 min idle, at most 1 h even with hits", () => {
    const body = chat("gpt-4o", 3000, [["user", 10]])
    const idle = sim("gpt-4o")
    idle.send(body, 0)
    expect(idle.send(body, 302).usage.cacheRead).toBe(0)
    const busy = sim("gpt-4o")
    busy.send(body, 0)
    for (let t = 250; t <= 3500; t += 250) expect(busy.send(body, t).usage.cacheRead).toBe(2944)
    expect(busy.send(body, 3600).usage.cacheRead).toBe(2944)
    expect(busy.send(body, 3700).usage.cacheRead).toBe(0)
  })

  it("24h retention keeps the prefix for hours", () => {
    const body = chat("gpt-4o", 3000, [["user", 10]], { prompt_cache_retention: "24h" })
    const s = sim("gpt-4o")
    s.send(body, 0)
    expect(s.send(body, 7200).usage.cacheRead).toBe(2944)
  })

  it("a different prompt_cache_key or model misses", () => {
    const s = sim("gpt-4o")
    s.send(chat("gpt-4o", 3000, [["user", 10]], { prompt_cache_key: "a" }), 0)
    expect(s.send(chat("gpt-4o", 3000, [["user", 10]], { prompt_cache_key: "b" }), 10).usage.cacheRead).toBe(0)
    expect(s.send(chat("gpt-4o-mini", 3000, [["user", 10]], { prompt_cache_key: "a" }), 20).usage.cacheRead).toBe(0)
    expect(s.send(chat("gpt-4o", 3000, [["user", 10]], { prompt_cache_key: "a" }), 30).usage.cacheRead).toBe(2944)
  })

  it("ignores explicit markers on models that cache automatically", () => {
    const body = {
      model: "gpt-4o",
      messages: [{ role: "user", content: [{ type: "text", text: text(2000, "a"), prompt_cache_breakpoint: { mode: "explicit" } }] }]
    }
    expect(sim("gpt-4o").send(body, 0).trace.skipped[0]?.reason).toMatch(/caches automatically/)
  })

  it("Responses bodies: tools and instructions first, Responses usage", () => {
    const s = sim("gpt-4o")
    const body = { model: "gpt-4o", instructions: text(3000, "i"), input: "hi" }
    s.send(body, 0)
    const r = s.send({ ...body, input: [{ role: "user", content: "hi" }, { role: "user", content: [{ type: "input_text", text: "more" }] }] }, 10, { outputTokens: 3 })
    expect(r.native).toEqual({
      input_tokens: 3006,
      input_tokens_details: { cached_tokens: 2944 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 3009
    })
    expect(decodeOpenAIResponsesUsage(r.native)).toEqual(r.usage)
  })

  it("prices reads at the model's discount with no write fee", () => {
    const s = sim("gpt-4o")
    const body = chat("gpt-4o", 3000, [["user", 10]])
    expect(s.send(body, 0).cost.inputEquivalentTokens).toBe(3010)
    const r = s.send(body, 10)
    expect(r.cost.inputEquivalentTokens).toBeCloseTo(66 + 2944 * 0.5)
    expect(r.cost.usd?.total).toBeCloseTo((66 * 2.5 + 2944 * 2.5 * 0.5) / 1e6)
  })
})

describe("openai simulator, GPT-5.6+ breakpoints", () => {
  const MODEL = "gpt-5.6"
  const marked = (n: number, seed: string) => ({ type: "text", text: text(n, seed), prompt_cache_breakpoint: { mode: "explicit" } })
  const body = (user: string, extra: Record<string, unknown> = {}, systemMarked = true) => ({
    model: MODEL,
    messages: [
      { role: "developer", content: [systemMarked ? marked(2000, "dev") : { type: "text", text: text(2000, "dev") }] },
      { role: "user", content: text(10, user) }
    ],
    ...extra
  })

  it("implicit mode: one implicit write at the latest user message plus explicit markers; exact boundaries", () => {
    const s = sim(MODEL)
    const first = s.send(body("u1"), 0)
    expect(first.trace.writes.map((w) => w.block)).toEqual([0, 1])
    expect((first.native as OpenAIChatNativeUsage).prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 2010 })
    const second = s.send(body("u2"), 10)
    expect((second.native as OpenAIChatNativeUsage).prompt_tokens_details).toEqual({ cached_tokens: 2000, cache_write_tokens: 10 })
    expect(second.usage).toEqual({ input: 0, cacheRead: 2000, cacheWrite: 10, output: 0 })
    expect(decodeOpenAIChatUsage(second.native)).toEqual(second.usage)
  })

  it("implicit mode needs no markers", () => {
    const s = sim(MODEL)
    s.send(body("u1", {}, false), 0)
    // The developer block is an eligible position for reads but only the latest one is written.
    expect(s.send(body("u2", {}, false), 10).usage.cacheRead).toBe(0)
    expect(s.send(body("u2", {}, false), 20).usage.cacheRead).toBe(2010)
  })

  it("explicit mode without markers caches nothing", () => {
    const s = sim(MODEL)
    const options = { prompt_cache_options: { mode: "explicit" } }
    s.send(body("u1", options, false), 0)
    const r = s.send(body("u1", options, false), 10)
    expect(r.usage).toMatchObject({ cacheRead: 0, cacheWrite: 0 })
    expect(r.trace.skipped[0]?.reason).toMatch(/explicit mode without prompt_cache_breakpoint/)
  })

  it("keeps the latest four writes and drops older markers", () => {
    const many = {
      model: MODEL,
      prompt_cache_options: { mode: "explicit" },
      messages: [{ role: "user", content: [1, 2, 3, 4, 5].map((i) => marked(1100, `p${i}`)) }]
    }
    const r = sim(MODEL).send(many, 0)
    expect(r.trace.writes.map((w) => w.block)).toEqual([1, 2, 3, 4])
    expect(r.trace.skipped).toEqual([{ block: 0, reason: "more than 4 cache writes requested; older markers are dropped" }])
  })

  it("bills writes at 1.25x and reads at 0.1x; TTL 30 min sliding", () => {
    const s = sim(MODEL)
    expect(s.send(body("u1"), 0).cost.inputEquivalentTokens).toBeCloseTo(2010 * 1.25)
    expect(s.send(body("u2"), 1700).cost.inputEquivalentTokens).toBeCloseTo(2000 * 0.1 + 10 * 1.25)
    expect(s.send(body("u3"), 3400).usage.cacheRead).toBe(2000)
    expect(s.send(body("u4"), 3400 + 1802).usage.cacheRead).toBe(0)
  })
})
