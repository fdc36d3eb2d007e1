/**
 * The reference graph: weighted file-to-file edges from resolved imports and calls,
 * incoming counts per file and per symbol, mutual edges, connected components and a
 * PageRank-style score. Pure functions over plain data; every iteration order is
 * sorted so results are deterministic.
 */
import type { ResolvedCall, ResolvedImports } from "./resolve.ts"

/** What one file contributes to the graph. */
export interface GraphInput {
  readonly path: string
  readonly imports: ResolvedImports
  readonly calls: ReadonlyArray<ResolvedCall>
}

/** The repository's reference graph. */
export interface ReferenceGraph {
  /** Every file that references or is referenced, plus every input file; sorted. */
  readonly nodes: ReadonlyArray<string>
  /** source → target → weight (resolved import statements + resolved call sites); no self edges. */
  readonly edges: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** target → source → weight. */
  readonly incoming: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Number of distinct other files referencing each file (absent means 0). */
  readonly fileRefs: ReadonlyMap<string, number>
  /** file → symbol → number of distinct other files referencing it (by import or call). */
  readonly symbolRefs: ReadonlyMap<string, ReadonlyMap<string, number>>
}

const bump = <K>(map: Map<K, number>, key: K, by = 1): void => {
  map.set(key, (map.get(key) ?? 0) + by)
}

/** One file's share of the graph: its outgoing edge weights and the symbols it references. */
export interface Contribution {
  readonly path: string
  /** target → weight, self excluded. */
  readonly edges: ReadonlyMap<string, number>
  /** `[target, symbol]` pairs, deduped, self excluded. */
  readonly symbols: ReadonlyArray<readonly [string, string]>
}

/** What `input` adds to the graph (computed once per file and reused while it is unchanged). */
export const fileContribution = (input: GraphInput): Contribution => {
  const edges = new Map<string, number>()
  const seen = new Set<string>()
  const symbols: Array<readonly [string, string]> = []
  const addSymbol = (target: string, symbol: string): void => {
    if (target === input.path || symbol === "" || symbol === "*" || symbol === "default") return
    const key = `${target}\u0000${symbol}`
    if (seen.has(key)) return
    seen.add(key)
    symbols.push([target, symbol])
  }
  for (const target of input.imports.edges) if (target !== input.path) bump(edges, target)
  for (const [, binding] of input.imports.bindings) if (binding.files.length === 1) addSymbol(binding.files[0]!, binding.symbol)
  for (const call of input.calls) {
    if (call.file !== input.path) bump(edges, call.file)
    addSymbol(call.file, call.symbol)
  }
  return { path: input.path, edges, symbols }
}

/** Merge per-file contributions into the graph. */
export const graphFromContributions = (contributions: ReadonlyArray<Contribution>): ReferenceGraph => {
  const edges = new Map<string, ReadonlyMap<string, number>>()
  const incoming = new Map<string, Map<string, number>>()
  const symbolSources = new Map<string, Map<string, number>>()
  const nodes = new Set<string>()
  const sorted = [...contributions].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  for (const c of sorted) {
    nodes.add(c.path)
    if (c.edges.size > 0) edges.set(c.path, c.edges)
    for (const [target, weight] of c.edges) {
      nodes.add(target)
      let into = incoming.get(target)
      if (into === undefined) incoming.set(target, (into = new Map()))
      into.set(c.path, weight)
    }
    // Contributions are deduped per source, so counting them counts distinct files.
    for (const [target, symbol] of c.symbols) {
      let bySymbol = symbolSources.get(target)
      if (bySymbol === undefined) symbolSources.set(target, (bySymbol = new Map()))
      bump(bySymbol, symbol)
    }
  }
  const fileRefs = new Map<string, number>()
  for (const [target, sources] of incoming) fileRefs.set(target, sources.size)
  return { nodes: [...nodes].sort(), edges, incoming, fileRefs, symbolRefs: symbolSources }
}

/**
 * The graph after replacing some files' contributions: `removed` are the old
 * contributions of changed or deleted files, `added` the new ones of changed or new
 * files. Equal to rebuilding from all contributions, but costs only what changed;
 * `previous` is not modified (maps are copied on write).
 */
export const updateGraph = (
  previous: ReferenceGraph,
  removed: ReadonlyArray<Contribution>,
  added: ReadonlyArray<Contribution>,
  files: ReadonlyArray<string>
): ReferenceGraph => {
  const edges = new Map(previous.edges)
  const incoming = new Map(previous.incoming) as Map<string, ReadonlyMap<string, number>>
  const symbolRefs = new Map(previous.symbolRefs) as Map<string, ReadonlyMap<string, number>>
  const fileRefs = new Map(previous.fileRefs)
  const copiedIncoming = new Set<string>()
  const copiedSymbols = new Set<string>()
  const incomingOf = (target: string): Map<string, number> => {
    if (!copiedIncoming.has(target)) {
      copiedIncoming.add(target)
      incoming.set(target, new Map(incoming.get(target) ?? []))
    }
    return incoming.get(target) as Map<string, number>
  }
  const symbolsOf = (target: string): Map<string, number> => {
    if (!copiedSymbols.has(target)) {
      copiedSymbols.add(target)
      symbolRefs.set(target, new Map(symbolRefs.get(target) ?? []))
    }
    return symbolRefs.get(target) as Map<string, number>
  }
  for (const c of removed) {
    edges.delete(c.path)
    for (const target of c.edges.keys()) incomingOf(target).delete(c.path)
    for (const [target, symbol] of c.symbols) {
      const bySymbol = symbolsOf(target)
      const left = (bySymbol.get(symbol) ?? 0) - 1
      if (left > 0) bySymbol.set(symbol, left)
      else bySymbol.delete(symbol)
    }
  }
  for (const c of added) {
    if (c.edges.size > 0) edges.set(c.path, c.edges)
    for (const [target, weight] of c.edges) incomingOf(target).set(c.path, weight)
    for (const [target, symbol] of c.symbols) bump(symbolsOf(target), symbol)
  }
  for (const target of copiedIncoming) {
    const size = incoming.get(target)!.size
    if (size === 0) {
      incoming.delete(target)
      fileRefs.delete(target)
    } else {
      fileRefs.set(target, size)
    }
  }
  for (const target of copiedSymbols) if (symbolRefs.get(target)!.size === 0) symbolRefs.delete(target)
  const nodes = new Set(files)
  for (const target of incoming.keys()) nodes.add(target)
  return { nodes: [...nodes].sort(), edges, incoming, fileRefs, symbolRefs }
}

/**
 * Build the graph. File counts are distinct referencing files (not summed weights):
 * another call from a file that already references this one leaves the rendered
 * `←N` unchanged, so blocks churn less.
 *
 * @example
 * ```ts
 * import { buildGraph } from "@strata/symbols"
 * const g = buildGraph([
 *   { path: "a.ts", imports: { local: ["b.ts"], external: [], edges: ["b.ts"], bindings: new Map(), wildcards: [] }, calls: [] },
 *   { path: "b.ts", imports: { local: [], external: [], edges: [], bindings: new Map(), wildcards: [] }, calls: [] }
 * ])
 * g.fileRefs.get("b.ts") // 1
 * ```
 */
export const buildGraph = (inputs: ReadonlyArray<GraphInput>): ReferenceGraph => graphFromContributions(inputs.map(fileContribution))

/**
 * Pairs of files that reference each other, each as `[lo, hi]` (sorted), sorted.
 *
 * @example
 * ```ts
 * import { bidirectionalEdges, buildGraph } from "@strata/symbols"
 * const file = (path: string, local: Array<string>) => ({ path, imports: { local, external: [], edges: local, bindings: new Map(), wildcards: [] }, calls: [] })
 * const graph = buildGraph([file("src/a.ts", ["src/b.ts"]), file("src/b.ts", ["src/a.ts"]), file("src/c.ts", ["src/a.ts"])])
 * bidirectionalEdges(graph) // [["src/a.ts", "src/b.ts"]]
 * ```
 */
export const bidirectionalEdges = (graph: ReferenceGraph): Array<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  for (const [source, targets] of graph.edges) {
    for (const target of targets.keys()) {
      if (source < target && graph.edges.get(target)?.has(source) === true) out.push([source, target])
    }
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
}

/**
 * Connected components over mutual (bidirectional) edges only, so a cluster is a set
 * of tightly coupled files. Every file of `files` appears once (isolated files as
 * singletons). Members are sorted; components sort by size (largest first), then by
 * first member.
 *
 * @example
 * ```ts
 * import { buildGraph, connectedComponents } from "@strata/symbols"
 * const file = (path: string, local: Array<string>) => ({ path, imports: { local, external: [], edges: local, bindings: new Map(), wildcards: [] }, calls: [] })
 * const graph = buildGraph([file("a.ts", ["b.ts"]), file("b.ts", ["a.ts"]), file("c.ts", ["a.ts"])])
 * connectedComponents(graph, ["a.ts", "b.ts", "c.ts"]) // [["a.ts", "b.ts"], ["c.ts"]]
 * ```
 */
export const connectedComponents = (graph: ReferenceGraph, files: ReadonlyArray<string>): Array<Array<string>> => {
  const parent = new Map<string, string>()
  const find = (x: string): string => {
    let root = x
    while (parent.get(root) !== root) root = parent.get(root)!
    let node = x
    while (node !== root) {
      const next = parent.get(node)!
      parent.set(node, root)
      node = next
    }
    return root
  }
  for (const f of files) parent.set(f, f)
  for (const [a, b] of bidirectionalEdges(graph)) {
    if (!parent.has(a) || !parent.has(b)) continue
    const ra = find(a)
    const rb = find(b)
    // The smaller path becomes the root, so the result does not depend on edge order.
    if (ra < rb) parent.set(rb, ra)
    else if (rb < ra) parent.set(ra, rb)
  }
  const groups = new Map<string, Array<string>>()
  for (const f of [...files].sort()) {
    const root = find(f)
    const group = groups.get(root)
    if (group === undefined) groups.set(root, [f])
    else group.push(f)
  }
  return [...groups.values()].sort((a, b) => b.length - a.length || (a[0]! < b[0]! ? -1 : 1))
}

/** Options of `pageRank`. */
export interface PageRankOptions {
  readonly damping?: number
  readonly iterations?: number
  readonly tolerance?: number
}

/**
 * A PageRank-style importance per node: rank flows along weighted edges from
 * referencing to referenced files; dangling rank spreads evenly. Scores sum to 1.
 *
 * @example
 * ```ts
 * import { buildGraph, pageRank } from "@strata/symbols"
 * const file = (path: string, local: Array<string>) => ({ path, imports: { local, external: [], edges: local, bindings: new Map(), wildcards: [] }, calls: [] })
 * const graph = buildGraph([file("src/core.ts", []), file("src/a.ts", ["src/core.ts"]), file("src/b.ts", ["src/core.ts"])])
 * const scores = pageRank(graph)
 * scores.get("src/core.ts")! > scores.get("src/a.ts")! // true
 * ```
 */
export const pageRank = (graph: ReferenceGraph, options: PageRankOptions = {}): Map<string, number> => {
  const damping = options.damping ?? 0.85
  const iterations = options.iterations ?? 100
  const tolerance = options.tolerance ?? 1e-10
  const nodes = graph.nodes
  const n = nodes.length
  const scores = new Map<string, number>()
  if (n === 0) return scores
  const index = new Map(nodes.map((node, i) => [node, i]))
  const outTotal = new Float64Array(n)
  const links: Array<Array<readonly [number, number]>> = nodes.map(() => [])
  // Sources in node order and targets sorted: float sums then never depend on map insertion order.
  for (const source of nodes) {
    const targets = graph.edges.get(source)
    const s = index.get(source)
    if (targets === undefined || s === undefined) continue
    for (const [target, weight] of [...targets].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const t = index.get(target)
      if (t === undefined) continue
      links[s]!.push([t, weight])
      outTotal[s]! += weight
    }
  }
  let rank = new Float64Array(n).fill(1 / n)
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(n)
    let dangling = 0
    for (let i = 0; i < n; i++) if (outTotal[i] === 0) dangling += rank[i]!
    const base = (1 - damping) / n + (damping * dangling) / n
    next.fill(base)
    for (let s = 0; s < n; s++) {
      const total = outTotal[s]!
      if (total === 0) continue
      const share = (damping * rank[s]!) / total
      for (const [t, weight] of links[s]!) next[t]! += share * weight
    }
    let delta = 0
    for (let i = 0; i < n; i++) delta += Math.abs(next[i]! - rank[i]!)
    rank = next
    if (delta < tolerance) break
  }
  nodes.forEach((node, i) => scores.set(node, rank[i]!))
  return scores
}

/**
 * Files by descending score, ties by path. Scores are rounded to 9 significant
 * digits first, so float noise never reorders equal-importance files.
 */
export const rankFiles = (files: ReadonlyArray<string>, scores: ReadonlyMap<string, number>): Array<string> => {
  const key = (f: string): number => Number((scores.get(f) ?? 0).toPrecision(9))
  return [...files].sort((a, b) => key(b) - key(a) || (a < b ? -1 : a > b ? 1 : 0))
}
