/**
 * `gated`: the threshold cascade, promoting only where the provider rewrites anyway.
 * An item moves up into a tier only when that tier is already rewritten by this
 * request (it, or a more stable tier, changed) or is empty, so promotions ride on
 * cache writes that happen regardless. Each tier keeps at least `cacheTargetTokens`
 * (anchoring); history joins L3 only by piggyback. Nothing is ever moved down.
 */
import { CACHED_TIERS, type TrackedItem } from "@strata/core"
import { compareKeys, kindOf, rankOf } from "../model/order.ts"
import { piggybackHistory } from "../internal/policies/history.ts"
import { SEED_PLACEMENT, type PromotionPolicy } from "./policy.ts"

const movable = (item: TrackedItem): boolean => item.key !== "system" && kindOf(item.key) !== "history"

/** Gate-and-anchor cascade with history piggyback. */
export const gatedPolicy: PromotionPolicy = {
  name: "gated",
  entryN: (tier, config) => config.thresholds[tier],
  agesAbsent: false,
  placement: SEED_PLACEMENT,
  promote: (work) => {
    const { thresholds, cacheTargetTokens: target } = work.config

    // Graduation into L3 is not gated: an item waiting for L3 to be rewritten could wait forever.
    for (const item of work.aged) {
      if (item.tier === "active" && item.n >= thresholds.L3 && movable(item) && !work.isHidden(item.key)) {
        work.move(item.key, "L3", thresholds.L3, "graduated")
      }
    }

    piggybackHistory(work, thresholds.L3)

    const members: Array<Array<TrackedItem>> = [[], [], [], []]
    for (const item of work.items.values()) {
      const rank = rankOf(item.tier)
      if (rank <= 3 && !work.isHidden(item.key)) members[rank]?.push(item)
    }

    // Arrivals enter with their tier's threshold as N, below the next threshold, so an
    // item climbs at most one tier per update; the passes only let arrivals unanchor more.
    for (let pass = 0; pass < CACHED_TIERS.length; pass++) {
      let moved = false
      for (let source = 3; source >= 1; source--) {
        const upper = source - 1
        const from = members[source] ?? []
        const into = members[upper] ?? []
        if (upper < work.rewrittenFrom(false) && into.length > 0) continue
        const tier = CACHED_TIERS[upper] ?? "L0"
        const need = thresholds[tier]
        const eligible: Array<TrackedItem> = []
        let fixed = 0
        for (const item of from) {
          if (movable(item) && item.n >= need) eligible.push(item)
          else fixed += item.tokens
        }
        if (eligible.length === 0) continue
        let movers = eligible
        if (target > 0 && fixed < target) {
          // Anchor the least seasoned items (lowest N) until the tier keeps `target` tokens.
          eligible.sort((a, b) => a.n - b.n || compareKeys(a.key, b.key))
          let kept = fixed
          let i = 0
          while (i < eligible.length && kept < target) kept += eligible[i++]?.tokens ?? 0
          movers = eligible.slice(i)
        }
        if (movers.length === 0) continue
        const leaving = new Set(movers.map((item) => item.key))
        members[source] = from.filter((item) => !leaving.has(item.key))
        for (const item of movers) into.push(work.move(item.key, tier, need, "promoted"))
        moved = true
      }
      if (!moved) break
    }
  }
}
