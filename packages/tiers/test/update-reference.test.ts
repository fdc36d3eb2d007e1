// Property test: the optimized `StabilityTracker.update` (a fresh map filled in one pass
// over the request) gives exactly what the straightforward reference in reference.ts
// gives (the request indexed in a Map, the item map copied whole), over random sessions
// for every policy: the same items, changes, pending breaks and tier listings after every
// step, with duplicate keys, absent items, stale files, token-only changes, removals,
// purges and save/load round trips mixed in.
import { TIERS, type Item, type ItemKey } from "@strata/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeTrackerFile, encodeTrackerFile, StabilityTracker, type PolicyName } from "../src/index.ts"
import { type TrackerResult } from "../src/StabilityTracker.ts"
import { referenceUpdate } from "./reference.ts"

const FILES = ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "f.ts"]
const KEYS: ReadonlyArray<ItemKey> = [
  ...FILES.map((f): ItemKey => `file:${f}`),
  ...FILES.map((f): ItemKey => `symbol:${f}`),
  ...Array.from({ length: 10 }, (_, i): ItemKey => `history:${i}`),
  "tree",
  "url:u0",
  "url:u1",
  "url:u2",
  "system"
]

type Step =
  | {
      readonly op: "update"
      readonly absent: ReadonlyArray<number>
      readonly changed: ReadonlyArray<number>
      readonly resized: ReadonlyArray<number>
      readonly duplicates: ReadonlyArray<{ readonly at: number; readonly of: number; readonly hash: boolean }>
      readonly existing: ReadonlyArray<string> | null
      readonly reversed: boolean
      readonly rotation: number
      readonly swaps: ReadonlyArray<readonly [number, number]>
    }
  | { readonly op: "remove"; readonly indices: ReadonlyArray<number> }
  | { readonly op: "purge" }
  | { readonly op: "initialize" }
  | { readonly op: "reload" }

const index = fc.nat(63)
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      op: fc.constant("update" as const),
      absent: fc.array(index, { maxLength: 4 }),
      changed: fc.array(index, { maxLength: 3 }),
      resized: fc.array(index, { maxLength: 2 }),
      duplicates: fc.array(fc.record({ at: index, of: index, hash: fc.boolean() }), { maxLength: 2 }),
      existing: fc.option(fc.subarray(FILES), { freq: 5 }),
      reversed: fc.boolean(),
      rotation: fc.nat(63),
      swaps: fc.array(fc.tuple(index, index), { maxLength: 3 })
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), indices: fc.array(index, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("purge" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("initialize" as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("reload" as const) }) }
)

const scenario = fc.record({
  universe: fc.uniqueArray(fc.record({ key: fc.constantFrom(...KEYS), tokens: fc.integer({ min: 1, max: 1500 }) }), {
    selector: (u) => u.key,
    minLength: 1,
    maxLength: KEYS.length
  }),
  steps: fc.array(step, { minLength: 1, maxLength: 60 }),
  l3: fc.integer({ min: 1, max: 3 }),
  gap: fc.integer({ min: 1, max: 3 }),
  cacheTargetTokens: fc.constantFrom(0, 0, 200, 900),
  historyWindowTokens: fc.option(fc.constantFrom(0, 150, 600), { nil: undefined })
})
type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

type Update = (tracker: StabilityTracker, input: Parameters<typeof StabilityTracker.update>[1]) => TrackerResult

const roundTrip = (tracker: StabilityTracker): StabilityTracker => {
  const decoded = decodeTrackerFile(encodeTrackerFile(tracker, 1))
  if (decoded._tag !== "File") throw new Error(JSON.stringify(decoded.problem))
  return StabilityTracker.restore(tracker.config, decoded.file)
}

/** Everything a caller can observe of a state and the step that produced it. */
const observe = (tracker: StabilityTracker, result: TrackerResult | undefined) => ({
  items: [...tracker.items.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  tiers: TIERS.map((tier) => StabilityTracker.itemsIn(tracker, tier).map((i) => i.key)),
  tokens: StabilityTracker.tokensByTier(tracker),
  pending: tracker.pending,
  initialized: tracker.initialized,
  changes: result?.changes ?? []
})

const run = (policy: PolicyName, s: Scenario, update: Update) => {
  let tracker = StabilityTracker.make({
    policy,
    thresholds: { L3: s.l3, L2: s.l3 + s.gap, L1: s.l3 + 2 * s.gap, L0: s.l3 + 3 * s.gap },
    cacheTargetTokens: s.cacheTargetTokens,
    ...(s.historyWindowTokens === undefined ? {} : { historyWindowTokens: s.historyWindowTokens })
  })
  const universe = s.universe
  const at = (i: number) => universe[i % universe.length]!
  const versions = new Map<string, number>()
  const sizes = new Map<string, number>()
  const current = (): Array<Item> =>
    universe.map((u) => ({ key: u.key, hash: `v${versions.get(u.key) ?? 0}`, tokens: sizes.get(u.key) ?? u.tokens }))
  const observed = []
  for (const st of s.steps) {
    let result: TrackerResult | undefined
    if (st.op === "update") {
      for (const i of st.changed) versions.set(at(i).key, (versions.get(at(i).key) ?? 0) + 1)
      for (const i of st.resized) sizes.set(at(i).key, (sizes.get(at(i).key) ?? at(i).tokens) + 17)
      const absent = new Set(st.absent.map((i) => at(i).key))
      // The request order changes too: the update walks the old state in its own order.
      let request = current().filter((item) => !absent.has(item.key))
      if (st.reversed) request.reverse()
      const cut = st.rotation % Math.max(1, request.length)
      request = [...request.slice(cut), ...request.slice(0, cut)]
      for (const [i, j] of st.swaps) {
        const a = request[i % Math.max(1, request.length)]
        const b = request[j % Math.max(1, request.length)]
        if (a !== undefined && b !== undefined) {
          request[i % request.length] = b
          request[j % request.length] = a
        }
      }
      // A repeated key: the first occurrence wins, whatever the later one says.
      for (const d of st.duplicates) {
        const of = request[d.of % Math.max(1, request.length)]
        if (of !== undefined) request.splice(d.at % (request.length + 1), 0, { key: of.key, hash: d.hash ? `${of.hash}!` : of.hash, tokens: of.tokens + 1 })
      }
      result = update(tracker, { items: request, existingFiles: st.existing === null ? undefined : new Set(st.existing) })
    } else if (st.op === "remove") {
      result = StabilityTracker.remove(tracker, st.indices.map((i) => at(i).key))
    } else if (st.op === "purge") {
      result = StabilityTracker.purgeHistory(tracker)
    } else if (st.op === "initialize") {
      result = StabilityTracker.initialize(tracker, { items: current() })
    } else {
      tracker = roundTrip(tracker)
    }
    if (result !== undefined) tracker = result.tracker
    observed.push(observe(tracker, result))
  }
  return observed
}

describe.each(["threshold", "gated", "flux"] as const)("the optimized update under %s", (policy) => {
  it("matches the straightforward reference step by step over 1,000 random sessions", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        expect(run(policy, s, StabilityTracker.update)).toEqual(run(policy, s, referenceUpdate))
      }),
      { numRuns: 1000 }
    )
  }, 180_000)
})
