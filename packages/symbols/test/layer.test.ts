// The SymbolIndex layer: core's service contract served by the indexer.
import { SymbolIndex, SymbolIndexError } from "@strata/core"
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect } from "vitest"
import { makeSymbolIndex, symbolIndexLayer } from "../src/index.ts"
import { tempDir } from "./helpers.ts"
import { it } from "@strata/test-support"

describe("symbolIndexLayer", () => {
  it.effect("serves snapshots through the SymbolIndex service", () =>
    Effect.gen(function* () {
      const root = tempDir()
      mkdirSync(join(root, "src"))
      writeFileSync(join(root, "src/a.ts"), `import { b } from "./b"\nexport const a = b()\n`)
      writeFileSync(join(root, "src/b.ts"), `export function b() { return 1 }\n`)
      const snapshot = yield* Effect.gen(function* () {
        const index = yield* SymbolIndex
        const first = yield* index.snapshot
        writeFileSync(join(root, "src/b.ts"), `export function b(x?: number) { return 1 }\n`)
        const second = yield* index.snapshot
        return { first, second }
      }).pipe(Effect.provide(symbolIndexLayer(root, { git: false, cache: false })))
      expect(snapshot.first.files).toEqual(["src/a.ts", "src/b.ts"])
      expect(snapshot.first.symbolFiles).toEqual(["src/a.ts", "src/b.ts"])
      expect(snapshot.first.block("src/b.ts")).toBe("src/b.ts: ←1\nf b() ←1\n")
      expect(snapshot.second.block("src/b.ts")).toBe("src/b.ts: ←1\nf b(x?) ←1\n")
      expect(snapshot.second.blockHash("src/b.ts")).not.toBe(snapshot.first.blockHash("src/b.ts"))
      expect(snapshot.second.blockHash("src/a.ts")).toBe(snapshot.first.blockHash("src/a.ts"))
      expect(snapshot.first.refCounts.get("src/b.ts")).toBe(1)
      expect(snapshot.first.fileTree).toBe("src/a.ts\nsrc/b.ts\n")
      expect(snapshot.first.components).toEqual([["src/a.ts"], ["src/b.ts"]])
      expect(snapshot.first.block("nope.ts")).toBeUndefined()
    })
  )

  it.effect("fails with SymbolIndexError when the root cannot be read", () =>
    Effect.gen(function* () {
      const root = join(tempDir(), "missing")
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          return yield* (yield* SymbolIndex).snapshot
        }).pipe(Effect.provide(symbolIndexLayer(root, { git: false, cache: false })))
      )
      expect(error).toBeInstanceOf(SymbolIndexError)
      expect(error.root).toBe(root)
      expect(error.reason).toMatch(/does not exist/)
      expect(error.message).toBe(`Could not index the repository at ${root}: ${error.reason}`)
    })
  )
})

describe("makeSymbolIndex", () => {
  it.effect("build reports a cold index's progress, and the next snapshot reuses its map once", () =>
    Effect.gen(function* () {
      const root = tempDir()
      mkdirSync(join(root, "src"))
      writeFileSync(join(root, "src/a.ts"), `export const a = 1\n`)
      writeFileSync(join(root, "src/b.ts"), `export function b() { return 1 }\n`)
      const index = yield* makeSymbolIndex(root, { git: false, cache: false })
      expect(index.latest()).toBeUndefined()
      const progress: Array<[number, number]> = []
      const built = yield* index.build((parsed, toParse) => progress.push([parsed, toParse]))
      expect(progress.at(-1)).toEqual([2, 2])
      expect(index.latest()).toBe(built)
      writeFileSync(join(root, "src/b.ts"), `export function b(x?: number) { return 1 }\n`)
      // The map just built serves the next snapshot (one index per command)...
      expect(yield* index.snapshot).toBe(built)
      // ...and later snapshots refresh.
      const next = yield* index.snapshot
      expect(next.block("src/b.ts")).toBe("src/b.ts:\nf b(x?)\n")
      expect(index.latest()).toBe(next)
    })
  )

  it.effect("restores the aliases it is created with", () =>
    Effect.gen(function* () {
      const root = tempDir()
      mkdirSync(join(root, "src"))
      writeFileSync(join(root, "src/a.ts"), `export const a = 1\n`)
      const index = yield* makeSymbolIndex(root, { git: false, cache: false, aliases: [{ token: "@1/", prefix: "src/" }] })
      const map = yield* index.snapshot
      expect(map.aliases).toEqual([{ token: "@1/", prefix: "src/" }])
      expect(map.block("src/a.ts")?.startsWith("@1/a.ts:")).toBe(true)
    })
  )
})
