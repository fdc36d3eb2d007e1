import { InvalidInput, PathOutsideRepo, Tracker, TrackerConflict, TrackerPersistError, type ItemKey, type TrackerSnapshot } from "@strata/core"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import { decodeTrackerFile, makeMemoryTracker, TrackerLayer, type TrackerStateWarning } from "../src/index.ts"
import { makePersistentTracker } from "../src/TrackerLayer.ts"
import { item } from "./helpers.ts"
import { it } from "@strata/test-support"

const tempRepo = Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "strata-tiers-")))
const stateFile = (repo: string) => path.join(repo, ".strata", "tracker.json")
const read = (file: string) => Effect.promise(() => fs.readFile(file, "utf8"))
const write = (file: string, text: string) =>
  Effect.promise(async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, text)
  })
const keys = (snapshot: TrackerSnapshot) =>
  (["L0", "L1", "L2", "L3", "active"] as const).flatMap((tier) => snapshot.itemsIn(tier).map((i) => `${i.key}@${tier}`))

/** current -> update -> commit, as the pipeline does after a successful request. */
const turn = (tracker: Tracker["Service"], items: ReadonlyArray<ReturnType<typeof item>>) =>
  Effect.gen(function* () {
    const current = yield* tracker.current
    const { snapshot } = current.update({ items })
    yield* tracker.commit(snapshot)
    return snapshot
  })

describe("in-memory Tracker", () => {
  it.effect("commits snapshots, and a request that fails (no commit) does not advance N", () =>
    Effect.gen(function* () {
      const tracker = yield* makeMemoryTracker()
      const c0 = yield* tracker.current
      expect([c0.version, c0.baseVersion, c0.initialized]).toEqual([0, 0, false])
      const { snapshot } = c0.update({ items: [item("file:a.ts")] })
      expect([snapshot.version, snapshot.baseVersion]).toEqual([1, 0])
      yield* tracker.commit(snapshot)
      // a request built from v1 that failed is simply never committed
      const c1 = yield* tracker.current
      c1.update({ items: [item("file:a.ts")] })
      const c1again = yield* tracker.current
      expect(c1again.version).toBe(1)
      expect(c1again.get("file:a.ts")?.n).toBe(0)
    })
  )

  it.effect("refuses a snapshot derived from an older version with TrackerConflict", () =>
    Effect.gen(function* () {
      const tracker = yield* makeMemoryTracker()
      const c0 = yield* tracker.current
      yield* tracker.commit(c0.update({ items: [item("file:a.ts")] }).snapshot)
      const error = yield* Effect.flip(tracker.commit(c0.update({ items: [item("file:b.ts")] }).snapshot))
      expect(error).toBeInstanceOf(TrackerConflict)
      expect(error).toMatchObject({ expected: 0, actual: 1 })
      expect(error.message).toMatch(/assemble the request again/)
    })
  )

  it.effect("initialize then update commit together; remove and purgeHistory apply at once", () =>
    Effect.gen(function* () {
      const tracker = yield* makeMemoryTracker({ config: { policy: "gated" } })
      const c0 = yield* tracker.current
      const placed = c0.initialize({ items: [item("symbol:a.ts", "a", 300), item("symbol:b.ts", "b", 200), item("tree", "t", 100)] }).snapshot
      expect(placed.initialized).toBe(true)
      expect(placed.initialize({ items: [item("symbol:z.ts")] }).snapshot.tierOf("symbol:z.ts")).toBeUndefined()
      const next = placed.update({ items: [item("symbol:a.ts", "a", 300), item("history:0"), item("file:c.ts")] }).snapshot
      expect(next.baseVersion).toBe(0)
      yield* tracker.commit(next)
      const removed = yield* tracker.remove(["file:c.ts"])
      expect(removed).toEqual([{ key: "file:c.ts", from: "active", to: null, reason: "not in request" }])
      expect(yield* tracker.remove(["file:c.ts"])).toEqual([])
      const purged = yield* tracker.purgeHistory
      expect(purged).toEqual([{ key: "history:0", from: "active", to: null, reason: "purged" }])
      const now = yield* tracker.current
      expect(now.version).toBe(3)
      expect(keys(now)).toEqual(["symbol:a.ts@L1", "symbol:b.ts@L2", "tree@L3"])
    })
  )

  it.effect("the layer provides core's Tracker service; a bad configuration fails the layer", () =>
    Effect.gen(function* () {
      const version = yield* Effect.provide(
        Effect.gen(function* () {
          const tracker = yield* Tracker
          yield* turn(tracker, [item("tree")])
          return (yield* tracker.current).version
        }),
        TrackerLayer.memory()
      )
      expect(version).toBe(1)
      const error = yield* Effect.flip(Layer.build(TrackerLayer.memory({ config: { thresholds: { L3: 5, L2: 2 } } })).pipe(Effect.scoped))
      expect(error).toBeInstanceOf(InvalidInput)
    })
  )
})

describe("persistent Tracker", () => {
  it.effect("saves under .strata/tracker.json and loads it on start", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const a = yield* makePersistentTracker({ repoRoot: repo, config: { policy: "flux" } })
      for (let i = 0; i < 4; i++) yield* turn(a, [item("file:a.ts"), item("symbol:b.ts"), item("url:u")])
      const saved = yield* a.current
      const decoded = decodeTrackerFile(yield* read(stateFile(repo)))
      expect(decoded._tag).toBe("File")
      if (decoded._tag === "File") expect(decoded.file).toMatchObject({ schemaVersion: 1, version: 4, policy: "flux" })
      expect(yield* Effect.promise(() => fs.readdir(path.join(repo, ".strata")))).toEqual(["tracker.json"])

      const b = yield* makePersistentTracker({ repoRoot: repo, config: { policy: "flux" } })
      const loaded = yield* b.current
      expect(loaded.version).toBe(4)
      expect(keys(loaded)).toEqual(keys(saved))
      expect(loaded.get("file:a.ts")).toEqual(saved.get("file:a.ts"))
    })
  )

  const unusable = (text: string, kind: TrackerStateWarning["kind"]) =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      yield* write(stateFile(repo), text)
      const warnings: Array<TrackerStateWarning> = []
      const tracker = yield* makePersistentTracker({ repoRoot: repo, onWarning: (w) => warnings.push(w) })
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatchObject({ kind, path: stateFile(repo), backup: `${stateFile(repo)}.bad.1` })
      expect(warnings[0]?.message).toMatch(/starting from empty tiers/)
      expect(yield* read(`${stateFile(repo)}.bad.1`)).toBe(text)
      const current = yield* tracker.current
      expect([current.version, current.initialized, keys(current)]).toEqual([0, false, []])
      // the tracker works and the next commit replaces the bad file
      yield* turn(tracker, [item("tree")])
      expect(decodeTrackerFile(yield* read(stateFile(repo)))._tag).toBe("File")
      expect(warnings).toHaveLength(1)
    })

  it.effect("a corrupt file is reported and rebuilt", () => unusable("{ this is not json", "corrupt"))
  it.effect("a file of another program is reported and rebuilt", () => unusable(`{"hello":"world"}`, "corrupt"))
  it.effect("a file with bad items is reported and rebuilt", () =>
    unusable(
      JSON.stringify({ format: "strata-tracker", schemaVersion: 1, version: 3, policy: "gated", initialized: true, pending: {}, items: [{ key: "file:a", tier: "L9", n: -1, hash: "h", tokens: 1 }] }),
      "corrupt"
    )
  )
  it.effect("a foreign schema version is reported and rebuilt", () =>
    unusable(JSON.stringify({ format: "strata-tracker", schemaVersion: 2, version: 9, items: {} }), "foreign-version")
  )
  it.effect("a truncated file is reported and rebuilt", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const a = yield* makePersistentTracker({ repoRoot: repo })
      for (let i = 0; i < 3; i++) yield* turn(a, [item("file:a.ts"), item("symbol:b.ts"), item("tree")])
      const text = yield* read(stateFile(repo))
      yield* unusable(text.slice(0, Math.floor(text.length / 2)), "corrupt")
    })
  )

  it.effect("copies of damaged files are numbered: the second never overwrites the first", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const backups: Array<string | undefined> = []
      for (const text of ["{ first", "{ second"]) {
        yield* write(stateFile(repo), text)
        yield* makePersistentTracker({ repoRoot: repo, onWarning: (w) => backups.push(w.backup) })
      }
      expect(backups).toEqual([`${stateFile(repo)}.bad.1`, `${stateFile(repo)}.bad.2`])
      expect(yield* read(`${stateFile(repo)}.bad.1`)).toBe("{ first")
      expect(yield* read(`${stateFile(repo)}.bad.2`)).toBe("{ second")
    })
  )

  it.effect("a tracker file or .strata folder that links out of the repository is refused with PathOutsideRepo; the target is untouched", () =>
    Effect.gen(function* () {
      const outside = yield* tempRepo
      const secret = path.join(outside, "secret.json")
      yield* write(secret, "do not touch\n")
      for (const link of ["file", "folder"] as const) {
        const repo = yield* tempRepo
        if (link === "file") {
          yield* Effect.promise(() => fs.mkdir(path.join(repo, ".strata")))
          yield* Effect.promise(() => fs.symlink(secret, stateFile(repo)))
        } else {
          yield* Effect.promise(() => fs.symlink(outside, path.join(repo, ".strata")))
        }
        const error = yield* Effect.flip(makePersistentTracker({ repoRoot: repo }))
        expect(error).toBeInstanceOf(PathOutsideRepo)
        expect(yield* read(secret)).toBe("do not touch\n")
        expect(yield* Effect.promise(() => fs.readdir(outside))).toEqual(["secret.json"])
      }
    })
  )

  it.effect("a FIFO where the tracker file should be is reported and rebuilt, without hanging", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      yield* Effect.promise(() => fs.mkdir(path.join(repo, ".strata")))
      expect(spawnSync("mkfifo", [stateFile(repo)]).status).toBe(0)
      const warnings: Array<TrackerStateWarning> = []
      const tracker = yield* makePersistentTracker({ repoRoot: repo, onWarning: (w) => warnings.push(w) })
      expect(warnings).toMatchObject([{ kind: "unreadable" }])
      expect(warnings[0]?.message).toMatch(/FIFO/)
      // The commit replaces the FIFO with a regular file.
      yield* turn(tracker, [item("tree")])
      expect(decodeTrackerFile(yield* read(stateFile(repo)))._tag).toBe("File")
    }), 10_000
  )

  it.effect("two processes on one repository: a commit from a stale version is refused, not lost", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const a = yield* makePersistentTracker({ repoRoot: repo })
      const b = yield* makePersistentTracker({ repoRoot: repo })
      const fromA = (yield* a.current).update({ items: [item("url:a")] }).snapshot
      const fromB = (yield* b.current).update({ items: [item("url:b")] }).snapshot
      yield* a.commit(fromA)
      const error = yield* Effect.flip(b.commit(fromB))
      expect(error).toBeInstanceOf(TrackerConflict)
      expect(error).toMatchObject({ expected: 0, actual: 1 })
      // b sees a's commit and retries on top of it
      yield* turn(b, [item("url:b")])
      const seenByA = yield* a.current
      expect(seenByA.version).toBe(2)
      expect(keys(seenByA)).toEqual(["url:a@active", "url:b@active"])
      // a removal in one process invalidates the other's snapshot in flight
      const inFlight = seenByA.update({ items: [item("url:a")] }).snapshot
      yield* b.remove(["url:a"])
      expect(yield* Effect.flip(a.commit(inFlight))).toBeInstanceOf(TrackerConflict)
    })
  )

  it.effect("concurrent writers in two instances never lose an update", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      // threshold keeps url: items that a request leaves out, so every writer's item stays visible.
      const a = yield* makePersistentTracker({ repoRoot: repo, config: { policy: "threshold" } })
      const b = yield* makePersistentTracker({ repoRoot: repo, config: { policy: "threshold" } })
      const worker = (tracker: Tracker["Service"], name: string) =>
        Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) =>
          turn(tracker, [item(`url:${name}${i}` as ItemKey)]).pipe(
            Effect.retry({ while: (e) => e instanceof TrackerConflict, times: 100 })
          )
        )
      yield* Effect.all([worker(a, "a"), worker(b, "b")], { concurrency: "unbounded" })
      const final = yield* makePersistentTracker({ repoRoot: repo, config: { policy: "threshold" } })
      const current = yield* final.current
      expect(current.version).toBe(16)
      expect(current.itemsIn("active").map((i) => i.key)).toHaveLength(16)
    })
  )

  it.effect("refuses clearly while another live process holds the lock", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const tracker = yield* makePersistentTracker({ repoRoot: repo, lockTimeoutMs: 80 })
      const lock = `${stateFile(repo)}.lock`
      yield* write(lock, JSON.stringify({ pid: process.pid, host: os.hostname(), at: Date.now() }))
      const error = yield* Effect.flip(turn(tracker, [item("tree")]))
      expect(error).toBeInstanceOf(TrackerPersistError)
      expect(error.message).toContain(`process ${process.pid}`)
      expect(error.message).toContain("tracker.json.lock")
      expect(yield* read(lock)).toContain(String(process.pid))
    })
  )

  it.effect("takes over the lock of a process that died, and of a lock far too old", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      const tracker = yield* makePersistentTracker({ repoRoot: repo, lockTimeoutMs: 2000 })
      const lock = `${stateFile(repo)}.lock`
      const dead = spawnSync(process.execPath, ["-e", ""]).pid
      yield* write(lock, JSON.stringify({ pid: dead, host: os.hostname(), at: Date.now() }))
      yield* turn(tracker, [item("tree")])
      yield* write(lock, JSON.stringify({ pid: 1, host: "another-host", at: Date.now() - 3_600_000 }))
      yield* turn(tracker, [item("tree")])
      expect((yield* tracker.current).version).toBe(2)
      expect(yield* Effect.promise(() => fs.access(lock).then(() => true, () => false))).toBe(false)
    })
  )

  it.effect("a state directory that cannot be written fails the commit with TrackerPersistError", () =>
    Effect.gen(function* () {
      const repo = yield* tempRepo
      yield* write(path.join(repo, "file"), "not a directory")
      const tracker = yield* makePersistentTracker({ repoRoot: path.join(repo, "file") })
      const error = yield* Effect.flip(turn(tracker, [item("tree")]))
      expect(error).toBeInstanceOf(TrackerPersistError)
      expect((yield* tracker.current).version).toBe(0)
    })
  )
})
