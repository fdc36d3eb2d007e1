// Property tests: random update sequences (at least 500 per policy) against the
// tracker's invariants. A run replays one sequence three times: plainly, again (the
// same sequence must give the same states and changes), and through a save/load round
// trip after every step (persistence must not change behaviour).
import { TIERS, tierRank, type Item, type ItemKey, type Tier, type TierChange } from "@strata/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decodeTrackerFile,
  encodeTrackerFile,
  StabilityTracker,
  type PolicyName,
  type StabilityTrackerConfig
} from "../src/index.ts"

const FILES = ["a.ts", "b.ts", "c.ts", "d.ts"]
const KEYS: ReadonlyArray<ItemKey> = [
  ...FILES.map((f): ItemKey => `file:${f}`),
  ...FILES.map((f): ItemKey => `symbol:${f}`),
  ...[0, 1, 2, 3, 4, 5].map((i): ItemKey => `history:${i}`),
  "tree",
  "url:u0",
  "url:u1",
  "system"
]

type Step =
  | { readonly op: "update"; readonly absent: ReadonlyArray<number>; readonly changed: ReadonlyArray<number>; readonly existing: ReadonlyArray<string> | null }
  | { readonly op: "remove"; readonly indices: ReadonlyArray<number> }
  | { readonly op: "purge" }
  | { readonly op: "initialize"; readonly components: ReadonlyArray<ReadonlyArray<number>> | null; readonly refs: boolean }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      op: fc.constant("update" as const),
      absent: fc.array(fc.nat(19), { maxLength: 3 }),
      changed: fc.array(fc.nat(19), { maxLength: 2 }),
      existing: fc.option(fc.subarray(FILES), { freq: 4 })
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), indices: fc.array(fc.nat(19), { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("purge" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("initialize" as const),
      components: fc.option(fc.array(fc.array(fc.nat(19), { maxLength: 4 }), { maxLength: 3 })),
      refs: fc.boolean()
    })
  }
)

const scenario = fc.record({
  universe: fc.uniqueArray(fc.record({ key: fc.constantFrom(...KEYS), tokens: fc.integer({ min: 1, max: 900 }) }), {
    selector: (u) => u.key,
    minLength: 1,
    maxLength: 14
  }),
  steps: fc.array(step, { minLength: 1, maxLength: 40 }),
  thresholds: fc.record({ l3: fc.integer({ min: 1, max: 3 }), gap: fc.integer({ min: 1, max: 3 }) }),
  cacheTargetTokens: fc.constantFrom(0, 0, 150, 600),
  historyWindowTokens: fc.option(fc.constantFrom(0, 100, 400), { nil: undefined })
})
type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

interface Observation {
  readonly items: ReadonlyArray<unknown>
  readonly changes: ReadonlyArray<TierChange>
}

const isHidden = (tracker: StabilityTracker, key: string) => key.startsWith("symbol:") && tracker.items.has(`file:${key.slice(7)}`)

const entryTier = (key: string): Tier =>
  key.startsWith("symbol:") || key === "tree" ? "L3" : key === "system" ? "L0" : "active"

/** A cheap assertion: these run thousands of times per property. */
const check = (ok: boolean, message: () => string): void => {
  if (!ok) throw new Error(message())
}
const show = (x: unknown) => JSON.stringify(x)

/** The invariants every policy keeps, checked around one update. */
const checkUpdate = (before: StabilityTracker, request: ReadonlyArray<Item>, after: StabilityTracker, changes: ReadonlyArray<TierChange>) => {
  // every tracked, visible key is in exactly one tier; hidden symbol entries are in none
  const seen = new Map<string, Tier>()
  for (const tier of TIERS) {
    for (const entry of StabilityTracker.itemsIn(after, tier)) {
      check(!seen.has(entry.key), () => `${entry.key} listed twice`)
      check(entry.tier === tier, () => `${entry.key} listed in ${tier} but in ${entry.tier}`)
      seen.set(entry.key, tier)
    }
  }
  let visible = 0
  for (const [key, entry] of after.items) {
    check((TIERS as ReadonlyArray<string>).includes(entry.tier), () => `${key} in tier ${entry.tier}`)
    check(Number.isInteger(entry.n) && entry.n >= 0, () => `n of ${key} is ${entry.n}`)
    if (isHidden(after, key)) {
      check(!seen.has(key) && StabilityTracker.tierOf(after, key) === undefined, () => `hidden ${key} is in a tier`)
    } else {
      visible++
      check(seen.get(key) === entry.tier, () => `${key} missing from itemsIn(${entry.tier})`)
    }
  }
  check(seen.size === visible, () => `itemsIn lists ${seen.size} keys, ${visible} are visible`)

  const requested = new Map(request.map((i) => [i.key as string, i]))
  const changedHash = (key: string) => {
    const was = before.items.get(key)
    const now = requested.get(key)
    return was !== undefined && now !== undefined && was.hash !== now.hash
  }

  // a changed hash always lands in active (system is pinned to L0)
  for (const key of requested.keys()) {
    if (!changedHash(key)) continue
    const tier = after.items.get(key)?.tier
    check(tier === (key === "system" ? "L0" : "active"), () => `${key} changed but is in ${tier}`)
  }

  // a new file, history or URL item enters active with N=0
  for (const key of requested.keys()) {
    if (before.items.has(key) || !/^(file|history|url):/.test(key)) continue
    const entry = after.items.get(key)
    check(entry?.tier === "active" && entry.n === 0, () => `new ${key} is ${show(entry)}`)
  }

  // nothing moves down except by a change, and the change log matches the state diff exactly
  const byKey = new Map<string, TierChange>()
  for (const change of changes) {
    check(!byKey.has(change.key), () => `two changes for ${change.key}`)
    byKey.set(change.key, change)
    if (change.to === null) check(change.reason === "not in request" || change.reason === "stale", () => `removal ${show(change)}`)
    else if (change.from !== null && tierRank(change.to) > tierRank(change.from)) check(change.reason === "hash changed", () => `down move ${show(change)}`)
    else if (change.from !== null) check(change.reason === "graduated" || change.reason === "promoted", () => `up move ${show(change)}`)
  }
  const keys = new Set([...before.items.keys(), ...after.items.keys()])
  for (const key of keys) {
    const was = before.items.get(key)
    const now = after.items.get(key)
    const change = byKey.get(key)
    if (was !== undefined && now !== undefined) {
      if (tierRank(now.tier) > tierRank(was.tier)) check(changedHash(key), () => `${key} moved down ${was.tier}->${now.tier}`)
      if (was.tier === now.tier) check(change === undefined, () => `spurious change ${show(change)}`)
      else check(change?.from === was.tier && change.to === now.tier, () => `${key} moved ${was.tier}->${now.tier}, reported ${show(change)}`)
    } else if (was !== undefined) {
      check(change?.from === was.tier && change.to === null, () => `${key} left ${was.tier}, reported ${show(change)}`)
    } else if (now !== undefined) {
      if (now.tier === entryTier(key)) check(change === undefined, () => `registration of ${key} reported ${show(change)}`)
      else check(change?.from === entryTier(key) && change.to === now.tier, () => `${key} entered ${now.tier}, reported ${show(change)}`)
    }
  }
}

const roundTrip = (tracker: StabilityTracker): StabilityTracker => {
  const decoded = decodeTrackerFile(encodeTrackerFile(tracker, 1))
  if (decoded._tag !== "File") throw new Error(JSON.stringify(decoded.problem))
  return StabilityTracker.restore(tracker.config, decoded.file)
}

/** Replay a scenario, checking invariants; returns what a caller could observe. */
const run = (policy: PolicyName, s: Scenario, options: { check: boolean; reload: boolean }): Array<Observation> => {
  const config: StabilityTrackerConfig = {
    policy,
    thresholds: { L3: s.thresholds.l3, L2: s.thresholds.l3 + s.thresholds.gap, L1: s.thresholds.l3 + 2 * s.thresholds.gap, L0: s.thresholds.l3 + 3 * s.thresholds.gap },
    cacheTargetTokens: s.cacheTargetTokens,
    ...(s.historyWindowTokens === undefined ? {} : { historyWindowTokens: s.historyWindowTokens })
  }
  let tracker = StabilityTracker.make(config)
  const versions = new Map<string, number>()
  const universe = s.universe
  const at = (i: number) => universe[i % universe.length]!.key
  const observed: Array<Observation> = []
  for (const st of s.steps) {
    const before = tracker
    let changes: ReadonlyArray<TierChange>
    if (st.op === "update") {
      for (const i of st.changed) versions.set(at(i), (versions.get(at(i)) ?? 0) + 1)
      const absent = new Set(st.absent.map(at))
      const request: Array<Item> = universe
        .filter((u) => !absent.has(u.key))
        .map((u) => ({ key: u.key, hash: `v${versions.get(u.key) ?? 0}`, tokens: u.tokens }))
      const result = StabilityTracker.update(before, { items: request, existingFiles: st.existing === null ? undefined : new Set(st.existing) })
      tracker = result.tracker
      changes = result.changes
      if (options.check) checkUpdate(before, request, tracker, changes)
    } else if (st.op === "remove") {
      const removed = st.indices.map(at)
      const result = StabilityTracker.remove(before, removed)
      tracker = result.tracker
      changes = result.changes
      if (options.check) {
        expect(changes.every((c) => c.to === null && c.reason === "not in request" && removed.includes(c.key))).toBe(true)
        expect(changes).toHaveLength(new Set(removed.filter((k) => before.items.has(k))).size)
        for (const key of removed) expect(tracker.items.has(key)).toBe(false)
      }
    } else if (st.op === "purge") {
      const result = StabilityTracker.purgeHistory(before)
      tracker = result.tracker
      changes = result.changes
      if (options.check) {
        expect([...tracker.items.keys()].some((k) => k.startsWith("history:"))).toBe(false)
        expect(changes.every((c) => c.to === null && c.reason === "purged")).toBe(true)
      }
    } else {
      const items = universe.map((u) => ({ key: u.key, hash: `v${versions.get(u.key) ?? 0}`, tokens: u.tokens }))
      const result = StabilityTracker.initialize(before, {
        items,
        components: st.components === null ? undefined : st.components.map((c) => c.map(at)),
        refCounts: st.refs ? Object.fromEntries(universe.map((u, i) => [u.key, (i * 7) % 5])) : undefined
      })
      tracker = result.tracker
      changes = result.changes
      if (options.check && !before.initialized) {
        // nothing placed starts in active
        for (const [key, entry] of tracker.items) if (!before.items.has(key)) expect(entry.tier).not.toBe("active")
      }
    }
    if (options.reload) tracker = roundTrip(tracker)
    observed.push({ items: [...tracker.items.values()].sort((a, b) => (a.key < b.key ? -1 : 1)), changes })
  }
  return observed
}

describe.each(["threshold", "gated", "flux"] as const)("properties of the %s policy", (policy) => {
  it("keeps every invariant over 500 random update sequences, deterministically and across save/load", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const first = run(policy, s, { check: true, reload: false })
        expect(run(policy, s, { check: false, reload: false })).toEqual(first)
        expect(run(policy, s, { check: false, reload: true })).toEqual(first)
      }),
      { numRuns: 500 }
    )
  }, 180_000)
})

describe("threshold policy: tier is a function of N", () => {
  it("for items that only ever enter through active, tier = highest tier whose threshold N reached", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 60 }), (steps) => {
        let tracker = StabilityTracker.make({ policy: "threshold" })
        let version = 0
        for (const [present, change] of steps) {
          if (change) version++
          tracker = StabilityTracker.update(tracker, { items: present ? [{ key: "url:x", hash: `v${version}`, tokens: 10 }] : [] }).tracker
          const entry = tracker.items.get("url:x")
          if (entry === undefined) continue
          const expected: Tier = entry.n >= 12 ? "L0" : entry.n >= 9 ? "L1" : entry.n >= 6 ? "L2" : entry.n >= 3 ? "L3" : "active"
          expect(entry.tier).toBe(expected)
        }
      }),
      { numRuns: 500 }
    )
  })
})
