// The reference graph: weights, distinct-file counts, mutual edges, components,
// PageRank ranking, and incremental updates that equal a rebuild.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type GraphInput, type ResolvedCall, bidirectionalEdges, buildGraph, connectedComponents, pageRank } from "../src/index.ts"
import { type Contribution, graphFromContributions, rankFiles, updateGraph } from "../src/graph.ts"

const input = (path: string, imports: ReadonlyArray<string>, calls: ReadonlyArray<readonly [string, string]> = [], bindings: ReadonlyArray<readonly [string, string, string]> = []): GraphInput => ({
  path,
  imports: {
    local: imports,
    external: [],
    edges: imports,
    bindings: new Map(bindings.map(([alias, file, symbol]) => [alias, { files: [file], symbol }])),
    wildcards: []
  },
  calls: calls.map(([file, symbol]): ResolvedCall => ({ name: symbol, caller: "", line: 1, file, symbol }))
})

describe("buildGraph", () => {
  const graph = buildGraph([
    input("a.ts", ["b.ts"], [["b.ts", "f"], ["b.ts", "f"], ["a.ts", "self"]], [["f", "b.ts", "f"]]),
    input("b.ts", ["a.ts"]),
    input("c.ts", ["b.ts"], [["b.ts", "g"]]),
    input("d.ts", [])
  ])

  it("weights edges by imports plus calls and drops self references", () => {
    expect(graph.edges.get("a.ts")?.get("b.ts")).toBe(3)
    expect(graph.edges.get("a.ts")?.has("a.ts")).toBe(false)
    expect(graph.incoming.get("b.ts")).toEqual(new Map([["a.ts", 3], ["c.ts", 2]]))
  })

  it("counts distinct referencing files per file and per symbol", () => {
    expect(graph.fileRefs.get("b.ts")).toBe(2)
    expect(graph.fileRefs.get("a.ts")).toBe(1)
    expect(graph.fileRefs.has("d.ts")).toBe(false)
    expect(graph.symbolRefs.get("b.ts")).toEqual(new Map([["f", 1], ["g", 1]]))
  })

  it("finds mutual edges and clusters them, isolated files as singletons", () => {
    expect(bidirectionalEdges(graph)).toEqual([["a.ts", "b.ts"]])
    expect(connectedComponents(graph, ["d.ts", "c.ts", "b.ts", "a.ts"])).toEqual([["a.ts", "b.ts"], ["c.ts"], ["d.ts"]])
  })

  it("ranks the most referenced files first, ties by path", () => {
    const scores = pageRank(graph)
    const total = [...scores.values()].reduce((a, b) => a + b, 0)
    expect(total).toBeCloseTo(1, 9)
    expect(rankFiles(["a.ts", "b.ts", "c.ts", "d.ts"], scores)).toEqual(["b.ts", "a.ts", "c.ts", "d.ts"])
    expect(rankFiles(["z.ts", "y.ts"], new Map())).toEqual(["y.ts", "z.ts"])
  })
})

const arbContribution = (path: string): fc.Arbitrary<Contribution> =>
  fc
    .record({
      targets: fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "x.json"), fc.integer({ min: 1, max: 3 })), { maxLength: 4 }),
      symbols: fc.uniqueArray(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e"), fc.constantFrom("f", "g")), { maxLength: 4, selector: ([t, s]) => `${t}/${s}` })
    })
    .map(({ targets, symbols }) => ({
      path,
      edges: new Map(targets.filter(([t]) => t !== path)),
      symbols: symbols.filter(([t]) => t !== path)
    }))

const FILES = ["a", "b", "c", "d", "e"]

describe("updateGraph", () => {
  it("equals rebuilding from scratch, and leaves the previous graph untouched", () => {
    fc.assert(
      fc.property(
        fc.tuple(...FILES.map(arbContribution)),
        fc.tuple(...FILES.map(arbContribution)),
        fc.uniqueArray(fc.constantFrom(...FILES), { maxLength: 5 }),
        (before, replacements, changed) => {
          const previous = graphFromContributions(before)
          const snapshot = JSON.stringify(serialize(previous))
          const after = before.map((c, i) => (changed.includes(c.path) ? replacements[i]! : c))
          const removed = before.filter((c) => changed.includes(c.path))
          const added = after.filter((c) => changed.includes(c.path))
          const patched = updateGraph(previous, removed, added, FILES)
          expect(serialize(patched)).toEqual(serialize(graphFromContributions(after)))
          expect(JSON.stringify(serialize(previous))).toBe(snapshot)
        }
      )
    )
  })
})

const sortedEntries = <V>(map: ReadonlyMap<string, V>): Array<[string, V]> => [...map].sort((a, b) => (a[0] < b[0] ? -1 : 1))

const serialize = (g: ReturnType<typeof graphFromContributions>) => ({
  nodes: g.nodes,
  edges: sortedEntries(g.edges).map(([s, t]) => [s, sortedEntries(t)]),
  incoming: sortedEntries(g.incoming).map(([t, s]) => [t, sortedEntries(s)]),
  fileRefs: sortedEntries(g.fileRefs),
  symbolRefs: sortedEntries(g.symbolRefs).map(([t, s]) => [t, sortedEntries(s)]),
  rank: [...pageRank(g)].map(([k, v]) => [k, v.toPrecision(12)]).sort()
})
