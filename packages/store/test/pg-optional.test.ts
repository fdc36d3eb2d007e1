// `pg` is an optional peer dependency: the file store never loads it, and a PostgreSQL
// store without it fails with a message that says what to install (issue 29, item 9).
// The driver is replaced by a module that records being loaded and fails as a missing
// package does.
import { Effect } from "effect"
import { describe, expect, it, vi } from "vitest"
import { StateStore } from "@strata/core/effect"
import { tempDir } from "@strata/test-support"

const loaded = vi.hoisted(() => ({ pg: 0 }))
vi.mock("pg", () => {
  loaded.pg++
  throw new Error("Cannot find package 'pg' imported from @strata/store")
})

describe("pg, an optional peer dependency", () => {
  it("the file store works without loading it; a PostgreSQL store says to run npm install pg", async () => {
    const { FileStateStore, PostgresStateStore, sessionKeyFor } = await import("../src/index.ts")
    const dir = tempDir("strata-no-pg-")
    try {
      const version = await Effect.runPromise(
        Effect.gen(function* () {
          const key = yield* sessionKeyFor(dir.path, { name: "s", create: true })
          const store = yield* StateStore
          yield* store.rewriteHistory({ session: key, baseVersion: 0, turnId: "t1", history: [{ role: "user", content: "hi" }], patch: {} })
          return (yield* store.load(key)).snapshot.version
        }).pipe(Effect.provide(FileStateStore.layer({ repoRoot: dir.path })))
      )
      expect(version).toBe(1)
      expect(loaded.pg).toBe(0)

      const opened = await Effect.runPromise(
        Effect.flip(Effect.gen(function* () {
          yield* StateStore
        }).pipe(Effect.provide(PostgresStateStore.layer({ url: "postgres://strata:secret@127.0.0.1:1/strata" }))))
      )
      expect(loaded.pg).toBe(1)
      expect(opened._tag).toBe("StateStoreError")
      expect(opened.message).toContain("npm install pg")
      expect(opened.message).not.toContain("secret")
    } finally {
      dir.cleanup()
    }
  })
})
