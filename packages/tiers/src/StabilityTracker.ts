/**
 * The stability tracker's pure core: plain immutable data and synchronous functions.
 * It decides which tier every item lives in from how long the item has stayed
 * unchanged; the promotion policy (threshold, gated, flux) decides when items move up.
 */
import {
  ItemKeys,
  TIERS,
  type CachedTier,
  type InitialPlacementInput,
  type Item,
  type Tier,
  type TierChange,
  type TrackedItem,
  type TrackerUpdateInput
} from "@strata/core"
import { resolveTrackerConfig, type PolicyName, type ResolvedTrackerConfig, type StabilityTrackerConfig } from "./model/config.ts"
import { compareKeys, kindOf } from "./model/order.ts"
import { placeItems } from "./tierPlacement.ts"
import { fluxPolicy } from "./policies/flux.ts"
import { gatedPolicy } from "./policies/gated.ts"
import type { PromotionPolicy } from "./policies/policy.ts"
import { thresholdPolicy } from "./policies/threshold.ts"
import { hiddenSymbols, isHiddenIn, UpdateWork, type PendingBreaks } from "./model/work.ts"

/**
 * The promotion policies by name.
 *
 * @example
 * ```ts
 * import { PROMOTION_POLICIES } from "@strata/tiers"
 * Object.keys(PROMOTION_POLICIES) // ["threshold", "gated", "flux"]
 * ```
 */
export const PROMOTION_POLICIES: Readonly<Record<PolicyName, PromotionPolicy>> = {
  threshold: thresholdPolicy,
  gated: gatedPolicy,
  flux: fluxPolicy
}

/**
 * Tracker state. Immutable: every operation returns a new value and leaves the old one
 * usable (a failed request simply drops the new state).
 */
export interface StabilityTracker {
  readonly config: ResolvedTrackerConfig
  /** False until `initialize` placed the first request's items. */
  readonly initialized: boolean
  /** Every tracked item by key, including symbol entries hidden by a selected file. */
  readonly items: ReadonlyMap<string, TrackedItem>
  /** Tiers rewritten by `remove`/`purgeHistory` since the last update. */
  readonly pending: PendingBreaks
}

/** The result of an operation: the new state and the moves it made. */
export interface TrackerResult {
  readonly tracker: StabilityTracker
  readonly changes: ReadonlyArray<TierChange>
}

type Index = Readonly<Record<Tier, ReadonlyArray<TrackedItem>>>
const indexes = new WeakMap<StabilityTracker, Index>()
// Known at the end of an update for free; other states find theirs by scanning keys.
const hiddenCache = new WeakMap<StabilityTracker, ReadonlySet<string>>()

// Tier lists are derived once per state and only when read; updates never pay for them.
const indexOf = (tracker: StabilityTracker): Index => {
  let index = indexes.get(tracker)
  if (index === undefined) {
    const lists: Record<Tier, Array<TrackedItem>> = { L0: [], L1: [], L2: [], L3: [], active: [] }
    const hidden = hiddenCache.get(tracker) ?? hiddenSymbols(tracker.items)
    for (const item of tracker.items.values()) {
      if (hidden.size === 0 || !hidden.has(item.key)) lists[item.tier].push(item)
    }
    for (const tier of TIERS) lists[tier].sort((a, b) => compareKeys(a.key, b.key))
    index = lists
    indexes.set(tracker, index)
  }
  return index
}

const policyOf = (tracker: StabilityTracker): PromotionPolicy => PROMOTION_POLICIES[tracker.config.policy]

/** Where a new item starts: files, history and URLs in active; symbol entries and the tree in L3; system in L0. */
const entryOf = (item: Item, config: ResolvedTrackerConfig, policy: PromotionPolicy): TrackedItem => {
  const kind = kindOf(item.key)
  const tier: Tier = kind === "symbol" || kind === "tree" ? "L3" : kind === "system" ? "L0" : "active"
  const n = tier === "active" ? 0 : policy.entryN(tier, config)
  return { key: item.key, tier, n, hash: item.hash, tokens: item.tokens }
}

/**
 * Create an empty tracker.
 *
 * @example
 * ```ts
 * import { StabilityTracker } from "@strata/tiers"
 * const tracker = StabilityTracker.make({ policy: "threshold", thresholds: { L3: 3, L2: 6, L1: 9, L0: 12 } })
 * ```
 */
const make = (config: StabilityTrackerConfig = {}): StabilityTracker => ({
  config: resolveTrackerConfig(config),
  initialized: false,
  items: new Map(),
  pending: {}
})

/** Rebuild a tracker from saved parts (persistence); the items are taken as they are. */
const restore = (
  config: ResolvedTrackerConfig,
  parts: { readonly initialized: boolean; readonly items: Iterable<TrackedItem>; readonly pending?: PendingBreaks | undefined }
): StabilityTracker => {
  const items = new Map<string, TrackedItem>()
  for (const item of parts.items) items.set(item.key, item)
  return { config, initialized: parts.initialized, items, pending: parts.pending ?? {} }
}

/**
 * Apply one request's items. New `file:`, `history:` and `url:` items enter active with
 * N=0; new `symbol:` entries and the `tree` enter L3, `system` L0. An unchanged item
 * ages; a changed hash resets N and moves the item to active (`system` stays in L0).
 * `file:` and `history:` keys absent from the request leave the tracker; other kinds
 * keep their tier. With `existingFiles`, `file:`/`symbol:` entries of other paths are
 * removed as stale. While a file is selected (its `file:` item in the request), its
 * `symbol:` entry is in no tier: its hash and N are still followed, but it never moves
 * up, and it reappears in the tier it holds when the file is deselected. Then the
 * policy promotes. `changes` holds this update's moves only.
 *
 * @example
 * ```ts
 * import { StabilityTracker } from "@strata/tiers"
 * let tracker = StabilityTracker.make()
 * for (let i = 1; i <= 4; i++) {
 *   const result = StabilityTracker.update(tracker, { items: [{ key: "file:a.ts", hash: "h1", tokens: 120 }] })
 *   tracker = result.tracker
 * }
 * StabilityTracker.tierOf(tracker, "file:a.ts") // "L3" (update 4)
 * ```
 */
const update = (tracker: StabilityTracker, input: TrackerUpdateInput): TrackerResult => {
  const config = tracker.config
  const policy = policyOf(tracker)
  const before = tracker.items
  // The new state is built in a fresh map, in one pass over the request: one lookup in
  // the old state and one insertion per item, never a copy of the whole old map.
  const items = new Map<string, TrackedItem>()
  // Sized for the request up front: growing a list of 50,000 by push leaves megabytes of
  // garbage behind per update.
  const aged = new Array<TrackedItem>(input.items.length)
  let agedCount = 0
  const work = new UpdateWork(config, before, input.items, tracker.pending, { items, aged, hiddenBefore: hiddenCache.get(tracker) })
  const olds = new OldEntries(before)
  let tracked = 0

  for (const item of input.items) {
    const key = item.key
    const size = items.size
    const old = olds.find(key)
    if (old === undefined) {
      work.register(entryOf(item, config, policy))
    } else {
      tracked++
      if (old.hash === item.hash) {
        const next: TrackedItem = { key: old.key, tier: old.tier, n: old.n + 1, hash: old.hash, tokens: item.tokens }
        work.set(next)
        aged[agedCount++] = next
      } else if (key === "system") {
        // The system prompt always renders at the head of L0; a new one rewrites L0 in place.
        work.rewrite({ ...old, n: 0, hash: item.hash, tokens: item.tokens })
      } else {
        // Put the old entry in place so the work reports the move from its tier.
        work.set(old)
        work.move(key, "active", 0, "hash changed", item.hash, item.tokens)
      }
    }
    // Every first occurrence of a key adds one entry. A repeated key does not: the first
    // occurrence wins, so start again from the request without repeats (rare; this keeps
    // the common path free of a per-item membership test).
    if (items.size === size) return update(tracker, { ...input, items: firstOccurrences(input.items) })
    if (key.startsWith("file:")) work.fileKeys.push(key)
    else if (key.startsWith("history:")) work.historyKeys.push(key)
  }

  // Tracked keys the request left out; none when it named every one of them.
  if (tracked < before.size) {
    const existing = input.existingFiles
    for (const old of olds.unmatched()) {
      const key = old.key
      if (items.has(key)) continue
      const kind = kindOf(key)
      if (existing !== undefined && (kind === "file" || kind === "symbol") && !existing.has(ItemKeys.subject(key))) {
        work.set(old)
        work.remove(key, "stale")
      } else if (kind === "file" || kind === "history") {
        work.set(old)
        work.remove(key, "not in request")
      } else if (policy.agesAbsent) {
        work.set({ key: old.key, tier: old.tier, n: old.n + 1, hash: old.hash, tokens: old.tokens })
      } else {
        work.set(old)
      }
    }
  }

  aged.length = agedCount
  work.settle()
  policy.promote(work)

  const next: StabilityTracker = { config, initialized: tracker.initialized, items, pending: {} }
  hiddenCache.set(next, work.hiddenSymbols())
  return { tracker: next, changes: work.changes() }
}

/**
 * The old entry of each request key, found by walking the old state in its own order.
 * The old map was built in the previous request's order and requests keep their order
 * (system, symbol entries, tree, files, history, URLs), so the entry for the next key is
 * usually the next one in the walk: a sequential read where a hash lookup into a map of
 * 50,000 entries is a cache miss. A key out of step is looked up by hash, and the walk
 * skips ahead to it when it lies a little further on (entries the request left out);
 * skipping scans at most as many entries as the old state holds, so a request in any
 * order costs at most one more pass than plain lookups.
 */
class OldEntries {
  private readonly before: ReadonlyMap<string, TrackedItem>
  private readonly order: ReadonlyArray<TrackedItem>
  /** 1 at the positions the walk handed out. */
  private readonly matched: Uint8Array
  private next = 0
  private window = 8
  private budget: number

  constructor(before: ReadonlyMap<string, TrackedItem>) {
    this.before = before
    this.order = Array.from(before.values())
    this.matched = new Uint8Array(this.order.length)
    this.budget = this.order.length
  }

  /** The old entry of `key`, or undefined for a new key. Call once per key. */
  find(key: string): TrackedItem | undefined {
    const order = this.order
    const at = order[this.next]
    if (at !== undefined && at.key === key) {
      this.matched[this.next++] = 1
      return at
    }
    const old = this.before.get(key)
    if (old === undefined || this.budget <= 0) return old
    const end = Math.min(order.length, this.next + 1 + this.window)
    for (let i = this.next + 1; i < end; i++) {
      if (order[i] === old) {
        this.matched[i] = 1
        this.next = i + 1
        this.window = 8
        return old
      }
    }
    // Not close by: moved, or behind a long run of left-out entries; look further next time.
    this.budget -= end - this.next
    this.window *= 2
    return old
  }

  /** The old entries the walk did not hand out (looked up by hash, or absent from the request). */
  *unmatched(): Generator<TrackedItem> {
    const order = this.order
    for (let i = 0; i < order.length; i++) if (this.matched[i] === 0) yield order[i] as TrackedItem
  }
}

/** The request without repeated keys (first occurrence kept). */
const firstOccurrences = (request: ReadonlyArray<Item>): Array<Item> => {
  const byKey = new Map<string, Item>()
  for (const item of request) if (!byKey.has(item.key)) byKey.set(item.key, item)
  return [...byKey.values()]
}

/** The tracked item for `key`, or undefined (also for the symbol entry of a selected file). */
const get = (tracker: StabilityTracker, key: string): TrackedItem | undefined => {
  // An updated state knows its hidden entries: a set lookup by the key itself instead of
  // building and hashing the `file:` key of every symbol asked for.
  const hidden = hiddenCache.get(tracker)
  if (hidden !== undefined) return hidden.has(key) ? undefined : tracker.items.get(key)
  return isHiddenIn(tracker.items, key) ? undefined : tracker.items.get(key)
}

/** The tier of `key`, or undefined when it is in no tier. */
const tierOf = (tracker: StabilityTracker, key: string): Tier | undefined => get(tracker, key)?.tier

/** The items of one tier, ordered by key (`history:` keys by index). */
const itemsIn = (tracker: StabilityTracker, tier: Tier): ReadonlyArray<TrackedItem> => indexOf(tracker)[tier]

/** Sum of tokens per tier. */
const tokensByTier = (tracker: StabilityTracker): Record<Tier, number> => {
  const sums: Record<Tier, number> = { L0: 0, L1: 0, L2: 0, L3: 0, active: 0 }
  for (const tier of TIERS) for (const item of itemsIn(tracker, tier)) sums[tier] += item.tokens
  return sums
}

const withPending = (pending: PendingBreaks, tier: Tier, history: boolean): PendingBreaks => {
  if (tier === "active") return pending
  const cause = pending[tier] === "other" || !history ? "other" : "history"
  return { ...pending, [tier]: cause }
}

const removeWhere = (
  tracker: StabilityTracker,
  pick: (key: string) => boolean,
  reason: "not in request" | "purged"
): TrackerResult => {
  const removed: Array<TrackedItem> = []
  for (const [key, item] of tracker.items) if (pick(key)) removed.push(item)
  if (removed.length === 0) return { tracker, changes: [] }
  const items = new Map(tracker.items)
  for (const item of removed) items.delete(item.key)
  // Judged against the state before and after all removals, so the order keys are visited never matters.
  let pending = tracker.pending
  for (const item of removed) {
    if (!isHiddenIn(tracker.items, item.key)) pending = withPending(pending, item.tier, kindOf(item.key) === "history")
    if (kindOf(item.key) === "file") {
      const symbol = items.get(`symbol:${ItemKeys.subject(item.key)}`)
      if (symbol !== undefined) pending = withPending(pending, symbol.tier, false)
    }
  }
  const changes = removed
    .map((item): TierChange => ({ key: item.key, from: item.tier, to: null, reason }))
    .sort((a, b) => compareKeys(a.key, b.key))
  return { tracker: { ...tracker, items, pending }, changes }
}

/**
 * Remove items now (a file deselected before the request is built). The tiers they
 * leave count as rewritten in the next update. A removed `file:` lets its symbol entry
 * reappear in the tier it had earned.
 */
const remove = (tracker: StabilityTracker, keys: Iterable<string>): TrackerResult => {
  const set = new Set(keys)
  return removeWhere(tracker, (key) => set.has(key), "not in request")
}

/** Remove every `history:` entry (history cleared or compacted). */
const purgeHistory = (tracker: StabilityTracker): TrackerResult =>
  removeWhere(tracker, (key) => kindOf(key) === "history", "purged")

/**
 * First-request placement across the cached tiers, N set to each tier's threshold;
 * nothing starts in active. Symbol entries, the tree and selected files are placed
 * (see `placeItems`); `system` goes to L0; `history:` and `url:` items are left to
 * `update`. Already tracked keys keep their tier. A no-op once initialized; registrations
 * are not changes, so `changes` is empty.
 *
 * @example
 * ```ts
 * import { StabilityTracker } from "@strata/tiers"
 * const { tracker } = StabilityTracker.initialize(StabilityTracker.make(), {
 *   items: [
 *     { key: "symbol:src/a.ts", hash: "a", tokens: 300 },
 *     { key: "symbol:src/b.ts", hash: "b", tokens: 200 },
 *     { key: "tree", hash: "t", tokens: 100 }
 *   ]
 * })
 * StabilityTracker.tierOf(tracker, "symbol:src/a.ts") // "L0"
 * ```
 */
const initialize = (tracker: StabilityTracker, input: InitialPlacementInput): TrackerResult => {
  if (tracker.initialized) return { tracker, changes: [] }
  const config = tracker.config
  const policy = policyOf(tracker)
  const items = new Map(tracker.items)
  let pending = tracker.pending
  const selected = new Set<string>()
  for (const item of input.items) if (kindOf(item.key) === "file") selected.add(ItemKeys.subject(item.key))
  const placeable: Array<Item> = []
  for (const item of input.items) {
    if (items.has(item.key)) continue
    const kind = kindOf(item.key)
    if (kind === "system") {
      items.set(item.key, entryOf(item, config, policy))
      pending = withPending(pending, "L0", false)
    } else if (kind === "history" || kind === "url") {
      continue
    } else if (kind === "symbol" && selected.has(ItemKeys.subject(item.key))) {
      // Hidden behind its selected file; it registers in L3 once the file is deselected.
      continue
    } else {
      placeable.push(item)
    }
  }
  const placed = placeItems(placeable, {
    components: input.components,
    refCounts: input.refCounts,
    shares: policy.placement,
    cacheTargetTokens: config.cacheTargetTokens
  })
  for (const item of placeable) {
    const tier: CachedTier = placed.get(item.key) ?? "L3"
    items.set(item.key, { key: item.key, tier, n: config.thresholds[tier], hash: item.hash, tokens: item.tokens })
    pending = withPending(pending, tier, false)
  }
  return { tracker: { config, initialized: true, items, pending }, changes: [] }
}

/**
 * The pure stability tracker. All functions take and return plain immutable state.
 *
 * @example
 * ```ts
 * import { StabilityTracker } from "@strata/tiers"
 * const t0 = StabilityTracker.make({ policy: "gated", cacheTargetTokens: 1024 })
 * const { tracker, changes } = StabilityTracker.update(t0, { items: [{ key: "tree", hash: "x", tokens: 400 }] })
 * StabilityTracker.itemsIn(tracker, "L3") // [{ key: "tree", tier: "L3", n: 3, ... }]
 * ```
 */
export const StabilityTracker = {
  make,
  restore,
  update,
  get,
  tierOf,
  itemsIn,
  tokensByTier,
  remove,
  purgeHistory,
  initialize
} as const
