// The simulators take exactly what the placement plugins emit: three turns of a seeds-layout
// session through each plugin, then each simulator. The cached tiers are written once and
// read on every later turn; no plugin output is ever rejected by the simulated provider.
import { describe, expect, it } from "vitest"
import {
  makeSimulator,
  placeAnthropic,
  placeBedrockConverse,
  placeBedrockInvoke,
  placeGemini,
  placeOpenAIChat,
  placeOpenAICompatible,
  placeOpenAIResponses,
  type SimResult,
  type ToolDefinition
} from "../src/index.ts"
import { neutralRequest } from "./sim-helpers.ts"

const CLAUDE = "claude-sonnet-4-5"
const TIERS = 6000 + 3000 + 2000 + 1500

/** Turn 1 writes (or, for automatic caches, stores) the prefix; turns 2 and 3 read all cached tiers. */
const expectSession = (results: ReadonlyArray<SimResult>, minRead: number) => {
  expect(results[0]!.usage.cacheRead).toBe(0)
  for (const r of results.slice(1)) {
    expect(r.usage.cacheRead).toBeGreaterThanOrEqual(minRead)
    // Only the active turn is new input.
    expect(r.usage.input + r.usage.cacheWrite).toBeLessThan(r.trace.promptTokens - minRead + 1)
  }
}

const run = <B>(send: (body: B, t: number) => SimResult, place: (turn: number) => { body: B }) =>
  [1, 2, 3].map((turn) => send(place(turn).body, (turn - 1) * 30))

describe("simulators on plugin output", () => {
  it("anthropic: the four tier breakpoints are written once and read after", () => {
    const sim = makeSimulator("anthropic", { model: CLAUDE })
    const placed = placeAnthropic(neutralRequest(CLAUDE, 1))
    const results = run((b, t) => sim.send(b, t), (turn) => placeAnthropic(neutralRequest(CLAUDE, turn)))
    expect(results[0]!.trace.writes).toHaveLength(4)
    // The plugin's prefix estimate and the simulator's count agree closely.
    const last = placed.breakpoints.at(-1)!
    expect(Math.abs(results[0]!.usage.cacheWrite - last.prefixTokens) / last.prefixTokens).toBeLessThan(0.05)
    expectSession(results, TIERS * 0.97)
    expect(results[1]!.usage.cacheWrite).toBe(0)
  })

  it("anthropic with tools and the automatic marker: never more than four markers on the wire", () => {
    const sim = makeSimulator("anthropic", { model: CLAUDE })
    const tools: ReadonlyArray<ToolDefinition> = [{ name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } } } }]
    const results = run((b, t) => sim.send(b, t), (turn) => placeAnthropic(neutralRequest(CLAUDE, turn), { tools, cacheTools: true, automatic: true }))
    expectSession(results, TIERS * 0.9)
  })

  it("bedrock Converse and InvokeModel", () => {
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    const converse = makeSimulator("bedrock", { model })
    expectSession(run((b, t) => converse.send(b, t), (turn) => placeBedrockConverse(neutralRequest(model, turn))), TIERS * 0.97)
    const invoke = makeSimulator("bedrock", { model })
    expectSession(run((b, t) => invoke.send(b, t), (turn) => placeBedrockInvoke(neutralRequest(model, turn))), TIERS * 0.97)
  })

  it("openai Chat and Responses, automatic caching", () => {
    const chat = makeSimulator("openai", { model: "gpt-4o" })
    expectSession(run((b, t) => chat.send(b, t), (turn) => placeOpenAIChat(neutralRequest("gpt-4o", turn), { promptCacheKey: "s1" })), TIERS * 0.95)
    const responses = makeSimulator("openai", { model: "gpt-4.1" })
    expectSession(run((b, t) => responses.send(b, t), (turn) => placeOpenAIResponses(neutralRequest("gpt-4.1", turn))), TIERS * 0.95)
  })

  it("openai GPT-5.6 breakpoints, implicit and explicit mode", () => {
    for (const cacheMode of ["implicit", "explicit"] as const) {
      const sim = makeSimulator("openai", { model: "gpt-5.6" })
      const results = run((b, t) => sim.send(b, t), (turn) => placeOpenAIChat(neutralRequest("gpt-5.6", turn), { cacheMode }))
      expect(results[0]!.usage.cacheWrite).toBeGreaterThan(TIERS * 0.97)
      expectSession(results, TIERS * 0.97)
    }
  })

  it("gemini implicit, and explicit cachedContents through caches.create parameters", () => {
    const model = "gemini-2.5-flash"
    const implicit = makeSimulator("gemini", { model })
    expectSession(run((b, t) => implicit.send(b, t), (turn) => placeGemini(neutralRequest(model, turn))), TIERS * 0.97)

    const explicit = makeSimulator("gemini", { model })
    const first = placeGemini(neutralRequest(model, 1), { explicitCache: { ttlSeconds: 600 } })
    const cache = explicit.createCachedContent(first.cache!.create, 0)
    expect(cache.tokens).toBeGreaterThan(TIERS * 0.97)
    for (const turn of [1, 2, 3]) {
      const { body } = placeGemini(neutralRequest(model, turn), { explicitCache: { name: cache.name } })
      const r = explicit.send(body, turn * 30)
      expect(r.usage.cacheRead).toBe(cache.tokens)
      expect(r.usage.input).toBeLessThan(400)
    }
  })

  it("openai-compatible bodies for Claude go through the Anthropic simulator as a gateway forwards them", () => {
    const model = "openrouter/anthropic/claude-sonnet-4.5"
    const sim = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
    const results = run((b, t) => sim.send({ ...(b as object), model: "claude-sonnet-4-5" }, t), (turn) => placeOpenAICompatible(neutralRequest(model, turn)))
    expectSession(results, TIERS * 0.97)
  })
})
