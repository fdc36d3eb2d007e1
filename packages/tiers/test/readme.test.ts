// The README's examples, kept compiling and checked against the output the README shows.
import { TIERS, Tracker, TrackerConflict, type Item } from "@strata/core"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import { StabilityTracker, TrackerLayer } from "../src/index.ts"
import { it } from "@strata/test-support"

describe("README", () => {
  it("pure core example prints what the README says", () => {
    const lines: Array<string> = []
    const log = (...parts: Array<string>) => lines.push(parts.join(" ").trimEnd())

    let tracker = StabilityTracker.make({ policy: "threshold" })
    tracker = StabilityTracker.initialize(tracker, {
      items: [
        { key: "symbol:src/app.ts", hash: "a1", tokens: 900 },
        { key: "symbol:src/db.ts", hash: "d1", tokens: 600 },
        { key: "tree", hash: "t1", tokens: 300 }
      ]
    }).tracker
    for (let turn = 1; turn <= 5; turn++) {
      const appHash = turn < 5 ? "a1" : "a2"
      const items: Array<Item> = [
        { key: "symbol:src/app.ts", hash: appHash, tokens: 900 },
        { key: "symbol:src/db.ts", hash: "d1", tokens: 600 },
        { key: "tree", hash: "t1", tokens: 300 },
        { key: "file:src/db.ts", hash: "f1", tokens: 2400 }
      ]
      const result = StabilityTracker.update(tracker, { items })
      tracker = result.tracker
      for (const c of result.changes) log(`turn ${turn}: ${c.key} ${c.from} -> ${c.to ?? "removed"} (${c.reason})`)
    }
    for (const tier of TIERS) {
      log(tier.padEnd(6), StabilityTracker.itemsIn(tracker, tier).map((i) => `${i.key} n=${i.n}`).join(", "))
    }
    expect(lines).toEqual([
      "turn 3: symbol:src/app.ts L1 -> L0 (promoted)",
      "turn 3: tree L3 -> L2 (promoted)",
      "turn 4: file:src/db.ts active -> L3 (graduated)",
      "turn 5: symbol:src/app.ts L0 -> active (hash changed)",
      "L0",
      "L1",
      "L2     tree n=8",
      "L3     file:src/db.ts n=4",
      "active symbol:src/app.ts n=0"
    ])
  })

  it.effect("Effect example commits through the persistent layer", () =>
    Effect.gen(function* () {
      const repoRoot = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "strata-readme-")))
      const afterSuccessfulRequest = (items: ReadonlyArray<Item>) =>
        Effect.gen(function* () {
          const tracker = yield* Tracker
          const current = yield* tracker.current
          const { snapshot, changes } = current.update({ items })
          yield* tracker.commit(snapshot)
          return changes
        })
      const program = afterSuccessfulRequest([{ key: "file:src/a.ts", hash: "h", tokens: 120 }]).pipe(
        Effect.retry({ while: (e) => e instanceof TrackerConflict, times: 3 }),
        Effect.provide(TrackerLayer.persistent({ repoRoot, config: { policy: "gated", cacheTargetTokens: 1126 } }))
      )
      expect(yield* program).toEqual([])
      const saved = JSON.parse(yield* Effect.promise(() => fs.readFile(path.join(repoRoot, ".strata", "tracker.json"), "utf8"))) as { version: number }
      expect(saved.version).toBe(1)
    })
  )
})
