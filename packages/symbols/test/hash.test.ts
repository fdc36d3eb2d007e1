// Block hashes: stable under reformatting and moving code, changed by anything the
// block renders (names, parameters, counts); equal hashes always mean equal bytes.
import fc from "fast-check"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { type SymbolInfo, SymbolIndexer, blockHash, blockModel, renderBlock } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

const write = (root: string, path: string, text: string): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

const LIB = `export function alpha(a: number, b?: string): number {
  return a
}

export class Beta {
  run(x: number) { return alpha(x) }
}

export const GAMMA = 1
`

/** Index `files`, apply `edit`, re-index; the block hash of lib.ts before and after. */
const hashesAround = async (edit: (root: string) => void): Promise<{ before: string; after: string; blockBefore: string; blockAfter: string }> => {
  const root = tempDir()
  write(root, "src/lib.ts", LIB)
  write(root, "src/use.ts", `import { alpha } from "./lib"\nexport const x = alpha(1)\n`)
  const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
  const first = await indexer.refresh()
  edit(root)
  const second = await indexer.refresh()
  return {
    before: first.blockHash("src/lib.ts")!,
    after: second.blockHash("src/lib.ts")!,
    blockBefore: first.block("src/lib.ts")!,
    blockAfter: second.block("src/lib.ts")!
  }
}

describe("block hash stability", () => {
  it("ignores whitespace and formatting", async () => {
    const r = await hashesAround((root) =>
      write(root, "src/lib.ts", LIB.replace("alpha(a: number, b?: string): number", "alpha(\n  a:   number,\n  b?: string\n):   number").replace(/\n\n/g, "\n\n\n\n"))
    )
    expect(r.after).toBe(r.before)
    expect(r.blockAfter).toBe(r.blockBefore)
  })

  it("ignores moving a function down the file", async () => {
    const moved = `export class Beta {\n  run(x: number) { return alpha(x) }\n}\n\nexport const GAMMA = 1\n\n// a comment pushes it further down\nexport function alpha(a: number, b?: string): number {\n  return a\n}\n`
    const r = await hashesAround((root) => write(root, "src/lib.ts", moved))
    expect(r.after).toBe(r.before)
  })

  it("changes when a symbol is renamed", async () => {
    const r = await hashesAround((root) => write(root, "src/lib.ts", LIB.replace("GAMMA", "DELTA")))
    expect(r.after).not.toBe(r.before)
  })

  it("changes when a parameter is added", async () => {
    const r = await hashesAround((root) => write(root, "src/lib.ts", LIB.replace("run(x: number)", "run(x: number, y: number)")))
    expect(r.after).not.toBe(r.before)
  })

  it("changes when an incoming count changes, though the file itself did not", async () => {
    const r = await hashesAround((root) => write(root, "src/other.ts", `import { alpha } from "./lib"\nalpha(2)\n`))
    expect(r.blockBefore).toContain("src/lib.ts: ←1")
    expect(r.blockAfter).toContain("src/lib.ts: ←2")
    expect(r.after).not.toBe(r.before)
  })

  it("changes when a call target appears", async () => {
    const r = await hashesAround((root) => write(root, "src/lib.ts", LIB.replace("run(x: number) { return alpha(x) }", "run(x: number) { return alpha(x) + Beta.make() }")))
    expect(r.blockAfter).toContain("→alpha,make")
    expect(r.after).not.toBe(r.before)
  })
})

const symbolOf = (children: fc.Arbitrary<ReadonlyArray<SymbolInfo>>): fc.Arbitrary<SymbolInfo> =>
  fc.record({
    kind: fc.constantFrom("class", "function", "method", "variable", "field", "interface"),
    name: fc.stringMatching(/^[a-d]{1,3}$/),
    async: fc.boolean(),
    params: fc.option(fc.array(fc.record({ name: fc.stringMatching(/^[xy]$/), optional: fc.boolean() }), { maxLength: 2 }), { nil: null }),
    returns: fc.constantFrom("", "T", "void"),
    bases: fc.array(fc.constantFrom("A", "B"), { maxLength: 2 }),
    children,
    line: fc.nat(500),
    endLine: fc.nat(500)
  })

/** Symbols two levels deep: enough for members, small enough to run fast. */
const arbSymbol = symbolOf(fc.array(symbolOf(fc.constant([])), { maxLength: 3 }))

const arbInput = fc.record({
  symbols: fc.array(arbSymbol, { maxLength: 4 }),
  refs: fc.nat(3),
  external: fc.array(fc.constantFrom("react", "fs", "effect"), { maxLength: 2 }),
  local: fc.array(fc.constantFrom("src/a.ts", "lib/deep/b.ts"), { maxLength: 2 })
})

describe("hash and bytes", () => {
  const aliases = [{ token: "@1/", prefix: "lib/deep/" }]

  it("equal hashes mean equal bytes, and equal bytes mean equal hashes", () => {
    fc.assert(
      fc.property(arbInput, arbInput, (a, b) => {
        const ma = blockModel({ path: "src/x.ts", ...a }, aliases)
        const mb = blockModel({ path: "src/x.ts", ...b }, aliases)
        expect(blockHash(ma) === blockHash(mb)).toBe(renderBlock(ma) === renderBlock(mb))
      })
    )
  })

  it("line numbers never reach the hash unless rendered", () => {
    fc.assert(
      fc.property(arbInput, fc.nat(100), (input, shift) => {
        const moved = { ...input, symbols: input.symbols.map((s) => ({ ...s, line: s.line + shift, endLine: s.endLine + shift })) }
        expect(blockHash(blockModel({ path: "a.ts", ...moved }, aliases))).toBe(blockHash(blockModel({ path: "a.ts", ...input }, aliases)))
      })
    )
  })

  it("symbol order in the source does not matter", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const reversed = { ...input, symbols: [...input.symbols].reverse(), external: [...input.external].reverse() }
        expect(renderBlock(blockModel({ path: "a.ts", ...reversed }, aliases))).toBe(renderBlock(blockModel({ path: "a.ts", ...input }, aliases)))
      })
    )
  })

  it("a block's bytes depend only on the aliases its paths use", () => {
    const input = { path: "src/x.ts", symbols: [], refs: 0, external: [], local: ["lib/deep/b.ts"] }
    const unrelated = [...aliases, { token: "@2/", prefix: "other/place/" }]
    expect(blockHash(blockModel(input, unrelated))).toBe(blockHash(blockModel(input, aliases)))
    expect(renderBlock(blockModel(input, aliases))).toBe("src/x.ts:\ni→ @1/b.ts\n")
  })
})
