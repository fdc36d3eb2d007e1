// The PostgreSQL store never waits without bound and never prints a password: a lock
// another session holds fails the commit after the lock timeout, with a warning saying
// what it waits for; every credential form is masked in what the store reports.
import { StateStore, type Message } from "@strata/core/effect"
import { Effect, Exit, Layer, Logger } from "effect"
import pg from "pg"
import { describe, expect, inject } from "vitest"
import { PostgresStateStore, redactSecrets, storeLayer } from "../src/index.ts"
import { redactUrl } from "../src/PostgresStateStore.ts"
import { freshKey } from "./conformance.ts"
import { it } from "@strata/test-support"

const url = inject("pgUrl")
const schema = `strata_waits_${process.pid}`

const exchange = (id: string): ReadonlyArray<Message> => [
  { role: "user", content: `question ${id}` },
  { role: "assistant", content: `answer ${id}` }
]

const errorOf = <A, E>(exit: Exit.Exit<A, E>) => {
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  return reason?._tag === "Fail" ? reason.error : undefined
}

describe("postgres store: bounded waits", () => {
  it.effect("a table lock held by another session fails the commit after lockTimeoutMs, retryable, saying what it waited for", () =>
    Effect.gen(function* () {
      const key = freshKey()
      const warnings: Array<string> = []
      const capture = Logger.make<unknown, void>(({ message }) => {
        warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
      })
      const layer = Layer.fresh(PostgresStateStore.layer({ url, schema, lockTimeoutMs: 600, announceAfterMs: 100 }))
      yield* Effect.gen(function* () {
        const store = yield* StateStore
        yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: {} })
      }).pipe(Effect.provide(layer))
      const holder = new pg.Client({ connectionString: url })
      yield* Effect.promise(() => holder.connect())
      try {
        yield* Effect.promise(() => holder.query(`BEGIN; LOCK TABLE "${schema}".sessions IN ACCESS EXCLUSIVE MODE`))
        const started = Date.now()
        const exit = yield* Effect.exit(
          Effect.gen(function* () {
            const store = yield* StateStore
            yield* store.commit({ session: key, baseVersion: 1, turnId: "b", append: exchange("b"), patch: {} })
          }).pipe(Effect.provide(layer), Effect.provide(Logger.layer([capture])))
        )
        const elapsed = Date.now() - started
        expect(elapsed).toBeLessThan(10_000)
        expect(errorOf(exit)).toMatchObject({ _tag: "StateStoreError", retryable: true })
        expect(String((errorOf(exit) as { message?: unknown } | undefined)?.message)).toMatch(/waited 600 ms for a lock another database session holds.*pg_stat_activity/)
        expect(warnings.join("\n")).toMatch(/still waiting for PostgreSQL .* to commit to /)
      } finally {
        yield* Effect.promise(() => holder.query("ROLLBACK").then(() => holder.end()))
      }
    })
  )
})

describe("store: credentials never shown", () => {
  const secret = "hunter2secret"
  const forms = [
    `postgres://strata:${secret}@127.0.0.1:1/strata`,
    `postgres://strata@127.0.0.1:1/strata?password=${secret}`,
    `postgresql://strata@127.0.0.1:1/strata?sslmode=disable&password=${secret}`,
    `postgress://strata:${secret}@127.0.0.1:1/strata`,
    `postgres://strata:${secret}@ss@127.0.0.1:1/strata`
  ]

  it("redactUrl and redactSecrets mask every form", () => {
    for (const form of forms) {
      expect(redactUrl(form)).not.toContain(secret)
      expect(redactSecrets(`cannot open "${form}": refused`)).not.toContain(secret)
    }
  })

  it.effect("a store that cannot open reports no password, whatever the form", () =>
    Effect.gen(function* () {
      for (const form of forms) {
        const exit = yield* Effect.exit(
          Effect.gen(function* () {
            yield* StateStore
          }).pipe(Effect.provide(Layer.fresh(storeLayer(form, { repoRoot: ".", postgres: { connectTimeoutMs: 500 } }))))
        )
        const error = errorOf(exit)
        expect(error, form).toBeDefined()
        expect(JSON.stringify(error) + String((error as { message?: unknown } | undefined)?.message), form).not.toContain(secret)
      }
    })
  )
})
