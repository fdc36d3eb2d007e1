import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { BinaryFile, FileContext, FileNotFound, FileTooLarge, InvalidInput, makeEstimatingCounter, makeTokenCounter, normalizeRepoPath, PathOutsideRepo } from "../src/index.ts"
import { DEFAULT_MAX_FILE_BYTES } from "../src/context/FileContext.ts"
import { RepoFiles } from "../src/effect.ts"
import { it } from "@strata/test-support"

let base: string
let root: string
let outside: string

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "strata-files-"))
  root = join(base, "repo")
  outside = join(base, "outside")
  mkdirSync(join(root, "src", "nested"), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1\n")
  writeFileSync(join(root, "src", "nested", "b.py"), "def b():\n    return 2\n")
  writeFileSync(join(outside, "secret.txt"), "do not read me")
  symlinkSync(join(outside, "secret.txt"), join(root, "leak.txt"))
  symlinkSync(outside, join(root, "outdir"))
  symlinkSync(join(root, "src", "a.ts"), join(root, "alias.ts"))
})

afterAll(() => rmSync(base, { recursive: true, force: true }))

const read = (path: string, maxFileBytes?: number) =>
  Effect.gen(function* () {
    const files = yield* RepoFiles
    return yield* files.read(path)
  }).pipe(Effect.provide(RepoFiles.layer({ root, maxFileBytes })))

const failure = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

describe("normalizeRepoPath", () => {
  it.each([
    ["src/a.ts", "src/a.ts"],
    ["./src/a.ts", "src/a.ts"],
    ["src//nested/../a.ts", "src/a.ts"],
    ["src\\nested\\b.py", "src/nested/b.py"],
    ["..foo/x", "..foo/x"]
  ])("%s -> %s", (input, expected) => {
    expect(Result.getOrThrow(normalizeRepoPath("/repo", input))).toBe(expected)
  })

  it("accepts an absolute path inside the root and makes it relative", () => {
    expect(Result.getOrThrow(normalizeRepoPath("/repo", "/repo/src/a.ts"))).toBe("src/a.ts")
  })

  it.each(["../etc/passwd", "src/../../x", "/etc/passwd", "/repository/x", ".."])("refuses %s with PathOutsideRepo", (input) => {
    const result = normalizeRepoPath("/repo", input)
    expect(Result.isFailure(result) && result.failure).toBeInstanceOf(PathOutsideRepo)
  })

  it.each(["", "  ", ".", "a\0b"])("refuses %j with InvalidInput", (input) => {
    const result = normalizeRepoPath("/repo", input)
    expect(Result.isFailure(result) && result.failure).toBeInstanceOf(InvalidInput)
  })
})

describe("FileContext", () => {
  it("adds with explicit content and reads it back", () => {
    const files = FileContext.empty.addFile("src/a.ts", "x")
    expect(files.hasFile("src/a.ts")).toBe(true)
    expect(files.getContent("src/a.ts")).toBe("x")
    expect(files.hasFile("src/b.ts")).toBe(false)
    expect(files.getContent("src/b.ts")).toBeUndefined()
  })

  it("is immutable: adding returns a new context", () => {
    const empty = FileContext.empty
    const one = empty.addFile("a", "1")
    expect(empty.size).toBe(0)
    expect(one.size).toBe(1)
    expect(one.addFile("a", "1")).toBe(one)
  })

  it("removes files, lists them sorted and clears", () => {
    const files = FileContext.empty.addFile("z.ts", "z").addFile("a/b.ts", "b").addFile("B.ts", "B").addFile("m.ts", "m")
    expect(files.getFiles()).toEqual(["B.ts", "a/b.ts", "m.ts", "z.ts"])
    const removed = files.removeFile("m.ts")
    expect(removed.getFiles()).toEqual(["B.ts", "a/b.ts", "z.ts"])
    expect(removed.removeFile("nope")).toBe(removed)
    expect(removed.clear().getFiles()).toEqual([])
  })

  it("formats every file as a fenced block under its path, with no language tag", () => {
    const files = FileContext.of([
      { path: "src/b.py", content: "print(1)" },
      { path: "src/a.ts", content: "export {}" }
    ])
    expect(files.formatForPrompt()).toBe("src/a.ts\n```\nexport {}\n```\n\nsrc/b.py\n```\nprint(1)\n```")
    expect(files.formatForPrompt("# Working Files\n\nHere are the files:\n\n")).toMatch(/^# Working Files\n\nHere are the files:\n\nsrc\/a\.ts\n```\n/)
    expect(FileContext.empty.formatForPrompt("# Header\n\n")).toBe("")
  })

  it("re-counting unchanged files is served from the token memo", async () => {
    const counter = await makeTokenCounter("gpt-4o")
    const files = FileContext.of([{ path: "a.ts", content: "export const a = 1\n".repeat(10) }])
    files.countTokens(counter)
    const before = counter.stats()
    files.addFile("b.ts", "y".repeat(100)).countTokens(counter)
    expect(counter.stats()).toEqual({ hits: before.hits + 1, misses: before.misses + 1 })
  })

  it("counts tokens per file and in total", () => {
    const counter = makeEstimatingCounter()
    const files = FileContext.of([{ path: "a.txt", content: "x".repeat(400) }, { path: "b.txt", content: "y".repeat(40) }])
    const byFile = files.getTokensByFile(counter)
    expect([...byFile.keys()]).toEqual(["a.txt", "b.txt"])
    expect(byFile.get("a.txt")).toBeGreaterThan(byFile.get("b.txt")!)
    expect(files.countTokens(counter)).toBe(byFile.get("a.txt")! + byFile.get("b.txt")!)
    expect(FileContext.empty.countTokens(counter)).toBe(0)
  })
})

describe("RepoFiles.read", () => {
  it.effect("reads a file from disk with a normalized path", () =>
    Effect.gen(function* () {
      const file = yield* read("./src\\nested/b.py")
      expect(file).toEqual({ path: "src/nested/b.py", content: "def b():\n    return 2\n" })
      const absolute = yield* read(join(root, "src", "a.ts"))
      expect(absolute.path).toBe("src/a.ts")
    }))

  it.effect("a missing file fails with FileNotFound", () =>
    Effect.gen(function* () {
      const error = yield* failure(read("src/missing.ts"))
      expect(error).toBeInstanceOf(FileNotFound)
      expect(error._tag).toBe("FileNotFound")
      expect(error.message).toContain("src/missing.ts")
      expect(yield* failure(read("src/a.ts/child"))).toBeInstanceOf(FileNotFound)
    }))

  it.effect("a directory is not a file", () =>
    Effect.gen(function* () {
      expect(yield* failure(read("src"))).toBeInstanceOf(FileNotFound)
    }))

  it.effect("path traversal is blocked: .., absolute paths elsewhere", () =>
    Effect.gen(function* () {
      expect(yield* failure(read("../outside/secret.txt"))).toBeInstanceOf(PathOutsideRepo)
      expect(yield* failure(read(join(outside, "secret.txt")))).toBeInstanceOf(PathOutsideRepo)
    }))

  it.effect("a symlink that resolves outside the root is refused (file and directory links)", () =>
    Effect.gen(function* () {
      const error = yield* failure(read("leak.txt"))
      expect(error).toBeInstanceOf(PathOutsideRepo)
      expect(error.message).toContain("outside the repository root")
      expect(yield* failure(read("outdir/secret.txt"))).toBeInstanceOf(PathOutsideRepo)
    }))

  it.effect("a symlink to a file inside the root is read under its own path", () =>
    Effect.gen(function* () {
      expect(yield* read("alias.ts")).toEqual({ path: "alias.ts", content: "export const a = 1\n" })
    }))

  it.effect("a binary file (a NUL byte anywhere) is rejected with BinaryFile", () =>
    Effect.gen(function* () {
      writeFileSync(join(root, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
      const error = yield* failure(read("image.png"))
      expect(error).toBeInstanceOf(BinaryFile)
      // A NUL after the first 8 KiB makes a file binary too: it would be sent as \u0000.
      writeFileSync(join(root, "late-nul.txt"), Buffer.concat([Buffer.alloc(8192, "a"), Buffer.from([0])]))
      const late = yield* failure(read("late-nul.txt"))
      expect(late).toMatchObject({ _tag: "BinaryFile", path: "late-nul.txt", offset: 8192 })
      expect(late.message).toContain("a NUL byte at offset 8192")
    }))

  it.effect("a FIFO, a socket or a device is refused with SpecialFile before it is opened (no hang)", () =>
    Effect.gen(function* () {
      execFileSync("mkfifo", [join(root, "pipe.ts")])
      symlinkSync(join(root, "pipe.ts"), join(root, "pipe-link.ts"))
      const error = yield* failure(read("pipe.ts"))
      expect(error).toMatchObject({ _tag: "SpecialFile", path: "pipe.ts", kind: "FIFO" })
      expect(error.message).toContain("FIFO (named pipe), not a regular file")
      expect(yield* failure(read("pipe-link.ts"))).toMatchObject({ _tag: "SpecialFile", kind: "FIFO" })
      expect(yield* failure(read("/dev/null"))).toBeInstanceOf(PathOutsideRepo)
    }), 5_000)

  it.effect("a file name with a control character or line separator is refused (it could fake prompt structure)", () =>
    Effect.gen(function* () {
      for (const name of ["a\nb.ts", "a\rb.ts", "a\u001bb.ts", "a\u2028b.ts", "a\u0085b.ts"]) {
        const error = yield* failure(read(name))
        expect(error).toBeInstanceOf(InvalidInput)
        expect(error.message).toContain("control character")
      }
    }))

  it.effect("a file over the limit fails with FileTooLarge naming its size (default 1 MiB)", () =>
    Effect.gen(function* () {
      writeFileSync(join(root, "big.txt"), Buffer.alloc(DEFAULT_MAX_FILE_BYTES + 1, "a"))
      const error = yield* failure(read("big.txt"))
      expect(error).toBeInstanceOf(FileTooLarge)
      if (error._tag !== "FileTooLarge") return
      expect(error.size).toBe(DEFAULT_MAX_FILE_BYTES + 1)
      expect(error.limit).toBe(DEFAULT_MAX_FILE_BYTES)
      expect(error.message).toContain(String(DEFAULT_MAX_FILE_BYTES + 1))
      writeFileSync(join(root, "exact.txt"), Buffer.alloc(DEFAULT_MAX_FILE_BYTES, "a"))
      expect((yield* read("exact.txt")).content.length).toBe(DEFAULT_MAX_FILE_BYTES)
    }))

  it.effect("the size limit is configurable", () =>
    Effect.gen(function* () {
      writeFileSync(join(root, "ten.txt"), "0123456789")
      const error = yield* failure(read("ten.txt", 9))
      expect(error).toMatchObject({ _tag: "FileTooLarge", size: 10, limit: 9 })
      expect((yield* read("ten.txt", 10)).content).toBe("0123456789")
    }))

  it.effect("invalid UTF-8 is decoded with replacement characters, not an error", () =>
    Effect.gen(function* () {
      writeFileSync(join(root, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe, 0x21]))
      const file = yield* read("latin1.txt")
      expect(file.content).toBe("caf\uFFFD \uFFFD\uFFFD!")
    }))
})
