/**
 * Ranking the map by what an agent is working on: Aider's personalised PageRank over
 * an identifier-level reference graph. Edges from focus files and edges naming focus
 * identifiers weigh more, private and very common names less; rank restarts at the
 * focus. Without a focus the global ranking stands. Pure and deterministic.
 */
import type { SymbolMap } from "./indexer.ts"

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

const dataCache = new WeakMap<SymbolMap, ReferenceData>()

/**
 * The identifier-level reference data of a map (computed once per map and cached):
 * resolved calls and named imports become `source → target` references per name.
 */
export const referenceData = (map: SymbolMap): ReferenceData => {
  const cached = dataCache.get(map)
  if (cached !== undefined) return cached
  const counts = new Map<string, number>()
  const add = (source: string, target: string, name: string): void => {
    if (source === target) return
    const key = `${source}\u0000${target}\u0000${name}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const definitions = new Map<string, number>()
  const names = new Map<string, ReadonlyArray<string>>()
  for (const path of map.symbolFiles) {
    const own = [...new Set(map.symbols(path)?.symbols.map((s) => s.name) ?? [])].sort(byCodeUnit)
    names.set(path, own)
    for (const name of own) definitions.set(name, (definitions.get(name) ?? 0) + 1)
    for (const call of map.calls(path) ?? []) add(path, call.file, call.symbol === "" ? call.name : call.symbol)
    const imports = map.imports(path)
    if (imports === undefined) continue
    for (const [, binding] of imports.bindings) {
      for (const file of binding.files) add(path, file, binding.symbol === "*" || binding.symbol === "default" ? "" : binding.symbol)
    }
    for (const target of imports.edges) add(path, target, "")
  }
  const references = [...counts].map(([key, count]) => {
    const [source, target, name] = key.split("\u0000") as [string, string, string]
    return { source, target, name, count }
  })
  references.sort((a, b) => byCodeUnit(a.source, b.source) || byCodeUnit(a.target, b.target) || byCodeUnit(a.name, b.name))
  const data: ReferenceData = { files: map.symbolFiles, references, definitions, names, global: map.ranked }
  dataCache.set(map, data)
  return data
}

const isPrivate = (name: string): boolean => name.startsWith("_") || name.startsWith("#")
const isDescriptive = (name: string): boolean =>
  name.length >= 8 && (/[a-z][A-Z]/.test(name) || /[A-Za-z0-9]_[A-Za-z0-9]/.test(name) || /[A-Za-z0-9]-[A-Za-z0-9]/.test(name))

/**
 * PageRank with a restart distribution: rank flows along weighted edges and, with
 * probability `1 - damping` (and from dangling nodes), jumps back to `restart`.
 * Node order and sorted links make the float sums deterministic.
 */
const restartRank = (
  n: number,
  links: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
  restart: Float64Array,
  damping = 0.85,
  iterations = 100,
  tolerance = 1e-10
): Float64Array => {
  const outTotal = new Float64Array(n)
  for (let s = 0; s < n; s++) for (const [, w] of links[s]!) outTotal[s]! += w
  let rank = Float64Array.from(restart)
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(n)
    let dangling = 0
    for (let i = 0; i < n; i++) if (outTotal[i] === 0) dangling += rank[i]!
    for (let i = 0; i < n; i++) next[i] = ((1 - damping) + damping * dangling) * restart[i]!
    for (let s = 0; s < n; s++) {
      const total = outTotal[s]!
      if (total === 0) continue
      const share = (damping * rank[s]!) / total
      for (const [t, w] of links[s]!) next[t]! += share * w
    }
    let delta = 0
    for (let i = 0; i < n; i++) delta += Math.abs(next[i]! - rank[i]!)
    rank = next
    if (delta < tolerance) break
  }
  return rank
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
  const index = new Map(files.map((f, i) => [f, i]))
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
  const merged = new Map<number, Map<number, number>>()
  for (const ref of data.references) {
    const s = index.get(ref.source)
    const t = index.get(ref.target)
    if (s === undefined || t === undefined) continue
    let weight: number
    if (ref.name === "") {
      weight = weights.bareImport
    } else {
      weight = Math.sqrt(ref.count)
      if (focusNames.has(ref.name)) weight *= weights.focusName
      if (isDescriptive(ref.name)) weight *= weights.longName
      if (isPrivate(ref.name)) weight *= weights.privateName
      if ((data.definitions.get(ref.name) ?? 0) > weights.commonDefinitions) weight *= weights.commonName
    }
    if (focusFiles.has(ref.source)) weight *= weights.focusSource
    let row = merged.get(s)
    if (row === undefined) merged.set(s, (row = new Map()))
    row.set(t, (row.get(t) ?? 0) + weight)
  }
  const links: Array<Array<readonly [number, number]>> = files.map(() => [])
  for (const [s, row] of merged) links[s] = [...row].sort((a, b) => a[0] - b[0])
  const rank = restartRank(n, links, restart)
  // Focus files lead; the rest by score rounded so float noise never reorders ties.
  const key = (i: number): number => (focusFiles.has(files[i]!) ? 2 : 0) + Number(rank[i]!.toPrecision(9))
  const order = files.map((_, i) => i)
  order.sort((a, b) => key(b) - key(a) || byCodeUnit(files[a]!, files[b]!))
  return order.map((i) => files[i]!)
}
