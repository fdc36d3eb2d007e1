/**
 * Ranking the map by what an agent is working on: Aider's personalised PageRank over
 * an identifier-level reference graph. Edges from focus files and edges naming focus
 * identifiers weigh more, private and very common names less; rank restarts at the
 * focus. Without a focus the global ranking stands. Pure and deterministic.
 */
import type { FileSymbols } from "./syntax/model.ts"
import type { ResolvedCall, ResolvedImports } from "./resolve.ts"

/** The part of a `SymbolMap` the ranking reads (declared here so indexer.ts can use this module). */
export interface RankableMap {
  readonly symbolFiles: ReadonlyArray<string>
  readonly ranked: ReadonlyArray<string>
  readonly symbols: (path: string) => FileSymbols | undefined
  readonly imports: (path: string) => ResolvedImports | undefined
  readonly calls: (path: string) => ReadonlyArray<ResolvedCall> | undefined
}

/** What the agent is working on. */
export interface Focus {
  /** Repository-relative paths of the files being edited or discussed. */
  readonly files?: ReadonlyArray<string>
  /** Identifiers mentioned (function, class, variable names). */
  readonly identifiers?: ReadonlyArray<string>
}

/** One reference of the identifier-level graph: `source` uses `name` defined in `target`, `count` times. */
export interface NamedReference {
  readonly source: string
  readonly target: string
  readonly name: string
  readonly count: number
}

/** What the personalised ranking reads: the files, their named references, and where each name is defined. */
export interface ReferenceData {
  /** Files with a symbol block, sorted. */
  readonly files: ReadonlyArray<string>
  /** Named references, sorted by source, target, name. */
  readonly references: ReadonlyArray<NamedReference>
  /** Top-level name → the number of files defining it. */
  readonly definitions: ReadonlyMap<string, number>
  /** File → its top-level names. */
  readonly names: ReadonlyMap<string, ReadonlyArray<string>>
  /** The global ranking (used when the focus is empty or matches nothing). */
  readonly global: ReadonlyArray<string>
}

/** Weights of the personalised ranking (Aider's, by default). */
export interface FocusWeights {
  /** Multiplier of an edge whose source is a focus file. Default 50. */
  readonly focusSource: number
  /** Multiplier of an edge naming a focus identifier. Default 10. */
  readonly focusName: number
  /** Multiplier of a long, descriptive name (8+ characters in camelCase, snake_case or kebab-case). Default 10. */
  readonly longName: number
  /** Multiplier of a private name (leading `_` or `#`). Default 0.1. */
  readonly privateName: number
  /** Multiplier of a name defined in more than `commonDefinitions` files. Default 0.1. */
  readonly commonName: number
  readonly commonDefinitions: number
  /** Weight of an import of a file without a named symbol. Default 0.5. */
  readonly bareImport: number
}

export const DEFAULT_FOCUS_WEIGHTS: FocusWeights = {
  focusSource: 50,
  focusName: 10,
  longName: 10,
  privateName: 0.1,
  commonName: 0.1,
  commonDefinitions: 5,
  bareImport: 0.5
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const dataCache = new WeakMap<RankableMap, ReferenceData>()
// One file's references, reused while the indexer reuses its resolved calls and imports
// (it does for every file an edit did not touch), so a refresh after one edit costs one file.
const fileCache = new WeakMap<ReadonlyArray<ResolvedCall>, { readonly imports: ResolvedImports | undefined; readonly refs: ReadonlyArray<NamedReference> }>()

const fileReferences = (path: string, calls: ReadonlyArray<ResolvedCall>, imports: ResolvedImports | undefined): ReadonlyArray<NamedReference> => {
  const cached = fileCache.get(calls)
  if (cached !== undefined && cached.imports === imports) return cached.refs
  const counts = new Map<string, number>()
  const add = (target: string, name: string): void => {
    if (path === target) return
    const key = `${target}\u0000${name}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  for (const call of calls) add(call.file, call.symbol === "" ? call.name : call.symbol)
  if (imports !== undefined) {
    for (const [, binding] of imports.bindings) {
      for (const file of binding.files) add(file, binding.symbol === "*" || binding.symbol === "default" ? "" : binding.symbol)
    }
    for (const target of imports.edges) add(target, "")
  }
  const refs = [...counts]
    .map(([key, count]) => {
      const cut = key.indexOf("\u0000")
      return { source: path, target: key.slice(0, cut), name: key.slice(cut + 1), count }
    })
    .sort((a, b) => byCodeUnit(a.target, b.target) || byCodeUnit(a.name, b.name))
  fileCache.set(calls, { imports, refs })
  return refs
}

const NO_CALLS: ReadonlyArray<ResolvedCall> = []

/**
 * The identifier-level reference data of a map (computed once per map and cached; each
 * file's part is reused across maps while the file's resolution is unchanged): resolved
 * calls and named imports become `source → target` references per name.
 */
export const referenceData = (map: RankableMap): ReferenceData => {
  const cached = dataCache.get(map)
  if (cached !== undefined) return cached
  const definitions = new Map<string, number>()
  const names = new Map<string, ReadonlyArray<string>>()
  const references: Array<NamedReference> = []
  for (const path of map.symbolFiles) {
    const own = [...new Set(map.symbols(path)?.symbols.map((s) => s.name) ?? [])].sort(byCodeUnit)
    names.set(path, own)
    for (const name of own) definitions.set(name, (definitions.get(name) ?? 0) + 1)
    for (const ref of fileReferences(path, map.calls(path) ?? NO_CALLS, map.imports(path))) references.push(ref)
  }
  const data: ReferenceData = { files: map.symbolFiles, references, definitions, names, global: map.ranked }
  dataCache.set(map, data)
  return data
}

const isPrivate = (name: string): boolean => name.startsWith("_") || name.startsWith("#")
const isDescriptive = (name: string): boolean =>
  name.length >= 8 && (/[a-z][A-Z]/.test(name) || /[A-Za-z0-9]_[A-Za-z0-9]/.test(name) || /[A-Za-z0-9]-[A-Za-z0-9]/.test(name))

/**
 * PageRank with a restart distribution over links in compressed rows (`offsets`,
 * `targets`, `weights`): rank flows along weighted edges and, with probability
 * `1 - damping` (and from dangling nodes), jumps back to `restart`. Node order and
 * sorted links make the float sums deterministic.
 */
const restartRank = (
  offsets: Int32Array,
  targets: Int32Array,
  weights: Float64Array,
  restart: Float64Array,
  damping = 0.85,
  iterations = 100,
  tolerance = 1e-10
): Float64Array => {
  const n = restart.length
  const outTotal = new Float64Array(n)
  for (let s = 0; s < n; s++) for (let e = offsets[s]!; e < offsets[s + 1]!; e++) outTotal[s]! += weights[e]!
  let rank = Float64Array.from(restart)
  let next = new Float64Array(n)
  for (let it = 0; it < iterations; it++) {
    let dangling = 0
    for (let i = 0; i < n; i++) if (outTotal[i] === 0) dangling += rank[i]!
    const jump = 1 - damping + damping * dangling
    for (let i = 0; i < n; i++) next[i] = jump * restart[i]!
    for (let s = 0; s < n; s++) {
      const total = outTotal[s]!
      if (total === 0) continue
      const share = (damping * rank[s]!) / total
      for (let e = offsets[s]!; e < offsets[s + 1]!; e++) next[targets[e]!]! += share * weights[e]!
    }
    let delta = 0
    for (let i = 0; i < n; i++) delta += Math.abs(next[i]! - rank[i]!)
    const previous = rank
    rank = next
    next = previous
    if (delta < tolerance) break
  }
  return rank
}

/** The reference data with paths as indices (computed once per `ReferenceData`). */
interface Indexed {
  readonly index: ReadonlyMap<string, number>
  readonly sources: Int32Array
  readonly targets: Int32Array
}
const indexedCache = new WeakMap<ReferenceData, Indexed>()
const indexed = (data: ReferenceData): Indexed => {
  let found = indexedCache.get(data)
  if (found === undefined) {
    const index = new Map(data.files.map((f, i) => [f, i]))
    const sources = new Int32Array(data.references.length)
    const targets = new Int32Array(data.references.length)
    data.references.forEach((ref, i) => {
      sources[i] = index.get(ref.source) ?? -1
      targets[i] = index.get(ref.target) ?? -1
    })
    found = { index, sources, targets }
    indexedCache.set(data, found)
  }
  return found
}

/**
 * The files with a symbol block ranked for `focus` (Aider's personalised ranking):
 * focus files first (they are what the agent has), then by personalised PageRank,
 * ties by path. With an empty focus, or one that names nothing in the map, the
 * global ranking is returned unchanged.
 *
 * @example
 * ```ts no-run
 * import { SymbolIndexer, focusRanking, referenceData } from "@strata/symbols"
 * const map = await (await SymbolIndexer.create(".")).refresh()
 * focusRanking(referenceData(map), { files: ["src/api.ts"], identifiers: ["retry"] }).slice(0, 10)
 * ```
 */
export const focusRanking = (data: ReferenceData, focus: Focus, weights: FocusWeights = DEFAULT_FOCUS_WEIGHTS): ReadonlyArray<string> => {
  const files = data.files
  const { index, sources, targets } = indexed(data)
  const focusFiles = new Set((focus.files ?? []).filter((f) => index.has(f)))
  const focusNames = new Set((focus.identifiers ?? []).filter((n) => n !== ""))
  const n = files.length
  const restart = new Float64Array(n)
  for (const f of focusFiles) restart[index.get(f)!]! += 1
  // A mentioned identifier points at the files that define it.
  if (focusNames.size > 0) {
    for (const [file, own] of data.names) {
      const i = index.get(file)
      if (i === undefined) continue
      for (const name of own) if (focusNames.has(name)) restart[i]! += 1 / Math.max(1, data.definitions.get(name) ?? 1)
    }
  }
  let total = 0
  for (let i = 0; i < n; i++) total += restart[i]!
  if (total === 0) return data.global
  for (let i = 0; i < n; i++) restart[i]! /= total
  // References are sorted by source, then target (path order is index order): merging
  // runs of one (source, target) pair gives the compressed rows directly.
  const weightOf = new Map<string, number>()
  const offsets = new Int32Array(n + 1)
  const linkTargets: Array<number> = []
  const linkWeights: Array<number> = []
  let row = 0
  for (let r = 0; r < data.references.length; r++) {
    const s = sources[r]!
    const t = targets[r]!
    if (s < 0 || t < 0) continue
    const ref = data.references[r]!
    let weight: number
    if (ref.name === "") {
      weight = weights.bareImport
    } else {
      let nameWeight = weightOf.get(ref.name)
      if (nameWeight === undefined) {
        nameWeight = 1
        if (focusNames.has(ref.name)) nameWeight *= weights.focusName
        if (isDescriptive(ref.name)) nameWeight *= weights.longName
        if (isPrivate(ref.name)) nameWeight *= weights.privateName
        if ((data.definitions.get(ref.name) ?? 0) > weights.commonDefinitions) nameWeight *= weights.commonName
        weightOf.set(ref.name, nameWeight)
      }
      weight = Math.sqrt(ref.count) * nameWeight
    }
    if (focusFiles.has(ref.source)) weight *= weights.focusSource
    while (row < s) offsets[++row] = linkTargets.length
    const last = linkTargets.length - 1
    if (last >= offsets[s]! && linkTargets[last] === t) linkWeights[last]! += weight
    else {
      linkTargets.push(t)
      linkWeights.push(weight)
    }
  }
  while (row < n) offsets[++row] = linkTargets.length
  const rank = restartRank(offsets, Int32Array.from(linkTargets), Float64Array.from(linkWeights), restart)
  // Focus files lead; the rest by score rounded so float noise never reorders ties.
  const keys = files.map((f, i) => (focusFiles.has(f) ? 2 : 0) + Number(rank[i]!.toPrecision(9)))
  const order = files.map((_, i) => i)
  // `files` is sorted, so index order is path order for ties.
  order.sort((a, b) => keys[b]! - keys[a]! || a - b)
  return order.map((i) => files[i]!)
}
