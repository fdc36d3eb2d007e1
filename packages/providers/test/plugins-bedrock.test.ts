import { describe, expect, it } from "vitest"
import { invokeModelInput, placeBedrockConverse, placeBedrockInvoke, serializeBody } from "../src/index.ts"
import { bigRequest, seedRequest } from "./plugins-fixtures.ts"

const SONNET45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

describe("bedrock converse plugin", () => {
  it("appends cachePoint blocks after the cached content in system and messages", () => {
    const r = placeBedrockConverse(bigRequest(SONNET45))
    expect(r.body.modelId).toBe(SONNET45)
    expect(r.body.system).toEqual([{ text: expect.any(String) }, { cachePoint: { type: "default" } }])
    expect(r.body.messages[1]).toEqual({ role: "assistant", content: [{ text: "Ok." }, { cachePoint: { type: "default" } }] })
    expect(r.breakpoints.map((b) => b.location)).toEqual(["system[1]", "messages[1].content[1]", "messages[3].content[1]", "messages[5].content[1]"])
    expect(r.dropped).toEqual([])
  })

  it("requires k x the minimum at the k-th checkpoint", () => {
    // Minimum 1024: L0 at 1500 passes; L1 at 2000 < 2048 fails; L2 at 4000 >= 2048 is the 2nd.
    const req = seedRequest(SONNET45, { L0: { tokens: 1500 }, L1: { tokens: 500 }, L2: { tokens: 2000 } })
    const r = placeBedrockConverse(req)
    expect(r.breakpoints.map((b) => [b.tier, b.prefixTokens])).toEqual([["L0", 1500], ["L2", 4000]])
    expect(r.dropped[0]!.reason).toMatch(/2048 tokens \(2 × the 1024-token minimum per checkpoint\)/)
  })

  it("uses the dated Bedrock table: Opus 4.7 needs 4096 on Bedrock but 2048 on Anthropic", () => {
    const req = seedRequest("us.anthropic.claude-opus-4-7", { L0: { tokens: 3000 }, L1: { tokens: 3000 } })
    const r = placeBedrockConverse(req)
    expect(r.dropped.map((d) => d.tier)).toEqual(["L0"])
    expect(r.dropped[0]!.reason).toMatch(/4096-token minimum for Claude Opus 4.7 \(B1, 2026-07\)/)
  })

  it("lowers 1h to 5m on models that offer only 5m, and keeps 1h where the table allows it", () => {
    const req = seedRequest("anthropic.claude-3-7-sonnet-20250219-v1:0", { L0: { tokens: 3000, ttl: "1h" } })
    const r = placeBedrockConverse(req)
    expect(r.body.system?.[1]).toEqual({ cachePoint: { type: "default" } })
    expect(r.notes[0]).toMatch(/TTL lowered from 1h to 5m/)
    const r2 = placeBedrockConverse({ ...req, model: SONNET45 })
    expect(r2.body.system?.[1]).toEqual({ cachePoint: { type: "default", ttl: "1h" } })
  })

  it("adds a tools checkpoint as a toolConfig.tools entry, and none for Nova", () => {
    const tools = [{ name: "t", inputSchema: { type: "object" as const } }]
    const r = placeBedrockConverse(seedRequest(SONNET45, { L0: { tokens: 3000 } }), { tools, toolTokens: 1500, cacheTools: true })
    expect(r.body.toolConfig?.tools).toEqual([{ toolSpec: { name: "t", inputSchema: { json: { type: "object" } } } }, { cachePoint: { type: "default" } }])
    expect(r.breakpoints[0]).toMatchObject({ tier: "L0", location: "toolConfig.tools[1]", prefixTokens: 1500 })
    const nova = placeBedrockConverse(seedRequest("us.amazon.nova-pro-v1:0", { L0: { tokens: 3000 } }), { tools, toolTokens: 1500, cacheTools: true })
    expect(nova.body.toolConfig?.tools).toHaveLength(1)
    expect(nova.notes.some((n) => n.includes("does not take one"))).toBe(true)
  })

  it("sends images as bytes and refuses http URLs with an actionable error", () => {
    const req = { model: SONNET45, blocks: [], breakpoints: [], messages: [{ role: "user" as const, content: [{ type: "image" as const, url: "data:image/png;base64,AAEC" }] }] }
    const r = placeBedrockConverse(req)
    expect(r.body.messages[0]!.content[0]).toEqual({ image: { format: "png", source: { bytes: new Uint8Array([0, 1, 2]) } } })
    expect(serializeBody(r.body)).toContain('"bytes":"AAEC"')
    expect(() => placeBedrockConverse({ ...req, messages: [{ role: "user", content: [{ type: "image", url: "https://x/y.png" }] }] })).toThrow(/data: URL/)
  })
})

describe("bedrock invoke plugin", () => {
  it("emits the Anthropic body with anthropic_version and no automatic marker", () => {
    const r = placeBedrockInvoke(bigRequest(SONNET45), { automatic: true })
    expect(Object.keys(r.body)).toEqual(["anthropic_version", "max_tokens", "system", "messages"])
    expect(r.body.system![0]!.cache_control).toEqual({ type: "ephemeral" })
    expect(r.breakpoints).toHaveLength(4)
    expect(r.notes[0]).toMatch(/InvokeModel does not accept top-level cache_control/)
    const input = invokeModelInput(r, SONNET45)
    expect(input.body).toBe(serializeBody(r.body))
  })
})
