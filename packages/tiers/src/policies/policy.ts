/**
 * The interface every promotion policy implements. A policy decides how N moves for
 * items the request did not change and which items move up; the rules every policy
 * shares (registration, hash changes, removals) live in `StabilityTracker.update`.
 */
import type { CachedTier } from "@strata/core"
import type { PolicyName, ResolvedTrackerConfig } from "../model/config.ts"
import type { UpdateWork } from "../model/work.ts"

/** How initial placement spreads items when this policy runs the tracker. */
export interface PlacementShares {
  /** Target share of tokens per tier; tiers absent here get nothing. */
  readonly tokens: Readonly<Partial<Record<CachedTier, number>>>
  /** Share of items per tier, most referenced first, for the percentile fallback. */
  readonly counts: Readonly<Partial<Record<CachedTier, number>>>
}

/** A promotion policy. */
export interface PromotionPolicy {
  readonly name: PolicyName
  /** N of an item registered straight into a cached tier (symbol entries, the tree, system). */
  readonly entryN: (tier: CachedTier, config: ResolvedTrackerConfig) => number
  /** True when items absent from the request age (N+1) as well. */
  readonly agesAbsent: boolean
  readonly placement: PlacementShares
  /** Move items up; only upward moves are allowed here. */
  readonly promote: (work: UpdateWork) => void
}

/** The default placement: equal token shares over L1-L3, and 20/30/50 % of items by references. */
export const SEED_PLACEMENT: PlacementShares = {
  tokens: { L1: 1, L2: 1, L3: 1 },
  counts: { L1: 0.2, L2: 0.3, L3: 0.5 }
}
