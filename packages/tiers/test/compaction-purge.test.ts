// Reference pitfall 3 through core's `Tracker` service (what the history compactor calls):
// purging history after a compaction rewrites the tier that held it, and the freshly
// compacted history must not graduate into the cache on the next request because of
// that rewrite. Checked for every policy, with the cached prefix left where it was.
// Two guards make it hold: compacted messages come back as new entries (N=0, never
// graduated in the request that brings them), and a tier rewritten only because history
// left it does not open the history piggyback (the last test isolates that one).
import { type Item, type TierChange, Tracker } from "@strata/core"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { type PolicyName, TrackerLayer } from "../src/index.ts"
import { item } from "./helpers.ts"
import { it } from "@strata/test-support"

const symbols = (edit: number) => [
  item("system", "s", 600),
  item("symbol:src/a.ts", "a", 400),
  item("symbol:src/b.ts", "b", 300),
  // Edited now and then: rewrites the tier it sits in, which lets history piggyback.
  item("symbol:src/hot.ts", `hot${edit}`, 200)
]
const history = (count: number, salt = "") => Array.from({ length: count }, (_, i) => item(`history:${i}`, `m${salt}${i}`, 120))
// After compaction: a summary pair and the verbatim tail, all new content at indices 0..n.
const compacted = (count: number) => history(count, "compacted-")

/** One request: update from the committed state, then commit (the request succeeded). */
const turn = (items: ReadonlyArray<Item>) =>
  Effect.gen(function* () {
    const tracker = yield* Tracker
    const current = yield* tracker.current
    const base = current.initialized ? current : current.initialize({ items }).snapshot
    const next = base.update({ items })
    yield* tracker.commit(next.snapshot)
    return next.changes
  })

const historyIn = (changes: ReadonlyArray<TierChange>) => changes.filter((c) => c.key.startsWith("history:"))

const tiersOf = (keys: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const snapshot = yield* (yield* Tracker).current
    return Object.fromEntries(keys.map((k) => [k, snapshot.tierOf(k)]))
  })

describe.each(["gated", "flux", "threshold"] as const)("after a compaction purge (%s policy)", (policy: PolicyName) => {
  it.effect("the compacted history stays active on the next request, and the cached prefix does not move", () =>
    Effect.gen(function* () {
      const tracker = yield* Tracker
      // A conversation long enough that some history sits in a cached tier.
      // Two edits early on; by the end every symbol has settled, so only the purge can move anything.
      let edit = 0
      for (let t = 0; t < 14; t++) {
        if (t === 3 || t === 7) edit++
        yield* turn([...symbols(edit), ...history(2 + 2 * t)])
      }
      const before = yield* tracker.current
      const cachedHistory = ["L0", "L1", "L2", "L3"].flatMap((tier) => before.itemsIn(tier as "L0").filter((i) => i.key.startsWith("history:")))
      expect(cachedHistory.length).toBeGreaterThan(0)
      const symbolKeys = symbols(edit).map((i) => i.key)
      const prefix = yield* tiersOf(symbolKeys)

      // The compactor's purge: every history entry leaves, wherever it was.
      const purged = yield* tracker.purgeHistory
      expect(purged.every((c) => c.key.startsWith("history:") && c.to === null && c.reason === "purged")).toBe(true)
      expect(purged).toHaveLength(28)
      expect((yield* tracker.current).itemsIn("L3").some((i) => i.key.startsWith("history:"))).toBe(false)

      // The next request carries the compacted history: none of it graduates at once.
      const next = yield* turn([...symbols(edit), ...compacted(6)])
      expect(historyIn(next)).toEqual([])
      const after = yield* tracker.current
      for (let i = 0; i < 6; i++) expect(after.tierOf(`history:${i}`)).toBe("active")
      // Symbols and the system prompt stay in their tiers: the prefix before history holds.
      expect(yield* tiersOf(symbolKeys)).toEqual(prefix)
      if (policy !== "threshold") expect(next).toEqual([])
    }).pipe(Effect.provide(TrackerLayer.memory({ config: { policy, cacheTargetTokens: 300, historyWindowTokens: 300 } }))))

  it.effect("it graduates later only for the policy's own reasons", () =>
    Effect.gen(function* () {
      const tracker = yield* Tracker
      let edit = 0
      for (let t = 0; t < 10; t++) {
        if (t === 3) edit++
        yield* turn([...symbols(edit), ...history(2 + 2 * t)])
      }
      yield* tracker.purgeHistory
      const quiet: Array<ReadonlyArray<TierChange>> = []
      for (let t = 0; t < 3; t++) quiet.push(historyIn(yield* turn([...symbols(edit), ...compacted(6)])))
      // Three requests (N = 0, 1, 2): nothing graduates, under any policy.
      expect(quiet).toEqual([[], [], []])
      const fourth = historyIn(yield* turn([...symbols(edit), ...compacted(6)]))
      if (policy === "threshold") {
        // The seeds' cascade: N reaches the L3 threshold (3) on the fourth appearance.
        expect(fourth.map((c) => [c.key, c.to])).toEqual(Array.from({ length: 6 }, (_, i) => [`history:${i}`, "L3"]))
      } else {
        // Piggyback only: unchanged symbols rewrite no tier, so history waits...
        expect(fourth).toEqual([])
        // ...until a symbol edit rewrites L3; then history older than the window joins it.
        const withEdit = historyIn(yield* turn([...symbols(edit + 1), ...compacted(6)]))
        expect(withEdit.length).toBeGreaterThan(0)
        expect(withEdit.every((c) => c.from === "active" && c.to === "L3" && c.reason === "graduated")).toBe(true)
        expect(withEdit.map((c) => c.key)).not.toContain("history:5")
      }
    }).pipe(Effect.provide(TrackerLayer.memory({ config: { policy, cacheTargetTokens: 300, historyWindowTokens: 300 } }))))

  if (policy !== "threshold") {
    it.effect("a tier rewritten only because history left it does not pull the remaining history in", () =>
      Effect.gen(function* () {
        const tracker = yield* Tracker
        let edit = 0
        for (let t = 0; t < 14; t++) {
          if (t === 3 || t === 7) edit++
          yield* turn([...symbols(edit), ...history(2 + 2 * t)])
        }
        const snapshot = yield* tracker.current
        const cached = snapshot.itemsIn("L3").filter((i) => i.key.startsWith("history:")).map((i) => i.key)
        const waiting = snapshot.itemsIn("active").filter((i) => i.key.startsWith("history:") && i.n > 0)
        expect(cached.length).toBeGreaterThan(0)
        // Ripe active history older than the window exists: an L3 rewrite for any other reason would take it.
        expect(waiting.length).toBeGreaterThan(3)
        // Only the cached history leaves (L3 is rewritten because of history alone)...
        yield* tracker.remove(cached)
        const rest = history(28).filter((i) => !cached.includes(i.key))
        const next = yield* turn([...symbols(edit), ...rest])
        // ...so nothing graduates: history never feeds on itself.
        expect(historyIn(next)).toEqual([])
        // The same request with an edited symbol does take it (so this test can fail).
        const edited = historyIn(yield* turn([...symbols(edit + 1), ...rest]))
        expect(edited.length).toBeGreaterThan(0)
      }).pipe(Effect.provide(TrackerLayer.memory({ config: { policy, cacheTargetTokens: 300, historyWindowTokens: 300 } }))))
  }
})
