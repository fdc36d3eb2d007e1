// Small builders shared by the tests.
import type { Item, ItemKey, Tier } from "@strata/core"
import { StabilityTracker, type StabilityTrackerConfig } from "../src/index.ts"
import { type TrackerResult } from "../src/StabilityTracker.ts"

export const item = (key: ItemKey, hash = "h", tokens = 100): Item => ({ key, hash, tokens })

/** Run the same request `times` times; returns the final state and the tiers after each update. */
export const repeat = (
  tracker: StabilityTracker,
  items: ReadonlyArray<Item>,
  times: number,
  key?: string
): { tracker: StabilityTracker; tiers: Array<Tier | undefined>; results: Array<TrackerResult> } => {
  const tiers: Array<Tier | undefined> = []
  const results: Array<TrackerResult> = []
  for (let i = 0; i < times; i++) {
    const result = StabilityTracker.update(tracker, { items })
    tracker = result.tracker
    results.push(result)
    if (key !== undefined) tiers.push(StabilityTracker.tierOf(tracker, key))
  }
  return { tracker, tiers, results }
}

/** A tracker under the plain cascade (`threshold`, docs/tiers.md) unless the config names another policy. */
export const make = (config: StabilityTrackerConfig = {}): StabilityTracker => StabilityTracker.make({ policy: "threshold", ...config })

export const keysIn = (tracker: StabilityTracker, tier: Tier): Array<string> =>
  StabilityTracker.itemsIn(tracker, tier).map((i) => i.key)
