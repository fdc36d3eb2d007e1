/**
 * Where the CLI keeps a session between commands: the `StateStore` the configuration
 * chooses (`STRATA_STORE` or `store`: the file store under `.strata/state/` by default,
 * PostgreSQL, memory), the session's key in it, the one-time import of the files earlier
 * versions kept under `.strata/`, and a read-only copy for commands that change nothing.
 */
import { Effect, Layer } from "effect"
import {
  decodeSessionRecord,
  MemoryStateStore,
  PathOutsideRepo,
  type SpecialFile,
  StateStore,
  StateStoreError,
  type LoadedState,
  type SessionKey,
  type SessionRecord,
  type StateSnapshot
} from "@strata/core/effect"
import { FileStateStore, loadOrImport, PostgresStateStore, readLegacyState, sessionKeyFor } from "@strata/store"
import { parseStoreSetting, redactStoreSetting } from "./config.ts"
import type { CommandContext } from "./context.ts"

/** The store a command runs against, and the session's key in it. */
export interface SessionStoreChoice {
  /** For messages: `file`, `.strata/shared`, `memory`, `postgres://host/db` (no password). */
  readonly describe: string
  readonly layer: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo>
}

/** The `StateStore` the resolved configuration chooses (validated when the configuration was resolved). */
export const storeChoice = (ctx: CommandContext): SessionStoreChoice => {
  const setting = parseStoreSetting(ctx.config.store)
  if (setting === undefined) {
    // resolveConfig refuses such a setting; this keeps the function total.
    return {
      describe: ctx.config.store,
      layer: Layer.effect(StateStore, Effect.fail(new StateStoreError({ store: ctx.config.store, operation: "open", reason: "not a store setting", retryable: false })))
    }
  }
  switch (setting.kind) {
    case "file":
      return {
        describe: setting.directory ?? "file",
        layer: FileStateStore.layer({ repoRoot: ctx.root, ...(setting.directory === undefined ? {} : { directory: setting.directory }) })
      }
    case "memory":
      return { describe: "memory", layer: MemoryStateStore.layer }
    case "postgres":
      return { describe: redactStoreSetting(setting.url), layer: PostgresStateStore.layer({ url: setting.url }) }
  }
}

/**
 * The session's key: the repository's identity (not its checkout path) and the configured
 * session name. A reader (`create: false`) never writes the id file a checkout without git
 * history needs.
 */
export const sessionKey = (ctx: CommandContext, create: boolean): Effect.Effect<SessionKey, StateStoreError> =>
  sessionKeyFor(ctx.root, { name: ctx.config.session, create })

/** A session as a command starts from it. */
export interface SessionState {
  readonly key: SessionKey
  readonly snapshot: StateSnapshot
  /** The session record (usage totals, the last request, the selection, the map's aliases). */
  readonly record: SessionRecord
  /** Repairs and the one-time import, to tell the user. */
  readonly warnings: ReadonlyArray<string>
}

const withRecord = (key: SessionKey, loaded: LoadedState): SessionState => {
  const { record, warning } = decodeSessionRecord(loaded.snapshot.record)
  return { key, snapshot: loaded.snapshot, record, warnings: [...loaded.warnings, ...(warning === undefined ? [] : [warning])] }
}

/**
 * Load the session a command that records turns works on: from the store, importing the
 * old `.strata/` files the first time the store sees the session (once, even when several
 * processes start together; a damaged session file is kept as a numbered `.bad.N` copy and
 * the history recovered from the newest complete history file).
 */
export const loadForWriting = (ctx: CommandContext, key: SessionKey): Effect.Effect<SessionState, StateStoreError | PathOutsideRepo | SpecialFile, StateStore> =>
  Effect.map(loadOrImport(key, ctx.root), (loaded) => withRecord(key, loaded))

/**
 * Load the session without writing anything: a session the store has never seen shows
 * what the old `.strata/` files hold (they are imported by the next command that records).
 */
export const loadForReading = (ctx: CommandContext, key: SessionKey): Effect.Effect<SessionState, StateStoreError | PathOutsideRepo | SpecialFile, StateStore> =>
  Effect.gen(function* () {
    const store = yield* StateStore
    const loaded = yield* store.load(key)
    if (loaded.snapshot.version > 0) return withRecord(key, loaded)
    const legacy = yield* readLegacyState(ctx.root)
    if (legacy === undefined) return withRecord(key, loaded)
    const snapshot: StateSnapshot = { ...loaded.snapshot, history: legacy.history, tracker: legacy.tracker, journal: legacy.journal, record: legacy.record }
    return withRecord(key, { snapshot, warnings: [...loaded.warnings, ...legacy.warnings] })
  })

/**
 * A store that holds a copy of `snapshot` in memory: commands that change nothing (`hud`,
 * `breakdown`, `--dry-run`) run their turn against it, so whatever the turn does, the
 * real store is never written.
 */
export const readOnlyCopy = (state: SessionState): Layer.Layer<StateStore> =>
  Layer.effect(
    StateStore,
    Effect.gen(function* () {
      const store = yield* StateStore
      const s = state.snapshot
      if (s.version > 0 || s.history.length > 0 || s.tracker !== null || s.journal !== null || s.record !== null) {
        yield* Effect.orDie(store.rewriteHistory({ session: state.key, baseVersion: 0, turnId: "read-only-copy", history: s.history, patch: { tracker: s.tracker, journal: s.journal, record: s.record } }))
      }
      return store
    })
  ).pipe(Layer.provide(MemoryStateStore.layer))

/** The session as it is now, read without writing anything (for `explain`). */
export const readSession = (ctx: CommandContext): Effect.Effect<SessionState, StateStoreError | PathOutsideRepo | SpecialFile> =>
  Effect.gen(function* () {
    const key = yield* sessionKey(ctx, false)
    return yield* loadForReading(ctx, key)
  }).pipe(Effect.provide(storeChoice(ctx).layer))
