/**
 * The `StateStore` service: a session's whole state (tracker, journal memory, history,
 * the application's session record) loaded as one versioned snapshot, and each turn
 * committed as one atomic step with compare-and-set on that version. `@strata/store`
 * implements it on files (one machine) and on PostgreSQL (many processes and hosts).
 */
import { Context, Schema, type Effect, type Layer } from "effect"
import type { PathOutsideRepo } from "../domain/errors.ts"
import { Message } from "../domain/Message.ts"

/**
 * A session's name within its repository: letters, digits, `.`, `_` and `-`, not starting
 * with a dot, so it is always one safe path segment.
 */
export const SessionName = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/))
export type SessionName = typeof SessionName.Type

/**
 * Where a session lives: a repository identity that does not depend on the checkout path
 * (the repository's root commit, or an id the user configured) and a session name. Two
 * checkouts of one repository, on one host or on two, share the sessions of one key.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SessionKey } from "@strata/core/effect"
 * const key = Schema.decodeUnknownSync(SessionKey)({ repository: "git:4b825dc6", name: "default" })
 * ```
 */
export const SessionKey = Schema.Struct({
  repository: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)),
  name: SessionName
})
export type SessionKey = typeof SessionKey.Type

/** A session key as one line of text, for messages: `<repository>/<name>`. Pure. */
export const formatSessionKey = (key: SessionKey): string => `${key.repository}/${key.name}`

/**
 * A turn's id, chosen by the caller once per logical turn and kept across retries of it:
 * a commit whose id the store already holds is reported as a duplicate and changes
 * nothing, so a retry after an ambiguous failure (a crash or a lost connection after the
 * commit landed) never stores a turn twice.
 */
export const TurnId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128))
export type TurnId = typeof TurnId.Type

/** The version of a session that has never been committed. */
export const EMPTY_VERSION = 0

/**
 * A session's state at one version. The tracker state and the session record belong to
 * other packages (`@strata/tiers` encodes its tracker file; the application its own
 * record), so they travel as JSON values their owners encode and decode; the journal
 * memory is `encodeJournalMemory`'s output (decode it with `decodeJournalMemory`).
 * `null` means "none yet".
 */
export const StateSnapshot = Schema.Struct({
  session: SessionKey,
  /** Increments with every commit; `0` for a session nothing was committed to. */
  version: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
  history: Schema.Array(Message),
  tracker: Schema.NullOr(Schema.Json),
  journal: Schema.NullOr(Schema.Json),
  record: Schema.NullOr(Schema.Json)
})
export type StateSnapshot = typeof StateSnapshot.Type

/** A loaded snapshot, and what the store had to repair to load it (never fatal, never stored). */
export interface LoadedState {
  readonly snapshot: StateSnapshot
  /** E.g. a torn last write that was set aside; the state is the last good one before it. */
  readonly warnings: ReadonlyArray<string>
}

/** The parts of the state a commit replaces; a missing key keeps the current value. */
export const StatePatch = Schema.Struct({
  tracker: Schema.optionalKey(Schema.NullOr(Schema.Json)),
  journal: Schema.optionalKey(Schema.NullOr(Schema.Json)),
  record: Schema.optionalKey(Schema.NullOr(Schema.Json))
})
export type StatePatch = typeof StatePatch.Type

/**
 * One turn: appended to the history (never rewriting it) together with the new tracker
 * state, journal memory and session record, as one atomic step based on `baseVersion`.
 *
 * @example
 * ```ts
 * import type { TurnCommit } from "@strata/core/effect"
 * const turn: TurnCommit = {
 *   session: { repository: "git:4b825dc6", name: "default" },
 *   baseVersion: 3,
 *   turnId: "2f1c9a40-6c1e-4a5e-9d3c-0b8f3f1d2a77",
 *   append: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }],
 *   patch: { record: { turns: 4 } }
 * }
 * ```
 */
export const TurnCommit = Schema.Struct({
  session: SessionKey,
  /** The version of the snapshot this turn was assembled from. */
  baseVersion: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
  turnId: TurnId,
  /** Messages this turn adds at the end of the history (may be empty). */
  append: Schema.Array(Message),
  patch: StatePatch,
  /**
   * A summary of the turn's request (the application's JSON: usage, blocks, what it cost),
   * stored with the turn and read back page by page with `requests`, so it never has to
   * ride in the session record that every commit rewrites.
   */
  request: Schema.optionalKey(Schema.Json)
})
export type TurnCommit = typeof TurnCommit.Type

/** A turn's request summary as `requests` reads it back: the version its turn made, and the summary. */
export const StoredRequest = Schema.Struct({
  version: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)),
  request: Schema.Json
})
export type StoredRequest = typeof StoredRequest.Type

/** Which request summaries to read: those of turns at `from` (a version) and after, at most `limit`. */
export interface RequestRange {
  readonly from: number
  readonly limit: number
}

/** One page of request summaries, oldest first; `next` is the `from` of the following page (absent: no more). */
export interface RequestPage {
  readonly requests: ReadonlyArray<StoredRequest>
  readonly next: number | undefined
}

/** A session a store lists: its key and current version (the number of commits). */
export const ListedSession = Schema.Struct({
  key: SessionKey,
  version: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
})
export type ListedSession = typeof ListedSession.Type

/** Which sessions to list: those of one repository identity, or all the store holds. */
export interface SessionFilter {
  readonly repository?: string | undefined
}

/**
 * A history rewrite (compaction, clear): the whole history replaced, with the state that
 * goes with it (the tracker after its history entries were purged, say), atomically and
 * with the same compare-and-set as a turn.
 */
export const HistoryRewrite = Schema.Struct({
  session: SessionKey,
  baseVersion: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
  turnId: TurnId,
  history: Schema.Array(Message),
  patch: StatePatch
})
export type HistoryRewrite = typeof HistoryRewrite.Type

/** What a commit did. */
export interface CommitResult {
  /** The session's version after the commit (the current one for a duplicate). */
  readonly version: number
  /** The turn id was already committed: nothing was written. */
  readonly duplicate: boolean
}

/**
 * Another process committed to the session since the snapshot the turn was assembled
 * from was loaded. Nothing of this turn was written; load the session again, assemble
 * the request again and retry (with the same turn id).
 */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", {
  session: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number
}) {
  override get message(): string {
    return `Session ${this.session} changed underneath this turn (assembled from version ${this.expected}, now ${this.actual}): another process committed first and nothing of this turn was saved; load the session again, re-assemble the request and retry.`
  }
  /** A conflict is always worth retrying after re-assembling. */
  get isRetryable(): boolean {
    return true
  }
}

/**
 * The store could not be read or written (I/O, a database that is down, state that does
 * not decode). `retryable` says whether trying again may succeed (a
 * lost connection) or needs a person (a permission, a full disk, a broken schema).
 */
export class StateStoreError extends Schema.TaggedError<StateStoreError>()("StateStoreError", {
  store: Schema.String,
  operation: Schema.String,
  reason: Schema.String,
  retryable: Schema.Boolean
}) {
  override get message(): string {
    return `Session store ${this.store} failed to ${this.operation}: ${this.reason}${this.retryable ? " (temporary; try again)" : ""}`
  }
  get isRetryable(): boolean {
    return this.retryable
  }
}

/**
 * The empty state of a session (version 0). Pure.
 *
 * @example
 * ```ts
 * import { emptyState } from "@strata/core/effect"
 * emptyState({ repository: "git:4b825dc6", name: "default" }).version // 0
 * ```
 */
export const emptyState = (session: SessionKey): StateSnapshot => ({
  session,
  version: EMPTY_VERSION,
  history: [],
  tracker: null,
  journal: null,
  record: null
})

const patched = (state: StateSnapshot, patch: StatePatch): Pick<StateSnapshot, "tracker" | "journal" | "record"> => ({
  tracker: patch.tracker === undefined ? state.tracker : patch.tracker,
  journal: patch.journal === undefined ? state.journal : patch.journal,
  record: patch.record === undefined ? state.record : patch.record
})

/**
 * The state after a turn: history appended, patch applied, version + 1. Pure; the
 * caller checks `baseVersion` first. Every store applies turns with this function, so
 * they agree on what a commit means.
 */
export const applyTurn = (state: StateSnapshot, turn: Pick<TurnCommit, "append" | "patch">): StateSnapshot => ({
  session: state.session,
  version: state.version + 1,
  history: turn.append.length === 0 ? state.history : [...state.history, ...turn.append],
  ...patched(state, turn.patch)
})

/** The state after a history rewrite: history replaced, patch applied, version + 1. Pure. */
export const applyRewrite = (state: StateSnapshot, rewrite: Pick<HistoryRewrite, "history" | "patch">): StateSnapshot => ({
  session: state.session,
  version: state.version + 1,
  history: rewrite.history,
  ...patched(state, rewrite.patch)
})

/**
 * Holds sessions' state. A caller loads one snapshot when a turn starts, assembles from
 * it, and commits the turn against the snapshot's version: the commit fails with
 * `StateConflict` if another process committed in between, and never half-applies.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StateStore } from "@strata/core/effect"
 *
 * const turn = (key: { repository: string; name: string }) =>
 *   Effect.gen(function* () {
 *     const store = yield* StateStore
 *     const { snapshot } = yield* store.load(key)
 *     // ...assemble a request from snapshot.history, snapshot.tracker, snapshot.journal...
 *     return yield* store.commit({
 *       session: key,
 *       baseVersion: snapshot.version,
 *       turnId: crypto.randomUUID(),
 *       append: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }],
 *       patch: {}
 *     })
 *   })
 * ```
 */
export class StateStore extends Context.Service<StateStore, {
  /** A short description for messages: `files under /repo/.strata/state`, `postgres://host/db`. */
  readonly describe: string
  /** The session's current state (the empty state at version 0 for a new session). */
  readonly load: (session: SessionKey) => Effect.Effect<LoadedState, StateStoreError | PathOutsideRepo>
  /**
   * The session's current version (0 for a new session) without reading its state: how a
   * process that keeps a session's state in memory (the proxy) learns whether another
   * process has committed since. Never below what `load` would return next; it may name a
   * damaged record that `load` then sets aside (the caller loads, which is always right).
   */
  readonly version: (session: SessionKey) => Effect.Effect<number, StateStoreError | PathOutsideRepo>
  /** Commit one turn: append to the history and apply the patch, if `baseVersion` is current. */
  readonly commit: (turn: TurnCommit) => Effect.Effect<CommitResult, StateConflict | StateStoreError | PathOutsideRepo>
  /** Replace the history (compaction, clear), with the same compare-and-set as `commit`. */
  readonly rewriteHistory: (rewrite: HistoryRewrite) => Effect.Effect<CommitResult, StateConflict | StateStoreError | PathOutsideRepo>
  /**
   * The request summaries committed turns carried (`TurnCommit.request`), oldest first, a
   * page at a time: those of versions `from` and later, at most `limit`.
   */
  readonly requests: (session: SessionKey, range: RequestRange) => Effect.Effect<RequestPage, StateStoreError | PathOutsideRepo>
  /** The sessions the store holds (at least one commit), by repository and name. */
  readonly sessions: (filter?: SessionFilter) => Effect.Effect<ReadonlyArray<ListedSession>, StateStoreError | PathOutsideRepo>
}>()("@strata/core/StateStore") {}

/**
 * A store as a plain value, for the Promise API's `createContextEngine({ store })`: the
 * `StateStore` layer for a repository and the key of a named session in it (which does not
 * depend on the checkout path). `@strata/store`'s `stateStore(spec)` makes one for the file
 * store, PostgreSQL or memory; core knows only this shape.
 *
 * @example
 * ```ts no-run
 * import type { StateStorePlugin } from "@strata/core"
 * declare const store: StateStorePlugin
 * store.describe // "file", "postgres://db.internal/app", ...
 * ```
 */
export interface StateStorePlugin {
  /** What the store is, for messages (a database URL without its password). */
  readonly describe: string
  /** The store's layer for the repository at `repoRoot`. */
  readonly layer: (repoRoot: string) => Layer.Layer<StateStore, StateStoreError | PathOutsideRepo>
  /** The key of session `name` of the repository at `repoRoot`. */
  readonly sessionKey: (repoRoot: string, name: string) => Effect.Effect<SessionKey, StateStoreError>
}

/**
 * One page of request summaries from all of a session's, sorted by version: those at
 * `range.from` and after, at most `range.limit`. Pure; the stores that hold every summary
 * in one list (memory) page with it.
 *
 * @example
 * ```ts
 * import { requestPage } from "@strata/core/effect"
 * requestPage([{ version: 1, request: {} }, { version: 2, request: {} }], { from: 1, limit: 1 }).next // 2
 * ```
 */
export const requestPage = (all: ReadonlyArray<StoredRequest>, range: RequestRange): RequestPage => {
  const limit = Math.max(0, Math.floor(range.limit))
  const start = all.findIndex((r) => r.version >= range.from)
  if (start < 0 || limit === 0) return { requests: [], next: start < 0 ? undefined : all[start]?.version }
  const requests = all.slice(start, start + limit)
  const after = all[start + limit]
  return { requests, next: after?.version }
}
