/**
 * Adapts the pure tracker to core's `TrackerSnapshot` contract, which assembly and the
 * pipeline use: a committed version, pure `update`/`initialize` that return
 * uncommitted snapshots, and the state kept reachable for the Layers that commit it.
 */
import { TIERS, type TrackerSnapshot } from "@strata/core"
import type { ResolvedConfig } from "./model/config.ts"
import { StabilityTracker } from "./StabilityTracker.ts"

const states = new WeakMap<TrackerSnapshot, StabilityTracker>()

/**
 * A snapshot of `tracker` at `version`. `baseVersion` is the committed version it was
 * derived from (equal to `version` for a committed snapshot); `update` and `initialize`
 * return snapshots with `baseVersion` unchanged and `version = baseVersion + 1`.
 *
 * @example
 * ```ts
 * import { StabilityTracker, toSnapshot } from "@strata/tiers"
 * const snapshot = toSnapshot(StabilityTracker.make(), 0)
 * const { snapshot: next } = snapshot.update({ items: [{ key: "file:a.ts", hash: "h", tokens: 10 }] })
 * next.baseVersion // 0
 * ```
 */
export const toSnapshot = (tracker: StabilityTracker, version: number, baseVersion: number = version): TrackerSnapshot => {
  const derive = (next: StabilityTracker): TrackerSnapshot =>
    next === tracker && version === baseVersion ? snapshot : toSnapshot(next, baseVersion + 1, baseVersion)
  const snapshot: TrackerSnapshot = {
    version,
    baseVersion,
    initialized: tracker.initialized,
    thresholds: tracker.config.thresholds,
    get: (key) => StabilityTracker.get(tracker, key),
    tierOf: (key) => StabilityTracker.tierOf(tracker, key),
    itemsIn: (tier) => StabilityTracker.itemsIn(tracker, tier),
    initialize: (input) => {
      const { tracker: next, changes } = StabilityTracker.initialize(tracker, input)
      return { snapshot: derive(next), changes }
    },
    update: (input) => {
      const { tracker: next, changes } = StabilityTracker.update(tracker, input)
      return { snapshot: derive(next), changes }
    }
  }
  states.set(snapshot, tracker)
  return snapshot
}

/**
 * The tracker state behind a snapshot. A snapshot built elsewhere (a stub, say) is
 * rebuilt from its visible items under `config`.
 *
 * @example
 * ```ts
 * import { resolveConfig, stateOf, StabilityTracker, toSnapshot } from "@strata/tiers"
 * const tracker = StabilityTracker.make()
 * stateOf(toSnapshot(tracker, 3), resolveConfig()) === tracker // true
 * ```
 */
export const stateOf = (snapshot: TrackerSnapshot, config: ResolvedConfig): StabilityTracker =>
  states.get(snapshot) ??
  StabilityTracker.restore(config, {
    initialized: snapshot.initialized,
    items: TIERS.flatMap((tier) => snapshot.itemsIn(tier))
  })
