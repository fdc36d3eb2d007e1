// The file store's record format, session keys and store selection: pure functions and
// small I/O, checked as properties where there is an invariant.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it as vitestIt } from "vitest"
import { decodeStoredRecord, encodeStoredRecord, parseStoreSpec, repositoryIdentity, sessionDirectoryName, sessionKeyFor, type StoredRecord } from "../src/index.ts"
import { redactUrl } from "../src/PostgresStateStore.ts"
import { it } from "@strata/test-support"

const recordArb: fc.Arbitrary<StoredRecord> = fc.record({
  kind: fc.constant("turn" as const),
  version: fc.integer({ min: 1, max: 1e9 }),
  turnId: fc.string({ minLength: 1, maxLength: 20 }),
  append: fc.array(fc.record({ role: fc.constantFrom("user" as const, "assistant" as const), content: fc.string({ unit: "grapheme" }) }), { maxLength: 4 }),
  patch: fc.record({ tracker: fc.jsonValue().map((v) => Schema.decodeUnknownSync(Schema.Json)(v)) }, { requiredKeys: [] })
})

describe("record format", () => {
  vitestIt("a record decodes back to itself", () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        const decoded = decodeStoredRecord(encodeStoredRecord(record))
        expect(decoded._tag).toBe("Record")
        if (decoded._tag === "Record") expect(JSON.stringify(decoded.record)).toBe(JSON.stringify(record))
      })
    )
  })

  vitestIt("every truncation of a record is detected (a torn write is never read as state)", () => {
    fc.assert(
      fc.property(recordArb, fc.nat(), (record, cut) => {
        const bytes = encodeStoredRecord(record)
        const torn = bytes.subarray(0, cut % bytes.length)
        expect(decodeStoredRecord(torn)._tag).toBe("Corrupt")
      })
    )
  })

  vitestIt("every changed byte of a record is detected", () => {
    fc.assert(
      fc.property(recordArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (record, at, flip) => {
        const bytes = Buffer.from(encodeStoredRecord(record))
        const i = at % bytes.length
        bytes[i] = (bytes[i] ?? 0) ^ flip
        expect(decodeStoredRecord(bytes)._tag).toBe("Corrupt")
      })
    )
  })
})

describe("session keys", () => {
  it.effect("a git repository is identified by its root commit, the same in every clone", () =>
    Effect.gen(function* () {
      const a = mkdtempSync(join(tmpdir(), "strata-id-a-"))
      const git = (cwd: string, ...args: Array<string>) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8" }).trim()
      git(a, "init", "-q")
      writeFileSync(join(a, "f"), "x")
      git(a, "add", "f")
      git(a, "commit", "-qm", "root")
      const root = git(a, "rev-parse", "HEAD")
      writeFileSync(join(a, "f"), "y")
      git(a, "commit", "-qam", "second")
      const b = join(mkdtempSync(join(tmpdir(), "strata-id-b-")), "clone")
      git(tmpdir(), "clone", "-q", a, b)
      expect(yield* repositoryIdentity(a)).toBe(`git:${root}`)
      expect(yield* repositoryIdentity(b)).toBe(`git:${root}`)
      expect(yield* repositoryIdentity(b, " team-repo ")).toBe("id:team-repo")
      expect(yield* sessionKeyFor(b, { name: "review" })).toEqual({ repository: `git:${root}`, name: "review" })
    })
  )

  it.effect("a directory without git history keeps a generated id in .strata/repository-id", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "strata-id-none-"))
      const [first, second] = yield* Effect.all([repositoryIdentity(dir), repositoryIdentity(dir)], { concurrency: 2 })
      expect(first).toMatch(/^local:[0-9a-f-]{36}$/)
      expect(second).toBe(first)
      expect(readFileSync(join(dir, ".strata", "repository-id"), "utf8").trim()).toBe(first?.slice("local:".length))
    })
  )

  it.effect("a session name that is not one path segment is refused", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(sessionKeyFor(tmpdir(), { name: "../escape", repositoryId: "x" }))
      expect(exit._tag).toBe("Failure")
      expect(sessionDirectoryName({ repository: "x", name: "default" })).toMatch(/^default@[0-9a-f]{12}$/)
    })
  )
})

describe("store selection", () => {
  vitestIt("parses file, memory and postgres URLs, and nothing else", () => {
    expect(parseStoreSpec(undefined)).toEqual({ kind: "file" })
    expect(parseStoreSpec(" file ")).toEqual({ kind: "file" })
    expect(parseStoreSpec("memory")).toEqual({ kind: "memory" })
    expect(parseStoreSpec("postgresql://u:p@db:5432/s")).toEqual({ kind: "postgres", url: "postgresql://u:p@db:5432/s" })
    expect(parseStoreSpec("mysql://db")).toBeUndefined()
    expect(redactUrl("postgres://u:secret@db/s")).toBe("postgres://u:***@db/s")
  })
})
