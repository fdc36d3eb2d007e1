/**
 * Which sessions a store holds, and their versions: `StateStore` loads one session by key
 * but cannot list them, so the dashboard takes a `SessionCatalog` beside it. Listing is
 * cheap (a directory read per session for the file store), so the server polls it to push
 * updates as turns are committed.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { StateStoreError, type SessionKey, type StateStore } from "@strata/core/effect"
import { Effect } from "effect"
import { sessionId } from "./views.ts"

/** A session a catalog lists: its key and current version. */
export interface ListedSession {
  readonly key: SessionKey
  readonly version: number
}

/**
 * Lists the sessions of a store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { fileSessionCatalog } from "@strata/ui"
 * const catalog = fileSessionCatalog({ repoRoot: ".", repositories: ["git:4b825dc6"] })
 * const sessions = await Effect.runPromise(catalog.list) // [{ key, version }, ...]
 * ```
 */
export interface SessionCatalog {
  readonly describe: string
  readonly list: Effect.Effect<ReadonlyArray<ListedSession>, StateStoreError>
}

/** Options of `fileSessionCatalog`. */
export interface FileSessionCatalogOptions {
  readonly repoRoot: string
  /** Where the file store keeps sessions, relative to the root. Default `.strata/state`. */
  readonly directory?: string | undefined
  /** The repository identities whose sessions to list (`sessionKeyFor(root).repository`, a configured id, ...). */
  readonly repositories: ReadonlyArray<string>
}

const LOG_FILE = /^(?:turn|snapshot)-(\d{12})\.json$/
const SESSION_DIR = /^([A-Za-z0-9_-][A-Za-z0-9._-]{0,127})@([0-9a-f]{12})$/

/**
 * The sessions the file store holds for the given repositories: one directory per
 * session (`<name>@<hash of the repository>`), its version the highest log file's.
 *
 * @example
 * ```ts
 * import { fileSessionCatalog } from "@strata/ui"
 * fileSessionCatalog({ repoRoot: ".", repositories: ["git:4b825dc6"] }).describe.endsWith("/.strata/state") // true
 * ```
 */
export const fileSessionCatalog = (options: FileSessionCatalogOptions): SessionCatalog => {
  const root = path.resolve(options.repoRoot, options.directory ?? path.join(".strata", "state"))
  const byHash = new Map(options.repositories.map((repository) => [sessionId({ repository, name: "x" }).slice(2), repository]))
  const failure = (error: unknown) =>
    new StateStoreError({ store: `files under ${root}`, operation: "list sessions", reason: error instanceof Error ? error.message : String(error), retryable: true })
  return {
    describe: `files under ${root}`,
    list: Effect.tryPromise({
      try: async () => {
        const entries = await fs.readdir(root, { withFileTypes: true }).catch((error: unknown) => {
          if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") return []
          throw error
        })
        const listed: Array<ListedSession> = []
        for (const entry of entries) {
          const m = entry.isDirectory() ? SESSION_DIR.exec(entry.name) : null
          const repository = m === null ? undefined : byHash.get(m[2] ?? "")
          if (m === null || repository === undefined) continue
          const files = await fs.readdir(path.join(root, entry.name)).catch(() => [] as Array<string>)
          let version = 0
          for (const f of files) {
            const v = LOG_FILE.exec(f)
            if (v !== null) version = Math.max(version, Number(v[1]))
          }
          if (version > 0) listed.push({ key: { repository, name: m[1] ?? "" }, version })
        }
        return listed.sort((a, b) => a.key.name.localeCompare(b.key.name))
      },
      catch: failure
    })
  }
}

/**
 * A catalog of known session keys over any store (memory, PostgreSQL): each listing loads
 * them, so keep it to a few sessions.
 *
 * @example
 * ```ts no-run
 * import { keysSessionCatalog } from "@strata/ui"
 * declare const store: import("@strata/core/effect").StateStore["Service"]
 * const catalog = keysSessionCatalog(store, [{ repository: "git:4b825dc6", name: "default" }])
 * ```
 */
export const keysSessionCatalog = (store: StateStore["Service"], keys: ReadonlyArray<SessionKey>): SessionCatalog => ({
  describe: store.describe,
  list: Effect.forEach(keys, (key) =>
    store.load(key).pipe(
      Effect.map((loaded) => ({ key, version: loaded.snapshot.version })),
      Effect.mapError((e) => (e instanceof StateStoreError ? e : new StateStoreError({ store: store.describe, operation: "list sessions", reason: e.message, retryable: false })))
    )).pipe(Effect.map((all) => all.filter((s) => s.version > 0)))
})
