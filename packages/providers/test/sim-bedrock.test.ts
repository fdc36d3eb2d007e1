import { describe, expect, it } from "vitest"
import { decodeAnthropicUsage, decodeBedrockUsage, makeSimulator } from "../src/index.ts"
import { SimulatedRejection } from "../src/simulation.ts"
import { chars, tb, text } from "./sim-helpers.ts"

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0" // minimum 1024, 5m + 1h
const OLD = "anthropic.claude-3-7-sonnet-20250219-v1:0" // minimum 1024, 5m only

const cp = (ttl?: "5m" | "1h") => ({ cachePoint: ttl === undefined ? { type: "default" } : { type: "default", ttl } })
const sim = (model = MODEL, extra: { bedrockMinimum?: "perCheckpoint" | "cumulative" } = {}) =>
  makeSimulator("bedrock", { model, countTokens: chars, ...extra })

const converse = (systemTokens: number, user = "hi") => ({
  modelId: MODEL,
  system: [{ text: text(systemTokens, "sys") }, cp()],
  messages: [{ role: "user", content: [{ text: user }] }]
})

describe("bedrock simulator (Converse)", () => {
  it("writes at a cachePoint and reads it, reporting Converse usage", () => {
    const s = sim()
    const first = s.send(converse(2000), 0, { outputTokens: 9 })
    expect(first.native).toEqual({
      inputTokens: 2,
      outputTokens: 9,
      totalTokens: 2011,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 2000,
      cacheDetails: [{ ttl: "5m", inputTokens: 2000 }]
    })
    const second = s.send(converse(2000), 5, { outputTokens: 9 })
    expect(second.native).toMatchObject({ inputTokens: 2, cacheReadInputTokens: 2000, cacheWriteInputTokens: 0 })
    expect(decodeBedrockUsage(first.native)).toEqual(first.usage)
    expect(decodeBedrockUsage(second.native)).toEqual(second.usage)
  })

  it("orders tools, system, messages and caches tool checkpoints", () => {
    const s = sim()
    const body = {
      modelId: MODEL,
      toolConfig: { tools: [{ toolSpec: { name: "read", description: text(1500, "d"), inputSchema: { json: { type: "object" } } } }, cp()] },
      system: [{ text: text(1200, "sys") }, cp()],
      messages: [{ role: "user", content: [{ text: "q" }] }]
    }
    const r = s.send(body, 0)
    expect(r.trace.writes.map((w) => w.block)).toEqual([0, 1])
    // The system changes: the tool checkpoint still hits.
    const changed = { ...body, system: [{ text: text(1200, "other") }, cp()] }
    const again = s.send(changed, 5)
    expect(again.trace.hitBlock).toBe(0)
    expect(again.usage.cacheRead).toBe(r.trace.writes[0]!.tokens)
  })

  describe("minimum per checkpoint (AWS's example: first after 1,024 tokens, second after 2,048)", () => {
    const two = (a: number, b: number) => ({
      modelId: OLD,
      system: [{ text: text(a, "a") }, cp(), { text: text(b, "b") }, cp()],
      messages: [{ role: "user", content: [{ text: "q" }] }]
    })

    it("accepts checkpoints at 1,100 and 2,200 tokens", () => {
      expect(sim(OLD).send(two(1100, 1100), 0).usage.cacheWrite).toBe(2200)
    })

    it("skips a second checkpoint only 800 tokens after the first", () => {
      const r = sim(OLD).send(two(1100, 800), 0)
      expect(r.usage.cacheWrite).toBe(1100)
      expect(r.trace.skipped[0]?.reason).toMatch(/800 tokens since the previous checkpoint/)
    })

    it("the cumulative reading writes both", () => {
      expect(sim(OLD, { bedrockMinimum: "cumulative" }).send(two(1100, 800), 0).usage.cacheWrite).toBe(1900)
    })

    it("a first checkpoint below the minimum is silently ignored", () => {
      const r = sim(OLD).send(converse(1000), 0)
      expect(r.native).toMatchObject({ cacheWriteInputTokens: 0, inputTokens: 1002 })
      expect(r.native).not.toHaveProperty("cacheDetails")
    })
  })

  it("has the same 20-block lookback", () => {
    const body = (mark: number) => ({
      modelId: MODEL,
      messages: [{
        role: "user",
        content: Array.from({ length: 40 }, (_, i) => [{ text: text(100, i) }, ...(i === mark ? [cp()] : [])]).flat()
      }]
    })
    const hit = sim()
    hit.send(body(10), 0)
    expect(hit.send(body(15), 5).usage.cacheRead).toBe(1100)
    const miss = sim()
    miss.send(body(10), 0)
    expect(miss.send(body(35), 5).usage.cacheRead).toBe(0)
  })

  it("1h checkpoints where the model offers them", () => {
    const body = { ...converse(2000), system: [{ text: text(2000, "sys") }, cp("1h")] }
    const r = sim().send(body, 0)
    expect(r.native).toMatchObject({ cacheDetails: [{ ttl: "1h", inputTokens: 2000 }] })
    expect(() => sim(OLD).send({ ...body, modelId: OLD }, 0)).toThrow(/ttl "1h" is not supported/)
  })

  describe("rejections", () => {
    it("a blank text block never reaches the model", () => {
      const body = { modelId: MODEL, messages: [{ role: "user", content: [{ text: "" }] }] }
      expect(() => sim().send(body, 0)).toThrow(
        "bedrock would reject this request: ValidationException: The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and try again."
      )
      const system = { modelId: MODEL, system: [{ text: " " }], messages: [{ role: "user", content: [{ text: "x" }] }] }
      expect(() => sim().send(system, 0)).toThrow(/SystemContentBlock object at system.0 is blank/)
    })

    it("a fifth checkpoint", () => {
      const body = {
        modelId: MODEL,
        system: [1, 2, 3, 4, 5].flatMap((i) => [{ text: text(600, i) }, cp()]),
        messages: [{ role: "user", content: [{ text: "x" }] }]
      }
      expect(() => sim().send(body, 0)).toThrow(SimulatedRejection)
    })

    it("TTLs increasing along the prefix", () => {
      const body = { modelId: MODEL, system: [{ text: text(2000, 1) }, cp("5m"), { text: text(2000, 2) }, cp("1h")], messages: [{ role: "user", content: [{ text: "x" }] }] }
      expect(() => sim().send(body, 0)).toThrow(/longer TTLs must come first/)
    })

    it("a tool checkpoint on a model without tool checkpoints", () => {
      const body = { modelId: "us.amazon.nova-pro-v1:0", toolConfig: { tools: [{ toolSpec: { name: "t" } }, cp()] }, messages: [{ role: "user", content: [{ text: "x" }] }] }
      expect(() => sim("us.amazon.nova-pro-v1:0").send(body, 0)).toThrow(/does not support cache checkpoints in tools/)
    })
  })
})

describe("bedrock simulator (InvokeModel with the Anthropic body)", () => {
  const invoke = (systemTokens: number) => ({
    anthropic_version: "bedrock-2023-05-31",
    max_tokens: 100,
    system: [tb(systemTokens, "sys", true)],
    messages: [{ role: "user", content: "hi" }]
  })

  it("reports Anthropic-shaped usage", () => {
    const s = sim()
    const first = s.send(invoke(2000), 0)
    expect(first.native).toMatchObject({ input_tokens: 2, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0 })
    const second = s.send(invoke(2000), 5)
    expect(decodeAnthropicUsage(second.native)).toEqual(second.usage)
    expect(second.usage.cacheRead).toBe(2000)
  })

  it("does not accept the top-level automatic marker", () => {
    expect(() => sim().send({ ...invoke(2000), cache_control: { type: "ephemeral" } }, 0)).toThrow(/automatic caching/)
  })
})
