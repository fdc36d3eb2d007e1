/**
 * What the computing stages hold: items as entries (key, content hash, rendered text,
 * tokens), lists of them per tier, and the symbol index's contribution. The state, the
 * layouts and the journal's memory are all made of these.
 */
import type { Counted } from "../../assembly/parts.ts"
import type { ItemKey } from "../../domain/Item.ts"
import type { Message } from "../../domain/Message.ts"
import type { CachedTier, Tier } from "../../domain/Tier.ts"
import type { TrackerSnapshot } from "../../services/Tracker.ts"

/** An item as a stage holds it: key, content hash, rendered text and its tokens. */
export interface Entry extends Counted {
  readonly key: ItemKey
  readonly hash: string
}
export interface FileEntry extends Entry {
  readonly path: string
  readonly content: string
}
export interface SymbolEntry extends Entry {
  readonly path: string
}
/**
 * A history item: one message, or a whole tool exchange (the assistant message with its
 * tool calls and the `tool` message answering them), item `history:<index>` where
 * `index` is its first message's. The stages hold, lay out and drop it whole, so a call
 * never lands apart from its result. `hash` covers the messages as the caller gave them;
 * a stage that rewrites `messages` (context editing, redaction) keeps it.
 */
export interface HistoryEntry extends Entry {
  readonly index: number
  readonly messages: ReadonlyArray<Message>
  /**
   * How a stage edited `messages` (context editing: the cleared call ids), absent or `""`
   * when they are as given. A layout that keeps rendered history (the journal) rewrites
   * an entry whose edit changed since it rendered it.
   */
  readonly edit?: string
}

/** Lists per tier. */
export type TierLists<A> = Readonly<Record<Tier, ReadonlyArray<A>>>
export type CachedTierLists<A> = Readonly<Record<CachedTier, ReadonlyArray<A>>>

export const emptyTierLists = <A>(): TierLists<A> => ({ L0: [], L1: [], L2: [], L3: [], active: [] })
export const emptyCachedTierLists = <A>(): CachedTierLists<A> => ({ L0: [], L1: [], L2: [], L3: [] })

/** Group values by tier, keeping their order. */
export const groupByTier = <A, T extends Tier>(values: ReadonlyArray<A>, tierOf: (a: A) => T, tiers: ReadonlyArray<T>): Readonly<Record<T, ReadonlyArray<A>>> => {
  const out = Object.fromEntries(tiers.map((t) => [t, [] as Array<A>])) as Record<T, Array<A>>
  for (const v of values) out[tierOf(v)].push(v)
  return out
}

/**
 * The tier an entry renders in: the tracker's tier, except that an entry whose content
 * hash differs from the tracked one renders as active already, because this request's
 * update sends it there (a changed hash demotes to active, docs/tiers.md). Its old tier is
 * rewritten once, in this request, instead of once now and again next request. A
 * placeholder hash (`""`) is accepted as unchanged. Undefined for untracked entries.
 */
export const renderTier = (tracker: TrackerSnapshot, entry: { readonly key: string; readonly hash: string }): Tier | undefined => {
  const tracked = tracker.get(entry.key)
  if (tracked === undefined) return undefined
  return tracked.hash !== "" && tracked.hash !== entry.hash ? "active" : tracked.tier
}

/** What the symbol index contributed to this request. */
export interface SymbolData {
  readonly legend: Counted
  /** Symbol blocks rendered per cached tier, sorted by path. */
  readonly tiers: CachedTierLists<SymbolEntry>
  /** Every file's symbol entry, rendered or not (files in context are tracked but not rendered). */
  readonly entries: ReadonlyArray<SymbolEntry>
  readonly tree: Entry | undefined
  /** Files that exist, for the tracker's stale-entry removal; undefined without an index. */
  readonly existingFiles: ReadonlySet<string> | undefined
  /** Paths of `entries`, most referenced first, when known: the order the map budget keeps and `inputLimit` sheds in. */
  readonly ranked?: () => ReadonlyArray<string>
}

export const NO_SYMBOLS: SymbolData = {
  legend: { text: "", tokens: 0 },
  tiers: emptyCachedTierLists(),
  entries: [],
  tree: undefined,
  existingFiles: undefined
}
