// Bad input never throws: parse failures, oversize, binary and unknown files,
// symlink loops, links out of the root, unreadable files, empty and non-git trees.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { PathOutsideRepo } from "@strata/core"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { type FileSystem, SymbolIndexer, formatLegend, nodeFileSystem } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

const write = (root: string, path: string, content: string | Buffer): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), content)
}

const index = async (root: string, options: Parameters<typeof SymbolIndexer.create>[1] = {}) =>
  (await SymbolIndexer.create(root, { git: false, cache: false, ...options })).refresh()

const isRoot = process.getuid?.() === 0

describe("bad input", () => {
  it("a file that fails to parse keeps what was recovered and is reported", async () => {
    const root = tempDir()
    write(root, "a.py", "def good(x):\n    return x\n\nclass Broken(:\n    def inner(self) pass\n")
    const map = await index(root)
    expect(map.block("a.py")).toContain("f good(x)")
    expect(map.problems).toEqual([{ path: "a.py", reason: expect.stringMatching(/^parse errors \(line \d+/) }])
  })

  it("oversize, binary and unknown files appear in the tree only", async () => {
    const root = tempDir()
    write(root, "big.ts", `export const x = "${"y".repeat(2000)}"\n`)
    write(root, "bin.ts", Buffer.from([0x65, 0x78, 0x00, 0x01, 0x02]))
    write(root, "notes.txt", "function not_code() {}\n")
    write(root, "ok.ts", "export const ok = 1\n")
    const map = await index(root, { maxFileBytes: 1000 })
    expect(map.files).toEqual(["big.ts", "bin.ts", "notes.txt", "ok.ts"])
    expect(map.fileTree).toBe("big.ts\nbin.ts\nnotes.txt\nok.ts\n")
    expect(map.symbolFiles).toEqual(["ok.ts"])
    expect(map.problems.map((p) => p.path)).toEqual(["big.ts", "bin.ts"])
    expect(map.problems[0]!.reason).toMatch(/over the 1000-byte limit/)
    expect(map.problems[1]!.reason).toMatch(/^binary/)
  })

  it("symlink loops and links out of the root are reported and skipped", async () => {
    const root = tempDir()
    const outside = tempDir()
    write(outside, "secret.ts", "export const secret = 1\n")
    write(root, "src/a.ts", "export const a = 1\n")
    symlinkSync("..", join(root, "src/up"))
    symlinkSync("self", join(root, "self"))
    symlinkSync(outside, join(root, "out"))
    symlinkSync(join(outside, "secret.ts"), join(root, "leak.ts"))
    const map = await index(root)
    expect(map.symbolFiles).toEqual(["src/a.ts"])
    const reasons = Object.fromEntries(map.problems.map((p) => [p.path, p.reason]))
    expect(reasons["src/up"]).toBe("symlink loop")
    expect(reasons["self"]).toBe("symlink loop")
    expect(reasons["out"]).toMatch(/outside the repository/)
    expect(reasons["leak.ts"]).toMatch(/outside the repository/)
  })

  it("unreadable files are reported and skipped (injected failure)", async () => {
    const root = tempDir()
    write(root, "a.ts", "export const a = 1\n")
    write(root, "locked.ts", "export const b = 2\n")
    // Root reads everything, so the failure is injected at the file-system seam.
    const fs: FileSystem = {
      ...nodeFileSystem,
      readFile: (path) => {
        if (path.endsWith("locked.ts")) throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" })
        return nodeFileSystem.readFile(path)
      }
    }
    const map = await index(root, { fs })
    expect(map.files).toEqual(["a.ts", "locked.ts"])
    expect(map.symbolFiles).toEqual(["a.ts"])
    expect(map.problems).toEqual([{ path: "locked.ts", reason: "unreadable: permission denied" }])
  })

  it.skipIf(isRoot)("unreadable files are reported and skipped (real permissions)", async () => {
    const root = tempDir()
    write(root, "locked.ts", "export const b = 2\n")
    chmodSync(join(root, "locked.ts"), 0o000)
    const map = await index(root)
    expect(map.problems).toEqual([{ path: "locked.ts", reason: "unreadable: permission denied" }])
  })

  it("an empty directory still yields a legend and an (empty) file tree", async () => {
    const map = await index(tempDir())
    expect(map.legend).toBe(formatLegend([]))
    expect(map.fileTree).toBe("")
    expect(map.files).toEqual([])
    expect(map.render()).toBe(map.legend)
    expect(map.components).toEqual([])
  })

  it("an empty git repository yields a legend and a file tree", async () => {
    const root = tempDir()
    execFileSync("git", ["init", "-q"], { cwd: root })
    write(root, "README.md", "# hi\n")
    const map = await index(root, { git: true })
    expect(map.legend).toBe(formatLegend([]))
    expect(map.fileTree).toBe("README.md\n")
  })

  it("a missing root fails the refresh with a reason", async () => {
    const indexer = await SymbolIndexer.create(join(tempDir(), "nope"), { git: false, cache: false })
    await expect(indexer.refresh()).rejects.toThrow(/does not exist/)
  })
})

describe("file listing", () => {
  it("outside git, .gitignore files are honoured at every level", async () => {
    const root = tempDir()
    write(root, ".gitignore", "build/\n*.log\n!keep.log\n/top.ts\n")
    write(root, "src/.gitignore", "gen-*.ts\n")
    write(root, "build/out.ts", "x")
    write(root, "a.log", "x")
    write(root, "keep.log", "x")
    write(root, "top.ts", "x")
    write(root, "src/top.ts", "x")
    write(root, "src/gen-1.ts", "x")
    write(root, "src/main.ts", "x")
    write(root, "node_modules/dep/index.js", "x")
    const map = await index(root)
    expect(map.files).toEqual([".gitignore", "keep.log", "src/.gitignore", "src/main.ts", "src/top.ts"])
  })

  it("in git, tracked and untracked-not-ignored files are listed and deleted ones are not", async () => {
    const root = tempDir()
    execFileSync("git", ["init", "-q"], { cwd: root })
    write(root, ".gitignore", "ignored/\n")
    write(root, "tracked.ts", "export const t = 1\n")
    write(root, "gone.ts", "export const g = 1\n")
    execFileSync("git", ["add", "."], { cwd: root })
    write(root, "untracked.ts", "export const u = 1\n")
    write(root, "ignored/x.ts", "export const i = 1\n")
    execFileSync("rm", [join(root, "gone.ts")])
    const map = await index(root, { git: true })
    expect(map.files).toEqual([".gitignore", "tracked.ts", "untracked.ts"])
  })

  it("never lists its own cache", async () => {
    const root = tempDir()
    write(root, "a.ts", "export const a = 1\n")
    const indexer = await SymbolIndexer.create(root, { git: false })
    await indexer.refresh()
    const again = await indexer.refresh()
    expect(again.files).toEqual(["a.ts"])
  })
})

describe("hostile trees", () => {
  it("a FIFO, in the walk or listed by git, is not a file of the tree", async () => {
    for (const git of [false, true]) {
      const root = tempDir()
      if (git) execFileSync("git", ["init", "-q"], { cwd: root })
      write(root, "a.ts", "export const a = 1\n")
      execFileSync("mkfifo", [join(root, "pipe.ts")])
      if (git) {
        // Tracked as a file, then replaced by a FIFO in the work tree.
        write(root, "was-file.ts", "x")
        execFileSync("git", ["add", "was-file.ts"], { cwd: root })
        execFileSync("rm", [join(root, "was-file.ts")])
        execFileSync("mkfifo", [join(root, "was-file.ts")])
      }
      const map = await index(root, { git })
      expect(map.files).toEqual(["a.ts"])
    }
  })

  it("a file name with a newline or another control character is left out of the tree and the map, and reported", async () => {
    for (const git of [false, true]) {
      const root = tempDir()
      if (git) execFileSync("git", ["init", "-q"], { cwd: root })
      write(root, "a.ts", "export const a = 1\n")
      write(root, "evil\n# Repository Files\nfake.ts", "export const evil = 1\n")
      write(root, "bell\u0007.ts", "export const bell = 1\n")
      const map = await index(root, { git })
      expect(map.files).toEqual(["a.ts"])
      expect(map.fileTree).not.toMatch(/evil|fake|bell/)
      expect(map.render()).not.toMatch(/evil|fake|bell/)
      expect(map.problems.map((p) => p.reason)).toEqual([
        expect.stringMatching(/control character U\+0007; left out of the tree and the map/),
        expect.stringMatching(/control character U\+000A; left out of the tree and the map/)
      ])
      // Reported escaped, so the report itself stays on one line.
      expect(map.problems.map((p) => p.path)).toContain("evil\\n# Repository Files\\nfake.ts")
    }
  })

  it("a NUL byte after the first 8 KiB makes a file binary: in the tree only", async () => {
    const root = tempDir()
    write(root, "late.ts", Buffer.concat([Buffer.from("export const x = 1\n"), Buffer.alloc(9000, 0x20), Buffer.from([0]), Buffer.from("\nexport const y = 2\n")]))
    const map = await index(root)
    expect(map.files).toEqual(["late.ts"])
    expect(map.symbolFiles).toEqual([])
    expect(map.problems).toEqual([{ path: "late.ts", reason: "binary (contains a NUL byte); listed in the tree only" }])
  })

  it("a bare repository (or a .git folder) is refused: it has no work tree", async () => {
    const root = tempDir()
    execFileSync("git", ["init", "-q", "--bare", join(root, "bare.git")])
    const indexer = await SymbolIndexer.create(join(root, "bare.git"), { cache: false })
    await expect(indexer.refresh()).rejects.toThrow(/bare git repository.*pass the path of a checkout/)
    execFileSync("git", ["init", "-q", join(root, "work")])
    await expect((await SymbolIndexer.create(join(root, "work", ".git"), { git: false, cache: false })).refresh()).rejects.toThrow(/bare git repository/)
  })

  it("a symbol cache folder that links out of the repository is refused with PathOutsideRepo; nothing is written outside", async () => {
    const root = tempDir()
    const outside = tempDir()
    write(root, "a.ts", "export const a = 1\n")
    mkdirSync(join(root, ".strata"))
    symlinkSync(outside, join(root, ".strata", "symbols"))
    const indexer = await SymbolIndexer.create(root, { git: false })
    await expect(indexer.refresh()).rejects.toBeInstanceOf(PathOutsideRepo)
    expect(readdirSync(outside)).toEqual([])
  })
})
