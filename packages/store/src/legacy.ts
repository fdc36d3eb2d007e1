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
  keepDamagedCopy,
  parseSessionText,
  readInsideRepo,
  type PathOutsideRepo,
  type SpecialFile,
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
  /**
   * The session file when it was damaged (not JSON, or a history id that is not an
   * identifier, such as `../../x`): the history then comes from the newest complete
   * history file, and the import keeps a numbered `.bad.N` copy of the damaged text.
   */
  readonly damaged?: { readonly path: string; readonly text: string; readonly problem: string } | undefined
}

const decodeJson = Schema.decodeUnknownResult(Schema.Json)
const HistoryPointer = Schema.Struct({ historyId: Schema.NullOr(SessionId) })
const decodePointer = Schema.decodeUnknownResult(HistoryPointer)
const decodeId = Schema.decodeUnknownResult(SessionId)


/**
 * Read the old files of the repository at `root`; `undefined` when there are none.
 * A file that is not JSON is reported in `warnings` and left out, never fatal; a file
 * whose real path leaves the repository (a symlink out) is refused with `PathOutsideRepo`,
 * a FIFO or device with `SpecialFile`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { readLegacyState } from "@strata/store"
 * const legacy = await Effect.runPromise(readLegacyState("."))
 * ```
 */
export const readLegacyState = (root: string): Effect.Effect<LegacyState | undefined, PathOutsideRepo | SpecialFile> =>
  Effect.gen(function* () {
    const realRoot = yield* Effect.promise(() => fs.realpath(root).catch(() => path.resolve(root)))
    const files: Array<string> = []
    const warnings: Array<string> = []
    // Regular files inside the repository only: a link out is PathOutsideRepo, a FIFO or
    // device SpecialFile (never a read that hangs), anything else unreadable a warning.
    const read = (relative: string) =>
      readInsideRepo(realRoot, relative).pipe(
        Effect.tap((text) => (text === undefined ? Effect.void : Effect.sync(() => files.push(relative)))),
        Effect.catchTag("FileReadError", (error) => Effect.sync(() => {
          warnings.push(`${relative} cannot be read (${error.reason}); not imported`)
          return undefined
        }))
      )
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

    const sessionText = yield* read(LEGACY_FILES.session)
    let damaged: LegacyState["damaged"]
    let record: Schema.Json | null = null
    if (sessionText !== undefined) {
      let parsed: unknown
      try {
        parsed = JSON.parse(sessionText)
      } catch {
        parsed = undefined
      }
      const decoded = parsed === undefined ? undefined : decodeJson(parsed)
      if (decoded === undefined || Result.isFailure(decoded)) damaged = { path: LEGACY_FILES.session, text: sessionText, problem: "not valid JSON" }
      else record = decoded.success
    }
    const tracker = yield* json(LEGACY_FILES.tracker)
    const journal = yield* json(LEGACY_FILES.journal)
    let history: ReadonlyArray<Message> = []
    const pointer = record === null ? undefined : decodePointer(record)
    if (record !== null && (pointer === undefined || Result.isFailure(pointer))) {
      damaged = { path: LEGACY_FILES.session, text: sessionText ?? "", problem: "its history id is not an identifier (letters, digits, _ and -)" }
    }
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
    if (damaged !== undefined) {
      const newest = yield* newestCompleteHistory(realRoot)
      if (newest !== undefined) {
        files.push(newest.relative)
        history = newest.messages
      }
      warnings.push(
        `${damaged.path} is damaged (${damaged.problem}); ` +
          (newest === undefined ? "no complete history file was found, so the session starts without history" : `the session was recovered from ${newest.relative} (${newest.messages.length} messages)`)
      )
    }
    if (files.length === 0) return undefined
    return { history, tracker, journal, record: damaged === undefined ? record : null, files, warnings, damaged }
  })

/**
 * The newest history file under `.strata/sessions/` (by modification time) whose every
 * line decodes: the conversation a damaged session file pointed to, as far as can be told.
 */
const newestCompleteHistory = (realRoot: string) =>
  Effect.promise(async () => {
    const dir = path.join(realRoot, LEGACY_FILES.sessions)
    const names = await fs.readdir(dir).catch(() => [] as Array<string>)
    const candidates: Array<{ readonly relative: string; readonly mtime: number; readonly messages: ReadonlyArray<Message> }> = []
    for (const name of names) {
      if (!name.endsWith(".jsonl") || !Result.isSuccess(decodeId(name.slice(0, -".jsonl".length)))) continue
      const full = path.join(dir, name)
      const info = await fs.lstat(full).catch(() => undefined)
      // Links are not followed: a history file is a regular file inside the repository.
      if (info === undefined || !info.isFile()) continue
      const parsed = parseSessionText(await fs.readFile(full, "utf8"))
      if (parsed.warnings.length > 0 || parsed.messages.length === 0) continue
      candidates.push({ relative: path.join(LEGACY_FILES.sessions, name), mtime: info.mtimeMs, messages: parsed.messages })
    }
    candidates.sort((a, b) => b.mtime - a.mtime || (a.relative < b.relative ? -1 : 1))
    return candidates[0]
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
): Effect.Effect<LoadedState, StateStoreError | PathOutsideRepo | SpecialFile, StateStore> =>
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
    if (result.duplicate) return { snapshot: after.snapshot, warnings: [...legacy.warnings, ...after.warnings] }
    // The import happened here: keep the damaged session file's text, numbered, and say it once.
    const kept = legacy.damaged === undefined ? undefined : yield* keepDamagedCopy(root, legacy.damaged.path, legacy.damaged.text).pipe(Effect.orElseSucceed(() => undefined))
    const note = [
      `imported ${legacy.files.join(", ")} (${legacy.history.length} messages) into ${store.describe}; the old files are no longer read`,
      ...(kept === undefined ? [] : [`the damaged ${legacy.damaged?.path} is kept as ${kept}`])
    ]
    return { snapshot: after.snapshot, warnings: [...legacy.warnings, ...note, ...after.warnings] }
  })
