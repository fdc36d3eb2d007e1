// The file store's chain of records under damage in the middle: a truncated, flipped,
// deleted or duplicated record must never let the records after it replay out of order.
// Fault-injection tests over a real chain, then a property test over random damage.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StateStore, type Message, type SessionKey } from "@strata/core/effect"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it as vitestIt } from "vitest"
import { decodeStoredRecord, encodeStoredRecord, FileStateStore, sessionDirectoryName } from "../src/index.ts"
import { turnFileName } from "../src/fileFormat.ts"
import { freshKey } from "./conformance.ts"
import { it } from "@strata/test-support"

const exchange = (id: string): ReadonlyArray<Message> => [
  { role: "user", content: `q${id}` },
  { role: "assistant", content: `a${id}` }
]

const withStore = <A, E>(root: string, body: (store: StateStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.provide(
    Effect.gen(function* () {
      return yield* body(yield* StateStore)
    }),
    Layer.fresh(FileStateStore.layer({ repoRoot: root }))
  )

/** A fresh repository with `turns` turns t1..tN committed; returns where the records are. */
const chain = (turns: number) =>
  Effect.gen(function* () {
    const root = mkdtempSync(join(tmpdir(), "strata-chain-"))
    const key = freshKey()
    yield* withStore(root, (store) =>
      Effect.gen(function* () {
        for (let i = 1; i <= turns; i++) {
          yield* store.commit({ session: key, baseVersion: i - 1, turnId: `t${i}`, append: exchange(String(i)), patch: { record: { last: i } } })
        }
      })
    )
    return { root, key, dir: join(root, ".strata", "state", sessionDirectoryName(key)) }
  })

const questions = (history: ReadonlyArray<Message>) => history.filter((m) => m.role === "user").map((m) => String(m.content))

/** Load, commit turn "new" on what was loaded, load again. */
const nextCommit = (root: string, key: SessionKey) =>
  withStore(root, (store) =>
    Effect.gen(function* () {
      const before = yield* store.load(key)
      yield* store.commit({ session: key, baseVersion: before.snapshot.version, turnId: "new", append: exchange("new"), patch: { record: { last: "new" } } })
      const after = yield* store.load(key)
      return { before, after }
    })
  )

/** A record re-signed with another version: a valid checksum and the same turn id. */
const resign = (dir: string, from: number, to: number) => {
  const got = decodeStoredRecord(readFileSync(join(dir, turnFileName(from))))
  if (got._tag !== "Record" || got.record.kind === "snapshot") throw new Error("expected a turn record")
  writeFileSync(join(dir, turnFileName(to)), encodeStoredRecord({ ...got.record, version: to }))
}

describe("file store: damage in the middle of the chain", () => {
  it.effect("a truncated third record of five: the new turn follows turn 2; turns 3-5 are set aside together and said so", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* chain(5)
      const third = join(dir, turnFileName(3))
      truncateSync(third, readFileSync(third).length - 9)
      const { before, after } = yield* nextCommit(root, key)
      expect(before.snapshot.version).toBe(2)
      expect(before.warnings).toHaveLength(1)
      expect(before.warnings[0]).toMatch(/turn-000000000003\.json is unusable \(.*torn write\).*continues from version 2.*sets it and the 2 later record\(s\) \(turn-000000000004\.json, turn-000000000005\.json\) aside/)
      expect(questions(after.snapshot.history)).toEqual(["q1", "q2", "qnew"])
      expect(after.snapshot.record).toEqual({ last: "new" })
      expect(after.warnings).toEqual([])
      expect(readdirSync(dir).filter((n) => n.includes(".bad.")).sort()).toEqual(
        [3, 4, 5].map((v) => `${turnFileName(v)}.bad.1`)
      )
      // Intact records set aside keep their bytes: nothing is destroyed.
      expect(decodeStoredRecord(readFileSync(join(dir, `${turnFileName(4)}.bad.1`)))._tag).toBe("Record")
    })
  )

  it.effect("a deleted middle record: the later ones are set aside, never chained onto", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* chain(4)
      unlinkSync(join(dir, turnFileName(2)))
      const { before, after } = yield* nextCommit(root, key)
      expect(before.warnings.join("\n")).toMatch(/turn-000000000002\.json is missing.*the 2 later record\(s\)/)
      expect(questions(after.snapshot.history)).toEqual(["q1", "qnew"])
      expect(after.warnings).toEqual([])
    })
  )

  it.effect("a record re-signed under a later version with the same turn id is not applied twice", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* chain(3)
      resign(dir, 2, 4)
      const { before, after } = yield* nextCommit(root, key)
      expect(before.snapshot.version).toBe(3)
      expect(before.warnings.join("\n")).toMatch(/turn-000000000004\.json is unusable \(it repeats turn t2/)
      expect(questions(after.snapshot.history)).toEqual(["q1", "q2", "q3", "qnew"])
    })
  )

  it.effect("a turn file that is a directory is damage like any other, not a stop", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* chain(2)
      mkdirSync(join(dir, turnFileName(3)))
      const { before, after } = yield* nextCommit(root, key)
      expect(before.warnings.join("\n")).toMatch(/a directory, not a record/)
      expect(questions(after.snapshot.history)).toEqual(["q1", "q2", "qnew"])
      expect(after.warnings).toEqual([])
    })
  )
})

type Damage = "truncate" | "flip" | "delete" | "duplicate"

describe("file store: random damage to a random chain (property)", () => {
  vitestIt("after the next commit the history is the intact prefix plus the new turn, and what was set aside is reported once", async () => {
    const arb = fc
      .record({
        turns: fc.integer({ min: 1, max: 5 }),
        damage: fc.constantFrom<Damage>("truncate", "flip", "delete", "duplicate"),
        at: fc.nat(),
        cut: fc.nat(),
        mask: fc.integer({ min: 1, max: 255 }),
        to: fc.nat()
      })
    await fc.assert(
      fc.asyncProperty(arb, async ({ turns, damage, at, cut, mask, to }) => {
        const { root, key, dir } = await Effect.runPromise(chain(turns))
        try {
          const target = 1 + (at % turns)
          const file = join(dir, turnFileName(target))
          const bytes = readFileSync(file)
          // The first turn number that is no longer part of the intact chain.
          let firstLost = target
          if (damage === "truncate") truncateSync(file, cut % bytes.length)
          else if (damage === "flip") {
            const i = cut % bytes.length
            bytes[i] = (bytes[i] ?? 0) ^ mask
            writeFileSync(file, bytes)
          } else if (damage === "delete") unlinkSync(file)
          else {
            // Re-sign record `target` under a later version (replacing or appending).
            const later = target + 1 + (to % (turns - target + 1))
            resign(dir, target, later)
            firstLost = later
          }
          const { before, after } = await Effect.runPromise(nextCommit(root, key))
          const intact = Array.from({ length: firstLost - 1 }, (_, i) => `q${i + 1}`)
          expect(questions(after.snapshot.history)).toEqual([...intact, "qnew"])
          expect(after.snapshot.version).toBe(firstLost)
          const lostCount = Math.max(turns, firstLost) - firstLost + 1 - (damage === "delete" ? 1 : 0)
          expect(readdirSync(dir).filter((n) => n.includes(".bad."))).toHaveLength(lostCount)
          // Reported once: by the load before the commit, naming each file set aside; not after.
          const said = before.warnings.join("\n")
          if (lostCount > 0) expect(before.warnings).toHaveLength(1)
          for (let v = firstLost + (damage === "delete" ? 1 : 0); v <= Math.max(turns, firstLost); v++) {
            expect(said).toContain(turnFileName(v))
          }
          expect(after.warnings).toEqual([])
        } finally {
          rmSync(root, { recursive: true, force: true })
        }
      }),
      { numRuns: 25 }
    )
  }, 60_000)
})
