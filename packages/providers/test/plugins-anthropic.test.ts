import { Effect } from "effect"
import { Placement, type NeutralRequest } from "@strata/core"
import { describe, expect } from "vitest"
import { AnthropicPlacement, defaultMaxTokens, placeAnthropic, serializeBody, type AnthropicBody, type ToolDefinition } from "../src/index.ts"
import { NON_STREAMING_MAX_TOKENS } from "../src/plugins/anthropic.ts"
import { bigRequest, seedRequest, textOf } from "./plugins-fixtures.ts"
import { it } from "@strata/test-support"

const SONNET = "claude-sonnet-4-5-20250929"

const markers = (body: AnthropicBody) => {
  const out: Array<{ where: string; ttl: string | undefined }> = []
  body.tools?.forEach((t, i) => t.cache_control && out.push({ where: `tools[${i}]`, ttl: t.cache_control.ttl }))
  body.system?.forEach((b, i) => b.cache_control && out.push({ where: `system[${i}]`, ttl: b.cache_control.ttl }))
  body.messages.forEach((m, i) => m.content.forEach((b, k) => "cache_control" in b && b.cache_control && out.push({ where: `messages[${i}].content[${k}]`, ttl: b.cache_control.ttl })))
  return out
}

const tools: ReadonlyArray<ToolDefinition> = [
  { name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "grep", description: textOf("grep tool", 1500), inputSchema: { type: "object", properties: { pattern: { type: "string" } } } }
]

describe("anthropic plugin", () => {
  it("puts the system prompt in top-level blocks and one marker per tier", () => {
    const r = placeAnthropic(bigRequest(SONNET))
    expect(r.provider).toBe("anthropic")
    expect(r.body.model).toBe(SONNET)
    // The model table's output limit, capped for a non-streaming call; the whole limit when streamed.
    expect(r.body.max_tokens).toBe(NON_STREAMING_MAX_TOKENS)
    expect(placeAnthropic(bigRequest(SONNET), { stream: true }).body.max_tokens).toBe(64_000)
    expect(placeAnthropic(bigRequest("claude-opus-4-1@20250805")).body.max_tokens).toBe(8_192)
    expect(placeAnthropic(bigRequest("gpt-3.5-turbo"), { maxTokens: 77 }).body.max_tokens).toBe(77)
    expect(defaultMaxTokens("claude-3-haiku-20240307")).toBeLessThanOrEqual(NON_STREAMING_MAX_TOKENS)
    expect(r.body.system).toHaveLength(1)
    expect(r.body.system![0]!.cache_control).toEqual({ type: "ephemeral" })
    expect(r.body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"])
    expect(r.breakpoints.map((b) => [b.tier, b.location])).toEqual([
      ["L0", "system[0]"],
      ["L1", "messages[1].content[0]"],
      ["L2", "messages[3].content[0]"],
      ["L3", "messages[5].content[0]"]
    ])
    expect(r.breakpoints.map((b) => b.prefixTokens)).toEqual([6000, 11000, 16000, 21000])
    expect(r.dropped).toEqual([])
    // Core's default format (OpenAI-compatible with `cache_control`): string content is wrapped as [{type:"text",text,cache_control}].
    expect(r.body.messages[1]!.content).toEqual([{ type: "text", text: "Ok.", cache_control: { type: "ephemeral" } }])
  })

  it("emits ttl only for 1h and raises earlier TTLs so they never increase along the prefix", () => {
    const req = seedRequest(SONNET, { L0: { tokens: 3000 }, L1: { tokens: 3000 }, L2: { tokens: 3000, ttl: "1h" }, L3: { tokens: 3000 } })
    const r = placeAnthropic(req)
    expect(markers(r.body).map((m) => m.ttl)).toEqual(["1h", "1h", "1h", undefined])
    expect(r.breakpoints.map((b) => b.ttl)).toEqual(["1h", "1h", "1h", "5m"])
    expect(r.notes.filter((n) => n.includes("TTL raised"))).toHaveLength(2)
  })

  it("applies the default ttl option to breakpoints without one", () => {
    const r = placeAnthropic(bigRequest(SONNET), { ttl: "1h" })
    expect(markers(r.body).every((m) => m.ttl === "1h")).toBe(true)
  })

  it("counts the tool marker against the 4 slots and merges the least valuable tier", () => {
    const req = seedRequest(SONNET, { L0: { tokens: 6000 }, L1: { tokens: 5000 }, L2: { tokens: 1200 }, L3: { tokens: 5000 } })
    const r = placeAnthropic(req, { tools, cacheTools: true })
    const m = markers(r.body)
    expect(m).toHaveLength(4)
    expect(m[0]!.where).toBe("tools[1]")
    expect(r.breakpoints[0]).toMatchObject({ tier: "L0", location: "tools[1]" })
    // L2 has the smallest segment (1200 tokens) and merges into L3.
    expect(r.dropped).toHaveLength(1)
    expect(r.dropped[0]!.tier).toBe("L2")
    expect(r.dropped[0]!.reason).toMatch(/merged into the L3 breakpoint/)
    expect(r.body.tools![0]!.cache_control).toBeUndefined()
  })

  it("reserves a slot for the automatic marker", () => {
    const r = placeAnthropic(bigRequest(SONNET), { automatic: true })
    expect(r.body.cache_control).toEqual({ type: "ephemeral" })
    expect(markers(r.body)).toHaveLength(3)
    expect(r.dropped).toHaveLength(1)
    expect(r.dropped[0]!.reason).toMatch(/1 taken by the automatic marker/)
  })

  it("drops a breakpoint whose cumulative prefix is below the model minimum", () => {
    const req = seedRequest(SONNET, { L0: { tokens: 600 }, L1: { tokens: 2000 } })
    const r = placeAnthropic(req)
    expect(r.dropped).toEqual([{ tier: "L0", reason: expect.stringMatching(/prefix of 600 tokens is below the 1024-token minimum for Claude Sonnet 4.5/) }])
    expect(r.body.system![0]!.cache_control).toBeUndefined()
    expect(r.breakpoints).toEqual([{ tier: "L1", location: "messages[1].content[0]", prefixTokens: 2600, ttl: "5m" }])
    // Haiku 4.5 needs 4096: both go.
    expect(placeAnthropic({ ...req, model: "claude-haiku-4-5" }).breakpoints).toEqual([])
  })

  it("never emits empty text blocks and moves a mark off an empty message", () => {
    const base = seedRequest(SONNET, { L0: { tokens: 3000 }, L1: { tokens: 3000 } })
    const messages = base.messages.map((m, i) => (i === 2 ? { role: "assistant" as const, content: "" } : m))
    const withParts = messages.map((m, i) => (i === 1 ? { role: "user" as const, content: [{ type: "text" as const, text: "" }, { type: "text" as const, text: "files" }, { type: "text" as const, text: "  " }] } : m))
    const req: NeutralRequest = { ...base, messages: withParts, blocks: [] }
    const r = placeAnthropic(req)
    const json = serializeBody(r.body)
    expect(json).not.toMatch(/"text":"\s*"/)
    // The emptied assistant turn vanishes, so the two user turns around it merge into one.
    expect(r.body.messages[0]!.content[0]).toEqual({ type: "text", text: "files", cache_control: { type: "ephemeral" } })
    expect(r.body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
    expect(r.notes.some((n) => n.includes("moved from message 2 to 1"))).toBe(true)
  })

  it("renders images from data: and https URLs", () => {
    const req: NeutralRequest = {
      model: SONNET,
      blocks: [],
      breakpoints: [],
      messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", url: "data:image/png;base64,iVBORw0KGgo=" }, { type: "image", url: "https://example.com/a.jpg" }] }]
    }
    expect(placeAnthropic(req).body.messages[0]!.content).toEqual([
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } }
    ])
  })

  it("serializes byte-stably regardless of tool schema key order", () => {
    const reordered: ReadonlyArray<ToolDefinition> = tools.map((t) => ({
      inputSchema: Object.fromEntries(Object.entries(t.inputSchema).reverse()) as ToolDefinition["inputSchema"],
      ...(t.description === undefined ? {} : { description: t.description }),
      name: t.name
    }))
    const a = serializeBody(placeAnthropic(bigRequest(SONNET), { tools }).body)
    const b = serializeBody(placeAnthropic(bigRequest(SONNET), { tools: reordered }).body)
    expect(a).toBe(b)
    expect(a.startsWith('{"model":"claude-sonnet-4-5-20250929","max_tokens":21333,"system":[')).toBe(true)
  })

  it.effect("provides core's Placement service", () =>
    Effect.gen(function* () {
      const placement = yield* Placement
      const r = yield* placement.place(bigRequest(SONNET))
      expect(placement.provider).toBe("anthropic")
      expect(r.breakpoints).toHaveLength(4)
    }).pipe(Effect.provide(AnthropicPlacement.layer())))

  it.effect("fails with PlacementError when the request has no conversation", () =>
    Effect.gen(function* () {
      const placement = yield* Placement
      const error = yield* Effect.flip(placement.place({ model: SONNET, blocks: [], breakpoints: [], messages: [{ role: "system", content: "sys" }] }))
      expect(error._tag).toBe("PlacementError")
      expect(error.message).toMatch(/no user or assistant message/)
    }).pipe(Effect.provide(AnthropicPlacement.layer())))
})
