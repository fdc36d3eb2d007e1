import { Effect } from "effect"
import { Placement, toSeedMessages } from "@strata/core"
import { describe, expect, it } from "vitest"
import { placeAiSdk, placementLayerFor, placeOpenAICompatible, placeWith, upstreamOf } from "../src/index.ts"
import { isPluginName, PLUGIN_NAMES } from "../src/plugins/registry.ts"
import { bigRequest, seedRequest } from "./plugins-fixtures.ts"

describe("openai-compatible plugin (seeds format)", () => {
  it("keeps the system message in the array and wraps marked string content (core's default format)", () => {
    const r = placeOpenAICompatible(bigRequest("anthropic/claude-sonnet-4.5"))
    expect(r.body.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: expect.any(String), cache_control: { type: "ephemeral" } }] })
    expect(r.body.messages[1]).toEqual({ role: "user", content: expect.any(String) })
    expect(r.body.messages[2]).toEqual({ role: "assistant", content: [{ type: "text", text: "Ok.", cache_control: { type: "ephemeral" } }] })
    expect(r.body.messages.at(-1)).toEqual({ role: "user", content: "What does the parser do?" })
    expect("stream" in r.body || "stream_options" in r.body).toBe(false)
    expect(r.breakpoints.map((b) => b.location)).toEqual(["messages[0].content[0]", "messages[2].content[0]", "messages[4].content[0]", "messages[6].content[0]"])
  })

  it("marks the last text block of list content (core's default format), even before an image", () => {
    const req = seedRequest("claude-sonnet-4-5", { L0: { tokens: 2000 } })
    const messages = [{ role: "system" as const, content: [{ type: "text" as const, text: "a".repeat(4000) }, { type: "text" as const, text: "b".repeat(4000) }] }, ...req.messages.slice(1)]
    const r = placeOpenAICompatible({ ...req, messages })
    expect(r.body.messages[0]!.content).toEqual([{ type: "text", text: "a".repeat(4000) }, { type: "text", text: "b".repeat(4000), cache_control: { type: "ephemeral" } }])
    const withImage = [req.messages[0]!, { role: "user" as const, content: [{ type: "text" as const, text: "c".repeat(8000) }, { type: "image" as const, url: "https://x/y.png" }] }, ...req.messages.slice(1)]
    const r2 = placeOpenAICompatible({ ...req, blocks: [], messages: withImage, breakpoints: [{ tier: "L1", messageIndex: 1 }] })
    expect(r2.body.messages[1]!.content).toEqual([{ type: "text", text: "c".repeat(8000), cache_control: { type: "ephemeral" } }, { type: "image_url", image_url: { url: "https://x/y.png" } }])
    expect(r2.breakpoints[0]!.location).toBe("messages[1].content[0]")
  })

  it("matches core's default seeds-format placement when no rule has to intervene", () => {
    const req = bigRequest("anthropic/claude-sonnet-4.5")
    expect(placeOpenAICompatible(req).body.messages).toEqual(toSeedMessages(req))
  })

  it("follows the upstream model's limits", () => {
    expect(upstreamOf("openrouter/anthropic/claude-sonnet-4.5")).toBe("anthropic")
    expect(upstreamOf("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe("bedrock")
    expect(upstreamOf("gemini/gemini-2.5-pro")).toBe("gemini")
    expect(upstreamOf("openai/gpt-4.1")).toBe("openai")
    // Gemini behind a gateway uses only the last marker.
    const gem = placeOpenAICompatible(bigRequest("openrouter/google/gemini-2.5-pro"))
    expect(gem.breakpoints.map((b) => b.tier)).toEqual(["L3"])
    // OpenAI before 5.6 caches automatically: no markers.
    const oai = placeOpenAICompatible(bigRequest("openai/gpt-4.1"), { promptCacheKey: "k" })
    expect(JSON.stringify(oai.body)).not.toContain("cache_control")
    expect(oai.body.prompt_cache_key).toBe("k")
  })
})

describe("ai-sdk plugin", () => {
  it("anthropic: leading system messages in `system`, cacheControl providerOptions on breakpoint messages", () => {
    const r = placeAiSdk(seedRequest("claude-sonnet-4-5", { L0: { tokens: 3000 }, L1: { tokens: 3000, ttl: "1h" } }))
    expect(r.body.system).toEqual([{ role: "system", content: expect.any(String), providerOptions: { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } } }])
    expect(r.body.messages.map((m) => m.role)).not.toContain("system")
    expect(r.body.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Ok." }], providerOptions: { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } } })
    expect(r.breakpoints.map((b) => b.location).slice(0, 2)).toEqual(["system[0].providerOptions", "messages[1].providerOptions"])
    expect(r.body.providerOptions).toBeUndefined()
  })

  it("bedrock: cachePoint providerOptions; openai: promptCacheKey at call level and no markers", () => {
    const b = placeAiSdk(bigRequest("claude-sonnet-4-5"), { target: "bedrock" })
    expect(b.body.system?.[0]!.providerOptions).toEqual({ bedrock: { cachePoint: { type: "default" } } })
    const o = placeAiSdk(bigRequest("gpt-4.1"), { promptCacheKey: "s" })
    expect(o.body.providerOptions).toEqual({ openai: { promptCacheKey: "s" } })
    expect([...(o.body.system ?? []), ...o.body.messages].every((m) => m.providerOptions === undefined)).toBe(true)
  })

  it("gemini models target @ai-sdk/google: system in `system`, no markers, no call options", () => {
    const g = placeAiSdk(bigRequest("gemini-2.5-pro"), { promptCacheKey: "s" })
    expect(g.body.system).toHaveLength(1)
    expect(JSON.stringify(g.body)).not.toContain("providerOptions")
    expect(g.breakpoints.every((b) => b.location.endsWith("(automatic prefix)"))).toBe(true)
  })
})

describe("plugins by name", () => {
  it("places with every named plugin and builds its Layer", async () => {
    const req = bigRequest("claude-sonnet-4-5")
    for (const name of PLUGIN_NAMES) {
      const model = name.startsWith("openai") && name !== "openai-compatible" ? "gpt-4.1" : name === "gemini" ? "gemini-2.5-pro" : "claude-sonnet-4-5"
      const direct = placeWith(name, { ...req, model })
      expect(direct.breakpoints.length).toBeGreaterThan(0)
      const viaLayer = await Effect.runPromise(Effect.gen(function* () {
        return yield* (yield* Placement).place({ ...req, model })
      }).pipe(Effect.provide(placementLayerFor(name))))
      expect(viaLayer.body).toEqual(direct.body)
    }
    expect(isPluginName("bedrock-invoke")).toBe(true)
    expect(isPluginName("mistral")).toBe(false)
  })
})
