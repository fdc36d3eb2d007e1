// A child process of the conformance tests (and of bench/store): it opens a store from
// its JSON argument and either commits turns (retrying conflicts) or commits one turn and
// kills itself with SIGKILL before the Nth write (a file-system change or a SQL statement).
import { performance } from "node:perf_hooks"
import process from "node:process"
import { Effect, Layer } from "effect"
import { StateStore } from "@strata/core/effect"
import { FileStateStore, PostgresStateStore } from "../dist/index.js"

const task = JSON.parse(process.argv[2] ?? "{}")
const points = []
const hook = (point) => {
  points.push(point)
  if (task.killAt !== undefined && points.length === task.killAt) process.kill(process.pid, "SIGKILL")
}

const layer =
  task.store.kind === "file"
    ? FileStateStore.layer({ ...task.store, beforeWrite: hook })
    : PostgresStateStore.layer({ url: task.store.url, schema: task.store.schema, beforeStatement: hook })

const exchange = (turnId) => [
  { role: "user", content: `question ${turnId}` },
  { role: "assistant", content: `answer ${turnId}` }
]

/** Commit one logical turn: load, commit, and on a conflict or a retryable error load again and retry (same turn id). */
const turn = (store, key, turnId, stats) =>
  Effect.gen(function* () {
    for (;;) {
      const { snapshot } = yield* store.load(key)
      const started = performance.now()
      const result = yield* Effect.result(
        store.commit({
          session: key,
          baseVersion: snapshot.version,
          turnId,
          append: exchange(turnId),
          patch: { tracker: { turns: snapshot.version + 1, by: turnId }, record: { last: turnId } }
        })
      )
      if (result._tag === "Success") {
        stats.latencies.push(performance.now() - started)
        if (result.success.duplicate) stats.duplicates += 1
        else stats.committed += 1
        return
      }
      const error = result.failure
      if (error._tag === "StateConflict") stats.conflicts += 1
      else if (error._tag === "StateStoreError" && error.retryable) stats.retries += 1
      else return yield* Effect.fail(error)
    }
  })

const program = Effect.gen(function* () {
  const store = yield* StateStore
  if (task.mode === "turns") {
    const stats = { committed: 0, duplicates: 0, conflicts: 0, retries: 0, latencies: [] }
    for (let t = 0; t < task.turns; t++) {
      const key = task.keys[(task.worker * 7 + t) % task.keys.length]
      yield* turn(store, key, `w${task.worker}-t${t}`, stats)
    }
    return stats
  }
  // mode "one": a single commit (possibly killed part-way by the hook)
  const { snapshot } = yield* store.load(task.key)
  const result = yield* store.commit({
    session: task.key,
    baseVersion: snapshot.version,
    turnId: task.turnId,
    append: exchange(task.turnId),
    patch: { tracker: { turns: snapshot.version + 1, by: task.turnId } }
  })
  return { result, points }
})

Effect.runPromise(program.pipe(Effect.provide(Layer.fresh(layer)))).then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + "\n")
  },
  (error) => {
    process.stderr.write(`${error?.message ?? String(error)}\n`)
    process.exitCode = 1
  }
)
