// Properties of every plugin over random seeds-shaped requests: the rules hold on the
// serialized body (what goes on the wire), and the report matches the body.
import fc from "fast-check"
import type { CachedTier, CacheTtl, Message, NeutralRequest } from "@strata/core"
import { describe, expect, it } from "vitest"
import {
  lookupModel,
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeBedrockInvoke,
  placeOpenAIChat,
  placeOpenAICompatible,
  placeOpenAIResponses,
  placeGemini,
  serializeBody,
  type AnthropicBody,
  type ProviderId,
  type PluginResult,
  type ToolDefinition
} from "../src/index.ts"
import { seedRequest, type TierSpec } from "./plugins-fixtures.ts"

const tierArb = fc.option(
  fc.record({ tokens: fc.integer({ min: 1, max: 7000 }), ttl: fc.constantFrom<CacheTtl | undefined>(undefined, "5m", "1h") }),
  { nil: undefined }
)

interface Case {
  readonly request: NeutralRequest
  readonly toolTokens: number
  readonly cacheTools: boolean
  readonly automatic: boolean
  readonly ttl: CacheTtl | undefined
}

/** A seeds-layout request with random tier sizes and TTLs, some messages blanked out. */
const caseArb = (model: string): fc.Arbitrary<Case> =>
  fc.record({
    L0: tierArb, L1: tierArb, L2: tierArb, L3: tierArb,
    blanks: fc.array(fc.nat({ max: 30 }), { maxLength: 4 }),
    blankKind: fc.constantFrom("", "   ", "parts"),
    toolTokens: fc.constantFrom(0, 300, 2500),
    cacheTools: fc.boolean(),
    automatic: fc.boolean(),
    ttl: fc.constantFrom<CacheTtl | undefined>(undefined, "5m", "1h")
  }).map((c) => {
    const tiers: Partial<Record<CachedTier, TierSpec>> = {}
    for (const t of ["L0", "L1", "L2", "L3"] as const) {
      const spec = c[t]
      if (spec !== undefined) tiers[t] = spec.ttl === undefined ? { tokens: spec.tokens } : { tokens: spec.tokens, ttl: spec.ttl }
    }
    const base = seedRequest(model, tiers)
    const last = base.messages.length - 1
    const messages = base.messages.map((m, i): Message => {
      // Never blank the current prompt, so every request has a conversation.
      if (i === last || !c.blanks.includes(i % base.messages.length)) return m
      if (m.role === "tool") return m
      return c.blankKind === "parts"
        ? { role: m.role, content: [{ type: "text", text: "" }, { type: "text", text: " \n" }] }
        : { role: m.role, content: c.blankKind }
    })
    return { request: { ...base, messages }, toolTokens: c.toolTokens, cacheTools: c.cacheTools, automatic: c.automatic, ttl: c.ttl }
  })

const tools = (n: number): ReadonlyArray<ToolDefinition> => (n === 0 ? [] : [{ name: "grep", description: "Search", inputSchema: { type: "object", properties: { q: { type: "string" } } } }])

const count = (json: string, needle: string): number => json.split(needle).length - 1
const BLANK_TEXT = /"text":"(?:\s|\\n|\\t|\\r)*"/

interface PluginCase {
  readonly name: string
  readonly provider: ProviderId
  readonly model: string
  readonly place: (c: Case) => PluginResult<unknown>
  /** Markers counted in the serialized body, the most allowed, and whether each placed breakpoint is one marker. */
  readonly markers: (json: string) => number
  readonly max: number
  readonly stacked?: boolean
}

const common = (c: Case) => ({ tools: tools(c.toolTokens), toolTokens: c.toolTokens, ...(c.ttl === undefined ? {} : { ttl: c.ttl }) })

const PLUGINS: ReadonlyArray<PluginCase> = [
  { name: "anthropic", provider: "anthropic", model: "claude-sonnet-4-5", max: 4,
    place: (c) => placeAnthropic(c.request, { ...common(c), cacheTools: c.cacheTools, automatic: c.automatic }),
    markers: (j) => count(j, '"cache_control"') },
  { name: "bedrock converse", provider: "bedrock", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", max: 4, stacked: true,
    place: (c) => placeBedrockConverse(c.request, { ...common(c), cacheTools: c.cacheTools }),
    markers: (j) => count(j, '"cachePoint"') },
  { name: "bedrock invoke", provider: "bedrock", model: "anthropic.claude-opus-4-7", max: 4, stacked: true,
    place: (c) => placeBedrockInvoke(c.request, { ...common(c), cacheTools: c.cacheTools, automatic: c.automatic }),
    markers: (j) => count(j, '"cache_control"') },
  { name: "openai chat gpt-5.6", provider: "openai", model: "gpt-5.6", max: 3,
    place: (c) => placeOpenAIChat(c.request, common(c)),
    markers: (j) => count(j, '"prompt_cache_breakpoint"') },
  { name: "openai responses gpt-5.6 explicit", provider: "openai", model: "gpt-5.6", max: 4,
    place: (c) => placeOpenAIResponses(c.request, { ...common(c), cacheMode: "explicit" }),
    markers: (j) => count(j, '"prompt_cache_breakpoint"') },
  { name: "openai-compatible", provider: "anthropic", model: "openrouter/anthropic/claude-haiku-4.5", max: 4,
    place: (c) => placeOpenAICompatible(c.request, common(c)),
    markers: (j) => count(j, '"cache_control"') },
  { name: "ai-sdk anthropic", provider: "anthropic", model: "claude-opus-4-1", max: 4,
    place: (c) => placeAiSdk(c.request, common(c)),
    markers: (j) => count(j, '"cacheControl"') },
  { name: "gemini explicit", provider: "gemini", model: "gemini-2.5-pro", max: 1,
    place: (c) => placeGemini(c.request, { ...common(c), explicitCache: { name: "cachedContents/x" } }),
    markers: (j) => count(j, '"cachedContent"') }
]

describe("rules hold on the wire for every plugin", () => {
  for (const p of PLUGINS) {
    it(p.name, () => {
      const limits = lookupModel(p.provider, p.model)
      fc.assert(fc.property(caseArb(p.model), (c) => {
        const r = p.place(c)
        const json = serializeBody(r.body)
        // No empty or whitespace-only text block.
        expect(json).not.toMatch(BLANK_TEXT)
        // At most the provider's markers (Anthropic's automatic marker included), and the
        // report names exactly the markers in the body.
        const markers = p.markers(json)
        expect(markers).toBeLessThanOrEqual(p.max)
        if (p.name !== "gemini explicit") {
          // Anthropic's top-level automatic marker takes a slot but is not a tier breakpoint.
          const automatic = p.name === "anthropic" && (r.body as AnthropicBody).cache_control !== undefined ? 1 : 0
          expect(markers - automatic).toBe(r.breakpoints.length)
        }
        // Every placed breakpoint has a cacheable prefix (the k-th needs k x minimum where stacked).
        r.breakpoints.forEach((b, k) => expect(b.prefixTokens).toBeGreaterThanOrEqual(limits.minCacheTokens * (p.stacked === true ? k + 1 : 1)))
        // TTLs never increase along the prefix.
        const ranks = r.breakpoints.map((b) => (b.ttl === "1h" ? 1 : 0))
        ranks.forEach((rank, i) => i > 0 && expect(rank).toBeLessThanOrEqual(ranks[i - 1]!))
        // Every requested breakpoint is reported once, placed or dropped (a tool marker may add one).
        const reported = r.breakpoints.length + r.dropped.length
        expect(reported - c.request.breakpoints.length).toBeGreaterThanOrEqual(0)
        expect(reported - c.request.breakpoints.length).toBeLessThanOrEqual(1)
        // Byte-stable.
        expect(serializeBody(p.place(c).body)).toBe(json)
      }), { numRuns: 150 })
    })
  }
})
