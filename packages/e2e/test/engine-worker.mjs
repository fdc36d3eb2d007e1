// A child process of engine-concurrency.test.ts: one engine (built packages, as an
// application runs them) committing turns to a shared session. A commit is tried once;
// on a conflict it is committed again with retries (the request re-assembled from the
// state the other process left: it opts in, the default is StaleTurn). Prints its counts as JSON.
import process from "node:process"
import { createContextEngine } from "@strata/core"
import { stateStore } from "@strata/store"
import { TrackerLayer } from "@strata/tiers"

const task = JSON.parse(process.argv[2] ?? "{}")
const engine = createContextEngine({
  repoRoot: task.repo,
  model: "gpt-4o",
  tracker: TrackerLayer.memory(),
  // Every process continues the one shared session (an engine without it starts its own).
  session: "shared",
  // Five processes open the server at once on a loaded 2-core machine: a connection may take
  // longer than the store's 5 s default, which is not what this test is about.
  store: stateStore(task.store, task.schema === undefined ? {} : { postgres: { schema: task.schema, poolSize: 2, connectTimeoutMs: 30_000 } })
})
const stats = { committed: 0, duplicates: 0, conflicts: 0 }
try {
  await engine.addFile("src/a.ts")
  for (let t = 0; t < task.turns; t++) {
    const turn = await engine.assemble({ prompt: `question ${task.worker}-${t}` })
    const outcome = { reply: `answer ${task.worker}-${t}`, usage: { input: 1, cacheRead: 10, cacheWrite: 2, output: 3 } }
    let committed
    try {
      committed = await turn.commit(outcome, { retries: 0 })
    } catch (error) {
      // Another process committed first: the turn is stale; opt in to re-assembly.
      if (error?._tag !== "StaleTurn") throw error
      stats.conflicts += 1
      committed = await turn.commit(outcome, { retries: 200 })
    }
    if (committed.duplicate) stats.duplicates += 1
    else stats.committed += 1
  }
} finally {
  await engine.dispose()
}
process.stdout.write(JSON.stringify(stats) + "\n")
