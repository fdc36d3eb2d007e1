// The file store: the conformance suite, then what only files can get wrong: torn and
// corrupt records, leftover temp files and locks of crashed processes, symlinks out of
// the repository, a lock held by a live process.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { StateStore, type Message } from "@strata/core/effect"
import { Effect, Exit, Layer } from "effect"
import { describe, expect } from "vitest"
import { FileStateStore, sessionDirectoryName, type FileStateStoreOptions } from "../src/index.ts"
import { conformance, freshKey } from "./conformance.ts"
import { it } from "@strata/test-support"

const repo = mkdtempSync(join(tmpdir(), "strata-file-store-"))

conformance({
  name: "file store",
  layer: () => FileStateStore.layer({ repoRoot: repo, checkpointBytes: 4096 }),
  processes: {
    workerStore: () => ({ kind: "file", repoRoot: repo, checkpointBytes: 4096 }),
    workerStoreForKills: () => ({ kind: "file", repoRoot: repo, checkpointEvery: 1 }),
    layerForKills: () => FileStateStore.layer({ repoRoot: repo, checkpointEvery: 1 })
  }
})

const withStore = <A, E>(options: FileStateStoreOptions, body: Effect.Effect<A, E, StateStore>) =>
  Effect.provide(body, Layer.fresh(FileStateStore.layer(options)))

/** Run `f` with the store. */
const using = <A, E>(f: (store: StateStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    return yield* f(yield* StateStore)
  })

const exchange = (id: string): ReadonlyArray<Message> => [
  { role: "user", content: `question ${id}` },
  { role: "assistant", content: `answer ${id}` }
]

/** Commit turns a, b, c... on a fresh session of a fresh repository; returns both. */
const seeded = (turns: number, options: Partial<FileStateStoreOptions> = {}) =>
  Effect.gen(function* () {
    const root = mkdtempSync(join(tmpdir(), "strata-file-case-"))
    const key = freshKey()
    yield* withStore(
      { repoRoot: root, ...options },
      Effect.gen(function* () {
        const store = yield* StateStore
        for (let i = 0; i < turns; i++) yield* store.commit({ session: key, baseVersion: i, turnId: `t${i}`, append: exchange(`t${i}`), patch: { record: { i } } })
      })
    )
    return { root, key, dir: join(root, ".strata", "state", sessionDirectoryName(key)) }
  })

describe("file store: damage and recovery", () => {
  it.effect("a torn last record is detected; the previous good state loads, and the next commit sets it aside", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(3)
      const last = join(dir, "turn-000000000003.json")
      truncateSync(last, readFileSync(last).length - 7)
      yield* withStore(
        { repoRoot: root },
        Effect.gen(function* () {
          const store = yield* StateStore
          const loaded = yield* store.load(key)
          expect(loaded.snapshot.version).toBe(2)
          expect(loaded.snapshot.history).toEqual([...exchange("t0"), ...exchange("t1")])
          expect(loaded.warnings.join("\n")).toMatch(/turn-000000000003\.json is unusable \(.*torn write\)/)
          yield* store.commit({ session: key, baseVersion: 2, turnId: "t2-again", append: exchange("t2-again"), patch: {} })
          const after = yield* store.load(key)
          expect(after.snapshot.version).toBe(3)
          expect(after.warnings).toEqual([])
          expect(readdirSync(dir).filter((n) => n.includes(".bad."))).toEqual(["turn-000000000003.json.bad.1"])
        })
      )
    })
  )

  it.effect("a flipped byte fails the checksum; nothing before it is lost", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(2)
      const file = join(dir, "turn-000000000002.json")
      const bytes = readFileSync(file)
      bytes[bytes.length - 10] = (bytes[bytes.length - 10] ?? 0) ^ 0x20
      writeFileSync(file, bytes)
      const loaded = yield* withStore({ repoRoot: root }, using((s) => s.load(key)))
      expect(loaded.snapshot.version).toBe(1)
      expect(loaded.snapshot.history).toEqual(exchange("t0"))
      expect(loaded.warnings.join("\n")).toMatch(/checksum mismatch/)
    })
  )

  it.effect("a corrupt checkpoint falls back to the previous checkpoint and the records after it", () =>
    Effect.gen(function* () {
      // checkpointBytes 1: every commit writes a checkpoint, keeping the previous one and its records.
      const { root, key, dir } = yield* seeded(6, { checkpointBytes: 1 })
      const snapshots = readdirSync(dir).filter((n) => n.startsWith("snapshot-")).sort()
      expect(snapshots.length).toBe(2)
      writeFileSync(join(dir, snapshots[snapshots.length - 1] ?? ""), "strata-state 1 5 0000\n{}")
      const loaded = yield* withStore({ repoRoot: root }, using((s) => s.load(key)))
      expect(loaded.snapshot.version).toBe(6)
      expect(loaded.snapshot.history).toHaveLength(12)
      expect(loaded.snapshot.record).toEqual({ i: 5 })
      expect(loaded.warnings.join("\n")).toMatch(/checkpoint snapshot-000000000006\.json is unusable/)
    })
  )

  it.effect("checkpoints prune what an older checkpoint covers, keeping one checkpoint back", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(60, { checkpointBytes: 1 })
      const versions = (prefix: string) =>
        readdirSync(dir).filter((n) => n.startsWith(prefix)).map((n) => Number(/\d{12}/.exec(n)?.[0])).sort((a, b) => a - b)
      const snapshots = versions("snapshot-")
      expect(snapshots.length).toBe(2)
      // Every record is newer than the older checkpoint: the rest were pruned.
      expect(Math.min(...versions("turn-"))).toBeGreaterThan(snapshots[0] ?? 0)
      expect(versions("turn-").length).toBeLessThan(30)
      const loaded = yield* withStore({ repoRoot: root }, using((s) => s.load(key)))
      expect(loaded.snapshot.history).toHaveLength(120)
    })
  )

  it.effect("temp files and the lock of a crashed process are cleaned by the next commit", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(1)
      writeFileSync(join(dir, ".tmp-999999-abcdef"), "half a record")
      // A pid that cannot be alive on this host.
      writeFileSync(join(dir, "lock"), JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), at: Date.now(), nonce: "x" }))
      yield* withStore(
        { repoRoot: root, lockTimeoutMs: 2000 },
        using((s) => s.commit({ session: key, baseVersion: 1, turnId: "t1", append: exchange("t1"), patch: {} }))
      )
      expect(readdirSync(dir).filter((n) => n.startsWith(".tmp-") || n === "lock")).toEqual([])
    })
  )

  it.effect("a lock held by a live process makes a commit wait, then fail as retryable without writing", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(1)
      writeFileSync(join(dir, "lock"), JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), nonce: "held" }))
      const exit = yield* Effect.exit(
        withStore(
          { repoRoot: root, lockTimeoutMs: 100 },
          using((s) => s.commit({ session: key, baseVersion: 1, turnId: "t1", append: exchange("t1"), patch: {} }))
        )
      )
      expect(exit).toMatchObject({ _tag: "Failure" })
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      expect(reason?._tag === "Fail" ? reason.error : undefined).toMatchObject({ _tag: "StateStoreError", retryable: true })
      expect(readdirSync(dir).filter((n) => n.startsWith("turn-"))).toEqual(["turn-000000000001.json"])
    })
  )

  it.effect("a state directory that is a symlink out of the repository is refused with PathOutsideRepo", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "strata-file-symlink-"))
      const outside = mkdtempSync(join(tmpdir(), "strata-outside-"))
      mkdirSync(join(root, ".strata"))
      symlinkSync(outside, join(root, ".strata", "state"))
      const exit = yield* Effect.exit(withStore({ repoRoot: root }, using((s) => s.load(freshKey()))))
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      expect(reason?._tag === "Fail" ? reason.error : undefined).toMatchObject({ _tag: "PathOutsideRepo" })
      expect(readdirSync(outside)).toEqual([])
    })
  )

  it.effect("a session directory symlinked out of the repository is refused, and nothing is written there", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "strata-file-symlink-"))
      const outside = mkdtempSync(join(tmpdir(), "strata-outside-"))
      mkdirSync(join(root, ".strata", "state"), { recursive: true })
      const key = freshKey()
      symlinkSync(outside, join(root, ".strata", "state", sessionDirectoryName(key)))
      const exit = yield* Effect.exit(
        withStore({ repoRoot: root }, using((s) => s.commit({ session: key, baseVersion: 0, turnId: "x", append: [], patch: {} })))
      )
      const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      expect(reason?._tag === "Fail" ? reason.error : undefined).toMatchObject({ _tag: "PathOutsideRepo" })
      expect(readdirSync(outside)).toEqual([])
    })
  )

  it.effect("a record that is a symlink is not followed", () =>
    Effect.gen(function* () {
      const { root, key, dir } = yield* seeded(1)
      const outside = mkdtempSync(join(tmpdir(), "strata-outside-"))
      writeFileSync(join(outside, "secret"), "not state")
      symlinkSync(join(outside, "secret"), join(dir, "turn-000000000002.json"))
      const loaded = yield* withStore({ repoRoot: root }, using((s) => s.load(key)))
      expect(loaded.snapshot.version).toBe(1)
      expect(loaded.warnings.join("\n")).toMatch(/symbolic link/)
    })
  )
})
