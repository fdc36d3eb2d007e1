/**
 * Initial placement (docs/tiers.md): on the first request,
 * spread items over the cached tiers so nothing starts in active and later promotions
 * start from a sensible shape. Pure: it returns a tier per key.
 */
import { CACHED_TIERS, ItemKeys, type CachedTier, type Item } from "@strata/core"
import { compareKeys } from "./model/order.ts"
import type { PlacementShares } from "./policies/policy.ts"

/** What `placeItems` needs besides the items. */
export interface PlacementOptions {
  /** Clusters of mutually referencing items (item keys), placed together. */
  readonly components?: ReadonlyArray<ReadonlyArray<string>> | undefined
  /** Incoming references by item key; used alone (percentile fallback) when no components are given. */
  readonly refCounts?: Readonly<Record<string, number>> | undefined
  readonly shares: PlacementShares
  /** Tiers left with fewer tokens than this are merged into another tier. 0 disables. */
  readonly cacheTargetTokens: number
}

interface Unit {
  readonly keys: ReadonlyArray<string>
  readonly tokens: number
  readonly refs: number
  /** 0 when the unit holds a symbol entry: symbol map entries are placed before files. */
  readonly group: number
  readonly first: string
}

const byUnit = (a: Unit, b: Unit): number =>
  a.group - b.group || b.tokens - a.tokens || b.refs - a.refs || compareKeys(a.first, b.first)

/**
 * Assign each item a cached tier.
 *
 * - With `components`: each component (and each remaining item alone) is a unit; units go,
 *   symbol entries first and largest first, to the tier with the most room relative to its
 *   token share (greedy bin-packing). Without components or reference counts, every item is
 *   its own unit (a greedy distribution).
 * - With only `refCounts`: items sorted by references (most first) fill the tiers by their
 *   item-count shares (the percentile fallback).
 *
 * @example
 * ```ts
 * import { placeItems, SEED_PLACEMENT } from "@strata/tiers"
 * placeItems([{ key: "symbol:a.ts", hash: "h", tokens: 100 }], { shares: SEED_PLACEMENT, cacheTargetTokens: 0 })
 * // Map { "symbol:a.ts" => "L1" }
 * ```
 */
export const placeItems = (items: ReadonlyArray<Item>, options: PlacementOptions): Map<string, CachedTier> => {
  if (options.components === undefined && options.refCounts !== undefined) {
    return byPercentile(items, options.refCounts, options.shares)
  }
  const tokens = new Map<string, number>()
  for (const item of items) tokens.set(item.key, Math.max(0, item.tokens))
  const refs = (key: string): number => options.refCounts?.[key] ?? 0
  const units: Array<Unit> = []
  const taken = new Set<string>()
  const unitOf = (keys: ReadonlyArray<string>): Unit => {
    const sorted = [...keys].sort(compareKeys)
    let sum = 0
    let refSum = 0
    let group = 1
    for (const key of sorted) {
      sum += tokens.get(key) ?? 0
      refSum += refs(key)
      if (ItemKeys.kind(key) === "symbol") group = 0
    }
    return { keys: sorted, tokens: sum, refs: refSum, group, first: sorted[0] ?? "" }
  }
  for (const component of options.components ?? []) {
    const keys = component.filter((key) => tokens.has(key) && !taken.has(key))
    for (const key of keys) taken.add(key)
    if (keys.length > 0) units.push(unitOf(keys))
  }
  for (const key of tokens.keys()) if (!taken.has(key)) units.push(unitOf([key]))
  units.sort(byUnit)
  return binPack(units, options.shares.tokens, options.cacheTargetTokens)
}

const binPack = (units: ReadonlyArray<Unit>, shares: PlacementShares["tokens"], target: number): Map<string, CachedTier> => {
  const tiers = CACHED_TIERS.filter((tier) => (shares[tier] ?? 0) > 0)
  const load = new Map<CachedTier, number>(tiers.map((tier) => [tier, 0]))
  const members = new Map<CachedTier, Array<string>>(tiers.map((tier) => [tier, []]))
  const fill = (tier: CachedTier): number => (load.get(tier) ?? 0) / (shares[tier] ?? 1)
  const roomiest = (candidates: ReadonlyArray<CachedTier>): CachedTier | undefined => {
    let best: CachedTier | undefined
    for (const tier of candidates) if (best === undefined || fill(tier) < fill(best)) best = tier
    return best
  }
  for (const unit of units) {
    const tier = roomiest(tiers)
    if (tier === undefined) break
    members.get(tier)?.push(...unit.keys)
    load.set(tier, (load.get(tier) ?? 0) + unit.tokens)
  }
  // A tier below the cache target buys nothing with its breakpoint: fold it into the
  // least filled other tier (the v1 tracker's rule), until every tier is worth one.
  if (target > 0) {
    for (;;) {
      const filled = tiers.filter((tier) => (members.get(tier)?.length ?? 0) > 0)
      if (filled.length <= 1) break
      const small = filled.filter((tier) => (load.get(tier) ?? 0) < target)
      let victim: CachedTier | undefined
      for (const tier of small) if (victim === undefined || (load.get(tier) ?? 0) < (load.get(victim) ?? 0)) victim = tier
      if (victim === undefined) break
      const into = roomiest(filled.filter((tier) => tier !== victim))
      if (into === undefined) break
      members.get(into)?.push(...(members.get(victim) ?? []))
      load.set(into, (load.get(into) ?? 0) + (load.get(victim) ?? 0))
      members.set(victim, [])
      load.set(victim, 0)
    }
  }
  const placed = new Map<string, CachedTier>()
  for (const [tier, keys] of members) for (const key of keys) placed.set(key, tier)
  return placed
}

const byPercentile = (items: ReadonlyArray<Item>, refCounts: Readonly<Record<string, number>>, shares: PlacementShares): Map<string, CachedTier> => {
  const keys = [...new Set(items.map((item) => item.key))].sort(
    (a, b) => (refCounts[b] ?? 0) - (refCounts[a] ?? 0) || compareKeys(a, b)
  )
  const tiers = CACHED_TIERS.filter((tier) => (shares.counts[tier] ?? 0) > 0)
  const total = tiers.reduce((sum, tier) => sum + (shares.counts[tier] ?? 0), 0)
  const placed = new Map<string, CachedTier>()
  let cumulative = 0
  let start = 0
  tiers.forEach((tier, i) => {
    cumulative += shares.counts[tier] ?? 0
    const end = i === tiers.length - 1 ? keys.length : Math.floor((keys.length * cumulative) / total)
    for (let j = start; j < end; j++) {
      const key = keys[j]
      if (key !== undefined) placed.set(key, tier)
    }
    start = Math.max(start, end)
  })
  return placed
}
