/**
 * Stage 3, `symbolData`: the symbol map within its budget, split by tier. A map larger
 * than its budget (`RequestLimits`' `mapTokens`, by default derived from the model's
 * input limit) keeps its most referenced blocks. On the first request it places the
 * symbol entries across the cached tiers from the reference graph (the tracker's
 * `initialize`, uncommitted until the request succeeds).
 */
import { Context, Effect, Layer } from "effect"
import { FILE_TREE_HEADER, REPO_MAP_HEADER } from "../../assembly/headers.ts"
import { SECTION_SEPARATOR, type Counted } from "../../assembly/parts.ts"
import { ItemKeys, type Item } from "../../domain/Item.ts"
import { CACHED_TIERS, type CachedTier } from "../../domain/Tier.ts"
import type { SymbolMapSnapshot } from "../../services/SymbolIndex.ts"
import type { TokenCounter } from "../../tokens/TokenCounter.ts"
import { groupByTier, NO_SYMBOLS, renderTier, type Entry, type SymbolData, type SymbolEntry } from "../entries.ts"
import { cutMap, mapRanking } from "../mapBudget.ts"
import type { MapLeftOut } from "../../breakdown/report.ts"
import { mapCutWarning, RequestLimits, resolveRequestLimits } from "../requestLimits.ts"
import type { AssemblyState, Stage } from "../state.ts"

/**
 * Replace this stage with `Layer.succeed(SymbolDataStage, myStage)`. The default uses the
 * `SymbolIndex` service when the context has one, and assembles without a symbol map
 * (with a warning) when it has none.
 */
export class SymbolDataStage extends Context.Service<SymbolDataStage, Stage>()("@strata/core/pipeline/SymbolData") {
  static readonly layer: Layer.Layer<SymbolDataStage> = Layer.sync(SymbolDataStage, () => makeSymbolData())
}

/**
 * The default stage over an index (or none). Symbol blocks render in their tracked tier;
 * untracked, changed and active entries (changed in the last turns) render with L3,
 * because the active block carries only full file content (seed 003) and L3 is where
 * they graduate to, so graduation moves no bytes.
 */
export const makeSymbolData = (): Stage => {
  const cache = new SessionCache()
  return {
    name: "symbolData",
    run: (state) =>
      Effect.gen(function* () {
        const index = state.services.symbolIndex
        if (state.input.useRepoMap === false) return splitByTier(state, NO_SYMBOLS, undefined, cache)
        if (index === undefined) {
          const warning = "No SymbolIndex service is provided, so the request has no symbol map; provide one or set useRepoMap: false."
          return splitByTier({ ...state, warnings: [...state.warnings, warning] }, NO_SYMBOLS, undefined, cache)
        }
        const map = yield* index.snapshot
        cache.use(state.counter)
        const tree: Entry | undefined = map.fileTree.length === 0
          ? undefined
          : cache.tree(map.fileTreeHash, map.fileTree, state.counter)
        const legend = cache.legend(map.legend, state.counter)
        const entries = cache.entries(map, state.counter)
        const limits = resolveRequestLimits(state.input.model, yield* RequestLimits)
        const ranked = () => mapRanking(map)
        const { kept, keptTree, leftOut } = withinBudget(entries, legend, tree, ranked, limits.mapTokens, state.counter)
        const data: SymbolData = {
          ...NO_SYMBOLS,
          legend,
          entries: kept,
          tree: keptTree,
          existingFiles: cache.fileSet(map.files),
          ranked
        }
        const cut: MapLeftOut = { ...leftOut, budget: limits.mapBudget }
        const warning = mapCutWarning(cut, limits)
        return splitByTier({
          ...state,
          leftOut: { ...state.leftOut, map: cut },
          warnings: warning === undefined ? state.warnings : [...state.warnings, warning]
        }, data, map, cache)
      })
  }
}

/**
 * The entries and tree a budget keeps. Every file's block counts, those of files in
 * context too (they are left out of the request, not of the budget), so selecting a file
 * never changes which other blocks the map shows.
 */
const withinBudget = (
  entries: ReadonlyArray<SymbolEntry>,
  legend: Counted,
  tree: Entry | undefined,
  ranked: () => ReadonlyArray<string>,
  budgetTokens: number,
  counter: TokenCounter
) => {
  const separator = counter.count(SECTION_SEPARATOR)
  const treeTokens = tree === undefined ? 0 : tree.tokens + counter.count(FILE_TREE_HEADER)
  // The legend goes under the map's header; both count, as the report's "legend" does.
  const legendTokens = legend.text === "" ? 0 : legend.tokens + counter.count(REPO_MAP_HEADER)
  let mapTokens = legendTokens + treeTokens
  for (const e of entries) mapTokens += e.tokens + separator
  // The usual case, a map within its budget: nothing to rank or cut.
  if (mapTokens <= budgetTokens) {
    return { kept: entries, keptTree: tree, leftOut: { budgetTokens, mapTokens, files: 0, fileTokens: 0, treeTokens: 0 } }
  }
  const blocks = new Map<string, number>()
  for (const e of entries) blocks.set(e.path, e.tokens + separator)
  const cut = cutMap({ blocks, ranked, legendTokens, treeTokens, budgetTokens })
  const files = cut.files
  return {
    kept: files === undefined ? entries : entries.filter((e) => files.has(e.path)),
    keptTree: cut.treeLeftOut ? undefined : tree,
    leftOut: {
      budgetTokens,
      mapTokens: cut.mapTokens,
      files: cut.leftOutFiles,
      fileTokens: cut.leftOutTokens,
      treeTokens: cut.treeLeftOut ? treeTokens : 0
    }
  }
}

/** First request: place the entries not in context; then split rendered entries by tier. */
const splitByTier = (state: AssemblyState, data: SymbolData, map: SymbolMapSnapshot | undefined, cache: SessionCache): AssemblyState => {
  const selected = new Set(state.files.map((f) => f.path))
  const placeable = selected.size === 0 ? data.entries : data.entries.filter((e) => !selected.has(e.path))
  let tracker = state.tracker
  let changes = state.changes
  if (!tracker.initialized) {
    const keys = new Set<string>(placeable.map((e) => e.key))
    const toItem = (e: SymbolEntry): Item => ({ key: e.key, hash: e.hash, tokens: e.tokens })
    const init = tracker.initialize({
      items: placeable.map(toItem),
      components: (map?.components ?? [])
        .map((c) => c.map(ItemKeys.symbol).filter((k) => keys.has(k)))
        .filter((c) => c.length > 0),
      refCounts: Object.fromEntries(placeable.map((e) => [e.key, map?.refCounts.get(e.path) ?? 0]))
    })
    tracker = init.snapshot
    changes = [...changes, ...init.changes]
  }
  const grouped = groupByTier(placeable, (e) => {
    const tier = renderTier(tracker, e)
    return tier === undefined || tier === "active" ? "L3" : tier
  }, CACHED_TIERS)
  return { ...state, tracker, changes, symbols: { ...data, tiers: cache.sameLists(grouped) } }
}

/**
 * What this stage keeps for its lifetime (a session), so a warm request does work only
 * for what changed: an entry whose block hash is unchanged is the previous request's
 * entry object (its bytes are not re-read, re-sliced or re-counted, so an unchanged item
 * renders byte-identically by construction), and a tier whose entries are unchanged is
 * the previous list, whose joined text `sectionOf` has memoized.
 */
class SessionCache {
  private counter: TokenCounter | undefined
  private byPath = new Map<string, SymbolEntry>()
  private lists: Readonly<Record<CachedTier, ReadonlyArray<SymbolEntry>>> | undefined
  private lastTree: Entry | undefined
  private lastLegend: Counted | undefined
  private lastFiles: { readonly list: ReadonlyArray<string>; readonly set: ReadonlySet<string> } | undefined

  /** Counts depend on the counter: a new one starts the cache over. */
  use(counter: TokenCounter): void {
    if (counter === this.counter) return
    this.counter = counter
    this.byPath = new Map()
    this.lists = undefined
    this.lastTree = undefined
    this.lastLegend = undefined
  }

  /** Each file's symbol entry; its text is the block without its trailing newline (blocks are joined by a blank line). */
  entries(map: SymbolMapSnapshot, counter: TokenCounter): ReadonlyArray<SymbolEntry> {
    const out: Array<SymbolEntry> = []
    for (const path of map.symbolFiles) {
      const hash = map.blockHash(path)
      if (hash === undefined) continue
      let entry = this.byPath.get(path)
      if (entry === undefined || entry.hash !== hash) {
        const block = map.block(path)
        if (block === undefined) continue
        const text = block.endsWith("\n") ? block.slice(0, -1) : block
        if (text.length === 0) continue
        entry = { path, key: ItemKeys.symbol(path), hash, text, tokens: counter.count(text) }
        this.byPath.set(path, entry)
      }
      out.push(entry)
    }
    // Forget files that left the map (rare: only when the counts disagree).
    if (this.byPath.size !== out.length) this.byPath = new Map(out.map((e) => [e.path, e]))
    return out
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
    const same = last !== undefined && (last.list === files || (last.list.length === files.length && files.every((f, i) => f === last.list[i])))
    if (!same) this.lastFiles = { list: files, set: new Set(files) }
    return this.lastFiles!.set
  }

  /** The previous list of a tier when it holds the same entries, else the new one. */
  sameLists(lists: Readonly<Record<CachedTier, ReadonlyArray<SymbolEntry>>>): Readonly<Record<CachedTier, ReadonlyArray<SymbolEntry>>> {
    const previous = this.lists
    const same = (a: ReadonlyArray<SymbolEntry>, b: ReadonlyArray<SymbolEntry> | undefined) =>
      b !== undefined && a.length === b.length && a.every((e, i) => e === b[i])
    const out = Object.fromEntries(CACHED_TIERS.map((t) => [t, same(lists[t], previous?.[t]) ? previous![t] : lists[t]])) as Record<CachedTier, ReadonlyArray<SymbolEntry>>
    this.lists = out
    return out
  }
}
