/**
 * Stage 3, `symbolData`: the symbol map split by tier. On the first request it places
 * symbol entries across the cached tiers from the reference graph (the tracker's
 * `initialize`, uncommitted until the request succeeds).
 */
import { Context, Effect, Layer } from "effect"
import type { Counted } from "../assembly/tiered.ts"
import { ItemKeys, type Item } from "../domain/Item.ts"
import { CACHED_TIERS } from "../domain/Tier.ts"
import type { SymbolMapSnapshot } from "../services/SymbolIndex.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { groupByTier, NO_SYMBOLS, type AssemblyState, type Entry, type Stage, type SymbolEntry } from "./state.ts"

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
 * untracked entries and entries the tracker holds as active (changed in the last turns)
 * render with L3, because the active block carries only full file content (seed 003) and
 * L3 is where they graduate to, so graduation moves no bytes.
 */
export const makeSymbolData = (): Stage => {
  const memo = new TokenMemo()
  return {
    name: "symbolData",
    run: (state) =>
      Effect.gen(function* () {
        const index = state.services.symbolIndex
        if (state.input.useRepoMap === false) return splitByTier(state, NO_SYMBOLS, undefined)
        if (index === undefined) {
          const warning = "No SymbolIndex service is provided, so the request has no symbol map; provide one or set useRepoMap: false."
          return splitByTier({ ...state, warnings: [...state.warnings, warning] }, NO_SYMBOLS, undefined)
        }
        const map = yield* index.snapshot
        const entries = symbolEntries(map, memo, state.counter)
        const tree: Entry | undefined = map.fileTree.length === 0
          ? undefined
          : { key: ItemKeys.tree, hash: map.fileTreeHash, ...memo.counted(map.fileTreeHash, map.fileTree, state.counter) }
        const data = {
          ...NO_SYMBOLS,
          legend: { text: map.legend, tokens: state.counter.count(map.legend) },
          entries,
          tree,
          existingFiles: memo.fileSet(map.files)
        }
        return splitByTier(state, data, map)
      })
  }
}

/** Each file's symbol block, without its trailing newline (blocks are joined by a blank line). */
const symbolEntries = (map: SymbolMapSnapshot, memo: TokenMemo, counter: TokenCounter): ReadonlyArray<SymbolEntry> => {
  const out: Array<SymbolEntry> = []
  for (const path of map.symbolFiles) {
    const block = map.block(path)
    const hash = map.blockHash(path)
    if (block === undefined || hash === undefined) continue
    const text = block.endsWith("\n") ? block.slice(0, -1) : block
    if (text.length === 0) continue
    out.push({ path, key: ItemKeys.symbol(path), hash, ...memo.counted(hash, text, counter) })
  }
  return out
}

/** First request: place the entries not in context; then split rendered entries by tier. */
const splitByTier = (state: AssemblyState, data: typeof NO_SYMBOLS, map: SymbolMapSnapshot | undefined): AssemblyState => {
  const selected = new Set(state.files.map((f) => f.path))
  const placeable = data.entries.filter((e) => !selected.has(e.path))
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
  const tiers = groupByTier(placeable, (e) => {
    const tier = tracker.tierOf(e.key)
    return tier === undefined || tier === "active" ? "L3" : tier
  }, CACHED_TIERS)
  return { ...state, tracker, changes, symbols: { ...data, tiers } }
}

/**
 * Token counts of symbol blocks by their hash, for this stage's lifetime (a session), so
 * a warm request counts only changed blocks and never re-hashes the unchanged ones.
 */
class TokenMemo {
  private readonly tokens = new Map<string, number>()
  private lastFiles: { readonly list: ReadonlyArray<string>; readonly set: ReadonlySet<string> } | undefined

  private counter: TokenCounter | undefined

  counted(hash: string, text: string, counter: TokenCounter): Counted {
    if (counter !== this.counter) {
      this.tokens.clear()
      this.counter = counter
    }
    // The length guards against a renderer that changes bytes without changing the hash.
    const key = `${hash}:${text.length}`
    const known = this.tokens.get(key)
    if (known !== undefined) return { text, tokens: known }
    if (this.tokens.size >= 500_000) this.tokens.clear()
    const tokens = counter.count(text)
    this.tokens.set(key, tokens)
    return { text, tokens }
  }

  fileSet(files: ReadonlyArray<string>): ReadonlySet<string> {
    if (this.lastFiles?.list !== files) this.lastFiles = { list: files, set: new Set(files) }
    return this.lastFiles.set
  }
}
