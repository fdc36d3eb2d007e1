import { InvalidInput } from "@strata/core"
import { describe, expect, it } from "vitest"
import { StabilityTracker } from "../src/index.ts"
import { item, keysIn, make, repeat } from "./helpers.ts"

describe("the threshold cascade: StabilityTracker with four cached tiers (docs/tiers.md)", () => {
  it("thresholds are configurable", () => {
    const tracker = make({ thresholds: { L3: 2, L2: 4, L1: 5, L0: 7 } })
    const { tiers } = repeat(tracker, [item("file:a.ts")], 8, "file:a.ts")
    // update k gives n = k - 1: L3 at n=2, L2 at 4, L1 at 5, L0 at 7
    expect(tiers).toEqual(["active", "active", "L3", "L3", "L2", "L1", "L1", "L0"])
    expect(tracker.config.thresholds).toEqual({ L3: 2, L2: 4, L1: 5, L0: 7 })
  })

  it("rejects thresholds that do not increase from L3 to L0", () => {
    expect(() => make({ thresholds: { L3: 6, L2: 6 } })).toThrow(InvalidInput)
    expect(() => make({ thresholds: { L3: 0 } })).toThrow(/1 <= L3 < L2 < L1 < L0/)
    expect(() => make({ cacheTargetTokens: -5 })).toThrow(/cacheTargetTokens/)
    expect(() => make({ policy: "bogus" as never })).toThrow(/"threshold" \| "gated" \| "flux"/)
  })

  it("a lone file: active for updates 1-3, L3 at 4, L2 at 7, L1 at 10, L0 at 13", () => {
    const { tiers, tracker } = repeat(make(), [item("file:a.ts")], 14, "file:a.ts")
    expect(tiers).toEqual([
      "active", "active", "active",
      "L3", "L3", "L3",
      "L2", "L2", "L2",
      "L1", "L1", "L1",
      "L0", "L0"
    ])
    expect(StabilityTracker.get(tracker, "file:a.ts")).toEqual({ key: "file:a.ts", tier: "L0", n: 13, hash: "h", tokens: 100 })
  })

  it("initial tier assignment: files, history and URLs enter active with n=0; symbol entries and the tree enter L3; system L0", () => {
    const { tracker } = StabilityTracker.update(make(), {
      items: [item("file:a.ts"), item("history:0"), item("url:https://x.dev"), item("symbol:b.ts"), item("tree"), item("system")]
    })
    expect(keysIn(tracker, "active")).toEqual(["file:a.ts", "history:0", "url:https://x.dev"])
    expect(keysIn(tracker, "L3")).toEqual(["symbol:b.ts", "tree"])
    expect(keysIn(tracker, "L0")).toEqual(["system"])
    expect(StabilityTracker.get(tracker, "file:a.ts")?.n).toBe(0)
    expect(StabilityTracker.get(tracker, "symbol:b.ts")?.n).toBe(3)
  })

  it("promotion L3 -> L2 after 6 unchanged responses", () => {
    const { tiers } = repeat(make(), [item("symbol:a.ts")], 4, "symbol:a.ts")
    // enters at n=3; n=6 on the 4th update
    expect(tiers).toEqual(["L3", "L3", "L3", "L2"])
  })

  it("promotion L2 -> L1 after 9 and L1 -> L0 after 12 unchanged responses", () => {
    const { tiers } = repeat(make(), [item("tree")], 10, "tree")
    expect(tiers.indexOf("L1")).toBe(6) // n = 9
    expect(tiers.indexOf("L0")).toBe(9) // n = 12
  })

  it("demotion on change: a changed hash resets n and moves the item to active", () => {
    let { tracker } = repeat(make(), [item("file:a.ts", "v1")], 10)
    expect(StabilityTracker.tierOf(tracker, "file:a.ts")).toBe("L1")
    const result = StabilityTracker.update(tracker, { items: [item("file:a.ts", "v2", 140)] })
    tracker = result.tracker
    expect(StabilityTracker.get(tracker, "file:a.ts")).toEqual({ key: "file:a.ts", tier: "active", n: 0, hash: "v2", tokens: 140 })
    expect(result.changes).toEqual([{ key: "file:a.ts", from: "L1", to: "active", reason: "hash changed" }])
    // and climbs again from the start
    const again = repeat(tracker, [item("file:a.ts", "v2", 140)], 3, "file:a.ts")
    expect(again.tiers).toEqual(["active", "active", "L3"])
  })

  it("a changed system prompt stays in L0 (it always heads the L0 block)", () => {
    let { tracker } = repeat(make(), [item("system", "s1")], 2)
    tracker = StabilityTracker.update(tracker, { items: [item("system", "s2")] }).tracker
    expect(StabilityTracker.get(tracker, "system")).toMatchObject({ tier: "L0", n: 0, hash: "s2" })
  })

  it("promotion/demotion tracking: each update reports its own graduations, promotions, demotions and removals", () => {
    let tracker = make()
    const items = [item("file:a.ts"), item("symbol:b.ts"), item("history:0")]
    const reports = []
    for (let i = 0; i < 4; i++) {
      const result = StabilityTracker.update(tracker, { items })
      tracker = result.tracker
      reports.push(result.changes)
    }
    expect(reports.slice(0, 3)).toEqual([[], [], []])
    expect(reports[3]).toEqual([
      { key: "file:a.ts", from: "active", to: "L3", reason: "graduated" },
      { key: "history:0", from: "active", to: "L3", reason: "graduated" },
      { key: "symbol:b.ts", from: "L3", to: "L2", reason: "promoted" }
    ])
    const fifth = StabilityTracker.update(tracker, { items: [item("symbol:b.ts", "changed")], existingFiles: new Set(["b.ts"]) })
    expect(fifth.changes).toEqual([
      { key: "file:a.ts", from: "L3", to: null, reason: "stale" },
      { key: "history:0", from: "L3", to: null, reason: "not in request" },
      { key: "symbol:b.ts", from: "L2", to: "active", reason: "hash changed" }
    ])
  })

  it("pitfall: the change list never carries earlier updates' changes", () => {
    let tracker = make()
    const lengths: Array<number> = []
    for (let i = 0; i < 30; i++) {
      const items = [item("file:a.ts", `v${Math.floor(i / 5)}`), item("symbol:b.ts")]
      const result = StabilityTracker.update(tracker, { items })
      tracker = result.tracker
      lengths.push(result.changes.length)
      for (const change of result.changes) expect(change.key === "file:a.ts" || change.key === "symbol:b.ts").toBe(true)
    }
    expect(Math.max(...lengths)).toBeLessThanOrEqual(2)
    const quiet = StabilityTracker.update(tracker, { items: [item("file:a.ts", "v5"), item("symbol:b.ts")] })
    expect(quiet.changes).toEqual([])
  })

  it("file: and history: keys absent from the request are removed; symbol:, tree, url: and system keep their tier", () => {
    const all = [item("file:a.ts"), item("history:0"), item("symbol:b.ts"), item("tree"), item("url:u"), item("system")]
    let { tracker } = repeat(make(), all, 5)
    const before = { symbol: StabilityTracker.get(tracker, "symbol:b.ts"), tree: StabilityTracker.get(tracker, "tree"), url: StabilityTracker.get(tracker, "url:u") }
    const result = StabilityTracker.update(tracker, { items: [] })
    tracker = result.tracker
    expect(result.changes).toEqual([
      { key: "file:a.ts", from: "L3", to: null, reason: "not in request" },
      { key: "history:0", from: "L3", to: null, reason: "not in request" }
    ])
    expect(StabilityTracker.get(tracker, "symbol:b.ts")).toEqual(before.symbol)
    expect(StabilityTracker.get(tracker, "tree")).toEqual(before.tree)
    expect(StabilityTracker.get(tracker, "url:u")).toEqual(before.url)
    expect(StabilityTracker.tierOf(tracker, "system")).toBe("L0")
  })

  it("existingFiles removes file: and symbol: entries of deleted files as stale", () => {
    let { tracker } = repeat(make(), [item("symbol:gone.ts"), item("symbol:kept.ts"), item("tree")], 2)
    const result = StabilityTracker.update(tracker, { items: [item("tree")], existingFiles: new Set(["kept.ts"]) })
    tracker = result.tracker
    expect(result.changes).toEqual([{ key: "symbol:gone.ts", from: "L3", to: null, reason: "stale" }])
    expect(StabilityTracker.tierOf(tracker, "symbol:kept.ts")).toBe("L3")
    // an item in the request is never stale (it was just read)
    const kept = StabilityTracker.update(tracker, { items: [item("symbol:new.ts")], existingFiles: new Set() })
    expect(StabilityTracker.tierOf(kept.tracker, "symbol:new.ts")).toBe("L3")
  })

  it("active files exclude symbol entries: a selected file's symbol entry is in no tier, and returns to its earned tier when deselected", () => {
    let { tracker } = repeat(make(), [item("symbol:a.ts"), item("symbol:b.ts")], 4)
    expect(StabilityTracker.get(tracker, "symbol:a.ts")).toMatchObject({ tier: "L2", n: 6 })
    // select a.ts: assembly sends its file (and, for N-tracking, its symbol entry too)
    const selected = [item("file:a.ts"), item("symbol:a.ts"), item("symbol:b.ts")]
    const selecting = StabilityTracker.update(tracker, { items: selected })
    tracker = selecting.tracker
    expect(selecting.changes).toEqual([])
    expect(StabilityTracker.tierOf(tracker, "symbol:a.ts")).toBeUndefined()
    expect(StabilityTracker.get(tracker, "symbol:a.ts")).toBeUndefined()
    for (const tier of ["L0", "L1", "L2", "L3", "active"] as const) expect(keysIn(tracker, tier)).not.toContain("symbol:a.ts")
    expect(StabilityTracker.tierOf(tracker, "file:a.ts")).toBe("active")
    // while hidden it ages but never moves up (n reaches 9 here, the L1 threshold)
    tracker = repeat(tracker, selected, 2).tracker
    expect(tracker.items.get("symbol:a.ts")).toMatchObject({ tier: "L2", n: 9 })
    // deselect: the file leaves, the symbol entry is back in the tier it holds (docs/tiers.md, selected files), then climbs on
    const deselecting = StabilityTracker.update(tracker, { items: [item("symbol:a.ts"), item("symbol:b.ts")] })
    tracker = deselecting.tracker
    expect(StabilityTracker.tierOf(tracker, "file:a.ts")).toBeUndefined()
    expect(deselecting.changes).toContainEqual({ key: "file:a.ts", from: "active", to: null, reason: "not in request" })
    expect(StabilityTracker.get(tracker, "symbol:a.ts")).toMatchObject({ tier: "L1", n: 10, hash: "h" })
  })

  it("a selected file's symbol entry still follows its hash: an edit sends it to active, unseen", () => {
    let { tracker } = repeat(make(), [item("symbol:a.ts")], 4)
    const result = StabilityTracker.update(tracker, { items: [item("file:a.ts", "f1"), item("symbol:a.ts", "edited")] })
    tracker = result.tracker
    expect(tracker.items.get("symbol:a.ts")).toMatchObject({ tier: "active", n: 0, hash: "edited" })
    expect(StabilityTracker.tierOf(tracker, "symbol:a.ts")).toBeUndefined()
    // a symbol entry first seen with its file selected registers hidden, in L3
    const fresh = StabilityTracker.update(make(), { items: [item("file:c.ts"), item("symbol:c.ts")] }).tracker
    expect(fresh.items.get("symbol:c.ts")?.tier).toBe("L3")
    expect(StabilityTracker.itemsIn(fresh, "L3")).toEqual([])
  })

  it("itemsIn is ordered by key, history by index", () => {
    const items = [item("history:10"), item("history:9"), item("file:z.ts"), item("file:a.ts"), item("url:b")]
    const { tracker } = StabilityTracker.update(make(), { items })
    expect(keysIn(tracker, "active")).toEqual(["file:a.ts", "file:z.ts", "history:9", "history:10", "url:b"])
  })

  it("a key repeated in one request counts once (the first occurrence)", () => {
    const { tracker } = repeat(make(), [item("file:a.ts", "x"), item("file:a.ts", "y")], 2)
    expect(StabilityTracker.get(tracker, "file:a.ts")).toMatchObject({ hash: "x", n: 1 })
  })

  it("remove and purgeHistory report removals", () => {
    let { tracker } = repeat(make(), [item("file:a.ts"), item("history:0"), item("history:1"), item("tree")], 4)
    const removed = StabilityTracker.remove(tracker, ["file:a.ts", "file:unknown.ts"])
    expect(removed.changes).toEqual([{ key: "file:a.ts", from: "L3", to: null, reason: "not in request" }])
    tracker = removed.tracker
    const purged = StabilityTracker.purgeHistory(tracker)
    expect(purged.changes).toEqual([
      { key: "history:0", from: "L3", to: null, reason: "purged" },
      { key: "history:1", from: "L3", to: null, reason: "purged" }
    ])
    expect(keysIn(purged.tracker, "L3")).toEqual([])
    expect(keysIn(purged.tracker, "L2")).toEqual(["tree"])
    expect(StabilityTracker.purgeHistory(purged.tracker).changes).toEqual([])
  })

  it("updates never mutate the state they were given", () => {
    const t0 = repeat(make(), [item("file:a.ts")], 3).tracker
    const copy = new Map(t0.items)
    StabilityTracker.update(t0, { items: [item("file:a.ts", "changed")] })
    StabilityTracker.remove(t0, ["file:a.ts"])
    expect(t0.items).toEqual(copy)
  })
})
