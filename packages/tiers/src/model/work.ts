/**
 * The mutable workspace of one update. `StabilityTracker.update` fills a fresh item map
 * in it from the request, hands it to the promotion policy and freezes the result;
 * nothing outside one update ever sees it mutate.
 */
import type { CachedTier, ChangeReason, Item, ItemKey, Tier, TierChange, TrackedItem } from "@strata/core"
import type { ResolvedConfig } from "./config.ts"
import { compareKeys, kindOf, rankOf } from "./order.ts"

/** Why a cached tier's bytes change: only history moved (`history`) or anything else (`other`). */
export type BreakCause = "history" | "other"

/** Tiers rewritten by `remove`/`purgeHistory` since the last update, carried into the next one. */
export type PendingBreaks = Readonly<Partial<Record<CachedTier, BreakCause>>>

const SYMBOL = "symbol:"
const FILE = "file:"

/** True for a `symbol:` key whose file is selected (`file:` tracked): it is in no tier and never promoted. */
export const isHiddenIn = (items: ReadonlyMap<string, TrackedItem>, key: string): boolean =>
  key.startsWith(SYMBOL) && items.has(FILE + key.slice(SYMBOL.length))

/**
 * The hidden symbol entries among `items`, found from the `file:` keys in `fileKeys`
 * (default: all keys; every key in `fileKeys` must be tracked in `items`).
 */
export const hiddenSymbols = (items: ReadonlyMap<string, TrackedItem>, fileKeys: Iterable<string> = items.keys()): ReadonlySet<string> => {
  const hidden = new Set<string>()
  for (const key of fileKeys) {
    if (!key.startsWith(FILE)) continue
    const symbol = SYMBOL + key.slice(FILE.length)
    if (items.has(symbol)) hidden.add(symbol)
  }
  return hidden
}

/**
 * How `StabilityTracker.update` starts a work instead of copying `before`: the map and
 * list it fills itself, and what it already knows of the state before.
 */
export interface UpdateStart {
  /** The new state's map, empty: the caller fills it in one pass over the request. */
  readonly items: Map<string, TrackedItem>
  /** The caller's list of aged items (sized for the request, trimmed before `settle`). */
  readonly aged: Array<TrackedItem>
  /**
   * The hidden symbol entries of `before`, when known: the new state's are then derived
   * from the keys the request touched, the only ones whose selection can change.
   */
  readonly hiddenBefore: ReadonlySet<string> | undefined
}

const isRequestList = (present: ReadonlyMap<string, Item> | ReadonlyArray<Item>): present is ReadonlyArray<Item> => Array.isArray(present)

/**
 * The update in progress; policies read it and move items through it.
 *
 * Which tiers change bytes is settled in two steps. The request's own effects
 * (registrations, hash changes, removals, a symbol entry hidden or shown by its file's
 * selection) are compared against the state before the update in `settle`, so the
 * result does not depend on the order keys are visited. After that, every policy move
 * marks the two tiers it touches at once.
 */
export class UpdateWork {
  private readonly changeByKey = new Map<string, TierChange>()
  /** Per cached rank (L0..L3): changed for a reason other than history. */
  private readonly brokenOther = [false, false, false, false]
  /** Per cached rank: changed for any reason. */
  private readonly brokenAny = [false, false, false, false]
  /** Keys the request touched, judged in `settle`; undefined once settled. */
  private touched: Set<string> | undefined = new Set()
  /** Hidden symbol entries, fixed once the request is applied (policies never select files). */
  private hidden: ReadonlySet<string> | undefined
  private readonly hiddenBefore: ReadonlySet<string> | undefined
  readonly config: ResolvedConfig
  /** The state before this update. */
  readonly before: ReadonlyMap<string, TrackedItem>
  /** The new state's items, keyed by item key. */
  readonly items: Map<string, TrackedItem>
  private presentByKey: ReadonlyMap<string, Item> | undefined
  private readonly request: ReadonlyArray<Item>
  /** The request's `file:` keys. */
  readonly fileKeys: Array<string> = []
  /** The request's `history:` keys. */
  readonly historyKeys: Array<string> = []
  /**
   * The request's items that were tracked and unchanged, after aging: the only ones a
   * policy can promote in this update (new and changed items have N=0).
   */
  readonly aged: Array<TrackedItem>

  /**
   * `present` is the request, by key or as sent (then the first occurrence of a key
   * wins). The new state's items start as a copy of `before` unless `start` is given:
   * `StabilityTracker.update` passes an empty map and fills it in one pass over the
   * request, since copying every tracked item only to overwrite it costs more than the
   * update itself.
   */
  constructor(
    config: ResolvedConfig,
    before: ReadonlyMap<string, TrackedItem>,
    present: ReadonlyMap<string, Item> | ReadonlyArray<Item>,
    pending: PendingBreaks,
    start?: UpdateStart
  ) {
    this.config = config
    this.before = before
    this.items = start?.items ?? new Map(before)
    this.aged = start?.aged ?? []
    this.hiddenBefore = start?.hiddenBefore
    if (isRequestList(present)) {
      this.request = present
    } else {
      this.presentByKey = present
      this.request = []
    }
    for (const [tier, cause] of Object.entries(pending) as Array<[CachedTier, BreakCause]>) {
      this.markBroken(tier, cause === "history")
    }
  }

  /** This request's items by key (indexed on first read; no policy needs it). */
  get present(): ReadonlyMap<string, Item> {
    if (this.presentByKey === undefined) {
      const byKey = new Map<string, Item>()
      for (const item of this.request) if (!byKey.has(item.key)) byKey.set(item.key, item)
      this.presentByKey = byKey
    }
    return this.presentByKey
  }

  /** A symbol entry of a selected file: excluded from every tier and every policy. */
  isHidden(key: string): boolean {
    if (this.touched !== undefined) return isHiddenIn(this.items, key)
    this.hidden ??= hiddenSymbols(this.items, this.fileKeys)
    return this.hidden.size > 0 && this.hidden.has(key)
  }

  /** The hidden symbol entries of the new state (valid once the request is applied). */
  hiddenSymbols(): ReadonlySet<string> {
    this.hidden ??= hiddenSymbols(this.items, this.fileKeys)
    return this.hidden
  }

  /** Record that `tier`'s rendered bytes change in this request. */
  markBroken(tier: Tier, history: boolean): void {
    const rank = rankOf(tier)
    if (rank > 3) return
    this.brokenAny[rank] = true
    if (!history) this.brokenOther[rank] = true
  }

  /**
   * The rank of the most stable cached tier rewritten by this request (4 when none).
   * Provider caches are prefix caches, so that tier and every tier after it are written
   * again; moving items among them costs nothing extra. With `ignoreHistory`, tiers
   * changed only by history do not count (history piggyback must not feed on itself).
   */
  rewrittenFrom(ignoreHistory: boolean): number {
    const broken = ignoreHistory ? this.brokenOther : this.brokenAny
    const rank = broken.indexOf(true)
    return rank < 0 ? 4 : rank
  }

  /** Replace an item without moving it (N or tokens changed). */
  set(item: TrackedItem): void {
    this.items.set(item.key, item)
  }

  /** Replace an item's content in place (a new hash in the same tier). */
  rewrite(item: TrackedItem): void {
    this.items.set(item.key, item)
    this.touch(item.key)
  }

  /** Add a new item; registration is not reported as a change. */
  register(item: TrackedItem): void {
    this.items.set(item.key, item)
    this.touch(item.key)
  }

  /** Move an item to `to` with N `n`, reporting the move. */
  move(key: string, to: Tier, n: number, reason: ChangeReason, hash?: string, tokens?: number): TrackedItem {
    const old = this.items.get(key)
    if (old === undefined) throw new Error(`tracker: move of untracked ${key}`)
    const next: TrackedItem = { key: old.key, tier: to, n, hash: hash ?? old.hash, tokens: tokens ?? old.tokens }
    this.items.set(key, next)
    if (old.tier !== to) this.record(old.key, old.tier, to, reason)
    if (this.touched !== undefined) this.touch(key)
    else if (old.tier !== to) {
      const history = kindOf(key) === "history"
      this.markBroken(old.tier, history)
      this.markBroken(to, history)
    }
    return next
  }

  /** Remove an item, reporting the removal. */
  remove(key: string, reason: ChangeReason): void {
    const old = this.items.get(key)
    if (old === undefined) return
    this.items.delete(key)
    this.record(old.key, old.tier, null, reason)
    this.touch(key)
  }

  /** Judge the request's own effects against the state before it; policies run after this. */
  settle(): void {
    const touched = this.touched
    if (touched === undefined) return
    // From here on every tracked file is in the request (absent ones were just removed).
    this.touched = undefined
    for (const key of touched) {
      const was = this.before.get(key)
      const now = this.items.get(key)
      const wasTier = was !== undefined && !isHiddenIn(this.before, key) ? was.tier : undefined
      const nowTier = now !== undefined && !isHiddenIn(this.items, key) ? now.tier : undefined
      const history = kindOf(key) === "history"
      if (wasTier !== nowTier) {
        if (wasTier !== undefined) this.markBroken(wasTier, history)
        if (nowTier !== undefined) this.markBroken(nowTier, history)
      } else if (nowTier !== undefined && was?.hash !== now?.hash) {
        this.markBroken(nowTier, history)
      }
    }
    const hiddenBefore = this.hiddenBefore
    if (hiddenBefore !== undefined) {
      // Touching a file touches its symbol entry too, so the touched symbol keys are all
      // whose selection may have changed; every other entry keeps its state.
      let hidden: Set<string> | undefined
      for (const key of touched) {
        if (!key.startsWith(SYMBOL)) continue
        const now = this.items.has(key) && this.items.has(FILE + key.slice(SYMBOL.length))
        if (now === hiddenBefore.has(key)) continue
        hidden ??= new Set(hiddenBefore)
        if (now) hidden.add(key)
        else hidden.delete(key)
      }
      this.hidden = hidden ?? hiddenBefore
    }
  }

  /** This update's changes, one per key (consecutive moves collapse), ordered by key. */
  changes(): Array<TierChange> {
    return [...this.changeByKey.values()].sort((a, b) => compareKeys(a.key, b.key))
  }

  private touch(key: string): void {
    const touched = this.touched
    if (touched === undefined) return
    touched.add(key)
    // Selecting or deselecting a file hides or shows its symbol entry.
    if (key.startsWith(FILE)) touched.add(SYMBOL + key.slice(FILE.length))
  }

  private record(key: ItemKey, from: Tier, to: Tier | null, reason: ChangeReason): void {
    const earlier = this.changeByKey.get(key)
    if (earlier === undefined) {
      this.changeByKey.set(key, { key, from, to, reason })
      return
    }
    // A later step continues an earlier move (graduated, then promoted further): report the net move.
    if (earlier.from === to) this.changeByKey.delete(key)
    else this.changeByKey.set(key, { key, from: earlier.from, to, reason: to === null ? reason : earlier.reason })
  }
}
