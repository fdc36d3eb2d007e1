/**
 * The repository map under a token budget: which files' symbol blocks a request shows
 * when the whole map (legend, file tree, blocks) is larger than its budget. Blocks are
 * chosen most referenced first. The choice depends on the map and the budget only, so a
 * map that fits is left as it is, and a cut map changes only when the repository does.
 */
import type { SymbolMapSnapshot } from "../../services/SymbolIndex.ts"

/**
 * Choose files for a budget. Files in `previous` that still exist are kept first
 * (dropping the lowest-ranked while over budget); then the remaining files are
 * added in rank order whenever they fit. The result is sorted by path.
 *
 * @example
 * ```ts
 * import { selectMapFiles } from "@strata/core"
 * const cost = (p: string) => ({ "a.ts": 50, "b.ts": 40, "c.ts": 30 })[p] ?? 0
 * selectMapFiles(["a.ts", "b.ts", "c.ts"], cost, 80) // ["a.ts", "c.ts"]
 * ```
 */
export const selectMapFiles = (
  ranked: ReadonlyArray<string>,
  cost: (path: string) => number,
  budget: number,
  previous: ReadonlySet<string> = new Set()
): Array<string> => {
  const kept = ranked.filter((p) => previous.has(p))
  let total = kept.reduce((sum, p) => sum + cost(p), 0)
  while (total > budget && kept.length > 0) total -= cost(kept.pop()!)
  const chosen = new Set(kept)
  fillInRankOrder(ranked.filter((path) => !chosen.has(path)), cost, budget, (path) => chosen.add(path), total)
  return [...chosen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The greedy fill every map cut uses: walk `ranked` and take each item whose cost fits in
 * what is left of `budget` after `taken` tokens (a block too large to fit leaves its room
 * to smaller ones after it). Returns the tokens taken in all.
 *
 * @example
 * ```ts
 * import { fillInRankOrder } from "@strata/core"
 * const cost = (p: string) => ({ "a.ts": 50, "b.ts": 40, "c.ts": 30 })[p] ?? 0
 * const taken: Array<string> = []
 * fillInRankOrder(["a.ts", "b.ts", "c.ts"], cost, 80, (p) => taken.push(p)) // 80
 * taken // ["a.ts", "c.ts"]
 * ```
 */
export const fillInRankOrder = <A>(
  ranked: Iterable<A>,
  cost: (item: A) => number,
  budget: number,
  take: (item: A) => void,
  taken = 0
): number => {
  let total = taken
  for (const item of ranked) {
    const c = cost(item)
    if (total + c > budget) continue
    take(item)
    total += c
  }
  return total
}

/**
 * The files with a symbol block, most referenced first: by incoming reference count (the
 * `←N` of each block: how many other files use it), ties by path. Counts change only for
 * the files an edit touches, so the order, and a cut map with it, stays put between
 * requests; a global score such as PageRank moves every file a little on every edit.
 *
 * @example
 * ```ts
 * import { mapRanking } from "@strata/core"
 * mapRanking({ symbolFiles: ["a.ts", "b.ts", "c.ts"], refCounts: new Map([["b.ts", 4], ["c.ts", 4]]) }) // ["b.ts", "c.ts", "a.ts"]
 * ```
 */
export const mapRanking = (map: Pick<SymbolMapSnapshot, "symbolFiles" | "refCounts">): ReadonlyArray<string> => {
  // Counts looked up once each: a 20,000-file map sorts in a few milliseconds.
  const files = map.symbolFiles
  const counts = files.map((path) => map.refCounts.get(path) ?? 0)
  const order = files.map((_, i) => i)
  order.sort((a, b) => counts[b]! - counts[a]! || (files[a]! < files[b]! ? -1 : files[a]! > files[b]! ? 1 : 0))
  return order.map((i) => files[i]!)
}

/** What `cutMap` decides from. */
export interface MapCutInput {
  /** Tokens each file's block adds to the request (with its separator), by path. */
  readonly blocks: ReadonlyMap<string, number>
  /** The files with a block, most referenced first (`mapRanking`); asked for only when the map does not fit. */
  readonly ranked: () => ReadonlyArray<string>
  readonly legendTokens: number
  /** The file tree's tokens (0 without a tree). */
  readonly treeTokens: number
  readonly budgetTokens: number
}

/** The map a budget allows. */
export interface MapCut {
  /** The files whose blocks are in; `undefined` when every block is (the map fits). */
  readonly files: ReadonlySet<string> | undefined
  /** True when the file tree takes more than half the budget (it is then left out). */
  readonly treeLeftOut: boolean
  /** The whole map's tokens: legend, tree and every block. */
  readonly mapTokens: number
  /** Files left out and their blocks' tokens. */
  readonly leftOutFiles: number
  readonly leftOutTokens: number
}

/**
 * What is left for symbol blocks when the map does not fit: the file tree stays if it
 * takes at most half the budget, and the legend always does. `cutMap`'s rule, shared with
 * the `symbolData` stage's incremental cut.
 *
 * @example
 * ```ts
 * import { blockRoom } from "@strata/core"
 * blockRoom({ legendTokens: 10, treeTokens: 20, budgetTokens: 110 }) // { treeLeftOut: false, room: 80 }
 * blockRoom({ legendTokens: 10, treeTokens: 60, budgetTokens: 110 }) // { treeLeftOut: true, room: 100 }
 * ```
 */
export const blockRoom = (input: Pick<MapCutInput, "legendTokens" | "treeTokens" | "budgetTokens">): { readonly treeLeftOut: boolean; readonly room: number } => {
  const treeLeftOut = input.treeTokens > 0 && input.treeTokens > input.budgetTokens / 2
  return { treeLeftOut, room: input.budgetTokens - input.legendTokens - (treeLeftOut ? 0 : input.treeTokens) }
}

/**
 * Cut the map to its budget. When the legend, the file tree and every block fit, nothing
 * is cut (and nothing is ranked). Otherwise the file tree stays if it takes at most half
 * the budget (it names every file, so the model can ask for any; the blocks carry the
 * structure), and the rest of the budget, after the legend, takes blocks in rank order,
 * each one that fits (`selectMapFiles`). Pure and deterministic.
 *
 * @example
 * ```ts
 * import { cutMap } from "@strata/core"
 * const blocks = new Map([["a.ts", 50], ["b.ts", 40], ["c.ts", 30]])
 * cutMap({ blocks, ranked: () => ["a.ts", "b.ts", "c.ts"], legendTokens: 10, treeTokens: 20, budgetTokens: 110 })
 * // { files: Set { "a.ts", "c.ts" }, treeLeftOut: false, mapTokens: 150, leftOutFiles: 1, leftOutTokens: 40 }
 * ```
 */
export const cutMap = (input: MapCutInput): MapCut => {
  let all = 0
  for (const tokens of input.blocks.values()) all += tokens
  const mapTokens = input.legendTokens + input.treeTokens + all
  if (mapTokens <= input.budgetTokens) return { files: undefined, treeLeftOut: false, mapTokens, leftOutFiles: 0, leftOutTokens: 0 }
  const { treeLeftOut, room } = blockRoom(input)
  const cost = (path: string): number => input.blocks.get(path) ?? 0
  const ranked = input.ranked().filter((path) => input.blocks.has(path))
  const chosen = new Set(selectMapFiles(ranked, cost, room))
  let kept = 0
  for (const path of chosen) kept += cost(path)
  return { files: chosen, treeLeftOut, mapTokens, leftOutFiles: input.blocks.size - chosen.size, leftOutTokens: all - kept }
}
