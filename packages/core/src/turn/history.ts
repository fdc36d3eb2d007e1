/**
 * A session's history outside of turns, kept in the `StateStore`: appending messages
 * (checked with the `History` rules) and rewriting the whole history (clear, compaction,
 * truncation) together with the tracker purge that goes with it, each one compare-and-set
 * commit, retried on conflict against the fresh state (`retryOnConflict`, which the proxy's
 * per-request commit uses too).
 */
import { Effect, Exit, Option } from "effect"
import { InvalidInput, type PathOutsideRepo } from "../domain/errors.ts"
import { historyProblems, type Message } from "../domain/Message.ts"
import {
  StateStore,
  type CommitResult,
  type SessionKey,
  StateConflict,
  type StatePatch,
  type StateSnapshot,
  type StateStoreError,
  type TurnId
} from "../services/StateStore.ts"
import { Tracker, TrackerState } from "../services/Tracker.ts"

/** How a history change is committed. */
export interface HistoryChangeOptions {
  /** The change's id, kept across retries (default: a random UUID). */
  readonly turnId?: TurnId | undefined
  /** Conflicts retried against the fresh state before giving up (default 3). */
  readonly retries?: number | undefined
  /** Where the tracker's state lives (see `TurnOptions.tracker`); default `store` when `TrackerState` is provided. */
  readonly tracker?: "store" | "service" | undefined
}

/** Errors of a history change. */
export type HistoryChangeError = InvalidInput | StateConflict | StateStoreError | PathOutsideRepo

/**
 * Run `attempt` again when it fails with `StateConflict` (another process committed to
 * the session first), at most `retries` more times; any other failure, or the conflict
 * after the last retry, is the result. The attempt loads the state, decides and commits
 * itself: a retry must decide again from what it loads, so `retry` (0 for the first run)
 * tells it when a state it kept from an earlier attempt is stale.
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { retryOnConflict, StateStore, type SessionKey } from "@strata/core/effect"
 * declare const session: SessionKey
 * const program = retryOnConflict(() => Effect.gen(function* () {
 *   const store = yield* StateStore
 *   const { snapshot } = yield* store.load(session)
 *   return yield* store.commit({ session, baseVersion: snapshot.version, turnId: "t-1", append: [], patch: { record: { note: "seen" } } })
 * }), 3)
 * ```
 */
export const retryOnConflict = <A, E, R>(attempt: (retry: number) => Effect.Effect<A, E, R>, retries: number): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    for (let retry = 0; ; retry++) {
      const exit = yield* Effect.exit(attempt(retry))
      if (Exit.isSuccess(exit)) return exit.value
      const conflict = Exit.findErrorOption(exit).pipe(Option.filter((e) => e instanceof StateConflict))
      if (Option.isNone(conflict) || retry >= retries) return yield* Effect.failCause(exit.cause)
    }
  })

/**
 * Append messages to a session's history in one commit. They must continue it: a tool
 * message answers the calls of the message before it, ids stay unique (the last message's
 * calls may stay pending). A bad append fails with `InvalidInput` naming the message and
 * changes nothing.
 *
 * @example
 * ```ts no-run
 * import { appendHistory, type SessionKey } from "@strata/core/effect"
 * declare const session: SessionKey
 * const program = appendHistory(session, [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }])
 * ```
 */
export const appendHistory = Effect.fn("Strata.appendHistory")(function* (
  session: SessionKey,
  messages: ReadonlyArray<Message>,
  options: HistoryChangeOptions = {}
) {
  const store = yield* StateStore
  const turnId = options.turnId ?? crypto.randomUUID()
  const attempt = Effect.gen(function* () {
    const { snapshot } = yield* store.load(session)
    const problem = historyProblems([...snapshot.history, ...messages], { pending: true }).find((p) => p.index >= snapshot.history.length - 1)
    if (problem !== undefined) return yield* new InvalidInput({ what: "message", issue: problem.issue })
    return yield* store.commit({ session, baseVersion: snapshot.version, turnId, append: messages, patch: {} })
  })
  const result: CommitResult = yield* retryOnConflict(() => attempt, options.retries ?? 3)
  return result
})

/** A history rewrite's outcome. */
export interface HistoryRewritten<A> {
  /** The commit, or undefined when the rewrite decided to change nothing. */
  readonly commit: CommitResult | undefined
  /** What the rewrite function returned with its history. */
  readonly value: A
}

/**
 * Replace a session's history with what `rewrite` makes of the stored one, in one
 * compare-and-set commit; with `purgeTracker` the tracker's `history:` entries go in the
 * same commit (store mode) or right after it (service mode). On a conflict `rewrite` runs
 * again on the fresh state. `rewrite` returns `history: undefined` to change nothing.
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { rewriteSessionHistory, type SessionKey } from "@strata/core/effect"
 * declare const session: SessionKey
 * // Clear the history and the tracker's history entries.
 * const clear = rewriteSessionHistory(session, () => Effect.succeed({ history: [], value: undefined }), { purgeTracker: true })
 * ```
 */
export const rewriteSessionHistory = Effect.fn("Strata.rewriteSessionHistory")(function* <A, E, R>(
  session: SessionKey,
  rewrite: (snapshot: StateSnapshot) => Effect.Effect<{ readonly history: ReadonlyArray<Message> | undefined; readonly value: A }, E, R>,
  options: HistoryChangeOptions & { readonly purgeTracker?: boolean | undefined } = {}
) {
  const store = yield* StateStore
  const state = yield* Effect.serviceOption(TrackerState)
  const ambient = yield* Effect.serviceOption(Tracker)
  const mode = options.tracker ?? (Option.isSome(state) ? "store" : "service")
  const turnId = options.turnId ?? crypto.randomUUID()
  const attempt = Effect.gen(function* () {
    const { snapshot } = yield* store.load(session)
    const { history, value } = yield* rewrite(snapshot)
    if (history === undefined) return { commit: undefined, value }
    let patch: StatePatch = {}
    if (options.purgeTracker === true && mode === "store" && Option.isSome(state)) {
      const seeded = yield* state.value.seed(snapshot.tracker)
      // The seeded tracker is this rewrite's own and writes nothing; a purge cannot fail there.
      yield* Effect.orDie(seeded.tracker.purgeHistory)
      patch = { tracker: yield* seeded.state }
    }
    const commit = yield* store.rewriteHistory({ session, baseVersion: snapshot.version, turnId, history, patch })
    return { commit, value }
  })
  const result: HistoryRewritten<A> = yield* retryOnConflict(() => attempt, options.retries ?? 3)
  if (options.purgeTracker === true && mode === "service" && Option.isSome(ambient) && result.commit?.duplicate === false) {
    yield* ambient.value.purgeHistory
  }
  return result
})
