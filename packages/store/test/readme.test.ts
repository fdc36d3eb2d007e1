// The README's example, kept compiling and checked against the output the README shows.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StateStore } from "@strata/core/effect"
import { Effect } from "effect"
import { expect } from "vitest"
import { FileStateStore } from "../src/index.ts"
import { it } from "@strata/test-support"

it.effect("README example: one turn committed, a stale commit refused", () =>
  Effect.gen(function* () {
    const repo = mkdtempSync(join(tmpdir(), "strata-store-readme-"))
    const key = { repository: "id:readme", name: "default" }
    const program = Effect.gen(function* () {
      const store = yield* StateStore
      const { snapshot } = yield* store.load(key)
      yield* store.commit({
        session: key,
        baseVersion: snapshot.version,
        turnId: "turn-1",
        append: [
          { role: "user", content: "What does src/http.ts retry?" },
          { role: "assistant", content: "Idempotent requests, three times." }
        ],
        patch: { record: { turns: 1 } }
      })
      const stale = yield* Effect.flip(store.commit({ session: key, baseVersion: snapshot.version, turnId: "turn-2", append: [], patch: {} }))
      const after = yield* store.load(key)
      return { version: after.snapshot.version, messages: after.snapshot.history.length, conflict: stale._tag }
    })
    expect(yield* program.pipe(Effect.provide(FileStateStore.layer({ repoRoot: repo })))).toEqual({ version: 1, messages: 2, conflict: "StateConflict" })
  })
)
