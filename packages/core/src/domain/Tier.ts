/**
 * Tiers order content by stability. L0 is the most stable and sits first in the
 * request; `active` is uncached and sits last. Cached tiers each end on one breakpoint.
 */
import { Schema } from "effect"

/** All tiers, most stable first. */
export const TIERS = ["L0", "L1", "L2", "L3", "active"] as const

/** The cached tiers, most stable first. */
export const CACHED_TIERS = ["L0", "L1", "L2", "L3"] as const

/**
 * A stability tier.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tier } from "@strata/core"
 * Schema.decodeUnknownSync(Tier)("L2") // "L2"
 * ```
 */
export const Tier = Schema.Literals(TIERS)
export type Tier = typeof Tier.Type

/** A tier whose block is cached by the provider. */
export const CachedTier = Schema.Literals(CACHED_TIERS)
export type CachedTier = typeof CachedTier.Type

/** Default promotion thresholds (consecutive unchanged appearances) per cached tier. */
export const DEFAULT_THRESHOLDS: Readonly<Record<CachedTier, number>> = { L3: 3, L2: 6, L1: 9, L0: 12 }

/** Human names of the tiers, as the breakdown API and the HUD show them. */
export const TIER_NAMES: Readonly<Record<Tier, string>> = {
  L0: "Most Stable",
  L1: "Very Stable",
  L2: "Stable",
  L3: "Moderately Stable",
  active: "Active"
}

/** Rank of a tier: 0 for L0 up to 4 for active. Lower is more stable. */
export const tierRank = (tier: Tier): number => TIERS.indexOf(tier)

/** True when `tier` is one of L0-L3. */
export const isCachedTier = (tier: Tier): tier is CachedTier => tier !== "active"
