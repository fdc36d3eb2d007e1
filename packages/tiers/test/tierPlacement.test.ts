import { CACHED_TIERS } from "@strata/core"
import { describe, expect, it } from "vitest"
import { placeItems, SEED_PLACEMENT, StabilityTracker } from "../src/index.ts"
import { item, keysIn, make } from "./helpers.ts"

const tokensIn = (tracker: StabilityTracker, tier: "L0" | "L1" | "L2" | "L3") =>
  StabilityTracker.itemsIn(tracker, tier).reduce((sum, i) => sum + i.tokens, 0)

describe("initial placement: greedy by tokens (docs/tiers.md)", () => {
  it("distributes items roughly evenly by tokens across L1-L3", () => {
    const sizes = [900, 850, 700, 640, 500, 420, 380, 300, 260, 200, 150, 120, 90, 60, 30]
    const items = sizes.map((tokens, i) => item(`symbol:f${i}.ts`, "h", tokens))
    const { tracker } = StabilityTracker.initialize(make(), { items })
    const sums = (["L1", "L2", "L3"] as const).map((tier) => tokensIn(tracker, tier))
    expect(sums.reduce((a, b) => a + b)).toBe(sizes.reduce((a, b) => a + b))
    expect(Math.max(...sums) - Math.min(...sums)).toBeLessThanOrEqual(Math.max(...sizes))
    expect(Math.max(...sums) / Math.min(...sums)).toBeLessThan(1.1)
    expect(keysIn(tracker, "L0")).toEqual([])
  })

  it("assigns each item the tier with the most room, the first tier winning ties (L1, L2, L3)", () => {
    const { tracker } = StabilityTracker.initialize(make(), {
      items: [item("symbol:a.ts", "h", 300), item("symbol:b.ts", "h", 200), item("symbol:c.ts", "h", 100), item("symbol:d.ts", "h", 100)]
    })
    expect(keysIn(tracker, "L1")).toEqual(["symbol:a.ts"])
    expect(keysIn(tracker, "L2")).toEqual(["symbol:b.ts"])
    expect(keysIn(tracker, "L3")).toEqual(["symbol:c.ts", "symbol:d.ts"])
  })

  it("sets N to the tier's threshold so items promote naturally from there", () => {
    const { tracker } = StabilityTracker.initialize(make({ thresholds: { L3: 2, L2: 5, L1: 8, L0: 11 } }), {
      items: [item("symbol:a.ts", "h", 300), item("symbol:b.ts", "h", 200), item("symbol:c.ts", "h", 100)]
    })
    expect(CACHED_TIERS.flatMap((tier) => StabilityTracker.itemsIn(tracker, tier).map((i) => [i.key, i.tier, i.n]))).toEqual([
      ["symbol:a.ts", "L1", 8],
      ["symbol:b.ts", "L2", 5],
      ["symbol:c.ts", "L3", 2]
    ])
  })

  it("populates symbol map entries before files", () => {
    const { tracker } = StabilityTracker.initialize(make(), {
      items: [item("file:big.ts", "h", 1000), item("symbol:a.ts", "h", 300), item("symbol:b.ts", "h", 200), item("symbol:c.ts", "h", 100)]
    })
    // symbols first fill L1/L2/L3 with 300/200/100; the big file then lands in the emptiest tier, L3.
    // (Largest-first over everything would have put the file in L1.)
    expect(StabilityTracker.tierOf(tracker, "file:big.ts")).toBe("L3")
    expect(StabilityTracker.tierOf(tracker, "symbol:a.ts")).toBe("L1")
  })

  it("starts with active empty: history and URLs are left to update, system goes to L0", () => {
    const { tracker, changes } = StabilityTracker.initialize(make(), {
      items: [item("symbol:a.ts"), item("file:b.ts"), item("tree"), item("history:0"), item("url:x"), item("system")]
    })
    expect(keysIn(tracker, "active")).toEqual([])
    expect(keysIn(tracker, "L0")).toEqual(["system"])
    expect(tracker.items.has("history:0")).toBe(false)
    expect(changes).toEqual([])
    expect(tracker.initialized).toBe(true)
  })

  it("is a no-op once initialized, and keeps already tracked keys where they are", () => {
    let tracker = StabilityTracker.update(make(), { items: [item("file:a.ts")] }).tracker
    tracker = StabilityTracker.initialize(tracker, { items: [item("file:a.ts"), item("symbol:b.ts")] }).tracker
    expect(StabilityTracker.tierOf(tracker, "file:a.ts")).toBe("active")
    expect(StabilityTracker.tierOf(tracker, "symbol:b.ts")).toBe("L1")
    const again = StabilityTracker.initialize(tracker, { items: [item("symbol:c.ts")] })
    expect(again.tracker).toBe(tracker)
  })

  it("does not place the symbol entry of a selected file", () => {
    const { tracker } = StabilityTracker.initialize(make(), { items: [item("file:a.ts"), item("symbol:a.ts"), item("symbol:b.ts")] })
    expect(tracker.items.has("symbol:a.ts")).toBe(false)
    expect(StabilityTracker.tierOf(tracker, "file:a.ts")).toBeDefined()
  })

  it("folds a tier below cacheTargetTokens into the least filled other tier", () => {
    const { tracker } = StabilityTracker.initialize(make({ cacheTargetTokens: 250 }), {
      items: [item("symbol:a.ts", "h", 300), item("symbol:b.ts", "h", 280), item("symbol:c.ts", "h", 100)]
    })
    expect(keysIn(tracker, "L3")).toEqual([])
    expect(keysIn(tracker, "L2")).toEqual(["symbol:b.ts", "symbol:c.ts"])
    expect(StabilityTracker.get(tracker, "symbol:c.ts")?.n).toBe(6)
  })
})

describe("placement from the reference graph", () => {
  it("bin-packs connected components whole", () => {
    const items = [
      item("symbol:a.ts", "h", 400),
      item("symbol:b.ts", "h", 300),
      item("symbol:c.ts", "h", 300),
      item("symbol:d.ts", "h", 200),
      item("symbol:e.ts", "h", 100),
      item("symbol:f.ts", "h", 100)
    ]
    const components = [["symbol:b.ts", "symbol:c.ts", "symbol:f.ts"], ["symbol:d.ts", "symbol:e.ts"]]
    const placed = placeItems(items, { components, shares: SEED_PLACEMENT, cacheTargetTokens: 0 })
    // units: {b,c,f}=700, {a}=400, {d,e}=300
    expect(Object.fromEntries(placed)).toEqual({
      "symbol:b.ts": "L1",
      "symbol:c.ts": "L1",
      "symbol:f.ts": "L1",
      "symbol:a.ts": "L2",
      "symbol:d.ts": "L3",
      "symbol:e.ts": "L3"
    })
  })

  it("ignores unknown keys and keys repeated across components", () => {
    const placed = placeItems([item("symbol:a.ts"), item("symbol:b.ts")], {
      components: [["symbol:a.ts", "symbol:zz.ts"], ["symbol:a.ts", "symbol:b.ts"]],
      shares: SEED_PLACEMENT,
      cacheTargetTokens: 0
    })
    expect([...placed.keys()].sort()).toEqual(["symbol:a.ts", "symbol:b.ts"])
  })

  it("falls back to percentiles by reference count when no components are given", () => {
    const items = Array.from({ length: 10 }, (_, i) => item(`symbol:f${i}.ts`))
    const refCounts = Object.fromEntries(items.map((it, i) => [it.key, 100 - i]))
    const { tracker } = StabilityTracker.initialize(make(), { items, refCounts })
    // top 20 % -> L1, next 30 % -> L2, the rest -> L3
    expect(keysIn(tracker, "L1")).toEqual(["symbol:f0.ts", "symbol:f1.ts"])
    expect(keysIn(tracker, "L2")).toEqual(["symbol:f2.ts", "symbol:f3.ts", "symbol:f4.ts"])
    expect(keysIn(tracker, "L3")).toHaveLength(5)
    expect(keysIn(tracker, "active")).toEqual([])
  })

  it("uses components (with reference counts only breaking ties) when both are given", () => {
    const items = [item("symbol:a.ts", "h", 100), item("symbol:b.ts", "h", 100), item("symbol:c.ts", "h", 100)]
    const placed = placeItems(items, {
      components: [],
      refCounts: { "symbol:c.ts": 9, "symbol:b.ts": 5 },
      shares: SEED_PLACEMENT,
      cacheTargetTokens: 0
    })
    expect(Object.fromEntries(placed)).toEqual({ "symbol:c.ts": "L1", "symbol:b.ts": "L2", "symbol:a.ts": "L3" })
  })
})
