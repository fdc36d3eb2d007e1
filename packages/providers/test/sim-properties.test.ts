import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeUsage, makeSimulator, promptBlocks, type SimProvider, type UsageFormat } from "../src/index.ts"
import { chars, text } from "./sim-helpers.ts"

// A conversation is a system prompt plus turns; each provider's builder renders it the way
// its placement plugin would: system marked, the last message marked (or automatic).
interface Conversation {
  readonly system: number
  readonly turns: ReadonlyArray<{ readonly seed: number; readonly size: number }>
}

const MODELS: Record<SimProvider, string> = {
  anthropic: "claude-sonnet-4-5",
  bedrock: "anthropic.claude-sonnet-4-5-20250929-v1:0",
  openai: "gpt-4o",
  gemini: "gemini-2.5-flash"
}

const FORMAT: Record<SimProvider, UsageFormat> = {
  anthropic: "anthropic",
  bedrock: "bedrock",
  openai: "openai-chat",
  gemini: "gemini"
}

const role = (i: number) => (i % 2 === 0 ? "user" : "assistant")

const build = (provider: SimProvider, c: Conversation): unknown => {
  const sys = text(c.system, "system")
  const turns = c.turns.map((t, i) => ({ role: role(i), text: text(t.size, `${t.seed}/${i}`) }))
  switch (provider) {
    case "anthropic":
      return {
        model: MODELS.anthropic,
        max_tokens: 100,
        system: [{ type: "text", text: sys, cache_control: { type: "ephemeral" } }],
        messages: turns.map((t, i) => ({
          role: t.role,
          content: [i === turns.length - 1 ? { type: "text", text: t.text, cache_control: { type: "ephemeral" } } : { type: "text", text: t.text }]
        }))
      }
    case "bedrock":
      return {
        modelId: MODELS.bedrock,
        system: [{ text: sys }, { cachePoint: { type: "default" } }],
        messages: turns.map((t, i) => ({
          role: t.role,
          content: i === turns.length - 1 ? [{ text: t.text }, { cachePoint: { type: "default" } }] : [{ text: t.text }]
        }))
      }
    case "openai":
      return { model: MODELS.openai, messages: [{ role: "system", content: sys }, ...turns.map((t) => ({ role: t.role, content: t.text }))] }
    case "gemini":
      return {
        systemInstruction: { parts: [{ text: sys }] },
        contents: turns.map((t) => ({ role: t.role === "user" ? "user" : "model", parts: [{ text: t.text }] }))
      }
  }
}

const turnArb = fc.record({ seed: fc.integer({ min: 0, max: 3 }), size: fc.integer({ min: 1, max: 900 }) })
const sessionArb = fc.record({
  system: fc.integer({ min: 100, max: 5000 }),
  // Each step: how many turns the conversation has, and the gap before it in seconds.
  steps: fc.array(fc.record({ turns: fc.array(turnArb, { minLength: 1, maxLength: 12 }), gap: fc.integer({ min: 0, max: 900 }) }), { minLength: 1, maxLength: 12 })
})

const PROVIDERS: ReadonlyArray<SimProvider> = ["anthropic", "bedrock", "openai", "gemini"]

describe("simulator properties", () => {
  for (const provider of PROVIDERS) {
    it(`${provider}: usage parts add up, decode from native, and replay identically`, () => {
      fc.assert(fc.property(sessionArb, (session) => {
        const a = makeSimulator(provider, { model: MODELS[provider], countTokens: chars })
        const b = makeSimulator(provider, { model: MODELS[provider], countTokens: chars })
        let t = 0
        for (const step of session.steps) {
          t += step.gap
          const body = build(provider, { system: session.system, turns: step.turns })
          const r = a.send(body, t, { outputTokens: 3 })
          const { input, cacheRead, cacheWrite } = r.usage
          expect(input).toBeGreaterThanOrEqual(0)
          expect(cacheRead).toBeGreaterThanOrEqual(0)
          expect(cacheWrite).toBeGreaterThanOrEqual(0)
          expect(input + cacheRead + cacheWrite).toBe(r.trace.promptTokens)
          expect(decodeUsage(FORMAT[provider], r.native)).toEqual(r.usage)
          // promptBlocks measures the body block by block as the simulator does, markers aside.
          const blocks = promptBlocks(provider, body, { model: MODELS[provider], countTokens: chars })
          expect(blocks).toHaveLength(r.trace.blocks)
          expect(blocks.reduce((n, block) => n + block.tokens, 0)).toBe(r.trace.promptTokens)
          expect(b.send(body, t, { outputTokens: 3 })).toEqual(r)
        }
      }), { numRuns: 60 })
    })
  }

  it("an append-only conversation within the TTL always reads at least the system prompt", () => {
    const growing = fc.record({
      system: fc.integer({ min: 2100, max: 6000 }),
      turns: fc.array(turnArb, { minLength: 2, maxLength: 20 }),
      // Gaps stay under every TTL (Gemini implicit 240 s) and the session under OpenAI's 1 h cap.
      gaps: fc.array(fc.integer({ min: 2, max: 170 }), { minLength: 20, maxLength: 20 })
    })
    fc.assert(fc.property(growing, ({ system, turns, gaps }) => {
      for (const provider of PROVIDERS) {
        const s = makeSimulator(provider, { model: MODELS[provider], countTokens: chars })
        let t = 0
        for (let n = 1; n <= turns.length; n++) {
          const r = s.send(build(provider, { system, turns: turns.slice(0, n) }), t)
          if (n > 1) {
            // OpenAI reports hits in 128-token steps.
            const floor = provider === "openai" ? Math.floor(system / 128) * 128 : system
            expect(r.usage.cacheRead).toBeGreaterThanOrEqual(floor)
          }
          t += gaps[n - 1]!
        }
      }
    }), { numRuns: 40 })
  })
})
