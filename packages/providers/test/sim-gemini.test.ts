import { describe, expect, it } from "vitest"
import { decodeGeminiUsage, makeSimulator } from "../src/index.ts"
import { SimulatedRejection } from "../src/simulation.ts"
import { chars, text } from "./sim-helpers.ts"

const MODEL = "gemini-2.5-flash" // newest revision: minimum 2048, read 0.1x, $0.30/MTok, storage $1/MTok/h

const sim = (model = MODEL, asOf?: string) =>
  makeSimulator("gemini", asOf === undefined ? { model, countTokens: chars } : { model, countTokens: chars, asOf })

const generate = (system: number, turns: ReadonlyArray<number>) => ({
  systemInstruction: { parts: [{ text: text(system, "sys") }] },
  contents: turns.map((n, i) => ({ role: i % 2 === 0 ? "user" : "model", parts: [{ text: text(n, `t${i}`) }] }))
})

describe("gemini simulator, implicit caching", () => {
  it("hits any cached prefix above the model's minimum, exactly", () => {
    const s = sim()
    const first = s.send(generate(3000, [10]), 0, { outputTokens: 5 })
    expect(first.native).toEqual({ promptTokenCount: 3010, candidatesTokenCount: 5, totalTokenCount: 3015 })
    const second = s.send(generate(3000, [10, 20, 30]), 10)
    expect(second.native).toEqual({ promptTokenCount: 3060, candidatesTokenCount: 0, totalTokenCount: 3060, cachedContentTokenCount: 3010 })
    expect(decodeGeminiUsage(second.native)).toEqual(second.usage)
    expect(second.usage).toEqual({ input: 50, cacheRead: 3010, cacheWrite: 0, output: 0 })
  })

  it("uses the dated minimum", () => {
    const now = sim()
    now.send(generate(1500, [10]), 0)
    expect(now.send(generate(1500, [10]), 10).usage.cacheRead).toBe(0)
    const in2025 = sim(MODEL, "2025-06")
    in2025.send(generate(1500, [10]), 0)
    expect(in2025.send(generate(1500, [10]), 10).usage.cacheRead).toBe(1510)
  })

  it("implicit entries last a few minutes", () => {
    const s = sim()
    s.send(generate(3000, [10]), 0)
    expect(s.send(generate(3000, [10]), 200).usage.cacheRead).toBe(3010)
    expect(s.send(generate(3000, [10]), 200 + 241).usage.cacheRead).toBe(0)
  })
})

describe("gemini simulator, explicit cachedContents", () => {
  const create = { model: "models/gemini-2.5-flash", systemInstruction: { parts: [{ text: text(5000, "big") }] }, ttl: "600s" }

  it("creation bills input and storage; requests read the whole cache", () => {
    const s = sim()
    const cache = s.createCachedContent(create, 0)
    expect(cache).toMatchObject({ name: "cachedContents/sim-1", tokens: 5000, expiresAt: 600 })
    expect(cache.result.usage).toEqual({ input: 0, cacheRead: 0, cacheWrite: 5000, output: 0 })
    expect(cache.result.cost.usd?.cacheWrite).toBeCloseTo((5000 * 0.3) / 1e6)
    expect(cache.result.cost.usd?.storage).toBeCloseTo((5000 * (600 / 3600) * 1) / 1e6)

    const r = s.send({ cachedContent: cache.name, contents: [{ role: "user", parts: [{ text: "hi" }] }] }, 5, { outputTokens: 4 })
    expect(r.native).toEqual({ promptTokenCount: 5002, candidatesTokenCount: 4, totalTokenCount: 5006, cachedContentTokenCount: 5000 })
    expect(decodeGeminiUsage(r.native)).toEqual(r.usage)
    expect(r.cost.usd?.cacheRead).toBeCloseTo((5000 * 0.3 * 0.1) / 1e6)
  })

  it("expires at a fixed time unless updated", () => {
    const s = sim()
    const { name } = s.createCachedContent(create, 0)
    const ask = { cachedContent: name, contents: [{ role: "user", parts: [{ text: "q" }] }] }
    expect(s.send(ask, 599).usage.cacheRead).toBe(5000)
    expect(() => s.send(ask, 600)).toThrow(/CachedContent not found/)

    const t = sim()
    const again = t.createCachedContent(create, 0)
    const updated = t.updateCachedContent(again.name, 600, 500)
    expect(updated.expiresAt).toBe(1100)
    expect(updated.result.cost.usd?.storage).toBeCloseTo((5000 * (500 / 3600)) / 1e6)
    expect(t.send({ ...ask, cachedContent: again.name }, 1000).usage.cacheRead).toBe(5000)
    t.deleteCachedContent(again.name)
    expect(() => t.send({ ...ask, cachedContent: again.name }, 1001)).toThrow(SimulatedRejection)
  })

  it("refuses what the API refuses", () => {
    const s = sim()
    expect(() => s.createCachedContent({ ...create, systemInstruction: { parts: [{ text: text(1000, "s") }] } }, 0)).toThrow(
      /Cached content is too small. total_token_count=1000, min_total_token_count=2048/
    )
    const { name } = s.createCachedContent(create, 0)
    expect(() => s.send({ cachedContent: name, systemInstruction: { parts: [{ text: "x" }] }, contents: [{ role: "user", parts: [{ text: "q" }] }] }, 1)).toThrow(
      /can not be used with GenerateContent request setting system_instruction/
    )
    expect(() => sim("gemini-4-argon").createCachedContent({ ...create, model: "models/gemini-4-argon" }, 0)).toThrow(/not supported/)
  })
})
