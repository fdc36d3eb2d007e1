// The incremental index: unchanged files are never re-parsed (mtime+size, then
// content hash), the on-disk cache under .strata/ serves a new session, and a
// damaged cache is reported and rebuilt.
import { execFileSync } from "node:child_process"
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, utimesSync, writeFileSync, writeSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { SymbolIndexer } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

const write = (root: string, path: string, text: string): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

const repo = (): string => {
  const root = tempDir()
  write(root, "src/a.ts", `import { b } from "./b"\nexport function a() { return b() }\n`)
  write(root, "src/b.ts", `export function b() { return 1 }\n`)
  write(root, "src/c.py", `def c():\n    pass\n`)
  return root
}

describe("incremental refresh", () => {
  it("re-parses nothing when nothing changed", async () => {
    const indexer = await SymbolIndexer.create(repo(), { git: false, cache: false })
    const first = await indexer.refresh()
    expect(first.stats).toMatchObject({ files: 3, symbolFiles: 3, parsed: 3, reused: 0 })
    const second = await indexer.refresh()
    expect(second.stats).toMatchObject({ parsed: 0, rehashed: 0, reused: 3 })
    expect(second.render()).toBe(first.render())
  })

  it("reports parse progress file by file, and nothing when nothing is parsed", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const heard: Array<readonly [number, number]> = []
    const first = await indexer.refresh({ onProgress: (done, total) => heard.push([done, total]) })
    expect(heard).toEqual([[1, 3], [2, 3], [3, 3]])
    expect(first.stats.parsed).toBe(3)
    heard.length = 0
    write(root, "src/b.ts", `export function b() { return 2 }\n`)
    await indexer.refresh({ onProgress: (done, total) => heard.push([done, total]) })
    expect(heard).toEqual([[1, 1]])
    heard.length = 0
    await indexer.refresh({ onProgress: (done, total) => heard.push([done, total]) })
    expect(heard).toEqual([])
  })

  it("a touched but unchanged file is hashed, not parsed", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    await indexer.refresh()
    const later = new Date(Date.UTC(2030, 0, 1))
    utimesSync(join(root, "src/b.ts"), later, later)
    const map = await indexer.refresh()
    expect(map.stats).toMatchObject({ parsed: 0, rehashed: 1, reused: 2 })
  })

  it("an edited file is parsed again and its dependants' blocks follow", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const before = await indexer.refresh()
    write(root, "src/b.ts", `export function b(x?: number) { return 1 }\nexport function b2() {}\n`)
    const after = await indexer.refresh()
    expect(after.stats).toMatchObject({ parsed: 1, reused: 2 })
    expect(after.block("src/b.ts")).toBe("src/b.ts: ←1\nf b(x?) ←1\nf b2()\n")
    expect(after.blockHash("src/a.ts")).toBe(before.blockHash("src/a.ts"))
  })

  it("deleted files leave the map and the counts", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    await indexer.refresh()
    write(root, "src/a.ts", `export const a = 1\n`)
    const map = await indexer.refresh()
    expect(map.block("src/b.ts")).toBe("src/b.ts:\nf b()\n")
    expect(map.refCounts.get("src/b.ts")).toBeUndefined()
  })

  it("each map names what changed since the previous one: the delta holds every path whose block hash differs", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false })
    const first = await indexer.refresh()
    expect(first.delta).toBeUndefined()
    const changedBetween = (a: typeof first, b: typeof first) =>
      [...new Set([...a.symbolFiles, ...b.symbolFiles])].filter((p) => a.blockHash(p) !== b.blockHash(p)).sort()
    // Nothing changed: a new revision with an empty delta, and the same file list object.
    const same = await indexer.refresh()
    expect(same.revision).not.toBe(first.revision)
    expect(same.delta).toEqual({ from: first.revision, paths: new Set() })
    expect(same.files).toBe(first.files)
    // b.ts stops being used by a.ts: a.ts's block changes, and b.ts's count with it.
    write(root, "src/a.ts", `export const a = 1\n`)
    const edited = await indexer.refresh()
    expect(edited.delta?.from).toBe(same.revision)
    expect([...edited.delta!.paths].sort()).toEqual(changedBetween(same, edited))
    expect(changedBetween(same, edited)).toEqual(["src/a.ts", "src/b.ts"])
    // An added and a removed file are named too.
    write(root, "src/d.ts", `export function d() {}\n`)
    rmSync(join(root, "src/c.py"))
    const moved = await indexer.refresh()
    expect([...moved.delta!.paths].sort()).toEqual(["src/c.py", "src/d.ts"])
    expect(moved.files).not.toBe(edited.files)
    // New aliases re-render every block: the chain starts over.
    await indexer.useAliases([{ token: "@1/", prefix: "src/" }])
    const aliased = await indexer.refresh()
    expect(aliased.delta).toBeUndefined()
    const next = await indexer.refresh()
    expect(next.delta).toEqual({ from: aliased.revision, paths: new Set() })
  })
})

describe("on-disk cache", () => {
  it("a new session reuses the cache under .strata/ without parsing", async () => {
    const root = repo()
    const first = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(readdirSync(join(root, ".strata/symbols"))).toContain("index.json")
    const second = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(second.stats).toMatchObject({ parsed: 0, reused: 3 })
    expect(second.render()).toBe(first.render())
    expect(second.problems).toEqual([])
  })

  it("a file changed between sessions is re-parsed, the rest come from the cache", async () => {
    const root = repo()
    await (await SymbolIndexer.create(root, { git: false })).refresh()
    write(root, "src/c.py", `def c(x):\n    pass\n`)
    const map = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(map.stats).toMatchObject({ parsed: 1, reused: 2 })
    expect(map.block("src/c.py")).toBe("src/c.py:\nf c(x)\n")
  })

  it("a corrupt index is reported and rebuilt", async () => {
    const root = repo()
    await (await SymbolIndexer.create(root, { git: false })).refresh()
    writeFileSync(join(root, ".strata/symbols/index.json"), "{ not json")
    const map = await (await SymbolIndexer.create(root, { git: false })).refresh()
    // The content-addressed objects survive: every file is re-hashed, none re-parsed.
    expect(map.stats).toMatchObject({ parsed: 0, rehashed: 3 })
    expect(map.problems).toEqual([{ path: ".strata/symbols/index.json", reason: expect.stringMatching(/^symbol cache unreadable .*; rebuilt$/) }])
    const healed = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(healed.stats.parsed).toBe(0)
    expect(healed.problems).toEqual([])
  })

  it("a corrupt pack is re-parsed silently", async () => {
    const root = repo()
    await (await SymbolIndexer.create(root, { git: false })).refresh()
    const symbolsDir = join(root, ".strata/symbols")
    const packs = join(symbolsDir, readdirSync(symbolsDir).find((d) => d.startsWith("packs-"))!)
    const names = readdirSync(packs)
    expect(names).toHaveLength(1)
    for (const name of names) writeFileSync(join(packs, name), "[]")
    const map = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(map.stats.parsed).toBe(3)
    expect(map.problems).toEqual([])
  })

  it("packs from many small refreshes are compacted at the next session start", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false })
    await indexer.refresh()
    for (let i = 0; i < 20; i++) {
      write(root, "src/b.ts", `export function b${i}() { return ${i} }\n`)
      await indexer.refresh()
    }
    indexer.flush()
    const symbolsDir = join(root, ".strata/symbols")
    const packs = join(symbolsDir, readdirSync(symbolsDir).find((d) => d.startsWith("packs-"))!)
    expect(readdirSync(packs).length).toBe(21)
    const next = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(next.stats).toMatchObject({ parsed: 0, reused: 3 })
    expect(readdirSync(packs)).toHaveLength(1)
    expect((await (await SymbolIndexer.create(root, { git: false })).refresh()).stats.parsed).toBe(0)
  })

  it("an index from another version is ignored", async () => {
    const root = repo()
    await (await SymbolIndexer.create(root, { git: false })).refresh()
    writeFileSync(join(root, ".strata/symbols/index.json"), JSON.stringify({ version: "0.0", entries: [] }))
    const map = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(map.stats).toMatchObject({ parsed: 0, rehashed: 3 })
    expect(map.problems).toEqual([])
  })

  it("an unwritable cache is reported once and indexing goes on", async () => {
    const root = repo()
    write(root, ".strata", "a file where the cache directory should be")
    const indexer = await SymbolIndexer.create(root, { git: false })
    const map = await indexer.refresh()
    expect(map.symbolFiles).toHaveLength(3)
    expect(map.problems).toEqual([{ path: ".strata/symbols", reason: expect.stringMatching(/^cannot write the symbol cache/) }])
    write(root, "src/b.ts", `export function b2() {}\n`)
    expect((await indexer.refresh()).problems).toEqual([])
  })
})

describe("file list freshness", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["outside git", false],
    ["in git", true]
  ]

  it.each(cases)("%s, added, removed and newly ignored files are seen on the next refresh", async (_label, git) => {
    const root = tempDir()
    if (git) execFileSync("git", ["init", "-q"], { cwd: root })
    write(root, ".gitignore", "*.tmp\n")
    write(root, "src/a.ts", "export const a = 1\n")
    const indexer = await SymbolIndexer.create(root, { git, cache: false })
    // Two quiet refreshes: the second confirms the listing, so later ones may skip it.
    await indexer.refresh()
    await indexer.refresh()
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts"])
    write(root, "src/b.ts", "export const b = 1\n")
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts", "src/b.ts"])
    write(root, "src/deep/new/c.ts", "export const c = 1\n")
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts", "src/b.ts", "src/deep/new/c.ts"])
    rmSync(join(root, "src/b.ts"))
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts", "src/deep/new/c.ts"])
    write(root, "src/deep/new/d.ts", "export const d = 1\n")
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts", "src/deep/new/c.ts", "src/deep/new/d.ts"])
    // An in-place edit of .gitignore changes no directory, only the file itself.
    const gitignore = openSync(join(root, ".gitignore"), "r+")
    writeSync(gitignore, "*.tmp\nsrc/deep/\n", 0)
    closeSync(gitignore)
    expect((await indexer.refresh()).files).toEqual([".gitignore", "src/a.ts"])
  })
})

describe("refresh with hints", () => {
  it("looks only at the changed paths, and a full refresh catches up", async () => {
    const root = repo()
    write(root, "big.ts", `export const big = "${"x".repeat(300)}"\n`)
    const indexer = await SymbolIndexer.create(root, { git: false, cache: false, maxFileBytes: 200 })
    const first = await indexer.refresh()
    expect(first.problems.map((p) => p.path)).toEqual(["big.ts"])
    write(root, "src/b.ts", `export function b(y: number) { return y }\n`)
    write(root, "src/new.ts", `import { b } from "./b"\nexport const n = b(1)\n`)
    write(root, "src/c.py", `def c(changed_but_not_hinted):\n    pass\n`)
    rmSync(join(root, "src/a.ts"))
    const hinted = await indexer.refresh({ changed: ["src/b.ts", "src/new.ts", "src/a.ts"] })
    expect(hinted.stats).toMatchObject({ parsed: 2, reused: 1 })
    expect(hinted.files).toEqual(["big.ts", "src/b.ts", "src/c.py", "src/new.ts"])
    expect(hinted.block("src/b.ts")).toBe("src/b.ts: ←1\nf b(y) ←1\n")
    expect(hinted.block("src/c.py")).toBe("src/c.py:\nf c()\n")
    expect(hinted.problems.map((p) => p.path)).toEqual(["big.ts"])
    const full = await indexer.refresh()
    expect(full.block("src/c.py")).toBe("src/c.py:\nf c(changed_but_not_hinted)\n")
  })
})

describe("cache index writes", () => {
  it("a small change is written on the next quiet refresh or on flush; a lagging index costs no parse", async () => {
    const root = repo()
    const indexer = await SymbolIndexer.create(root, { git: false })
    await indexer.refresh()
    write(root, "src/c.py", "def c(x):\n    pass\n")
    expect((await indexer.refresh()).stats.parsed).toBe(1)
    // The index still has the old entry: a new session re-hashes c.py and finds its object.
    const other = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(other.stats).toMatchObject({ parsed: 0, rehashed: 1, reused: 2 })
    expect(other.block("src/c.py")).toBe("src/c.py:\nf c(x)\n")
    indexer.flush()
    const after = await (await SymbolIndexer.create(root, { git: false })).refresh()
    expect(after.stats).toMatchObject({ parsed: 0, rehashed: 0, reused: 3 })
  })
})
