/**
 * The PostgreSQL store, for many processes on many hosts: sessions in one table with a
 * version column (optimistic concurrency: a commit updates the row only at the version
 * it was assembled from), history as append-only rows, one transaction per turn. The
 * store creates and migrates its own schema (a versioned migrations table).
 */
import {
  formatSessionKey,
  ListedSession,
  StateConflict,
  StateSnapshot,
  StateStore,
  StateStoreError,
  StoredRequest,
  type CommitResult,
  type HistoryRewrite,
  type LoadedState,
  type Message,
  type RequestPage,
  type RequestRange,
  type SessionFilter,
  type SessionKey,
  type StatePatch,
  type TurnCommit
} from "@strata/core/effect"
import { Effect, Layer, Schema } from "effect"
// Types only: the driver is an optional peer dependency, loaded when a PostgreSQL store opens
// (`loadDriver`), so users of the file or memory store never install or load it.
import type pg from "pg"

/** Every statement of a commit, in order; fault-injection tests kill the process before each. */
export type PostgresWritePoint =
  | "begin"
  | "check-turn"
  | "update-session"
  | "insert-session"
  | "insert-history"
  | "prune-history"
  | "insert-turn"
  | "commit"

/** Options of the PostgreSQL store. */
export interface PostgresStateStoreOptions {
  /** `postgres://user:password@host:port/database` (any form `pg` accepts). */
  readonly url: string
  /** The schema that holds Strata's tables. Default `strata`. */
  readonly schema?: string | undefined
  /** Connections kept open. Default 4. */
  readonly poolSize?: number | undefined
  /** How long to wait for a connection. Default 5000 ms. */
  readonly connectTimeoutMs?: number | undefined
  /**
   * How long a statement waits for a lock another session holds (PostgreSQL's
   * `lock_timeout`) before the operation fails, retryable. Default 15000 ms, as the file store.
   */
  readonly lockTimeoutMs?: number | undefined
  /** How long one statement may run (PostgreSQL's `statement_timeout`). Default 30000 ms. */
  readonly statementTimeoutMs?: number | undefined
  /** After this long, a waiting operation logs a warning saying what it waits for. Default 2000 ms. */
  readonly announceAfterMs?: number | undefined
  /** Called before every statement a commit sends. For fault-injection tests. */
  readonly beforeStatement?: ((point: PostgresWritePoint) => void) | undefined
}

/** One migration: applied once, in order, inside a transaction, recorded in `<schema>.migrations`. */
interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: (schema: string) => string
}

/** The store's schema history. Append only: a released migration is never edited. */
export const MIGRATIONS: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "sessions, history, turns",
    sql: (s) => `
      CREATE TABLE ${s}.sessions (
        id bigserial PRIMARY KEY,
        repository text NOT NULL,
        name text NOT NULL,
        version bigint NOT NULL,
        history_epoch integer NOT NULL DEFAULT 0,
        history_length integer NOT NULL DEFAULT 0,
        tracker json,
        journal json,
        record json,
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (repository, name)
      );
      CREATE TABLE ${s}.history (
        session_id bigint NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        epoch integer NOT NULL,
        seq integer NOT NULL,
        message json NOT NULL,
        PRIMARY KEY (session_id, epoch, seq)
      );
      CREATE TABLE ${s}.turns (
        session_id bigint NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        turn_id text NOT NULL,
        version bigint NOT NULL,
        committed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, turn_id)
      );
      CREATE FUNCTION ${s}.history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'strata history rows are append-only'; END $$;
      CREATE TRIGGER history_append_only BEFORE UPDATE ON ${s}.history
        FOR EACH ROW EXECUTE FUNCTION ${s}.history_append_only();
    `
  },
  {
    version: 2,
    name: "request summaries with their turns",
    sql: (s) => `
      ALTER TABLE ${s}.turns ADD COLUMN request json;
      CREATE INDEX turns_by_version ON ${s}.turns (session_id, version);
    `
  }
]

/** SQLSTATEs and socket errors after which trying again may succeed. */
const RETRYABLE_STATES = new Set(["40001", "40P01", "53300", "57P01", "57P02", "57P03", "55P03"])
const RETRYABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"])

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** Whether a `pg` error is a lost or refused connection, or a transient database state. */
export const isRetryablePgError = (error: unknown): boolean => {
  const code = codeOf(error)
  if (code !== undefined && (RETRYABLE_STATES.has(code) || RETRYABLE_CODES.has(code) || code.startsWith("08"))) return true
  const message = error instanceof Error ? error.message : String(error)
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(message)
}

/** Query parameters of a connection string that carry a secret (the driver honours `password=`). */
const SECRET_PARAM = /^(?:password|pass|passwd|pwd|sslpassword|secret|token|api[_-]?key|access[_-]?token)$/i

/**
 * Every credential in `text` masked: the password of any `scheme://user:password@`
 * (whatever the scheme, so a mistyped `postgress://` or `postgres//` too) and the value of any
 * `password=`-like parameter. For error messages, configuration listings and logs,
 * where a URL may sit inside a sentence. Pure.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "@strata/store"
 * redactSecrets('cannot open "postgress://u:pw@db/s?password=x"') // 'cannot open "postgress://u:***@db/s?password=***"'
 * ```
 */
export const redactSecrets = (text: string): string =>
  text
    // Greedy up to the last "@": a password may hold an unescaped "@" or "/".
    .replace(/((?:[A-Za-z][A-Za-z0-9+.-]*:?)?\/\/[^\s:@/?#"'`]*):[^\s"'`]*@/g, "$1:***@")
    .replace(/([?&;\s](?:password|pass|passwd|pwd|sslpassword|secret|token|api[_-]?key|access[_-]?token)=)[^&;\s"'`]*/gi, "$1***")

/** A URL with its password masked (in the user part and in its query), for messages. Pure. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    for (const name of [...parsed.searchParams.keys()]) {
      if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, "***")
    }
    return parsed.toString().replace(/=\*\*\*/g, "=***").replace(/%2A%2A%2A/g, "***")
  } catch {
    return redactSecrets(url)
  }
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/

const decodeSnapshot = Schema.decodeUnknownEffect(StateSnapshot)

const jsonParam = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value))

interface SessionRow {
  readonly id: string
  readonly version: string
  readonly history_epoch: number
  readonly history_length: number
}

/** The store's tables, as a quoted schema name, e.g. `"strata"`. */
type Tables = string

/** What to install when the driver is missing. */
export const PG_INSTALL_HINT = "npm install pg"

/**
 * The `pg` driver, imported on first use: an optional peer dependency of this package.
 * Missing, it fails with a `StateStoreError` that says to run `npm install pg`.
 */
const loadDriver = (describe: string): Effect.Effect<typeof pg, StateStoreError> =>
  Effect.tryPromise({
    try: async () => {
      const module: { readonly default?: typeof pg } & typeof pg = await import("pg")
      return module.default ?? module
    },
    catch: (error) =>
      new StateStoreError({
        store: describe,
        operation: "open",
        reason: `the PostgreSQL store needs the \`pg\` package, which is not installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); run \`${PG_INSTALL_HINT}\` in your project (it is an optional peer dependency of @strata/store)`,
        retryable: false
      })
  })

/** The pool, closed with the scope; idle connections the server dropped are discarded. */
const openPool = (driver: typeof pg, options: PostgresStateStoreOptions) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const created = new driver.Pool({
        connectionString: options.url,
        max: options.poolSize ?? 4,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
        // Never wait without bound on another session's lock or a stuck statement.
        lock_timeout: options.lockTimeoutMs ?? 15_000,
        statement_timeout: options.statementTimeoutMs ?? 30_000,
        idleTimeoutMillis: 10_000
      })
      // An idle connection the server dropped (a restart) is discarded; the next query reconnects.
      created.on("error", () => {})
      return created
    }),
    (p) => Effect.promise(() => p.end().catch(() => undefined))
  )

/** Run `body` on one connection of `pool`; a connection that failed is destroyed, not reused. */
const clientRunner = (pool: pg.Pool) => {
  const listening = new WeakSet<pg.PoolClient>()
  return async <A>(body: (client: pg.PoolClient) => Promise<A>): Promise<A> => {
    const client = await pool.connect()
    // A connection the server drops between two statements reports it on the client
    // (the next statement fails); without a listener Node would crash the process.
    if (!listening.has(client)) {
      listening.add(client)
      client.on("error", () => {})
    }
    try {
      const result = await body(client)
      client.release()
      return result
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined)
      client.release(isRetryablePgError(error) ? (error instanceof Error ? error : new Error(String(error))) : undefined)
      throw error
    }
  }
}

/**
 * The schema has every migration this Strata knows: read without a lock, so processes
 * starting together (ten `strata` commands, several proxies) never queue behind one
 * another's migration transaction when there is nothing to migrate.
 */
const upToDate = async (client: pg.PoolClient, s: Tables): Promise<boolean> => {
  const table = await client.query<{ found: string | null }>("SELECT to_regclass($1)::text AS found", [`${s}.migrations`])
  if (table.rows[0]?.found == null) return false
  const applied = await client.query<{ version: number }>(`SELECT version FROM ${s}.migrations`)
  const versions = new Set(applied.rows.map((r) => r.version))
  return MIGRATIONS.every((m) => versions.has(m.version)) && [...versions].every((v) => MIGRATIONS.some((m) => m.version === v))
}

/** Create or migrate the schema, under a transaction-scoped advisory lock so processes starting together apply each migration once. */
const migrate = async (client: pg.PoolClient, schema: string, s: Tables): Promise<void> => {
  if (await upToDate(client, s)) return
  await client.query("BEGIN")
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`strata-migrations:${schema}`])
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
  )
  const applied = new Set((await client.query<{ version: number }>(`SELECT version FROM ${s}.migrations`)).rows.map((r) => r.version))
  const newest = Math.max(0, ...applied)
  const known = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0
  if (newest > known) {
    throw new Error(`the database schema ${schema} is at migration ${newest}, newer than this Strata knows (${known}); upgrade Strata`)
  }
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue
    await client.query(m.sql(s))
    await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name])
  }
  await client.query("COMMIT")
}

/** A session's row and current history in one read-only snapshot, undecoded. */
const readSession = async (client: pg.PoolClient, s: Tables, key: SessionKey) => {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
  const found = await client.query<SessionRow & { tracker: unknown; journal: unknown; record: unknown }>(
    `SELECT id, version, history_epoch, history_length, tracker, journal, record FROM ${s}.sessions WHERE repository = $1 AND name = $2`,
    [key.repository, key.name]
  )
  const row = found.rows[0]
  if (row === undefined) {
    await client.query("COMMIT")
    return { session: key, version: 0, history: [], tracker: null, journal: null, record: null }
  }
  const history = await client.query<{ message: unknown }>(
    `SELECT message FROM ${s}.history WHERE session_id = $1 AND epoch = $2 ORDER BY seq`,
    [row.id, row.history_epoch]
  )
  await client.query("COMMIT")
  if (history.rows.length !== row.history_length) {
    throw new Error(`session ${formatSessionKey(key)} has ${history.rows.length} history rows, its record says ${row.history_length}`)
  }
  return {
    session: key,
    version: Number(row.version),
    history: history.rows.map((r) => r.message),
    tracker: row.tracker,
    journal: row.journal,
    record: row.record
  }
}

/** The request summaries of a session's turns from version `from` on, at most `limit`, oldest first. */
const readRequests = async (client: pg.PoolClient, s: Tables, key: SessionKey, from: number, limit: number) =>
  (await client.query<{ version: string; request: unknown }>(
    `SELECT t.version, t.request FROM ${s}.turns t JOIN ${s}.sessions x ON x.id = t.session_id
     WHERE x.repository = $1 AND x.name = $2 AND t.version >= $3 AND t.request IS NOT NULL
     ORDER BY t.version LIMIT $4`,
    [key.repository, key.name, from, limit]
  )).rows.map((r) => ({ version: Number(r.version), request: r.request }))

/** Every session (of one repository, when given) with its version. */
const listSessions = async (client: pg.PoolClient, s: Tables, repository: string | undefined) =>
  (await client.query<{ repository: string; name: string; version: string }>(
    `SELECT repository, name, version FROM ${s}.sessions WHERE version > 0 AND ($1::text IS NULL OR repository = $1) ORDER BY repository, name`,
    [repository ?? null]
  )).rows.map((r) => ({ key: { repository: r.repository, name: r.name }, version: Number(r.version) }))

const decodeRequests = Schema.decodeUnknownEffect(Schema.Array(StoredRequest))
const decodeListed = Schema.decodeUnknownEffect(Schema.Array(ListedSession))

/** One commit: a turn's appended messages, or a rewrite's whole history. */
interface Write {
  readonly key: SessionKey
  readonly baseVersion: number
  readonly turnId: string
  readonly messages: ReadonlyArray<Message>
  readonly rewrite: boolean
  readonly patch: StatePatch
  readonly request?: unknown
}

/** A statement of a commit, announced to the fault-injection hook first. */
type Statement = <R extends pg.QueryResultRow>(point: PostgresWritePoint, sql: string, params?: ReadonlyArray<unknown>) => Promise<pg.QueryResult<R>>

const currentVersion = (client: pg.PoolClient, s: Tables, key: SessionKey) =>
  client.query<{ version: string }>(`SELECT version FROM ${s}.sessions WHERE repository = $1 AND name = $2`, [key.repository, key.name])

/** Move the session row to the next version (or create it at version 1); undefined when its version is not `baseVersion`. */
const advanceSession = async (q: Statement, s: Tables, w: Write): Promise<SessionRow | undefined> => {
  const { key, baseVersion, patch } = w
  const n = w.messages.length
  const set = (value: unknown) => value !== undefined
  const params = [
    key.repository,
    key.name,
    baseVersion,
    w.rewrite,
    n,
    set(patch.tracker),
    jsonParam(patch.tracker),
    set(patch.journal),
    jsonParam(patch.journal),
    set(patch.record),
    jsonParam(patch.record)
  ]
  const updated = await q<SessionRow>(
    "update-session",
    `UPDATE ${s}.sessions SET
       version = version + 1,
       history_epoch = history_epoch + CASE WHEN $4 THEN 1 ELSE 0 END,
       history_length = CASE WHEN $4 THEN $5 ELSE history_length + $5 END,
       tracker = CASE WHEN $6 THEN $7::json ELSE tracker END,
       journal = CASE WHEN $8 THEN $9::json ELSE journal END,
       record = CASE WHEN $10 THEN $11::json ELSE record END,
       updated_at = now()
     WHERE repository = $1 AND name = $2 AND version = $3
     RETURNING id, version, history_epoch, history_length`,
    params
  )
  const row = updated.rows[0]
  if (row !== undefined || baseVersion !== 0) return row
  const inserted = await q<SessionRow>(
    "insert-session",
    `INSERT INTO ${s}.sessions (repository, name, version, history_epoch, history_length, tracker, journal, record)
     VALUES ($1, $2, 1, 0, $3, $4::json, $5::json, $6::json)
     ON CONFLICT (repository, name) DO NOTHING
     RETURNING id, version, history_epoch, history_length`,
    [key.repository, key.name, n, jsonParam(patch.tracker), jsonParam(patch.journal), jsonParam(patch.record)]
  )
  return inserted.rows[0]
}

/** The commit's transaction: a retried turn is answered from the turns table; a moved base is a `StateConflict`. */
const writeSession = async (client: pg.PoolClient, s: Tables, hook: (point: PostgresWritePoint) => void, w: Write): Promise<CommitResult> => {
  const { key, baseVersion, turnId } = w
  const q: Statement = (point, sql, params = []) => {
    hook(point)
    return client.query(sql, [...params])
  }
  await q("begin", "BEGIN")
  const seen = await q<{ version: string }>(
    "check-turn",
    `SELECT s.version FROM ${s}.turns t JOIN ${s}.sessions s ON s.id = t.session_id WHERE s.repository = $1 AND s.name = $2 AND t.turn_id = $3`,
    [key.repository, key.name, turnId]
  )
  if (seen.rows[0] !== undefined) {
    const current = await currentVersion(client, s, key)
    await client.query("ROLLBACK")
    return { version: Number(current.rows[0]?.version ?? seen.rows[0].version), duplicate: true }
  }
  const n = w.messages.length
  const row = await advanceSession(q, s, w)
  if (row === undefined) {
    const current = await currentVersion(client, s, key)
    await client.query("ROLLBACK")
    throw new StateConflict({ session: formatSessionKey(key), expected: baseVersion, actual: Number(current.rows[0]?.version ?? 0) })
  }
  if (n > 0) {
    await q(
      "insert-history",
      `INSERT INTO ${s}.history (session_id, epoch, seq, message)
       SELECT $1, $2, $3 + ord::integer - 1, m FROM json_array_elements($4::json) WITH ORDINALITY AS t(m, ord)`,
      [row.id, row.history_epoch, row.history_length - n, JSON.stringify(w.messages)]
    )
  }
  if (w.rewrite) await q("prune-history", `DELETE FROM ${s}.history WHERE session_id = $1 AND epoch < $2`, [row.id, row.history_epoch])
  await q("insert-turn", `INSERT INTO ${s}.turns (session_id, turn_id, version, request) VALUES ($1, $2, $3, $4::json)`, [row.id, turnId, row.version, jsonParam(w.request)])
  await q("commit", "COMMIT")
  return { version: Number(row.version), duplicate: false }
}

/**
 * Build the PostgreSQL store: connect, create or migrate the schema, and serve sessions.
 * The pool closes with the layer's scope.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StateStore } from "@strata/core/effect"
 * import { PostgresStateStore } from "@strata/store"
 * const program = Effect.gen(function* () {
 *   const store = yield* StateStore
 *   return (yield* store.load({ repository: "git:4b825dc6", name: "default" })).snapshot.version
 * }).pipe(Effect.provide(PostgresStateStore.layer({ url: "postgres://strata@127.0.0.1:5432/strata" })))
 * ```
 */
export const makePostgresStateStore = (options: PostgresStateStoreOptions) =>
  Effect.gen(function* () {
    const schema = options.schema ?? "strata"
    const describe = redactUrl(options.url)
    const hook = options.beforeStatement ?? (() => {})
    const lockTimeoutMs = options.lockTimeoutMs ?? 15_000
    const statementTimeoutMs = options.statementTimeoutMs ?? 30_000
    const failure = (operation: string, error: unknown, statement?: string) => {
      const code = codeOf(error)
      const during = statement === undefined ? "" : ` (at the "${statement}" statement)`
      const reason =
        code === "55P03"
          ? `waited ${lockTimeoutMs} ms for a lock another database session holds on Strata's tables${during}; ` +
            `another Strata process may be mid-commit, or a session left a transaction open (see pg_stat_activity); try again`
          : code === "57014"
            ? `a statement ran past the ${statementTimeoutMs} ms statement timeout${during}; the server is overloaded or blocked`
            : redactSecrets(error instanceof Error ? error.message : String(error))
      return new StateStoreError({ store: describe, operation, reason, retryable: code === "55P03" || code === "57014" || isRetryablePgError(error) })
    }
    // A slow operation says what it waits for, once, instead of blocking silently.
    const announceAfterMs = options.announceAfterMs ?? 2000
    const announced = <A, E>(operation: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.raceFirst(
        effect,
        Effect.sleep(announceAfterMs).pipe(
          Effect.andThen(
            Effect.logWarning(
              `still waiting for PostgreSQL (${describe}) to ${operation}: a lock held by another session or a busy server; giving up after ${lockTimeoutMs} ms of lock wait`
            )
          ),
          Effect.andThen(Effect.never)
        )
      )
    if (!IDENTIFIER.test(schema)) {
      return yield* new StateStoreError({ store: describe, operation: "open", reason: `schema name "${schema}" is not a plain lower-case identifier`, retryable: false })
    }
    const s: Tables = `"${schema}"`

    const driver = yield* loadDriver(describe)
    const onClient = clientRunner(yield* openPool(driver, options))
    const withClient = <A>(operation: string, body: (client: pg.PoolClient) => Promise<A>): Effect.Effect<A, StateStoreError> =>
      announced(operation, Effect.tryPromise({ try: () => onClient(body), catch: (error) => failure(operation, error) }))

    yield* withClient("migrate the schema", (client) => migrate(client, schema, s))

    const load = Effect.fn("StateStore.load")(function* (key: SessionKey) {
      const raw = yield* withClient(`load ${formatSessionKey(key)}`, (client) => readSession(client, s, key))
      const snapshot = yield* decodeSnapshot(raw).pipe(
        Effect.mapError((issue) => new StateStoreError({ store: describe, operation: `load ${formatSessionKey(key)}`, reason: `stored state does not decode: ${issue.message}`, retryable: false }))
      )
      return { snapshot, warnings: [] } satisfies LoadedState
    })

    const write = (w: Write): Effect.Effect<CommitResult, StateConflict | StateStoreError> =>
      Effect.suspend(() => {
        let statement: string | undefined
        const tracked = (point: PostgresWritePoint) => {
          statement = point
          hook(point)
        }
        const operation = `commit to ${formatSessionKey(w.key)}`
        return announced(
          operation,
          Effect.tryPromise({
            catch: (error) => (error instanceof StateConflict ? error : failure(operation, error, statement)),
            try: () => onClient((client) => writeSession(client, s, tracked, w))
          })
        )
      })

    const service: StateStore["Service"] = {
      describe,
      load,
      version: Effect.fn("StateStore.version")(function* (key: SessionKey) {
        const { rows } = yield* withClient(`read the version of ${formatSessionKey(key)}`, (client) => currentVersion(client, s, key))
        return rows.length === 0 ? 0 : Number(rows[0]!.version)
      }),
      commit: Effect.fn("StateStore.commit")(function* (turn: TurnCommit) {
        return yield* write({ key: turn.session, baseVersion: turn.baseVersion, turnId: turn.turnId, messages: turn.append, rewrite: false, patch: turn.patch, request: turn.request })
      }),
      rewriteHistory: Effect.fn("StateStore.rewriteHistory")(function* (rewrite: HistoryRewrite) {
        return yield* write({ key: rewrite.session, baseVersion: rewrite.baseVersion, turnId: rewrite.turnId, messages: rewrite.history, rewrite: true, patch: rewrite.patch })
      }),
      requests: Effect.fn("StateStore.requests")(function* (key: SessionKey, range: RequestRange) {
        const limit = Math.max(0, Math.floor(range.limit))
        const rows = yield* withClient(`read the requests of ${formatSessionKey(key)}`, (client) => readRequests(client, s, key, range.from, limit + 1))
        const decoded = yield* decodeRequests(rows).pipe(
          Effect.mapError((issue) => new StateStoreError({ store: describe, operation: `read the requests of ${formatSessionKey(key)}`, reason: `stored requests do not decode: ${issue.message}`, retryable: false }))
        )
        return { requests: decoded.slice(0, limit), next: decoded[limit]?.version } satisfies RequestPage
      }),
      sessions: Effect.fn("StateStore.sessions")(function* (filter?: SessionFilter) {
        const rows = yield* withClient("list sessions", (client) => listSessions(client, s, filter?.repository))
        return yield* decodeListed(rows).pipe(
          Effect.mapError((issue) => new StateStoreError({ store: describe, operation: "list sessions", reason: `stored sessions do not decode: ${issue.message}`, retryable: false }))
        )
      })
    }
    return service
  })

/**
 * The PostgreSQL store as a Layer for core's `StateStore`; the connection pool closes
 * when the layer's scope does.
 *
 * @example
 * ```ts
 * import { PostgresStateStore } from "@strata/store"
 * const layer = PostgresStateStore.layer({ url: "postgres://strata@127.0.0.1:5432/strata" })
 * ```
 */
export const PostgresStateStore = {
  layer: (options: PostgresStateStoreOptions): Layer.Layer<StateStore, StateStoreError> => Layer.effect(StateStore, makePostgresStateStore(options))
} as const
