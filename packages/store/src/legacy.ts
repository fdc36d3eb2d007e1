/**
 * The migration from the files earlier Strata versions kept under `.strata/`
 * (`session.json`, `sessions/<id>.jsonl`, `tracker.json`, `journal.json`): on first use
 * of a session that the store has never seen, they are imported as its first version,
 * so a user's conversation, tiers and cached prefix carry over. The old files are left
 * where they were and no longer read.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import {
  parseSessionText,
  PathOutsideRepo,
  SessionId,
  StateStore,
  type LoadedState,
  type Message,
  type SessionKey,
  type StateStoreError
} from "@strata/core/effect"
import { Effect, Result, Schema } from "effect"

/** The turn id of the import, so two processes importing at once store it once. */
export const LEGACY_IMPORT_TURN = "import:legacy-strata-files"

/** The old files, relative to the repository root. */
export const LEGACY_FILES = {
  session: path.join(".strata", "session.json"),
  sessions: path.join(".strata", "sessions"),
  tracker: path.join(".strata", "tracker.json"),
  journal: path.join(".strata", "journal.json")
} as const

/** What the old files held, as the store's state parts. */
export interface LegacyState {
  readonly history: ReadonlyArray<Message>
  readonly tracker: Schema.Json | null
  readonly journal: Schema.Json | null
  /** The CLI's `session.json` as it was (its owner decodes it). */
  readonly record: Schema.Json | null
  /** Files that were read. */
  readonly files: ReadonlyArray<string>
  /** Files that could not be used, and why. */
  readonly warnings: ReadonlyArray<string>
}

const decodeJson = Schema.decodeUnknownResult(Schema.Json)
const HistoryPointer = Schema.Struct({ historyId: Schema.NullOr(SessionId) })
const decodePointer = Schema.decodeUnknownResult(HistoryPointer)

const isInside = (root: string, p: string): boolean => {
  const rel = path.relative(root, p)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

/**
 * Read the old files of the repository at `root`; `undefined` when there are none.
 * A file that is not JSON is reported in `warnings` and left out, never fatal; a file
 * whose real path leaves the repository (a symlink out) is refused with `PathOutsideRepo`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { readLegacyState } from "@strata/store"
 * const legacy = await Effect.runPromise(readLegacyState("."))
 * ```
 */
export const readLegacyState = (root: string): Effect.Effect<LegacyState | undefined, PathOutsideRepo> =>
  Effect.gen(function* () {
    const realRoot = yield* Effect.promise(() => fs.realpath(root).catch(() => path.resolve(root)))
    const files: Array<string> = []
    const warnings: Array<string> = []
    const read = (relative: string) =>
      Effect.gen(function* () {
        const full = path.join(realRoot, relative)
        const real = yield* Effect.promise(() => fs.realpath(full).catch(() => undefined))
        if (real === undefined) return undefined
        if (!isInside(realRoot, real)) return yield* new PathOutsideRepo({ path: relative, root: realRoot })
        const text = yield* Effect.promise(() => fs.readFile(real, "utf8").catch(() => undefined))
        if (text === undefined) return undefined
        files.push(relative)
        return text
      })
    const json = (relative: string) =>
      Effect.gen(function* () {
        const text = yield* read(relative)
        if (text === undefined) return null
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          warnings.push(`${relative} is not valid JSON; not imported`)
          return null
        }
        const decoded = decodeJson(parsed)
        return Result.isSuccess(decoded) ? decoded.success : null
      })

    const record = yield* json(LEGACY_FILES.session)
    const tracker = yield* json(LEGACY_FILES.tracker)
    const journal = yield* json(LEGACY_FILES.journal)
    let history: ReadonlyArray<Message> = []
    const pointer = record === null ? undefined : decodePointer(record)
    if (pointer !== undefined && Result.isSuccess(pointer) && pointer.success.historyId !== null) {
      const relative = path.join(LEGACY_FILES.sessions, `${pointer.success.historyId}.jsonl`)
      const text = yield* read(relative)
      if (text === undefined) warnings.push(`${relative} (the session's history) is missing; imported without history`)
      else {
        const parsed = parseSessionText(text)
        history = parsed.messages
        warnings.push(...parsed.warnings.map((w) => `${relative}: ${w}`))
      }
    }
    if (files.length === 0) return undefined
    return { history, tracker, journal, record, files, warnings }
  })

/**
 * Load a session; when the store has never seen it and the repository has the old
 * files, import them first (as one history rewrite at version 0, so concurrent first
 * uses import once). The warnings say what was imported.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FileStateStore, loadOrImport, sessionKeyFor } from "@strata/store"
 * const program = Effect.gen(function* () {
 *   const key = yield* sessionKeyFor(".")
 *   const { snapshot, warnings } = yield* loadOrImport(key, ".")
 *   return snapshot.history.length
 * }).pipe(Effect.provide(FileStateStore.layer({ repoRoot: "." })))
 * ```
 */
export const loadOrImport = (
  key: SessionKey,
  root: string
): Effect.Effect<LoadedState, StateStoreError | PathOutsideRepo, StateStore> =>
  Effect.gen(function* () {
    const store = yield* StateStore
    const loaded = yield* store.load(key)
    if (loaded.snapshot.version > 0) return loaded
    const legacy = yield* readLegacyState(root)
    if (legacy === undefined) return loaded
    const result = yield* store
      .rewriteHistory({
        session: key,
        baseVersion: 0,
        turnId: LEGACY_IMPORT_TURN,
        history: legacy.history,
        patch: { tracker: legacy.tracker, journal: legacy.journal, record: legacy.record }
      })
      .pipe(Effect.catchTag("StateConflict", () => Effect.succeed({ version: -1, duplicate: true })))
    const after = yield* store.load(key)
    const note = result.duplicate
      ? []
      : [`imported ${legacy.files.join(", ")} (${legacy.history.length} messages) into ${store.describe}; the old files are no longer read`]
    return { snapshot: after.snapshot, warnings: [...legacy.warnings, ...note, ...after.warnings] }
  })
