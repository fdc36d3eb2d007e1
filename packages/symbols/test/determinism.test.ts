// Indexing the same tree twice gives byte-identical output, whatever the indexer's
// history, the directory it sits in, or whether git or a walk listed the files.
import { execFileSync } from "node:child_process"
import { cpSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type SymbolMap, SymbolIndexer } from "../src/index.ts"
import { FIXTURES, copyFixture, tempDir } from "./helpers.ts"

const FIXTURE_NAMES = ["ts", "python", "go", "rust", "java", "c", "cpp"]

/** Every fixture side by side in one repository. */
const allFixtures = (): string => {
  const root = tempDir()
  for (const name of FIXTURE_NAMES) cpSync(join(FIXTURES, name), join(root, name), { recursive: true })
  return root
}

const everything = (map: SymbolMap): string =>
  JSON.stringify({
    legend: map.legend,
    render: map.render(),
    tree: map.fileTree,
    treeHash: map.fileTreeHash,
    hashes: map.symbolFiles.map((p) => map.blockHash(p)),
    refs: [...map.refCounts].sort(),
    components: map.components,
    ranked: map.ranked,
    problems: map.problems
  })

const hasGit = ((): boolean => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("determinism", () => {
  it("two indexers over the same tree agree byte for byte", async () => {
    const root = allFixtures()
    const a = await (await SymbolIndexer.create(root, { git: false, cache: false })).refresh()
    const b = await (await SymbolIndexer.create(root, { git: false, cache: false })).refresh()
    expect(everything(b)).toBe(everything(a))
    expect(a.symbolFiles.length).toBeGreaterThan(20)
  })

  it("a copy in another directory renders the same", async () => {
    const a = await (await SymbolIndexer.create(allFixtures(), { git: false, cache: false })).refresh()
    const b = await (await SymbolIndexer.create(allFixtures(), { git: false, cache: false })).refresh()
    expect(everything(b)).toBe(everything(a))
  })

  it("an incremental refresh equals a fresh index of the result", async () => {
    const root = allFixtures()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    await indexer.refresh()
    writeFileSync(join(root, "ts/src/util/format.ts"), `export const formatTokens = (n: number): string => String(n)\nexport function pad2(t: string) { return t }\n`)
    writeFileSync(join(root, "python/pkg/extra.py"), `from .models import make_user\n\ndef again():\n    return make_user("x")\n`)
    const incremental = await indexer.refresh()
    // The session keeps its first legend; a fresh index given the same aliases must agree.
    const fresh = await (await SymbolIndexer.create(root, { git: false, cache: false, aliases: incremental.aliases })).refresh()
    expect(everything(incremental)).toBe(everything(fresh))
  })

  it("useAliases re-renders with another process's aliases, byte for byte as an index created with them", async () => {
    const root = allFixtures()
    const recorded = [{ token: "@1/", prefix: "ts/src/" }, { token: "@2/", prefix: "python/pkg/" }]
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const own = await indexer.refresh()
    expect(own.aliases).not.toEqual(recorded)
    await indexer.useAliases(recorded)
    const switched = await indexer.refresh()
    const created = await (await SymbolIndexer.create(root, { git: false, cache: false, aliases: recorded })).refresh()
    expect(switched.aliases).toEqual(recorded)
    expect(switched.legend).toContain("@2/=python/pkg/")
    expect(everything(switched)).toBe(everything(created))
  })

  it.skipIf(!hasGit)("git and a walk list the same files when nothing is ignored", async () => {
    const root = copyFixture("python")
    execFileSync("git", ["init", "-q"], { cwd: root })
    const viaGit = await (await SymbolIndexer.create(root, { cache: false })).refresh()
    const viaWalk = await (await SymbolIndexer.create(root, { git: false, cache: false })).refresh()
    expect(viaGit.files).toEqual(viaWalk.files)
    expect(viaGit.render()).toBe(viaWalk.render())
  })
})
