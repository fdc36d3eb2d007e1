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
import { CACHED_TIERS } from "../../domain/Tier.ts"
import type { SymbolMapSnapshot } from "../../services/SymbolIndex.ts"
import type { TokenCounter } from "../../tokens/TokenCounter.ts"
import { groupByTier, NO_SYMBOLS, renderTier, type Entry, type SymbolData, type SymbolEntry } from "../base/entries.ts"
import type { MapLeftOut } from "../../breakdown/report.ts"
import { blockRoom } from "./mapBudget.ts"
import { mapCutWarning, RequestLimits, resolveRequestLimits } from "../inputLimit/requestLimits.ts"
import type { AssemblyState, Stage } from "../base/state.ts"
import { SymbolSession } from "./internal/symbolSession.ts"

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
 * because the active block carries only full file content (docs/tiers.md) and L3 is where
 * they graduate to, so graduation moves no bytes.
 */
export const makeSymbolData = (): Stage => {
  const cache = new SymbolSession()
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
        cache.update(map, state.counter)
        const settings = yield* RequestLimits
        const limits = resolveRequestLimits(state.input.model, settings)
        // Ranked around the files in context when asked and the index can (asked for only when the map is over budget).
        const rankFor = map.rankFor
        const focusOrder = settings.mapRanking === "focus" && rankFor !== undefined
          ? () => rankFor({ files: (state.input.files ?? []).map((f) => f.path) })
          : undefined
        const { kept, keptTree, leftOut } = withinBudget(cache, legend, tree, limits.mapTokens, state.counter, focusOrder)
        const data: SymbolData = {
          ...NO_SYMBOLS,
          legend,
          entries: kept,
          tree: keptTree,
          existingFiles: cache.fileSet(map.files),
          ranked: cache.ranked
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
 * never changes which other blocks the map shows. The cut is `cutMap`'s, on the session's
 * ranking and entries (`SymbolSession.cut`), so a warm request patches rather than redoes it.
 */
const withinBudget = (
  session: SymbolSession,
  legend: Counted,
  tree: Entry | undefined,
  budgetTokens: number,
  counter: TokenCounter,
  focusOrder?: () => ReadonlyArray<string>
) => {
  const entries = session.entries
  const separator = counter.count(SECTION_SEPARATOR)
  const treeTokens = tree === undefined ? 0 : tree.tokens + counter.count(FILE_TREE_HEADER)
  // The legend goes under the map's header; both count, as the report's "legend" does.
  const legendTokens = legend.text === "" ? 0 : legend.tokens + counter.count(REPO_MAP_HEADER)
  const blockTokens = session.blockTokens + entries.length * separator
  const mapTokens = legendTokens + treeTokens + blockTokens
  // The usual case, a map within its budget: nothing to rank or cut.
  if (mapTokens <= budgetTokens) {
    return { kept: entries, keptTree: tree, leftOut: { budgetTokens, mapTokens, files: 0, fileTokens: 0, treeTokens: 0 } }
  }
  // The file tree stays if it takes at most half the budget; the rest, after the legend, takes blocks in rank order.
  const { treeLeftOut, room } = blockRoom({ legendTokens, treeTokens, budgetTokens })
  const { kept, tokens } = focusOrder === undefined ? session.cut(room, separator) : session.cutInOrder(focusOrder(), room, separator)
  return {
    kept,
    keptTree: treeLeftOut ? undefined : tree,
    leftOut: {
      budgetTokens,
      mapTokens,
      files: entries.length - kept.length,
      fileTokens: blockTokens - tokens,
      treeTokens: treeLeftOut ? treeTokens : 0
    }
  }
}

/** First request: place the entries not in context; then split rendered entries by tier. */
const splitByTier = (state: AssemblyState, data: SymbolData, map: SymbolMapSnapshot | undefined, cache: SymbolSession): AssemblyState => {
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
