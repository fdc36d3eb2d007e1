// TypeScript 5 syntax parses without errors (issue: valid code reported as parse errors on
// every run), and a file that really has errors is reported once per change, with exactly
// what the map kept of it.
import { utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { Parsers, SymbolIndexer, extractSymbols } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

const SYNTAX: ReadonlyArray<readonly [string, string]> = [
  ["export type * (TS 5.0)", 'export type * from "./a"\nexport type * as shapes from "./b"\n'],
  ["overloaded call signatures in an interface", "export interface Handler {\n  (req: Request): Promise<Response>\n  (req: Request, env: unknown): Promise<Response>\n  new (x: number): Handler\n  on(event: 'a'): void\n  on(event: 'b', n: number): void\n}\n"],
  ["satisfies", "export const routes = { home: '/' } satisfies Record<string, string>\n"],
  ["accessor", "export class Store {\n  accessor name = 'x'\n  static accessor count: number = 0\n  private accessor secret = 1\n  @tracked accessor value = 2\n}\n"],
  ["using and await using", "export async function run() {\n  using file = open()\n  await using conn = connect()\n  return file.read(conn)\n}\n"],
  ["const type parameters", "export function tuple<const T extends readonly unknown[]>(...xs: T): T {\n  return xs\n}\nexport class Box<const T> {\n  constructor(readonly value: T) {}\n}\n"]
]

describe("TypeScript 5 syntax", () => {
  let parsers: Parsers
  beforeAll(async () => {
    parsers = await Parsers.load(["typescript", "tsx"])
  })

  for (const [name, source] of SYNTAX) {
    it(`${name} parses without errors (.ts and .tsx)`, () => {
      expect(extractSymbols(parsers, "a.ts", source).errors).toEqual([])
      expect(extractSymbols(parsers, "a.tsx", source).errors).toEqual([])
    })
  }

  it("keeps what the constructs mean", () => {
    const reexports = extractSymbols(parsers, "index.ts", SYNTAX[0]![1])
    expect(reexports.imports.map((i) => [i.module, i.line])).toEqual([["./a", 1], ["./b", 2]])
    const store = extractSymbols(parsers, "store.ts", SYNTAX[3]![1]).symbols[0]!
    expect(store.children.map((c) => [c.name, c.line])).toEqual([["name", 2], ["count", 3], ["secret", 4], ["value", 5]])
    const tuple = extractSymbols(parsers, "t.ts", SYNTAX[5]![1]).symbols.map((s) => s.name)
    expect(tuple).toEqual(["tuple", "Box"])
  })
})

describe("parse problems", () => {
  it("are reported once per change of the file, saying what the map kept", async () => {
    const root = tempDir()
    const file = join(root, "broken.ts")
    writeFileSync(file, "export function good(x: number) { return helper(x) }\nexport class Fine {}\nconst = = broken(\n")
    writeFileSync(join(root, "ok.ts"), "export const ok = 1\n")
    const indexer = await SymbolIndexer.create(root, { git: false, cache: true })
    const first = await indexer.refresh()
    expect(first.problems).toEqual([
      {
        path: "broken.ts",
        reason: expect.stringMatching(/^parse errors \(line 3: [^)]*\); the map keeps 2 top-level symbols \(good, Fine\), 0 imports and \d+ calls? from the rest of the file; the code at those lines is left out$/)
      }
    ])
    expect((await indexer.refresh()).problems).toEqual([])
    // A new process reading the disk cache does not warn again either.
    indexer.flush()
    expect((await (await SymbolIndexer.create(root, { git: false, cache: true })).refresh()).problems).toEqual([])
    // A change of the file warns again.
    writeFileSync(file, "export function good(x: number) { return x }\nconst = = broken(\n")
    utimesSync(file, new Date(), new Date(Date.now() + 5000))
    const changed = await indexer.refresh()
    expect(changed.problems.map((p) => p.path)).toEqual(["broken.ts"])
    expect(changed.problems[0]!.reason).toContain("the map keeps 1 top-level symbol (good)")
  })
})
