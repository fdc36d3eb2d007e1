import { describe, expect, it } from "vitest"
import { StabilityTracker } from "../src/index.ts"
import { item, keysIn, make, repeat } from "./helpers.ts"

// L1: a (300), L2: b (200), L3: c (100), with system pinned in L0 so no cached tier is empty.
const placed = (config: Parameters<typeof make>[0] = {}) =>
  StabilityTracker.initialize(make({ policy: "gated", ...config }), {
    items: [item("system", "s", 500), item("symbol:a.ts", "a", 300), item("symbol:b.ts", "b", 200), item("symbol:c.ts", "c", 100)]
  }).tracker

const all = (overrides: Record<string, string> = {}) =>
  ["a", "b", "c"].map((name) => item(`symbol:${name}.ts`, overrides[name] ?? name, 300 - 100 * ["a", "b", "c"].indexOf(name))).concat([item("system", "s", 500)])

describe("gated policy", () => {
  it("starts from the seeds' placement", () => {
    const tracker = placed()
    expect(keysIn(tracker, "L1")).toEqual(["symbol:a.ts"])
    expect(keysIn(tracker, "L2")).toEqual(["symbol:b.ts"])
    expect(keysIn(tracker, "L3")).toEqual(["symbol:c.ts"])
  })

  it("does not promote into a tier nobody rewrites, however long an item waits", () => {
    const { tracker, results } = repeat(placed(), all(), 20)
    expect(results.flatMap((r) => r.changes)).toEqual([])
    expect(StabilityTracker.get(tracker, "symbol:c.ts")).toMatchObject({ tier: "L3", n: 23 })
    expect(StabilityTracker.get(tracker, "symbol:b.ts")).toMatchObject({ tier: "L2", n: 26 })
  })

  it("promotes into a tier rewritten anyway: a change in L2 lets ripe L3 items in", () => {
    let { tracker } = repeat(placed(), all(), 5)
    const result = StabilityTracker.update(tracker, { items: all({ b: "b2" }) })
    tracker = result.tracker
    expect(result.changes).toEqual([
      { key: "symbol:b.ts", from: "L2", to: "active", reason: "hash changed" },
      { key: "symbol:c.ts", from: "L3", to: "L2", reason: "promoted" }
    ])
    // arrivals take the tier's entry N
    expect(StabilityTracker.get(tracker, "symbol:c.ts")?.n).toBe(6)
    // L1 was not rewritten: a stays, nothing moves into L1 or L0
    expect(StabilityTracker.tierOf(tracker, "symbol:a.ts")).toBe("L1")
  })

  it("a rewritten tier rewrites every tier after it (prefix caches), so a change in L1 opens L2 and L3 too", () => {
    const { tracker } = repeat(placed(), all(), 5)
    const result = StabilityTracker.update(tracker, { items: all({ a: "a2" }) })
    expect(result.changes).toEqual([
      { key: "symbol:a.ts", from: "L1", to: "active", reason: "hash changed" },
      { key: "symbol:b.ts", from: "L2", to: "L1", reason: "promoted" },
      { key: "symbol:c.ts", from: "L3", to: "L2", reason: "promoted" }
    ])
  })

  it("promotes into an empty tier", () => {
    const { tiers } = repeat(make({ policy: "gated" }), [item("symbol:a.ts")], 10, "symbol:a.ts")
    expect(tiers).toEqual(["L3", "L3", "L3", "L2", "L2", "L2", "L1", "L1", "L1", "L0"])
  })

  it("graduation into L3 is not gated", () => {
    const tracker = placed()
    const { tiers } = repeat(tracker, [...all(), item("file:new.ts")], 4, "file:new.ts")
    expect(tiers).toEqual(["active", "active", "active", "L3"])
  })

  it("anchoring keeps cacheTargetTokens in the source tier", () => {
    // four 100-token items in L3 ripe for L2; target 250: three stay (the third crosses the target), one moves
    let tracker = StabilityTracker.initialize(make({ policy: "gated", cacheTargetTokens: 250 }), {
      items: [item("system", "s", 500), item("symbol:x.ts", "x", 1000), item("symbol:y.ts", "y", 900)]
    }).tracker
    expect(keysIn(tracker, "L2")).toEqual(["symbol:y.ts"])
    const l3 = ["c1", "c2", "c3", "c4"].map((name) => item(`symbol:${name}.ts`, name, 100))
    const base = [item("system", "s", 500), item("symbol:x.ts", "x", 1000)]
    tracker = repeat(tracker, [...base, item("symbol:y.ts", "y", 900), ...l3], 5).tracker
    expect(keysIn(tracker, "L3")).toHaveLength(4)
    const result = StabilityTracker.update(tracker, { items: [...base, item("symbol:y.ts", "y2", 900), ...l3] })
    expect(result.changes.filter((c) => c.reason === "promoted")).toEqual([
      { key: "symbol:c4.ts", from: "L3", to: "L2", reason: "promoted" }
    ])
  })

  it("pitfall: a lone small file below the cache target graduates once and never thrashes back", () => {
    const { tiers, results } = repeat(make({ policy: "gated", cacheTargetTokens: 500 }), [item("file:small.ts", "h", 100)], 30, "file:small.ts")
    expect(tiers.slice(0, 3)).toEqual(["active", "active", "active"])
    expect(tiers.slice(3).every((tier) => tier === "L3")).toBe(true)
    expect(results.slice(4).flatMap((r) => r.changes)).toEqual([])
  })

  describe("history", () => {
    const history = (count: number, tokens = 100) => Array.from({ length: count }, (_, i) => item(`history:${i}`, `m${i}`, tokens))
    // The first update after placement rewrites every tier (fresh content); start after it.
    const warm = (config: Parameters<typeof make>[0]) => StabilityTracker.update(placed(config), { items: all() }).tracker

    it("never graduates on its own, however long the conversation grows", () => {
      let tracker = warm({ cacheTargetTokens: 150 })
      for (let turn = 1; turn <= 20; turn++) tracker = StabilityTracker.update(tracker, { items: [...all(), ...history(2 * turn)] }).tracker
      expect(keysIn(tracker, "active")).toHaveLength(40)
    })

    it("joins L3 on the first request after placement (which writes every tier anyway) once seen unchanged", () => {
      const first = StabilityTracker.update(placed({ cacheTargetTokens: 150 }), { items: [...all(), ...history(5)] })
      // new messages (N=0) never graduate in the request that brings them
      expect(first.changes).toEqual([])
      const tracker = StabilityTracker.update(first.tracker, { items: [...all(), ...history(5)] }).tracker
      expect(keysIn(tracker, "L3")).toEqual([])
      expect(keysIn(tracker, "active")).toHaveLength(5)
      // (with a 150-token target, placement folded the 100-token L3 into L2)
      expect(keysIn(tracker, "L2")).toEqual(["symbol:b.ts", "symbol:c.ts"])
    })

    it("piggybacks into L3 when L3 is rewritten for another reason, keeping the newest window active", () => {
      let { tracker } = repeat(warm({ cacheTargetTokens: 150 }), [...all(), ...history(5)], 3)
      const result = StabilityTracker.update(tracker, { items: [...all({ c: "c2" }), ...history(5)] })
      tracker = result.tracker
      expect(keysIn(tracker, "L3")).toEqual(["history:0", "history:1", "history:2", "history:3"])
      expect(keysIn(tracker, "active")).toEqual(["history:4", "symbol:c.ts"])
      expect(result.changes.filter((c) => c.reason === "graduated").map((c) => c.key)).toEqual([
        "history:0",
        "history:1",
        "history:2",
        "history:3"
      ])
    })

    it("honours historyWindowTokens, and 0 keeps all history active", () => {
      const window = (historyWindowTokens: number) => {
        const t = repeat(warm({ cacheTargetTokens: 150, historyWindowTokens }), [...all(), ...history(5)], 3).tracker
        return keysIn(StabilityTracker.update(t, { items: [...all({ c: "c2" }), ...history(5)] }).tracker, "L3")
      }
      expect(window(350)).toEqual(["history:0", "history:1"])
      expect(window(0)).toEqual([])
    })

    it("pitfall: after a purge, freshly compacted history does not graduate at once", () => {
      const d = item("symbol:d.ts")
      let { tracker } = repeat(warm({ cacheTargetTokens: 150 }), [...all(), ...history(6)], 3)
      // a new symbol entry rewrites L3: history outside the window joins it
      tracker = StabilityTracker.update(tracker, { items: [...all(), d, ...history(6)] }).tracker
      expect(keysIn(tracker, "L3").filter((k) => k.startsWith("history:"))).toHaveLength(5)
      // compaction: history purged (L3 loses its history) and replaced by a summary + verbatim tail
      tracker = StabilityTracker.purgeHistory(tracker).tracker
      expect(tracker.pending).toEqual({ L3: "history" })
      const compacted = history(3, 400)
      const turns = repeat(tracker, [...all(), d, ...compacted], 5)
      expect(turns.results.flatMap((r) => r.changes)).toEqual([])
      expect(keysIn(turns.tracker, "active").filter((k) => k.startsWith("history:"))).toEqual(["history:0", "history:1", "history:2"])
      // once L3 is rewritten for another reason they do graduate (so the test above can fail)
      const withEdit = StabilityTracker.update(turns.tracker, { items: [...all(), d, item("symbol:e.ts"), ...compacted] })
      expect(keysIn(withEdit.tracker, "L3")).toEqual(["history:0", "history:1", "history:2", "symbol:d.ts", "symbol:e.ts"])
    })

    it("a history change in L3 does not pull more history into L3 (history never feeds on itself)", () => {
      const d = item("symbol:d.ts")
      let { tracker } = repeat(warm({ cacheTargetTokens: 150 }), [...all(), ...history(4)], 2)
      tracker = StabilityTracker.update(tracker, { items: [...all(), d, ...history(4)] }).tracker
      expect(keysIn(tracker, "L3")).toEqual(["history:0", "history:1", "history:2", "symbol:d.ts"])
      // two more messages arrive, then an old message in L3 is rewritten
      tracker = repeat(tracker, [...all(), d, ...history(6)], 2).tracker
      const edited = [...history(6)]
      edited[0] = item("history:0", "edited", 100)
      const result = StabilityTracker.update(tracker, { items: [...all(), d, ...edited] })
      expect(result.changes).toEqual([{ key: "history:0", from: "L3", to: "active", reason: "hash changed" }])
    })
  })
})
