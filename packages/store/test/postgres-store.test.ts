// The PostgreSQL store against a real server (the global setup's, or STRATA_TEST_PG_URL):
// the conformance suite, then the schema migrations, the append-only history, and a
// server restart in the middle of a session (a throwaway cluster of this test's own).
import { StateStore, type Message } from "@strata/core/effect"
import { Effect, Layer } from "effect"
import pg from "pg"
import { afterAll, describe, expect, inject } from "vitest"
import { PostgresStateStore } from "../src/index.ts"
import { MIGRATIONS } from "../src/PostgresStateStore.ts"
import { startCluster } from "../scripts/pgCluster.mjs"
import { conformance, freshKey } from "./conformance.ts"
import { it } from "@strata/test-support"

const url = inject("pgUrl")
const schema = `strata_test_${process.pid}`

conformance({
  name: "postgres store",
  layer: () => PostgresStateStore.layer({ url, schema }),
  processes: {
    workerStore: () => ({ kind: "postgres", url, schema }),
    workerStoreForKills: () => ({ kind: "postgres", url, schema }),
    layerForKills: () => PostgresStateStore.layer({ url, schema })
  }
})

const exchange = (id: string): ReadonlyArray<Message> => [
  { role: "user", content: `question ${id}` },
  { role: "assistant", content: `answer ${id}` }
]

const sql = async <R extends pg.QueryResultRow>(text: string, params: ReadonlyArray<unknown> = []): Promise<ReadonlyArray<R>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(text, [...params])).rows
  } finally {
    await client.end()
  }
}

const open = <A, E>(options: { readonly url: string; readonly schema: string; readonly lockTimeoutMs?: number }, body: Effect.Effect<A, E, StateStore>) =>
  Effect.provide(body, Layer.fresh(PostgresStateStore.layer(options)))

describe("postgres store: schema", () => {
  it.effect("creates its schema on first use and records each migration once, even when processes open it together", () =>
    Effect.gen(function* () {
      const fresh = `strata_migrate_${process.pid}`
      yield* Effect.all(
        Array.from({ length: 4 }, () => open({ url, schema: fresh }, Effect.void)),
        { concurrency: 4 }
      )
      const rows = yield* Effect.promise(() => sql<{ version: number }>(`SELECT version FROM ${fresh}.migrations ORDER BY version`))
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
      const tables = yield* Effect.promise(() => sql<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [fresh]))
      expect(tables.map((t) => t.table_name)).toEqual(["history", "migrations", "sessions", "turns"])
    })
  )

  it.effect("migration 2 keeps what was committed at migration 1: its turns have no request summaries, new ones do", () =>
    Effect.gen(function* () {
      const old = `strata_m1_${process.pid}`
      const first = MIGRATIONS[0]!
      yield* Effect.promise(() => sql(`DROP SCHEMA IF EXISTS ${old} CASCADE`))
      yield* Effect.promise(() =>
        sql(`CREATE SCHEMA ${old};
          CREATE TABLE ${old}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
          ${first.sql(`"${old}"`)}
          INSERT INTO ${old}.migrations (version, name) VALUES (1, '${first.name}');
          INSERT INTO ${old}.sessions (repository, name, version, history_length, record) VALUES ('git:old', 'default', 1, 0, '{"turns":1}');
          INSERT INTO ${old}.turns (session_id, turn_id, version) SELECT id, 't1', 1 FROM ${old}.sessions;`)
      )
      const key = { repository: "git:old", name: "default" }
      yield* open(
        { url, schema: old },
        Effect.gen(function* () {
          const store = yield* StateStore
          expect((yield* store.load(key)).snapshot.record).toEqual({ turns: 1 })
          expect(yield* store.sessions({ repository: "git:old" })).toEqual([{ key, version: 1 }])
          expect((yield* store.requests(key, { from: 1, limit: 10 })).requests).toEqual([])
          yield* store.commit({ session: key, baseVersion: 1, turnId: "t2", append: [], patch: {}, request: { n: 2 } })
          expect((yield* store.requests(key, { from: 1, limit: 10 })).requests).toEqual([{ version: 2, request: { n: 2 } }])
        })
      )
    })
  )

  it.effect("refuses a schema migrated by a newer Strata", () =>
    Effect.gen(function* () {
      const newer = `strata_newer_${process.pid}`
      yield* open({ url, schema: newer }, Effect.void)
      yield* Effect.promise(() => sql(`INSERT INTO ${newer}.migrations (version, name) VALUES (999, 'from the future')`))
      const exit = yield* Effect.exit(open({ url, schema: newer }, Effect.void))
      expect(exit).toMatchObject({ _tag: "Failure" })
      expect(JSON.stringify(exit)).toMatch(/newer than this Strata knows/)
    })
  )

  it.effect("opens an up-to-date schema without the migration lock: a process holding it delays nobody", () =>
    Effect.gen(function* () {
      const current = `strata_current_${process.pid}`
      yield* open({ url, schema: current }, Effect.void)
      // Another session holds the migration lock (a migrating process, stalled).
      const holder = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      yield* Effect.promise(() => holder.query("SELECT pg_advisory_lock(hashtext($1))", [`strata-migrations:${current}`]))
      const exit = yield* Effect.exit(open({ url, schema: current, lockTimeoutMs: 300 }, Effect.void))
      expect(exit._tag, JSON.stringify(exit)).toBe("Success")
      // A schema that needs a migration still waits for the lock, and fails when it times out.
      yield* Effect.promise(() => sql(`DELETE FROM ${current}.migrations WHERE version = $1`, [MIGRATIONS[MIGRATIONS.length - 1]!.version]))
      const waited = yield* Effect.exit(open({ url, schema: current, lockTimeoutMs: 300 }, Effect.void))
      expect(waited._tag).toBe("Failure")
    }).pipe(Effect.scoped)
  )

  it.effect("history rows are append-only: the database refuses an update", () =>
    Effect.gen(function* () {
      const key = freshKey()
      yield* open(
        { url, schema },
        Effect.gen(function* () {
          const store = yield* StateStore
          yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: {} })
        })
      )
      const attempt = yield* Effect.promise(() => sql(`UPDATE ${schema}.history SET message = '{}'::json`).then(() => "updated", (e: unknown) => String(e)))
      expect(attempt).toMatch(/append-only/)
    })
  )
})

describe("postgres store: a server restart mid-session", () => {
  const cluster = startCluster()
  afterAll(async () => (await cluster).stop())

  it("a crash-restart of the server loses no committed turn, and the same store continues after it", async () => {
    const c = await cluster
    const key = freshKey()
    const startedAt = async () => {
      const client = new pg.Client({ connectionString: c.url })
      await client.connect()
      try {
        return String((await client.query<{ t: Date }>("SELECT pg_postmaster_start_time() AS t")).rows[0]?.t.getTime())
      } finally {
        await client.end()
      }
    }
    const before = await startedAt()
    const program = Effect.gen(function* () {
      const store = yield* StateStore
      /** One logical turn: load, commit; a conflict or a lost connection means load again and retry. */
      const turn = (id: string) =>
        Effect.gen(function* () {
          for (let attempt = 0; ; attempt++) {
            const loaded = yield* Effect.result(store.load(key))
            if (loaded._tag === "Success") {
              const committed = yield* Effect.result(
                store.commit({ session: key, baseVersion: loaded.success.snapshot.version, turnId: id, append: exchange(id), patch: { record: { last: id } } })
              )
              if (committed._tag === "Success") return committed.success
              if (committed.failure._tag === "StateStoreError" && !committed.failure.retryable) return yield* committed.failure
            } else if (loaded.failure._tag !== "StateStoreError" || !loaded.failure.retryable) return yield* loaded.failure
            if (attempt > 200) return yield* Effect.die(new Error(`turn ${id} never committed`))
            yield* Effect.sleep(50)
          }
        })
      for (let i = 0; i < 5; i++) yield* turn(`before-${i}`)
      // Restart while turns are being committed.
      const restart = Effect.promise(async () => {
        await new Promise((r) => setTimeout(r, 20))
        c.restart("immediate")
      })
      yield* Effect.all([restart, Effect.forEach([0, 1, 2, 3, 4], (i) => turn(`during-${i}`), { discard: true })], { concurrency: 2 })
      for (let i = 0; i < 3; i++) yield* turn(`after-${i}`)
      return (yield* store.load(key)).snapshot
    })
    const snapshot = await Effect.runPromise(Effect.provide(program, Layer.fresh(PostgresStateStore.layer({ url: c.url, connectTimeoutMs: 2000 }))))
    const ids = snapshot.history.filter((m) => m.role === "user").map((m) => String(m.content).slice("question ".length))
    expect(ids).toEqual([...[0, 1, 2, 3, 4].map((i) => `before-${i}`), ...[0, 1, 2, 3, 4].map((i) => `during-${i}`), ...[0, 1, 2].map((i) => `after-${i}`)])
    expect(snapshot.version).toBe(13)
    expect(await startedAt()).not.toBe(before)
    expect(snapshot.record).toEqual({ last: "after-2" })
  })
})
