// Ranking by focus (Aider's personalised PageRank): the global ranking without a focus,
// the focus's neighbourhood first with one, weights as documented, deterministic.
import fc from "fast-check"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { focusRanking, type NamedReference, type ReferenceData, SymbolIndexer } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

const data = (files: ReadonlyArray<string>, references: ReadonlyArray<NamedReference>, names: Record<string, ReadonlyArray<string>> = {}): ReferenceData => {
  const definitions = new Map<string, number>()
  for (const own of Object.values(names)) for (const n of own) definitions.set(n, (definitions.get(n) ?? 0) + 1)
  const sorted = [...references].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.target < b.target ? -1 : a.target > b.target ? 1 : a.name < b.name ? -1 : 1))
  return { files: [...files].sort(), references: sorted, definitions, names: new Map(Object.entries(names)), global: [...files].sort() }
}
const ref = (source: string, target: string, name: string, count = 1): NamedReference => ({ source, target, name, count })

// a.ts uses b.ts; c.ts and d.ts use e.ts heavily (e is the global hub).
const graph = data(
  ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"],
  [ref("a.ts", "b.ts", "parseConfig"), ref("c.ts", "e.ts", "emitBlock", 4), ref("d.ts", "e.ts", "emitBlock", 4), ref("b.ts", "e.ts", "emitBlock")],
  { "b.ts": ["parseConfig"], "e.ts": ["emitBlock"], "d.ts": ["_internal"] }
)

describe("focusRanking", () => {
  it("returns the global ranking for an empty focus or one that names nothing", () => {
    expect(focusRanking(graph, {})).toBe(graph.global)
    expect(focusRanking(graph, { files: ["missing.ts"], identifiers: ["nothing"] })).toBe(graph.global)
  })

  it("puts the focus file first and its references right after", () => {
    const ranked = focusRanking(graph, { files: ["a.ts"] })
    expect(ranked[0]).toBe("a.ts")
    expect(ranked[1]).toBe("b.ts")
  })

  it("ranks the files defining a mentioned identifier up", () => {
    expect(focusRanking(graph, { identifiers: ["parseConfig"] })[0]).toBe("b.ts")
  })

  it("weighs private and very common names less", () => {
    const names = { "x.ts": ["sharedName"], "p.ts": ["_hidden"], "q.ts": ["visibleName"] }
    const g = data(["f.ts", "p.ts", "q.ts", "x.ts"], [ref("f.ts", "p.ts", "_hidden"), ref("f.ts", "q.ts", "visibleName")], names)
    const ranked = focusRanking(g, { files: ["f.ts"] })
    expect(ranked.indexOf("q.ts")).toBeLessThan(ranked.indexOf("p.ts"))
    const common: Record<string, ReadonlyArray<string>> = { "q.ts": ["visibleName"] }
    for (let i = 0; i < 7; i++) common[`z${i}.ts`] = ["run"]
    const files = ["f.ts", "q.ts", ...Object.keys(common).filter((f) => f.startsWith("z"))]
    const g2 = data(files, [ref("f.ts", "z0.ts", "run", 4), ref("f.ts", "q.ts", "visibleName")], common)
    const r2 = focusRanking(g2, { files: ["f.ts"] })
    expect(r2.indexOf("q.ts")).toBeLessThan(r2.indexOf("z0.ts"))
  })

  it("is a permutation of the files and the same for the same input (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(7), fc.nat(7), fc.constantFrom("alpha", "_beta", "gammaDelta", ""), fc.integer({ min: 1, max: 5 })), { maxLength: 30 }), fc.nat(7), (edges, focus) => {
        const files = Array.from({ length: 8 }, (_, i) => `f${i}.ts`)
        const refs = new Map<string, NamedReference>()
        for (const [s, t, name, count] of edges) if (s !== t) refs.set(`${s}/${t}/${name}`, ref(files[s]!, files[t]!, name, count))
        const d = data(files, [...refs.values()], { "f1.ts": ["alpha"] })
        const a = focusRanking(d, { files: [files[focus]!] })
        expect([...a].sort()).toEqual(files)
        expect(a[0]).toBe(files[focus])
        expect(focusRanking(d, { files: [files[focus]!] })).toEqual(a)
      })
    )
  })
})

describe("SymbolMap.rankFor", () => {
  it("ranks a real index around the focus, and globally without one", async () => {
    const root = tempDir()
    mkdirSync(join(root, "src"))
    writeFileSync(join(root, "src", "core.ts"), "export function parseConfig(x: string) { return x }\n")
    writeFileSync(join(root, "src", "a.ts"), "import { parseConfig } from './core'\nimport { helperThing } from './b'\nexport const run = () => helperThing(parseConfig('x'))\n")
    writeFileSync(join(root, "src", "b.ts"), "export function helperThing(x: string) { return x }\n")
    writeFileSync(join(root, "src", "c.ts"), "import { parseConfig } from './core'\nexport const other = () => parseConfig('y')\n")
    const map = await (await SymbolIndexer.create(root, { git: false, cache: false })).refresh()
    expect(map.rankFor!({})).toEqual(map.ranked)
    const ranked = map.rankFor!({ files: ["src/a.ts"] })
    expect(ranked[0]).toBe("src/a.ts")
    expect(ranked.slice(1, 3).sort()).toEqual(["src/b.ts", "src/core.ts"])
  })
})
