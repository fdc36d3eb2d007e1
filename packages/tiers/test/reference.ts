// The straightforward tracker update, kept as the oracle for the optimized one: the
// request indexed in a Map, the whole item map copied into an `UpdateWork`, absent items
// found by probing the request for every tracked key. This is `StabilityTracker.update`
// as it was before the per-update work stopped copying the map (bench/tracker).
import { ItemKeys, type Item, type Tier, type TrackedItem, type TrackerUpdateInput } from "@strata/core"
import type { ResolvedTrackerConfig } from "../src/model/config.ts"
import { kindOf } from "../src/model/order.ts"
import type { PromotionPolicy } from "../src/policies/policy.ts"
import { PROMOTION_POLICIES, StabilityTracker, UpdateWork } from "../src/index.ts"
import { type TrackerResult } from "../src/StabilityTracker.ts"

const entryOf = (item: Item, config: ResolvedTrackerConfig, policy: PromotionPolicy): TrackedItem => {
  const kind = kindOf(item.key)
  const tier: Tier = kind === "symbol" || kind === "tree" ? "L3" : kind === "system" ? "L0" : "active"
  const n = tier === "active" ? 0 : policy.entryN(tier, config)
  return { key: item.key, tier, n, hash: item.hash, tokens: item.tokens }
}

/** `StabilityTracker.update`, the plain way (same rules, same policies, the map copied whole). */
export const referenceUpdate = (tracker: StabilityTracker, input: TrackerUpdateInput): TrackerResult => {
  const config = tracker.config
  const policy = PROMOTION_POLICIES[config.policy]

  const request = new Map<string, Item>()
  for (const item of input.items) if (!request.has(item.key)) request.set(item.key, item)
  // The four-argument constructor copies `before` into `work.items`.
  const work = new UpdateWork(config, tracker.items, request, tracker.pending)
  for (const key of request.keys()) {
    if (key.startsWith("file:")) work.fileKeys.push(key)
    else if (key.startsWith("history:")) work.historyKeys.push(key)
  }
  const existing = input.existingFiles

  for (const [key, old] of tracker.items) {
    if (request.has(key)) continue
    const kind = kindOf(key)
    if (existing !== undefined && (kind === "file" || kind === "symbol") && !existing.has(ItemKeys.subject(key))) {
      work.remove(key, "stale")
    } else if (kind === "file" || kind === "history") {
      work.remove(key, "not in request")
    } else if (policy.agesAbsent) {
      work.set({ key: old.key, tier: old.tier, n: old.n + 1, hash: old.hash, tokens: old.tokens })
    }
  }

  for (const [key, item] of request) {
    const old = tracker.items.get(key)
    if (old === undefined) {
      work.register(entryOf(item, config, policy))
    } else if (old.hash !== item.hash) {
      if (key === "system") work.rewrite({ ...old, n: 0, hash: item.hash, tokens: item.tokens })
      else work.move(key, "active", 0, "hash changed", item.hash, item.tokens)
    } else {
      const aged: TrackedItem = { key: old.key, tier: old.tier, n: old.n + 1, hash: old.hash, tokens: item.tokens }
      work.set(aged)
      work.aged.push(aged)
    }
  }

  work.settle()
  policy.promote(work)
  return { tracker: { config, initialized: tracker.initialized, items: work.items, pending: {} }, changes: work.changes() }
}
