// The tracker's state as a JSON value (what a StateStore keeps), and core's TrackerState:
// trackers seeded from it that write nothing and give their committed state back.
import { TrackerState, type TrackerSnapshot } from "@strata/core"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import { decodeTrackerFile, decodeTrackerState, encodeTrackerFile, encodeTrackerState, StabilityTracker, TrackerLayer } from "../src/index.ts"
import { item } from "./helpers.ts"
import { it } from "@strata/test-support"

const keysByTier = (snapshot: TrackerSnapshot) =>
  (["L0", "L1", "L2", "L3", "active"] as const).flatMap((tier) => snapshot.itemsIn(tier).map((i) => `${i.key}@${tier}:${i.n}`))

describe("tracker state as JSON", () => {
  it("round-trips any tracker the updates can reach, and equals the tracker file's content", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom("file:a.ts", "file:b.ts", "symbol:c.ts", "history:0", "tree"), { maxLength: 5 }), { maxLength: 14 }), (requests) => {
        let tracker = StabilityTracker.make({ policy: "threshold" })
        for (const keys of requests) tracker = StabilityTracker.update(tracker, { items: [...new Set(keys)].map((k) => item(k)) }).tracker
        const state = encodeTrackerState(tracker, requests.length)
        const decoded = decodeTrackerState(JSON.parse(JSON.stringify(state)))
        expect(decoded._tag).toBe("File")
        if (decoded._tag !== "File") return
        expect(decoded.file).toEqual(state)
        const restored = StabilityTracker.restore(tracker.config, decoded.file)
        expect([...restored.items.values()]).toEqual([...tracker.items.values()].sort((a, b) => (a.key < b.key ? -1 : 1)))
        // The file form is the same value as text: old tracker files import as store state.
        expect(JSON.parse(encodeTrackerFile(tracker, requests.length))).toEqual(state)
        expect(decodeTrackerFile(encodeTrackerFile(tracker, requests.length))).toEqual(decoded)
      })
    )
  })

  it("names what is wrong with state it cannot use", () => {
    expect(decodeTrackerState({ format: "strata-tracker", schemaVersion: 9 })).toMatchObject({ _tag: "Problem", problem: { kind: "foreign-version" } })
    expect(decodeTrackerState({ items: [] })).toMatchObject({ _tag: "Problem", problem: { kind: "corrupt" } })
    expect(decodeTrackerState(null)).toMatchObject({ _tag: "Problem", problem: { kind: "corrupt" } })
  })
})

describe("TrackerState", () => {
  it.effect("a seeded tracker starts from the stored state, commits in memory, and gives its state back", () =>
    Effect.gen(function* () {
      const states = yield* TrackerState
      const first = yield* states.seed(null)
      expect(first.warnings).toEqual([])
      let stored = yield* first.state
      for (let turn = 0; turn < 4; turn++) {
        const seeded = yield* states.seed(stored)
        const current = yield* seeded.tracker.current
        const { snapshot } = current.update({ items: [item("file:a.ts")] })
        yield* seeded.tracker.commit(snapshot)
        stored = yield* seeded.state
      }
      const last = yield* states.seed(stored)
      const current = yield* last.tracker.current
      expect(current.version).toBe(4)
      expect(current.tierOf("file:a.ts")).toBe("L3")
      // Seeding twice from one state gives two independent trackers: a turn that is not
      // committed leaves the stored state as it was.
      const a = yield* states.seed(stored)
      yield* a.tracker.purgeHistory
      yield* a.tracker.remove(["file:a.ts"])
      expect(yield* (yield* states.seed(stored)).state).toEqual(stored)
    }).pipe(Effect.provide(TrackerLayer.state({ config: { policy: "threshold" } }))))

  it.effect("unusable state starts empty with a warning", () =>
    Effect.gen(function* () {
      const seeded = yield* (yield* TrackerState).seed({ format: "strata-tracker", schemaVersion: 2 })
      expect(seeded.warnings[0]).toMatch(/unusable \(foreign-version/)
      expect(keysByTier(yield* seeded.tracker.current)).toEqual([])
    }).pipe(Effect.provide(TrackerLayer.state())))

  it.effect("the persistent layer's TrackerState writes no tracker file", () =>
    Effect.gen(function* () {
      const repo = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "strata-tiers-state-")))
      const program = Effect.gen(function* () {
        const seeded = yield* (yield* TrackerState).seed(null)
        const current = yield* seeded.tracker.current
        yield* seeded.tracker.commit(current.update({ items: [item("file:a.ts")] }).snapshot)
        return yield* seeded.state
      })
      const state = yield* program.pipe(Effect.provide(Layer.fresh(TrackerLayer.persistent({ repoRoot: repo }))))
      expect(state).toMatchObject({ version: 1 })
      const exists = yield* Effect.promise(() => fs.access(path.join(repo, ".strata", "tracker.json")).then(() => true, () => false))
      expect(exists).toBe(false)
      yield* Effect.promise(() => fs.rm(repo, { recursive: true, force: true }))
    }))
})
