/**
 * A `StateStore` in memory: state lives as long as the layer. The Promise API's default
 * when no store is given, for tests, and for applications that keep one process per
 * session and need nothing to survive it. `@strata/store` re-exports it.
 */
import {
  applyRewrite,
  applyTurn,
  emptyState,
  formatSessionKey,
  requestPage,
  StateConflict,
  StateStore,
  type CommitResult,
  type StoredRequest,
  type SessionKey,
  type StateSnapshot
} from "../services/StateStore.ts"
import { Effect, Layer, Semaphore } from "effect"

interface Entry {
  readonly state: StateSnapshot
  readonly turns: ReadonlySet<string>
  readonly requests: ReadonlyArray<StoredRequest>
}

/**
 * Build an in-memory store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeMemoryStateStore } from "@strata/core/effect"
 * const store = Effect.runSync(makeMemoryStateStore)
 * ```
 */
export const makeMemoryStateStore: Effect.Effect<StateStore["Service"]> = Effect.sync(() => {
  const sessions = new Map<string, Entry>()
  const permit = Semaphore.makeUnsafe(1)
  const entryOf = (key: SessionKey): Entry => sessions.get(formatSessionKey(key)) ?? { state: emptyState(key), turns: new Set(), requests: [] }
  const step = (key: SessionKey, baseVersion: number, turnId: string, apply: (s: StateSnapshot) => StateSnapshot, request?: StoredRequest["request"]) =>
    permit.withPermit(
      Effect.suspend((): Effect.Effect<CommitResult, StateConflict> => {
        const entry = entryOf(key)
        if (entry.turns.has(turnId)) return Effect.succeed({ version: entry.state.version, duplicate: true })
        if (entry.state.version !== baseVersion) {
          return Effect.fail(new StateConflict({ session: formatSessionKey(key), expected: baseVersion, actual: entry.state.version }))
        }
        const state = apply(entry.state)
        const requests = request === undefined ? entry.requests : [...entry.requests, { version: state.version, request }]
        sessions.set(formatSessionKey(key), { state, turns: new Set([...entry.turns, turnId]), requests })
        return Effect.succeed({ version: state.version, duplicate: false })
      })
    )
  return {
    describe: "memory",
    load: (key) => Effect.sync(() => ({ snapshot: entryOf(key).state, warnings: [] })),
    version: (key) => Effect.sync(() => entryOf(key).state.version),
    commit: (turn) => step(turn.session, turn.baseVersion, turn.turnId, (s) => applyTurn(s, turn), turn.request),
    rewriteHistory: (rewrite) => step(rewrite.session, rewrite.baseVersion, rewrite.turnId, (s) => applyRewrite(s, rewrite)),
    requests: (key, range) => Effect.sync(() => requestPage(entryOf(key).requests, range)),
    sessions: (filter) =>
      Effect.sync(() =>
        [...sessions.values()]
          .filter((e) => e.state.version > 0 && (filter?.repository === undefined || e.state.session.repository === filter.repository))
          .map((e) => ({ key: e.state.session, version: e.state.version }))
          .sort((a, b) => a.key.repository.localeCompare(b.key.repository) || a.key.name.localeCompare(b.key.name))
      )
  }
})

/**
 * The in-memory store as a Layer.
 *
 * @example
 * ```ts
 * import { MemoryStateStore } from "@strata/core/effect"
 * const layer = MemoryStateStore.layer
 * ```
 */
export const MemoryStateStore = {
  layer: Layer.effect(StateStore, makeMemoryStateStore)
} as const
