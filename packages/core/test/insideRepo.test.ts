// Safe file access inside a repository: links out are refused at every level, reads never
// block on a FIFO, writes never go through a link, damaged copies are numbered.
import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect } from "vitest"
import { keepDamagedCopy, PathOutsideRepo, readInsideRepo, readInsideRepoSync, resolveInsideRepoSync, SessionStore, unsafeNameCharacter, writeInsideRepo } from "../src/effect.ts"
import { writeInsideRepoSync } from "../src/files/insideRepo.ts"
import { it } from "@strata/test-support"

let base = ""
afterEach(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true })
  base = ""
})

/** A repository and an outside directory holding a file nobody may touch. */
const fixture = () => {
  base = mkdtempSync(join(tmpdir(), "strata-inside-"))
  const root = join(base, "repo")
  const outside = join(base, "outside")
  mkdirSync(join(root, ".strata"), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(outside, "secret.txt"), "secret\n")
  return { root, outside, secret: join(outside, "secret.txt") }
}

describe("reads inside the repository", () => {
  it.effect("reads a regular file, follows a link that stays inside, and says undefined for a missing one", () =>
    Effect.gen(function* () {
      const { root } = fixture()
      writeFileSync(join(root, ".strata", "config.json"), "{}\n")
      symlinkSync("config.json", join(root, ".strata", "alias.json"))
      expect(yield* readInsideRepo(root, ".strata/config.json")).toBe("{}\n")
      expect(yield* readInsideRepo(root, join(root, ".strata", "alias.json"))).toBe("{}\n")
      expect(yield* readInsideRepo(root, ".strata/missing.json")).toBeUndefined()
      expect(yield* readInsideRepo(root, ".strata/missing/deeper.json")).toBeUndefined()
    }))

  it.effect("refuses a file link, a folder link and a link to .strata itself that leave the repository", () =>
    Effect.gen(function* () {
      const { root, outside, secret } = fixture()
      symlinkSync(secret, join(root, ".strata", "tracker.json"))
      symlinkSync(outside, join(root, ".strata", "sessions"))
      const file = yield* Effect.flip(readInsideRepo(root, ".strata/tracker.json"))
      expect(file).toBeInstanceOf(PathOutsideRepo)
      expect(file.message).toContain(`through the link .strata/tracker.json -> ${secret}`)
      expect(yield* Effect.flip(readInsideRepo(root, ".strata/sessions/secret.txt"))).toBeInstanceOf(PathOutsideRepo)
      rmSync(join(root, ".strata"), { recursive: true })
      symlinkSync(outside, join(root, ".strata"))
      expect(yield* Effect.flip(readInsideRepo(root, ".strata/secret.txt"))).toBeInstanceOf(PathOutsideRepo)
      expect(() => readInsideRepoSync(root, ".strata/secret.txt")).toThrow(PathOutsideRepo)
    }))

  it.effect("refuses `..` and absolute paths elsewhere, and a dangling link that points out", () =>
    Effect.gen(function* () {
      const { root, outside } = fixture()
      expect(yield* Effect.flip(readInsideRepo(root, "../outside/secret.txt"))).toBeInstanceOf(PathOutsideRepo)
      expect(yield* Effect.flip(readInsideRepo(root, join(outside, "secret.txt")))).toBeInstanceOf(PathOutsideRepo)
      symlinkSync(join(outside, "not-yet"), join(root, ".strata", "journal.json"))
      expect(yield* Effect.flip(readInsideRepo(root, ".strata/journal.json"))).toBeInstanceOf(PathOutsideRepo)
    }))

  it.effect("a FIFO is refused with SpecialFile without blocking", () =>
    Effect.gen(function* () {
      const { root } = fixture()
      execFileSync("mkfifo", [join(root, ".strata", "session.json")])
      const error = yield* Effect.flip(readInsideRepo(root, ".strata/session.json"))
      expect(error).toMatchObject({ _tag: "SpecialFile", kind: "FIFO" })
      expect(() => readInsideRepoSync(root, ".strata/session.json")).toThrow(/FIFO/)
    }), 5_000)
})

describe("writes inside the repository", () => {
  it.effect("replace the file atomically, creating folders, and never write through a link", () =>
    Effect.gen(function* () {
      const { root, secret } = fixture()
      yield* writeInsideRepo(root, ".strata/symbols/index.json", "{}")
      expect(readFileSync(join(root, ".strata", "symbols", "index.json"), "utf8")).toBe("{}")
      // A link out is refused, and its target is untouched.
      symlinkSync(secret, join(root, ".strata", "last-request.json"))
      expect(yield* Effect.flip(writeInsideRepo(root, ".strata/last-request.json", "x"))).toBeInstanceOf(PathOutsideRepo)
      expect(() => writeInsideRepoSync(root, ".strata/last-request.json", "x")).toThrow(PathOutsideRepo)
      expect(readFileSync(secret, "utf8")).toBe("secret\n")
      expect(readlinkSync(join(root, ".strata", "last-request.json"))).toBe(secret)
      // No temporary file is left behind.
      expect(execFileSync("ls", ["-A", join(root, ".strata")], { encoding: "utf8" }).split("\n").filter((n) => n.endsWith(".tmp"))).toEqual([])
    }))

  it.effect("a folder link out stops the write before any folder is created outside", () =>
    Effect.gen(function* () {
      const { root, outside } = fixture()
      symlinkSync(outside, join(root, ".strata", "symbols"))
      expect(yield* Effect.flip(writeInsideRepo(root, ".strata/symbols/packs/p.json", "{}"))).toBeInstanceOf(PathOutsideRepo)
      expect(existsSync(join(outside, "packs"))).toBe(false)
    }))

  it.effect("a link inside the repository is resolved and its real target replaced (the link stays)", () =>
    Effect.gen(function* () {
      const { root } = fixture()
      writeFileSync(join(root, "shared.json"), "old")
      symlinkSync(join(root, "shared.json"), join(root, ".strata", "config.json"))
      yield* writeInsideRepo(root, ".strata/config.json", "new")
      expect(readFileSync(join(root, "shared.json"), "utf8")).toBe("new")
      expect(lstatSync(join(root, ".strata", "config.json")).isSymbolicLink()).toBe(true)
      expect(resolveInsideRepoSync(root, ".strata/config.json").real).toBe(join(base, "repo", "shared.json"))
    }))

  it.effect("a session file that is a link out is refused, and the target is not appended to", () =>
    Effect.gen(function* () {
      const { root, secret } = fixture()
      mkdirSync(join(root, ".strata", "sessions"))
      symlinkSync(secret, join(root, ".strata", "sessions", "20260101-000000.jsonl"))
      const error = yield* SessionStore.use((store) =>
        Effect.flip(store.appendExchange("20260101-000000", { role: "user", content: "q" }, { role: "assistant", content: "a" }))
      ).pipe(Effect.provide(SessionStore.layer(root)))
      expect(error).toBeInstanceOf(PathOutsideRepo)
      const load = yield* SessionStore.use((store) => Effect.flip(store.load("20260101-000000"))).pipe(Effect.provide(SessionStore.layer(root)))
      expect(load).toBeInstanceOf(PathOutsideRepo)
      expect(readFileSync(secret, "utf8")).toBe("secret\n")
    }))
})

describe("damaged copies", () => {
  it.effect("are numbered, so a second damaged file never overwrites the first copy", () =>
    Effect.gen(function* () {
      const { root } = fixture()
      expect(yield* keepDamagedCopy(root, ".strata/tracker.json", "first")).toBe(".strata/tracker.json.bad.1")
      expect(yield* keepDamagedCopy(root, ".strata/tracker.json", "second")).toBe(".strata/tracker.json.bad.2")
      expect(readFileSync(join(root, ".strata", "tracker.json.bad.1"), "utf8")).toBe("first")
      expect(readFileSync(join(root, ".strata", "tracker.json.bad.2"), "utf8")).toBe("second")
    }))
})

describe("unsafeNameCharacter", () => {
  it("names the first control character or line separator", () => {
    expect(unsafeNameCharacter("src/a.ts")).toBeUndefined()
    expect(unsafeNameCharacter("src/ünïcödé 名前.ts")).toBeUndefined()
    expect(unsafeNameCharacter("a\nb")).toBe("U+000A")
    expect(unsafeNameCharacter("a\tb")).toBe("U+0009")
    expect(unsafeNameCharacter("a\u007fb")).toBe("U+007F")
    expect(unsafeNameCharacter("a\u2029b")).toBe("U+2029")
  })
})
