/**
 * Which sessions the dashboard shows: a store's listing (`StateStore.sessions`), narrowed
 * to some repositories (the repository's own sessions and the proxy's). Listing is cheap
 * (a directory read per session for the file store, one query for PostgreSQL), so the
 * server polls it to push updates as turns are committed.
 */
import { StateStoreError, type ListedSession, type StateStore } from "@strata/core/effect"
import { Effect } from "effect"

export type { ListedSession } from "@strata/core/effect"

/**
 * Lists the sessions of a store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeMemoryStateStore } from "@strata/core/effect"
 * import { storeSessionCatalog } from "@strata/ui"
 * const catalog = storeSessionCatalog(Effect.runSync(makeMemoryStateStore))
 * const sessions = await Effect.runPromise(catalog.list) // [{ key, version }, ...]
 * ```
 */
export interface SessionCatalog {
  readonly describe: string
  readonly list: Effect.Effect<ReadonlyArray<ListedSession>, StateStoreError>
}

/**
 * The sessions `store` lists: of the given repository identities (`sessionKeyFor(root).repository`,
 * the proxy's `strata-proxy`, ...), or all of them when none are given.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeMemoryStateStore } from "@strata/core/effect"
 * import { storeSessionCatalog } from "@strata/ui"
 * storeSessionCatalog(Effect.runSync(makeMemoryStateStore), ["git:4b825dc6"]).describe // "memory"
 * ```
 */
export const storeSessionCatalog = (store: StateStore["Service"], repositories?: ReadonlyArray<string>): SessionCatalog => {
  const asStoreError = (e: { readonly message: string }) =>
    e instanceof StateStoreError ? e : new StateStoreError({ store: store.describe, operation: "list sessions", reason: e.message, retryable: false })
  const list = repositories === undefined
    ? store.sessions()
    : Effect.map(Effect.forEach([...new Set(repositories)], (repository) => store.sessions({ repository })), (all) => all.flat())
  return {
    describe: store.describe,
    list: Effect.mapError(list, asStoreError)
  }
}
