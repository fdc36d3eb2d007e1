// getContextBreakdown: the context breakdown JSON (docs/pipeline.md#reports-breakdown-and-hud), computed by the same stages as the
// request, without committing anything.
import { Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import {
  assemble,
  ContextBreakdown,
  getContextBreakdown,
  makeTokenCounter,
  Pipeline,
  Tokenizer,
  Tracker,
  type AssemblyInput,
  type TierChange
} from "../src/effect.ts"
import { it } from "@strata/test-support"
import { newLog, stubSymbolIndex, stubTracker, testLayer, type StubRepo } from "./pipeline-stubs.ts"

const repo: StubRepo = {
  files: ["a.ts", "b.ts", "c.ts"],
  blocks: { "a.ts": "a.ts:\n  f a()\n", "b.ts": "b.ts:\n  f b()\n", "c.ts": "c.ts:\n  f c()\n" },
  legend: "# f=function"
}
const input: AssemblyInput = {
  model: "gpt-4o",
  prompt: "Explain c",
  systemPrompt: "You are Strata's test model.",
  files: [{ path: "c.ts", content: "export const c = 3\n" }],
  history: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]
}

describe("getContextBreakdown", () => {
  it.effect("returns the context breakdown, nothing committed", () =>
    Effect.gen(function* () {
      const log = newLog()
      const t = yield* stubTracker({ initialized: false, log, place: () => ({ "symbol:a.ts": "L0", "symbol:b.ts": "L2" }) })
      const layer = testLayer(Layer.succeed(Tracker, t.service), stubSymbolIndex(() => repo))
      const breakdown = yield* getContextBreakdown(input).pipe(Effect.provide(layer))
      expect(Schema.decodeUnknownSync(ContextBreakdown)(breakdown)).toEqual(breakdown)
      expect(Object.keys(breakdown)).toEqual([
        "model",
        "mode",
        "blocks",
        "total_tokens",
        "cached_tokens",
        "cached_share",
        "cache_hit_rate",
        "promotions",
        "demotions",
        "empty_tiers_this_request",
        "empty_tiers_session_total",
        "changes",
        "synthetic_messages",
        "synthetic_tokens"
      ])
      const [l0, l1, l2, l3, active] = breakdown.blocks
      // Every tier is listed: the empty ones with zero tokens, so a UI can draw them.
      expect(breakdown.blocks.map((b) => b.tier)).toEqual(["L0", "L1", "L2", "L3", "active"])
      expect(l1).toEqual({ tier: "L1", name: "Very Stable", tokens: 0, cached: true, threshold: 9, contents: [] })
      expect(l3).toEqual({ tier: "L3", name: "Moderately Stable", tokens: 0, cached: true, threshold: 3, contents: [] })
      expect(l0).toMatchObject({ tier: "L0", name: "Most Stable", cached: true, threshold: 12 })
      expect(l0?.contents.map((c) => c.type)).toEqual(["system", "legend", "symbols", "framing"])
      expect(l0?.contents[2]).toMatchObject({ type: "symbols", count: 1, files: ["a.ts"] })
      expect(l2).toMatchObject({ tier: "L2", name: "Stable", threshold: 6 })
      expect(active).toMatchObject({ tier: "active", name: "Active", cached: false, threshold: 0 })
      expect(active?.contents.map((c) => c.type)).toEqual(["tree", "history", "files", "prompt", "framing"])
      expect(active?.contents[2]).toMatchObject({ count: 1, files: ["c.ts"] })
      expect(breakdown.empty_tiers_this_request).toBe(2)
      // The synthetic turns: the acknowledgements of the sections before the conversation (a cached tier, the tree).
      expect(breakdown.synthetic_messages).toBe(2)
      expect(breakdown.synthetic_tokens).toBeGreaterThan(0)
      expect(breakdown.cached_share).toBeCloseTo(breakdown.cached_tokens / breakdown.total_tokens, 10)
      // The deprecated name carries the same figure.
      expect(breakdown.cache_hit_rate).toBe(breakdown.cached_share)
      for (const b of breakdown.blocks) expect(b.contents.reduce((n, c) => n + c.tokens, 0)).toBe(b.tokens)
      expect(breakdown.blocks.reduce((n, b) => n + b.tokens, 0)).toBe(breakdown.total_tokens)
      // Initial placement ran for the view, but nothing reached the tracker.
      expect(log.initialized).toHaveLength(1)
      expect(log.updates).toHaveLength(0)
      expect((yield* t.service.current).initialized).toBe(false)
    }))

  it.effect("equals the assembled request's breakdown; promotions are the last committed update's", () =>
    Effect.gen(function* () {
      const changes: ReadonlyArray<TierChange> = [{ key: "symbol:a.ts", from: "L3", to: "L2", reason: "promoted" }]
      const t = yield* stubTracker({ assignments: { "symbol:a.ts": "L1" }, changes })
      const layer = testLayer(Layer.succeed(Tracker, t.service), stubSymbolIndex(() => repo))
      yield* Effect.gen(function* () {
        const before = yield* getContextBreakdown(input)
        expect(before.promotions).toEqual([])
        const r = yield* assemble(input)
        expect(r.breakdown.blocks).toEqual(before.blocks)
        expect(r.breakdown.total_tokens).toBe(r.report.totalTokens)
        expect(r.breakdown.promotions).toEqual(["symbol:a.ts"])
        yield* r.commit
        const after = yield* getContextBreakdown(input)
        expect(after.promotions).toEqual(["symbol:a.ts"])
        expect(after.changes).toEqual(changes)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("with the real tokenizer, piecewise totals stay within 1% of tokenizing the whole request", () =>
    Effect.gen(function* () {
      const counter = yield* Effect.promise(() => makeTokenCounter("gpt-4o"))
      const t = yield* stubTracker({ assignments: { "symbol:a.ts": "L1" } })
      const layer = Layer.mergeAll(Pipeline.layer, Tokenizer.layerFrom(counter), Layer.succeed(Tracker, t.service), stubSymbolIndex(() => repo))
      const r = yield* assemble(input).pipe(Effect.provide(layer))
      const whole = counter.countMessages(r.request.messages)
      expect(Math.abs(r.breakdown.total_tokens - whole)).toBeLessThanOrEqual(Math.max(3, whole * 0.01))
    }))

  it.effect("without a tracker the breakdown is the flat request, one uncached block", () =>
    Effect.gen(function* () {
      const breakdown = yield* getContextBreakdown(input)
      expect(breakdown.mode).toBe("flat")
      expect(breakdown.blocks.map((b) => [b.tier, b.cached])).toEqual([["active", false]])
      const r = yield* assemble(input)
      expect(breakdown.total_tokens).toBe(r.report.totalTokens)
    }).pipe(Effect.provide(testLayer(stubSymbolIndex(() => repo)))))
})
