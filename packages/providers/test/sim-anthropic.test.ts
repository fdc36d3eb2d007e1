import { describe, expect, it } from "vitest"
import { decodeAnthropicUsage, makeSimulator } from "../src/index.ts"
import { SimulatedRejection, SimulatorInputError } from "../src/simulation.ts"
import { chars, tb, text } from "./sim-helpers.ts"

const MODEL = "claude-sonnet-4-5" // minimum 1024, $3/MTok input

const sim = (model = MODEL) => makeSimulator("anthropic", { model, countTokens: chars })

/** One user message of `n` 100-token blocks, with markers at `marks` (block indexes). */
const blocksBody = (n: number, marks: ReadonlyArray<number>, seed = "b") => ({
  model: MODEL,
  max_tokens: 100,
  messages: [{
    role: "user",
    content: Array.from({ length: n }, (_, i) => tb(100, `${seed}${i}`, marks.includes(i) ? true : undefined))
  }]
})

const systemBody = (systemTokens: number, user = "hi", extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 100,
  system: [tb(systemTokens, "sys", true)],
  messages: [{ role: "user", content: user }],
  ...extra
})

describe("anthropic simulator", () => {
  it("writes at a breakpoint, then reads it", () => {
    const s = sim()
    const first = s.send(systemBody(2000), 0, { outputTokens: 50 })
    expect(first.usage).toEqual({ input: 2, cacheRead: 0, cacheWrite: 2000, output: 50, cacheWriteByTtl: { "5m": 2000 } })
    expect(first.native).toEqual({
      input_tokens: 2,
      cache_creation_input_tokens: 2000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 0 },
      output_tokens: 50
    })
    const second = s.send(systemBody(2000, "again"), 10)
    expect(second.usage).toEqual({ input: 5, cacheRead: 2000, cacheWrite: 0, output: 0 })
    expect(second.trace.hitBlock).toBe(0)
  })

  it("native usage decodes back to the same neutral usage", () => {
    const s = sim()
    for (const [t, body] of [systemBody(3000), systemBody(3000, "more"), systemBody(900)].entries()) {
      const r = s.send(body, t * 10, { outputTokens: 7 })
      expect(decodeAnthropicUsage(r.native)).toEqual(r.usage)
    }
  })

  describe("20-block lookback (docs' worked example)", () => {
    it("write at block 10; a breakpoint at 15 hits it", () => {
      const s = sim()
      expect(s.send(blocksBody(40, [10]), 0).usage.cacheWrite).toBe(1100)
      const r = s.send(blocksBody(40, [15]), 10)
      expect(r.trace.hitBlock).toBe(10)
      expect(r.usage).toMatchObject({ cacheRead: 1100, cacheWrite: 500, input: 2400 })
    })

    it("write at block 10; a breakpoint at 35 misses it", () => {
      const s = sim()
      s.send(blocksBody(40, [10]), 0)
      const r = s.send(blocksBody(40, [35]), 10)
      expect(r.trace.hitBlock).toBe(-1)
      expect(r.usage).toMatchObject({ cacheRead: 0, cacheWrite: 3600, input: 400 })
    })

    it("checks exactly 20 positions counting the breakpoint itself", () => {
      const at29 = sim()
      at29.send(blocksBody(40, [10]), 0)
      expect(at29.send(blocksBody(40, [29]), 10).usage.cacheRead).toBe(1100)
      const at30 = sim()
      at30.send(blocksBody(40, [10]), 0)
      expect(at30.send(blocksBody(40, [30]), 10).usage.cacheRead).toBe(0)
    })

    it("resumes from the next explicit breakpoint when a window misses", () => {
      const s = sim()
      s.send(blocksBody(40, [10]), 0)
      const r = s.send(blocksBody(40, [12, 35]), 10)
      expect(r.usage).toMatchObject({ cacheRead: 1100, cacheWrite: 2500 })
    })

    it("earlier boundaries without a write are never read", () => {
      const s = sim()
      s.send(blocksBody(40, [30]), 0)
      // Block 20 lies inside the prefix written at 30, but nothing was written at 20.
      expect(s.send(blocksBody(40, [20]), 10).usage.cacheRead).toBe(0)
    })
  })

  describe("minimum cacheable length", () => {
    it("a prefix below the model's minimum is silently not cached", () => {
      const s = sim()
      const r = s.send(systemBody(1000), 0)
      expect(r.usage).toEqual({ input: 1002, cacheRead: 0, cacheWrite: 0, output: 0 })
      expect(r.native.cache_creation_input_tokens).toBe(0)
      expect(r.trace.skipped[0]?.reason).toMatch(/below the model's minimum of 1024/)
      expect(s.send(systemBody(1000), 10).usage.cacheRead).toBe(0)
    })

    it("uses the per-model, dated minimum", () => {
      const haiku = makeSimulator("anthropic", { model: "claude-haiku-4-5", countTokens: chars })
      expect(haiku.send({ ...systemBody(3000), model: "claude-haiku-4-5" }, 0).usage.cacheWrite).toBe(0)
      expect(haiku.send({ ...systemBody(4100), model: "claude-haiku-4-5" }, 10).usage.cacheWrite).toBe(4100)
      // The body's model wins over the simulator's: Sonnet 4.5 caches 3000 tokens.
      expect(haiku.send(systemBody(3000), 20).usage.cacheWrite).toBe(3000)
      const body = { ...systemBody(1500), model: "claude-sonnet-4-6" }
      expect(makeSimulator("anthropic", { model: "claude-sonnet-4-6", countTokens: chars }).send(body, 0).usage.cacheWrite).toBe(1500)
      const early = makeSimulator("anthropic", { model: "claude-sonnet-4-6", countTokens: chars, asOf: "2026-03" })
      expect(early.limits.minCacheTokens).toBe(2048)
      expect(early.send(body, 0).usage.cacheWrite).toBe(0)
    })
  })

  describe("TTL", () => {
    it("5 minutes, refreshed by each hit", () => {
      const s = sim()
      s.send(systemBody(2000), 0) // visible at 1, expires at 301
      expect(s.send(systemBody(2000), 200).usage.cacheRead).toBe(2000) // refresh: expires 500
      expect(s.send(systemBody(2000), 490).usage.cacheRead).toBe(2000) // expires 790
      expect(s.send(systemBody(2000), 789).usage.cacheRead).toBe(2000) // expires 1089
      const late = s.send(systemBody(2000), 1089)
      expect(late.usage).toMatchObject({ cacheRead: 0, cacheWrite: 2000 })
    })

    it("an unrefreshed 5-minute entry is gone after 300 s", () => {
      const s = sim()
      s.send(systemBody(2000), 0)
      expect(s.send(systemBody(2000), 300).usage.cacheRead).toBe(2000)
      const t = sim()
      t.send(systemBody(2000), 0)
      expect(t.send(systemBody(2000), 301).usage.cacheRead).toBe(0)
    })

    it("1 hour entries outlive 5 minute ones", () => {
      const s = sim()
      const body = { ...systemBody(2000), system: [tb(2000, "sys", "1h")] }
      expect(s.send(body, 0).usage.cacheWriteByTtl).toEqual({ "1h": 2000 })
      expect(s.send(body, 3000).usage.cacheRead).toBe(2000)
      expect(s.send(body, 3000 + 3601).usage.cacheRead).toBe(0)
    })

    it("mixed TTLs bill 1h writes up to the last 1h breakpoint and 5m writes after it", () => {
      const s = sim()
      const body = {
        model: MODEL,
        max_tokens: 10,
        system: [tb(2000, "a", "1h"), tb(1000, "b", "5m")],
        messages: [{ role: "user", content: "q" }]
      }
      const first = s.send(body, 0)
      expect(first.usage).toMatchObject({ cacheWrite: 3000, cacheWriteByTtl: { "1h": 2000, "5m": 1000 } })
      expect(first.native.cache_creation).toEqual({ ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 })
      // At 400 s the 5m entry has expired and the 1h one has not.
      const later = s.send(body, 400)
      expect(later.usage).toMatchObject({ cacheRead: 2000, cacheWrite: 1000, cacheWriteByTtl: { "5m": 1000 } })
    })

    it("rejects a longer TTL after a shorter one", () => {
      const body = { model: MODEL, max_tokens: 1, system: [tb(2000, "a", "5m"), tb(1000, "b", "1h")], messages: [{ role: "user", content: "q" }] }
      expect(() => sim().send(body, 0)).toThrow(/must not come after/)
    })
  })

  it("an entry is readable only once the writer's response has started", () => {
    const s = makeSimulator("anthropic", { model: MODEL, countTokens: chars, firstTokenSeconds: 2 })
    expect(s.send(systemBody(2000), 0).usage.cacheWrite).toBe(2000)
    // Parallel identical requests all miss and all pay the write.
    expect(s.send(systemBody(2000), 0).usage).toMatchObject({ cacheRead: 0, cacheWrite: 2000 })
    expect(s.send(systemBody(2000), 1.5).usage).toMatchObject({ cacheRead: 0, cacheWrite: 2000 })
    expect(s.send(systemBody(2000), 2).usage).toMatchObject({ cacheRead: 2000, cacheWrite: 0 })
  })

  describe("invalidation", () => {
    const tool = (d: string) => ({ name: "read", description: d, input_schema: { type: "object" } })
    const layered = (over: { tool?: string; system?: string; toolChoice?: unknown; history?: string }) => ({
      model: MODEL,
      max_tokens: 10,
      tools: [{ ...tool(over.tool ?? "reads a file"), cache_control: { type: "ephemeral" } }],
      ...(over.toolChoice === undefined ? {} : { tool_choice: over.toolChoice }),
      system: [tb(2000, over.system ?? "sys", true)],
      messages: [
        { role: "user", content: [tb(2000, over.history ?? "hist", true)] },
        { role: "user", content: "now" }
      ]
    })

    it("a message change keeps tools and system", () => {
      const s = sim()
      s.send(layered({}), 0)
      const r = s.send(layered({ history: "other" }), 10)
      expect(r.usage.cacheRead).toBe(r.trace.promptTokens - 2000 - 3)
    })

    it("a system change keeps only tools (which are below the minimum here, so nothing)", () => {
      const s = sim()
      s.send(layered({}), 0)
      expect(s.send(layered({ system: "new" }), 10).usage.cacheRead).toBe(0)
    })

    it("tool_choice keeps tools and system, loses messages", () => {
      const s = sim()
      const before = s.send(layered({}), 0)
      const r = s.send(layered({ toolChoice: { type: "any" } }), 10)
      const toolTokens = before.trace.promptTokens - 4000 - 3
      expect(r.usage.cacheRead).toBe(toolTokens + 2000)
    })

    it("a tool change or a model switch loses everything", () => {
      const s = sim()
      s.send(layered({}), 0)
      expect(s.send(layered({ tool: "changed" }), 10).usage.cacheRead).toBe(0)
      s.send(layered({}), 20)
      expect(s.send({ ...layered({}), model: "claude-opus-4-1" }, 30).usage.cacheRead).toBe(0)
    })
  })

  describe("automatic caching (top-level cache_control)", () => {
    it("marks the last block and follows the conversation", () => {
      const s = sim()
      const turn1 = { model: MODEL, max_tokens: 10, cache_control: { type: "ephemeral" }, messages: [{ role: "user", content: text(3000, "u1") }] }
      expect(s.send(turn1, 0).usage.cacheWrite).toBe(3000)
      const turn2 = {
        ...turn1,
        messages: [...turn1.messages, { role: "assistant", content: text(500, "a1") }, { role: "user", content: text(200, "u2") }]
      }
      expect(s.send(turn2, 20).usage).toMatchObject({ cacheRead: 3000, cacheWrite: 700, input: 0 })
    })

    it("uses a slot: four explicit markers plus automatic is rejected", () => {
      const body = {
        model: MODEL,
        max_tokens: 1,
        cache_control: { type: "ephemeral" },
        system: [tb(2000, 1, true), tb(10, 2, true), tb(10, 3, true), tb(10, 4, true)],
        messages: [{ role: "user", content: "x" }]
      }
      expect(() => sim().send(body, 0)).toThrow("A maximum of 4 blocks with cache_control may be provided. Found 5.")
    })

    it("is a no-op on a block with the same marker and rejects a different TTL there", () => {
      const same = { model: MODEL, max_tokens: 1, cache_control: { type: "ephemeral" }, messages: [{ role: "user", content: [tb(2000, 1, true)] }] }
      expect(sim().send(same, 0).usage.cacheWrite).toBe(2000)
      const conflict = { ...same, cache_control: { type: "ephemeral", ttl: "1h" } }
      expect(() => sim().send(conflict, 0)).toThrow(SimulatedRejection)
    })
  })

  describe("rejections the API would return", () => {
    it("a fifth breakpoint", () => {
      const body = { model: MODEL, max_tokens: 1, system: [1, 2, 3, 4, 5].map((i) => tb(500, i, true)), messages: [{ role: "user", content: "x" }] }
      expect(() => sim().send(body, 0)).toThrow("A maximum of 4 blocks with cache_control may be provided. Found 5.")
    })

    it("an empty text block", () => {
      const body = { model: MODEL, max_tokens: 1, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] }
      try {
        sim().send(body, 0)
        expect.unreachable()
      } catch (e) {
        expect(e).toBeInstanceOf(SimulatedRejection)
        expect((e as SimulatedRejection).message).toBe("anthropic would reject this request: messages.0.content.0: text content blocks must be non-empty")
      }
    })

    it("cache_control on a thinking block", () => {
      const body = {
        model: MODEL,
        max_tokens: 1,
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "s", cache_control: { type: "ephemeral" } }] }
        ]
      }
      expect(() => sim().send(body, 0)).toThrow(/cannot be set on thinking blocks/)
    })
  })

  it("refuses time running backwards", () => {
    const s = sim()
    s.send(systemBody(2000), 10)
    expect(() => s.send(systemBody(2000), 5)).toThrow(SimulatorInputError)
  })

  it("prices writes and reads with the model's multipliers", () => {
    const s = sim()
    const write = s.send(systemBody(2000), 0, { outputTokens: 100 })
    expect(write.cost.inputEquivalentTokens).toBeCloseTo(2 + 2000 * 1.25)
    expect(write.cost.usd?.total).toBeCloseTo((2 * 3 + 2000 * 3 * 1.25 + 100 * 15) / 1e6)
    const read = s.send(systemBody(2000), 10)
    expect(read.cost.inputEquivalentTokens).toBeCloseTo(2 + 2000 * 0.1)
    expect(read.cost.usd?.cacheRead).toBeCloseTo((2000 * 3 * 0.1) / 1e6)
  })

  it("counts tool definitions, images and tool blocks", () => {
    const s = makeSimulator("anthropic", { model: MODEL, countTokens: chars, imageTokens: 1500 })
    const body = {
      model: MODEL,
      max_tokens: 1,
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }, { type: "text", text: "what?", cache_control: { type: "ephemeral" } }]
      }]
    }
    expect(s.send(body, 0).usage.cacheWrite).toBe(1505)
  })
})
