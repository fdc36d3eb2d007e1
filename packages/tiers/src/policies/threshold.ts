/**
 * `threshold`: the plain cascade. An item's tier follows its N alone: it enters
 * L3 when N reaches the L3 threshold and climbs one tier per threshold after that.
 * Simple and predictable, but every promotion rewrites the two tiers it touches.
 */
import { CACHED_TIERS, type CachedTier, type Tier } from "@strata/core"
import { rankOf } from "../model/order.ts"
import { SEED_PLACEMENT, type PromotionPolicy } from "./policy.ts"

const target = (n: number, thresholds: Readonly<Record<CachedTier, number>>): Tier => {
  for (const tier of CACHED_TIERS) if (n >= thresholds[tier]) return tier
  return "active"
}

/** The plain policy: promote whenever N reaches the next tier's threshold. */
export const thresholdPolicy: PromotionPolicy = {
  name: "threshold",
  entryN: (tier, config) => config.thresholds[tier],
  agesAbsent: false,
  placement: SEED_PLACEMENT,
  promote: (work) => {
    const thresholds = work.config.thresholds
    for (const item of work.aged) {
      if (item.key === "system" || work.isHidden(item.key)) continue
      const to = target(item.n, thresholds)
      if (rankOf(to) < rankOf(item.tier)) work.move(item.key, to, item.n, item.tier === "active" ? "graduated" : "promoted")
    }
  }
}
