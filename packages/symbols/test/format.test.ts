// The compact format: aliases and the legend (fixed for the session and used by
// every block), block rendering, the file tree, and the token-budgeted map.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { SymbolIndexer, blockModel, computeAliases, formatFileTree, formatLegend, renderBlock } from "../src/index.ts"
import { applyAlias } from "../src/format.ts"
import { selectMapFiles } from "@strata/core/effect"
import { tempDir } from "./helpers.ts"

const write = (root: string, path: string, text: string): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

describe("aliases", () => {
  it("picks long shared prefixes by characters saved, longest match wins", () => {
    const paths = [
      ...["a", "b", "c", "d"].map((f) => `packages/core/src/${f}.ts`),
      ...["a", "b", "c", "d", "e"].map((f) => `packages/core/src/deep/inner/${f}.ts`),
      "README.md",
      "x/y.ts"
    ]
    const aliases = computeAliases(paths)
    expect(aliases).toEqual([
      { token: "@1/", prefix: "packages/core/src/" },
      { token: "@2/", prefix: "packages/core/src/deep/inner/" }
    ])
    expect(applyAlias("packages/core/src/deep/inner/a.ts", aliases)).toBe("@2/a.ts")
    expect(applyAlias("packages/core/src/a.ts", aliases)).toBe("@1/a.ts")
    expect(applyAlias("x/y.ts", aliases)).toBe("x/y.ts")
  })

  it("skips short or rarely shared prefixes", () => {
    expect(computeAliases(["src/a.ts", "src/b.ts", "src/c.ts"])).toEqual([])
    expect(computeAliases(["a/very/long/directory/x.ts", "a/very/long/directory/y.ts"])).toEqual([])
  })

  it("the legend lists exactly the aliases blocks use", () => {
    const aliases = [{ token: "@1/", prefix: "packages/core/src/" }]
    expect(formatLegend(aliases)).toBe(
      [
        "# c=class s=struct if=interface/trait e=enum t=type n=namespace/module impl=impl block",
        "# f=function af=async function m=method am=async method p=property v=variable/field",
        "# i=imports i→=repository files imported (a,b?)=params ?=optional ->T=returns",
        "# c Name(Base,Iface)=bases ←N=used by N other files →=calls and uses +N=N more",
        "# @1/=packages/core/src/",
        ""
      ].join("\n")
    )
  })
})

describe("renderBlock", () => {
  it("renders the header, imports and symbols with counts and calls", () => {
    const model = blockModel(
      {
        path: "packages/core/src/a.ts",
        refs: 3,
        symbolRefs: new Map([["load", 2]]),
        external: ["zod", "effect"],
        local: ["packages/core/src/b.ts"],
        calls: new Map([["load", ["z1", "y", "x", "w", "v", "u", "t", "s", "r", "q"]]]),
        symbols: [
          { kind: "function", name: "load", async: true, params: [{ name: "id", optional: false }, { name: "opts", optional: true }], returns: "Promise<void>", bases: [], children: [], line: 9, endLine: 12 },
          {
            kind: "class",
            name: "Store",
            async: false,
            params: null,
            returns: "",
            bases: ["Base"],
            children: [{ kind: "field", name: "size", async: false, params: null, returns: "", bases: [], children: [], line: 3, endLine: 3 }],
            line: 2,
            endLine: 8
          }
        ]
      },
      [{ token: "@1/", prefix: "packages/core/src/" }]
    )
    expect(renderBlock(model)).toBe(
      ["@1/a.ts: ←3", "i effect,zod", "i→ @1/b.ts", "c Store(Base)", "  v size", "af load(id,opts?)->Promise<void> ←2 →q,r,s,t,u,v,w,x,+2", ""].join("\n")
    )
  })

  it("renders line numbers only when asked, and then hashes them", () => {
    const input = {
      path: "a.py",
      refs: 0,
      external: [],
      local: [],
      symbols: [{ kind: "function" as const, name: "f", async: false, params: [], returns: "", bases: [], children: [], line: 7, endLine: 9 }]
    }
    expect(renderBlock(blockModel(input, [], { lines: true }))).toBe("a.py:\nf f:7()\n")
    expect(formatLegend([], { lines: true })).toContain(":N=line")
  })
})

describe("file tree", () => {
  it("is the bare sorted list, one path per line", () => {
    expect(formatFileTree(["b/c.ts", "a.md", "B.ts"])).toBe("B.ts\na.md\nb/c.ts\n")
    expect(formatFileTree([])).toBe("")
  })
})

describe("legend stability", () => {
  it("stays fixed for the session while files come and go; blocks use its aliases", async () => {
    const root = tempDir()
    for (const f of ["a", "b", "c"]) write(root, `services/billing/src/${f}.ts`, `export const ${f} = 1\n`)
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const first = await indexer.refresh()
    expect(first.legend).toContain("# @1/=services/billing/src/")
    for (const f of ["d", "e", "f", "g"]) write(root, `other/module/lib/${f}.ts`, `export const ${f} = 1\n`)
    const second = await indexer.refresh()
    expect(second.legend).toBe(first.legend)
    expect(second.block("services/billing/src/a.ts")).toBe("@1/a.ts:\nv a\n")
    expect(second.block("other/module/lib/d.ts")).toBe("other/module/lib/d.ts:\nv d\n")
    // Every alias token a block uses is one the legend advertises.
    for (const path of second.symbolFiles) for (const token of second.block(path)!.match(/@\d+\//g) ?? []) expect(second.legend).toContain(`# ${token}=`)
  })
})

describe("token budget", () => {
  const cost = (p: string): number => ({ a: 50, b: 40, c: 30, d: 20 })[p] ?? 0

  it("fills by rank, skipping what does not fit", () => {
    expect(selectMapFiles(["a", "b", "c", "d"], cost, 80)).toEqual(["a", "c"])
    expect(selectMapFiles(["a", "b", "c", "d"], cost, 0)).toEqual([])
  })

  it("keeps earlier choices while they fit, so the map does not churn", () => {
    const first = selectMapFiles(["a", "b", "c", "d"], cost, 90)
    expect(first).toEqual(["a", "b"])
    // d is now ranked first, but a and b stay; d does not fit beside them.
    expect(selectMapFiles(["d", "a", "b", "c"], cost, 90, new Set(first))).toEqual(["a", "b"])
    // When the budget shrinks, the lowest-ranked earlier choice goes first.
    expect(selectMapFiles(["d", "a", "b", "c"], cost, 70, new Set(first))).toEqual(["a", "d"])
  })

  it("the indexer's budgeted map is stable across turns and ranked by references", async () => {
    const root = tempDir()
    write(root, "core.ts", "export function core() {}\n")
    for (const f of ["u1", "u2", "u3"]) write(root, `${f}.ts`, `import { core } from "./core"\nexport function ${f}() { core() }\n`)
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const map = await indexer.refresh()
    expect(map.ranked[0]).toBe("core.ts")
    const count = (t: string): number => Math.ceil(t.length / 4)
    // The legend, the block and the blank line between them.
    const budget = count(map.legend) + count(map.block("core.ts")!) + count("\n")
    const cut = map.budgeted({ budgetTokens: budget, countTokens: count })
    expect(cut.files).toEqual(["core.ts"])
    expect(cut.omitted).toBe(3)
    expect(cut.text).toBe(`${map.legend}\n${map.block("core.ts")}`)
    write(root, "u4.ts", `import { core } from "./core"\nexport function u4() { core() }\n`)
    // A new file arrives and core.ts gains a reference; the earlier choice stays.
    const grown = await indexer.refresh()
    expect(grown.block("core.ts")).toContain("←4")
    const again = grown.budgeted({ budgetTokens: budget + 1, countTokens: count })
    expect(again.files).toEqual(["core.ts"])
  })

  it("a budgeted map lists only the aliases its blocks use, no private #members, and keeps to any budget it can", async () => {
    const root = tempDir()
    // Two deep folders, so the legend has aliases; only one folder is referenced.
    for (const f of ["a", "b", "c", "d"]) write(root, `packages/used/src/lib/${f}.ts`, `export class ${f.toUpperCase()} {\n  #secret = 1\n  #hidden(): void {}\n  run(): number { return this.#secret }\n}\n`)
    for (const f of ["a", "b", "c", "d"]) write(root, `packages/other/src/lib/${f}.ts`, `export const ${f} = 1\n`)
    for (const f of ["x", "y", "z"]) write(root, `app/${f}.ts`, `import { A } from "../packages/used/src/lib/a"\nimport { B } from "../packages/used/src/lib/b"\nexport const ${f} = new A().run() + new B().run()\n`)
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const map = await indexer.refresh()
    expect(map.aliases.length).toBeGreaterThanOrEqual(2)
    expect(map.block("packages/used/src/lib/a.ts")).not.toContain("#")
    expect(map.block("packages/used/src/lib/a.ts")).toContain("run()")
    const count = (t: string): number => Math.ceil(t.length / 4)
    const key = count(formatLegend([]))
    const whole = count(map.render())
    // Small budgets: only the blocks that fit, and the legend names only the aliases they use.
    const small = map.budgeted({ budgetTokens: key + count(map.block("packages/used/src/lib/a.ts")!) + 12, countTokens: count })
    const aliasLines = small.legend.split("\n").filter((l) => /^# @\d+\/=/.test(l))
    const usedTokens = new Set(small.files.flatMap((p) => map.model(p)?.aliases.map(([t]) => t) ?? []))
    expect(aliasLines.map((l) => l.slice(2, l.indexOf("=")))).toEqual(map.aliases.filter((a) => usedTokens.has(a.token)).map((a) => a.token))
    expect(small.text.startsWith(small.legend)).toBe(true)
    fc.assert(
      fc.property(fc.integer({ min: 1, max: whole + 50 }), (budget) => {
        const cut = map.budgeted({ budgetTokens: budget, countTokens: count })
        expect(cut.minimumTokens).toBe(key)
        if (budget < key) {
          expect(cut.fits).toBe(false)
          expect(cut.text).toBe("")
        } else {
          expect(cut.fits).toBe(true)
          expect(count(cut.text)).toBeLessThanOrEqual(budget)
          expect(cut.tokens).toBe(count(cut.text))
          expect(cut.files.length + cut.omitted).toBe(map.symbolFiles.length)
        }
      }),
      { seed: 29, numRuns: 200 }
    )
  })
})
