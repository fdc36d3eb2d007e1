/**
 * What the `symbolData` stage keeps for its lifetime (a session), so a warm request does
 * work only for what changed since the last one: the entries of the symbol map, their
 * ranking, the map's budget cut, and the lists the stage hands on.
 *
 * - An entry whose block hash is unchanged is the previous request's entry object: its
 *   bytes are not re-read, re-sliced or re-counted, so an unchanged block renders
 *   byte-identically by construction.
 * - When the index says what changed since the snapshot the cache last saw
 *   (`SymbolMapSnapshot.delta`), only those paths are looked at; the entry list, the
 *   ranking and the cut are patched, not rebuilt. Without a delta (the first request, an
 *   index that does not track revisions, files added or removed) every file is compared.
 * - A tier whose entries are unchanged is the previous list, whose joined text
 *   `sectionOf` has memoized.
 */
import type { Counted } from "../../../assembly/parts.ts"
import { ItemKeys } from "../../../domain/Item.ts"
import type { CachedTier } from "../../../domain/Tier.ts"
import type { SymbolMapSnapshot } from "../../../services/SymbolIndex.ts"
import type { TokenCounter } from "../../../tokens/TokenCounter.ts"
import type { CachedTierLists, Entry, SymbolEntry } from "../../base/entries.ts"
import { fillInRankOrder } from "../mapBudget.ts"

/** The blocks a budget keeps (`SymbolSession.cut`). */
export interface KeptBlocks {
  /** The kept entries, in path order (`entries` itself when all fit). */
  readonly kept: ReadonlyArray<SymbolEntry>
  /** Their tokens, each block with its separator. */
  readonly tokens: number
}

export class SymbolSession {
  private counter: TokenCounter | undefined
  private map: SymbolMapSnapshot | undefined
  private revision: object | undefined
  private list: ReadonlyArray<SymbolEntry> = []
  private position = new Map<string, number>()
  private tokens = 0
  /** The fewest tokens of any entry (Infinity when none), for the cut's early stop. */
  private smallest = Infinity
  /** Positions in `list`, most referenced first (ties by path), with the count each was ranked by; built on first use. */
  private rank: { readonly order: Array<number>; readonly counts: Array<number> } | undefined
  private rankedPaths: ReadonlyArray<string> | undefined
  private lastCut: { readonly list: ReadonlyArray<SymbolEntry>; readonly room: number; readonly separator: number; readonly kept: KeptBlocks } | undefined
  private lists: CachedTierLists<SymbolEntry> | undefined
  private lastTree: Entry | undefined
  private lastLegend: Counted | undefined
  private lastFiles: { readonly list: ReadonlyArray<string>; readonly set: ReadonlySet<string> } | undefined

  /** Counts depend on the counter: a new one starts the cache over. */
  use(counter: TokenCounter): void {
    if (counter === this.counter) return
    this.counter = counter
    this.map = undefined
    this.revision = undefined
    this.list = []
    this.position = new Map()
    this.tokens = 0
    this.smallest = Infinity
    this.forgetRanking()
    this.lists = undefined
    this.lastTree = undefined
    this.lastLegend = undefined
  }

  /**
   * Bring the entries in step with a snapshot: each file's symbol entry, its text the
   * block without its trailing newline (blocks are joined by a blank line).
   */
  update(map: SymbolMapSnapshot, counter: TokenCounter): void {
    const revision = map.revision
    if (revision !== undefined && revision === this.revision) return
    const delta = map.delta
    const patched = this.revision !== undefined && delta !== undefined && delta.from === this.revision && this.patch(map, delta.paths, counter)
    if (!patched) this.rebuild(map, counter)
    this.map = map
    this.revision = revision
  }

  /** Every file's entry, in path order. */
  get entries(): ReadonlyArray<SymbolEntry> {
    return this.list
  }

  /** The entries' tokens (without separators). */
  get blockTokens(): number {
    return this.tokens
  }

  /** Paths of the entries, most referenced first (by `refCounts`, ties by path), as `mapRanking` orders them. */
  readonly ranked = (): ReadonlyArray<string> => {
    const list = this.list
    this.rankedPaths ??= this.ranking().order.map((i) => list[i]!.path)
    return this.rankedPaths
  }

  /**
   * The blocks a map cut keeps: in rank order, each block (with its separator) that fits
   * in what is left of `room` (`cutMap`'s rule, `fillInRankOrder`). Memoized while the
   * entries and the room are unchanged.
   */
  cut(room: number, separator: number): KeptBlocks {
    const last = this.lastCut
    if (last !== undefined && last.list === this.list && last.room === room && last.separator === separator) return last.kept
    const list = this.list
    const kept = greedyCut(list, this.ranking().order, room, separator, this.smallest)
    this.lastCut = { list, room, separator, kept }
    return kept
  }

  /**
   * The blocks that fit `room` taken in `order` (paths; unknown ones skipped), the same
   * greedy rule as `cut`, for a ranking given per request (`mapRanking: "focus"`).
   */
  cutInOrder(order: ReadonlyArray<string>, room: number, separator: number): KeptBlocks {
    const list = this.list
    const taken = new Uint8Array(list.length)
    const positions = order.flatMap((path) => this.position.get(path) ?? [])
    const tokens = fillInRankOrder(positions, (i) => list[i]!.tokens + separator, room, (i) => {
      taken[i] = 1
    })
    return { kept: list.filter((_, i) => taken[i] === 1), tokens }
  }

  tree(hash: string, text: string, counter: TokenCounter): Entry {
    if (this.lastTree?.hash !== hash) this.lastTree = { key: ItemKeys.tree, hash, text, tokens: counter.count(text) }
    return this.lastTree
  }

  legend(text: string, counter: TokenCounter): Counted {
    if (this.lastLegend?.text !== text) this.lastLegend = { text, tokens: counter.count(text) }
    return this.lastLegend
  }

  fileSet(files: ReadonlyArray<string>): ReadonlySet<string> {
    const last = this.lastFiles
    if (last !== undefined && (last.list === files || (last.list.length === files.length && files.every((f, i) => f === last.list[i])))) return last.set
    const set = new Set(files)
    this.lastFiles = { list: files, set }
    return set
  }

  /** The previous list of a tier when it holds the same entries, else the new one. */
  sameLists(lists: CachedTierLists<SymbolEntry>): CachedTierLists<SymbolEntry> {
    const previous = this.lists
    const same = (a: ReadonlyArray<SymbolEntry>, b: ReadonlyArray<SymbolEntry> | undefined) =>
      b !== undefined && a.length === b.length && a.every((e, i) => e === b[i])
    const pick = (t: CachedTier) => (same(lists[t], previous?.[t]) ? previous![t] : lists[t])
    const out: CachedTierLists<SymbolEntry> = { L0: pick("L0"), L1: pick("L1"), L2: pick("L2"), L3: pick("L3") }
    this.lists = out
    return out
  }

  /** Compare every file with the last entries (by block hash). */
  private rebuild(map: SymbolMapSnapshot, counter: TokenCounter): void {
    const list: Array<SymbolEntry> = []
    const position = new Map<string, number>()
    let tokens = 0
    for (const path of map.symbolFiles) {
      const hash = map.blockHash(path)
      if (hash === undefined) continue
      const at = this.position.get(path)
      const before = at === undefined ? undefined : this.list[at]
      const entry = before !== undefined && before.hash === hash ? before : entryOf(map, path, hash, counter)
      if (entry === undefined) continue
      position.set(path, list.length)
      list.push(entry)
      tokens += entry.tokens
    }
    this.list = list
    this.position = position
    this.tokens = tokens
    this.smallest = smallestOf(list)
    this.forgetRanking()
  }

  /**
   * Apply a delta: re-read the named paths only. False (nothing changed) when a path was
   * added or removed, or its block became empty: the caller rebuilds.
   */
  private patch(map: SymbolMapSnapshot, paths: ReadonlySet<string>, counter: TokenCounter): boolean {
    const changes: Array<{ readonly at: number; readonly entry: SymbolEntry }> = []
    for (const path of paths) {
      const at = this.position.get(path)
      const hash = map.blockHash(path)
      if (at === undefined || hash === undefined) return false
      if (this.list[at]!.hash === hash) continue
      const entry = entryOf(map, path, hash, counter)
      if (entry === undefined) return false
      changes.push({ at, entry })
    }
    if (changes.length === 0) return true
    const list = [...this.list]
    let smallest = this.smallest
    let recount = false
    for (const { at, entry } of changes) {
      const old = list[at]!.tokens
      this.tokens += entry.tokens - old
      if (entry.tokens < smallest) smallest = entry.tokens
      else if (old === smallest && entry.tokens > old) recount = true
      list[at] = entry
    }
    this.list = list
    this.smallest = recount ? smallestOf(list) : smallest
    this.rankedPaths = undefined
    // The ranking moves only the files whose count changed (a block shows its count).
    const rank = this.rank
    if (rank !== undefined) for (const { at, entry } of changes) rerank(rank, list, at, map.refCounts.get(entry.path) ?? 0)
    return true
  }

  private ranking(): { readonly order: Array<number>; readonly counts: Array<number> } {
    if (this.rank !== undefined) return this.rank
    const list = this.list
    const refCounts = this.map?.refCounts
    const counts = list.map((e) => refCounts?.get(e.path) ?? 0)
    const order = list.map((_, i) => i)
    order.sort((a, b) => before(counts, list, a, b))
    this.rank = { order, counts }
    return this.rank
  }

  private forgetRanking(): void {
    this.rank = undefined
    this.rankedPaths = undefined
    this.lastCut = undefined
  }
}

/** A file's entry from the snapshot, or undefined when its block is missing or empty. */
const entryOf = (map: SymbolMapSnapshot, path: string, hash: string, counter: TokenCounter): SymbolEntry | undefined => {
  const block = map.block(path)
  if (block === undefined) return undefined
  const text = block.endsWith("\n") ? block.slice(0, -1) : block
  if (text.length === 0) return undefined
  return { path, key: ItemKeys.symbol(path), hash, text, tokens: counter.count(text) }
}

/**
 * `fillInRankOrder` over positions (each block with its separator), stopping as soon as
 * what is left of `room` is smaller than the smallest block (`smallest`: the fewest
 * tokens of any entry): no later block can fit then, so the walk of the remaining
 * thousands of positions would take nothing. The kept entries are gathered from the
 * taken positions (sorted), not by filtering every entry.
 */
const greedyCut = (list: ReadonlyArray<SymbolEntry>, order: ReadonlyArray<number>, room: number, separator: number, smallest: number): KeptBlocks => {
  const taken: Array<number> = []
  let total = 0
  for (const i of order) {
    if (room - total < smallest + separator) break
    const cost = list[i]!.tokens + separator
    if (total + cost > room) continue
    taken.push(i)
    total += cost
  }
  taken.sort((a, b) => a - b)
  return { kept: taken.map((i) => list[i]!), tokens: total }
}

const smallestOf = (list: ReadonlyArray<SymbolEntry>): number => {
  let smallest = Infinity
  for (const e of list) if (e.tokens < smallest) smallest = e.tokens
  return smallest
}

/** Rank order: more references first, then by path. Negative when `a` goes first. */
const before = (counts: ReadonlyArray<number>, list: ReadonlyArray<SymbolEntry>, a: number, b: number): number => {
  const byCount = counts[b]! - counts[a]!
  if (byCount !== 0) return byCount
  const pa = list[a]!.path
  const pb = list[b]!.path
  return pa < pb ? -1 : pa > pb ? 1 : 0
}

/** Move one position to where its new count ranks it (a binary search in the rest). */
const rerank = (rank: { readonly order: Array<number>; readonly counts: Array<number> }, list: ReadonlyArray<SymbolEntry>, at: number, count: number): void => {
  if (rank.counts[at] === count) return
  const { order, counts } = rank
  order.splice(order.indexOf(at), 1)
  counts[at] = count
  let lo = 0
  let hi = order.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (before(counts, list, order[mid]!, at) < 0) lo = mid + 1
    else hi = mid
  }
  order.splice(lo, 0, at)
}
