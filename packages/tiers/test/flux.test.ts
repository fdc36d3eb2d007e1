import { CACHED_TIERS } from "@strata/core"
import { describe, expect, it } from "vitest"
import { membraneFlux, StabilityTracker } from "../src/index.ts"
import { DEFAULT_FLUX } from "../src/model/config.ts"
import { item, keysIn, make, repeat } from "./helpers.ts"

const { permeability: P, thermalVoltage: VT } = DEFAULT_FLUX

/** Flux across each membrane of a state (L3->L2, L2->L1, L1->L0), as the policy computes it. */
const fluxes = (tracker: StabilityTracker): Array<number> => {
  const stats = CACHED_TIERS.map((tier) => {
    const items = StabilityTracker.itemsIn(tracker, tier).filter((i) => !i.key.startsWith("history:"))
    return { count: items.length, mass: items.reduce((sum, i) => sum + i.tokens, 0) }
  })
  return [3, 2, 1].map((lower) => {
    const l = stats[lower]!
    const u = stats[lower - 1]!
    return membraneFlux(l.count, u.count, l.mass, u.mass, P, VT)
  })
}

describe("membraneFlux", () => {
  it("is P·V_T·(cl - cu) at zero voltage and continuous around it", () => {
    expect(membraneFlux(10, 3, 500, 500, P, VT)).toBeCloseTo(P * VT * 7, 12)
    expect(membraneFlux(10, 3, 501, 500, P, VT)).toBeCloseTo(P * VT * 7, 4)
    expect(membraneFlux(10, 3, 499, 500, P, VT)).toBeCloseTo(P * VT * 7, 4)
  })

  it("is driven by mass when the lower tier is far heavier, and rectified (never negative)", () => {
    expect(membraneFlux(5, 5, 60 * VT, 0, P, VT)).toBeCloseTo(P * 60 * VT * 5, 6)
    expect(membraneFlux(1, 50, 0, 100_000, P, VT)).toBe(0)
    expect(membraneFlux(1, 1, 0, 60 * VT, P, VT)).toBe(0)
  })

  it("needs about seven more items below than above to fire at small imbalance (deadband 1)", () => {
    expect(membraneFlux(6, 0, 600, 0, P, VT)).toBeLessThan(1)
    expect(membraneFlux(7, 0, 700, 0, P, VT)).toBeGreaterThanOrEqual(1)
  })
})

describe("flux policy", () => {
  it("admits active items into L3 by age, with N as pure age (reset on the move)", () => {
    const { tiers, tracker } = repeat(make({ policy: "flux" }), [item("file:a.ts")], 6, "file:a.ts")
    expect(tiers).toEqual(["active", "active", "active", "L3", "L3", "L3"])
    expect(StabilityTracker.get(tracker, "file:a.ts")?.n).toBe(2)
  })

  it("ages items absent from the request too", () => {
    let { tracker } = repeat(make({ policy: "flux" }), [item("symbol:a.ts")], 1)
    tracker = repeat(tracker, [], 3).tracker
    expect(StabilityTracker.get(tracker, "symbol:a.ts")?.n).toBe(3)
  })

  it("moves the smallest items up until every membrane is below the deadband", () => {
    const symbols = Array.from({ length: 30 }, (_, i) => item(`symbol:s${String(i).padStart(2, "0")}.ts`, "h", 100 + i))
    const { tracker, results } = repeat(make({ policy: "flux" }), symbols, 1)
    const promoted = results[0]!.changes
    expect(promoted.length).toBeGreaterThan(0)
    expect(promoted.every((c) => c.reason === "promoted")).toBe(true)
    expect(fluxes(tracker).every((phi) => phi < 1)).toBe(true)
    // the lightest items went furthest
    const top = CACHED_TIERS.find((tier) => keysIn(tracker, tier).length > 0)!
    expect(top).not.toBe("L3")
    expect(keysIn(tracker, top)[0]).toBe("symbol:s00.ts")
    // and a second update with nothing new is quiet
    expect(StabilityTracker.update(tracker, { items: symbols }).changes).toEqual([])
  })

  it("a large deadband holds everything where it is", () => {
    const symbols = Array.from({ length: 30 }, (_, i) => item(`symbol:s${i}.ts`))
    const { tracker } = repeat(make({ policy: "flux", flux: { deadband: 1e9 } }), symbols, 3)
    expect(keysIn(tracker, "L3")).toHaveLength(30)
  })

  it("maxPasses bounds the work of one update", () => {
    const symbols = Array.from({ length: 60 }, (_, i) => item(`symbol:s${i}.ts`))
    const { results } = repeat(make({ policy: "flux", flux: { maxPasses: 2 } }), symbols, 1)
    expect(results[0]!.changes.length).toBeLessThanOrEqual(2 * 4)
  })

  it("history is admitted only by piggyback and never moves after", () => {
    const symbols = Array.from({ length: 20 }, (_, i) => item(`symbol:s${i}.ts`))
    const history = Array.from({ length: 4 }, (_, i) => item(`history:${i}`, "m", 100))
    let tracker = make({ policy: "flux", cacheTargetTokens: 150 })
    tracker = repeat(tracker, symbols, 2).tracker
    tracker = repeat(tracker, [...symbols, ...history], 10).tracker
    expect(keysIn(tracker, "active")).toEqual(["history:0", "history:1", "history:2", "history:3"])
    // a new symbol entry rewrites L3: history older than the window joins it
    tracker = StabilityTracker.update(tracker, { items: [...symbols, item("symbol:new.ts"), ...history] }).tracker
    expect(keysIn(tracker, "L3").filter((k) => k.startsWith("history:"))).toEqual(["history:0", "history:1", "history:2"])
    const after = repeat(tracker, [...symbols, item("symbol:new.ts"), ...history], 20).tracker
    expect(keysIn(after, "L3").filter((k) => k.startsWith("history:"))).toEqual(["history:0", "history:1", "history:2"])
  })

  it("initial placement puts the most mass in L0 so a fresh state does not churn", () => {
    const symbols = Array.from({ length: 40 }, (_, i) => item(`symbol:s${i}.ts`, "h", 100))
    const { tracker } = StabilityTracker.initialize(make({ policy: "flux" }), { items: symbols })
    const sizes = CACHED_TIERS.map((tier) => keysIn(tracker, tier).length)
    expect(sizes).toEqual([16, 12, 8, 4])
    const next = StabilityTracker.update(tracker, { items: symbols })
    expect(next.changes).toEqual([])
  })
})
