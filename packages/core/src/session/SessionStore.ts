/**
 * Persistent conversation history: one append-only JSONL file per session under
 * `<repo>/.strata/sessions/`, one line per message, fsync at the end of each
 * exchange. A crash mid-write leaves at most a truncated last line, which loading
 * detects and drops with a warning; nothing before it is lost, and the next write moves
 * it to `<id>.jsonl.bad`. Nothing is read or written outside the repository.
 */
import { mkdir, open } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { FileReadError, FileWriteError, PathOutsideRepo, SpecialFile } from "../domain/errors.ts"
import { Message } from "../domain/Message.ts"
import { appendInsideRepo, createInsideRepo, listInsideRepo, readInsideRepo, statInsideRepo, writeInsideRepo } from "../files/insideRepo.ts"

/** One line of a session file. */
export const SessionLine = Schema.Struct({
  /** Milliseconds since the epoch when the message was stored. */
  t: Schema.Number,
  message: Message
})
export type SessionLine = typeof SessionLine.Type

/** A session id: letters, digits, `-` and `_` only, so it is always a safe file name. */
export const SessionId = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,128}$/))
export type SessionId = typeof SessionId.Type

export interface LoggedSessionSummary {
  readonly id: string
  readonly messages: number
  readonly bytes: number
  /** Milliseconds since the epoch of the last write. */
  readonly updatedAt: number
}

export interface LoggedSession {
  readonly id: string
  readonly messages: ReadonlyArray<Message>
  /** Lines that could not be read, and why (a truncated last line, a corrupt line). */
  readonly warnings: ReadonlyArray<string>
}

/** Reading or writing a session file failed. */
export class SessionStoreError extends Schema.TaggedError<SessionStoreError>()("SessionStoreError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Session store error at ${this.path}: ${this.reason}`
  }
}

/** A session id that does not exist or is not a valid id. */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `No session "${this.id}"; list sessions to see the ids that exist.`
  }
}

/**
 * A session file or folder Strata refuses to touch: a link out of the repository
 * (`PathOutsideRepo`), or a FIFO, socket or device where a file should be (`SpecialFile`).
 */
export type SessionRefusal = PathOutsideRepo | SpecialFile

/** A session operation was asked for, but no `SessionStore` is provided. */
export class SessionStoreMissing extends Schema.TaggedError<SessionStoreMissing>()("SessionStoreMissing", {
  operation: Schema.String
}) {
  override get message(): string {
    return `Cannot ${this.operation}: no session store is configured. Create the engine with \`sessions: true\` (or provide SessionStore.layer(repoRoot)).`
  }
}

const decodeLine = Schema.decodeUnknownResult(SessionLine)
const isValidId = Schema.is(SessionId)

/**
 * Parse a session file's text. Pure: used by `load` and by tests.
 */
export const parseSessionText = (text: string): { readonly messages: ReadonlyArray<Message>; readonly warnings: ReadonlyArray<string> } => {
  const messages: Array<Message> = []
  const warnings: Array<string> = []
  const lines = text.split("\n")
  const endsClean = text.endsWith("\n") || text.length === 0
  lines.forEach((line, i) => {
    if (line.trim() === "") return
    const isLast = i === lines.length - 1
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      warnings.push(
        isLast && !endsClean
          ? `line ${i + 1} is truncated (an interrupted write); dropped`
          : `line ${i + 1} is not valid JSON; skipped`
      )
      return
    }
    const decoded = decodeLine(json)
    if (decoded._tag === "Success") messages.push(decoded.success.message)
    else warnings.push(`line ${i + 1} is not a session message; skipped`)
  })
  return { messages, warnings }
}

/**
 * Make a new file's directory entry durable, so a synced exchange is not lost with the
 * file itself after a crash. Best effort: some platforms cannot open a directory.
 */
const syncDirectory = async (directory: string): Promise<void> => {
  try {
    const handle = await open(directory, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // Windows cannot fsync a directory; the file's own fsync is all there is.
  }
}

/** The lines of a session file that cannot be read back (corrupt or torn), by index. Pure. */
const damagedLines = (text: string): ReadonlyArray<number> => {
  const out: Array<number> = []
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return
    try {
      if (decodeLine(JSON.parse(line))._tag === "Success") return
    } catch {
      // Not JSON: damaged.
    }
    out.push(i)
  })
  return out
}

/**
 * A session store rooted at `root` (a repository, or the directory itself), with its
 * files in `folder` below it. Every path is checked by core's `insideRepo` helpers: a
 * session file or folder that is a link out of `root` fails with `PathOutsideRepo`, and
 * nothing is written through a link.
 */
const makeStore = (root: string, folder: string, createRoot: boolean) => {
  const directory = join(root, folder)
  // An explicit sessions directory (`layerDirectory`) is created on first use; a repository must exist.
  const ready: Effect.Effect<void, unknown> = createRoot
    ? Effect.tryPromise({ try: () => mkdir(root, { recursive: true }).then(() => undefined), catch: (error) => error })
    : Effect.void
  const relativeOf = (id: string) => join(folder, `${id}.jsonl`)
  const pathOf = (id: string) => join(directory, `${id}.jsonl`)
  const fail = (path: string) => (error: unknown) =>
    new SessionStoreError({ path, reason: error instanceof Error ? error.message : String(error) })
  /** I/O failures become `SessionStoreError`; refusals (a link out, a FIFO) keep their own tag. */
  const storeError = (path: string) => <E extends { readonly _tag: string }>(error: E) =>
    error._tag === "FileWriteError" || error._tag === "FileReadError"
      ? fail(path)((error as unknown as { readonly reason: string }).reason)
      : (error as Exclude<E, FileWriteError | FileReadError>)

  /**
   * Lines that can never be read back (a torn write, a corrupt line) are moved to
   * `<id>.jsonl.bad` and the file is rewritten without them, atomically, so the warning
   * about them is given once rather than at every load. Runs on the write after a load
   * that saw them, or after a crash left a torn last line.
   */
  const quarantine = (id: string, text: string, damaged: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      const lines = text.split("\n")
      const bad = new Set(damaged)
      const moved = damaged.map((i) => `${lines[i] ?? ""}\n`).join("")
      const kept = lines.filter((line, i) => !bad.has(i) && line.trim() !== "").map((line) => `${line}\n`).join("")
      yield* appendInsideRepo(root, `${relativeOf(id)}.bad`, (handle) => handle.appendFile(moved, "utf8"))
      yield* writeInsideRepo(root, relativeOf(id), kept, { sync: true })
    })

  /** Sessions a load found damaged lines in; the next write to one moves them aside. */
  const damagedIds = new Set<string>()

  /** Whether the file's last byte is not a newline: a write was interrupted. */
  const endsTorn = (id: string) =>
    statInsideRepo(root, relativeOf(id)).pipe(
      Effect.flatMap((info) =>
        info === undefined || info.size === 0
          ? Effect.succeed(false)
          : appendInsideRepo(root, relativeOf(id), async (handle) => {
            const last = Buffer.alloc(1)
            return (await handle.read(last, 0, 1, info.size - 1)).bytesRead === 1 && last[0] !== 0x0a
          })
      )
    )

  const write = (id: string, messages: ReadonlyArray<Message>, sync: boolean) =>
    Effect.gen(function* () {
      if (!isValidId(id)) return yield* new SessionNotFound({ id })
      yield* ready.pipe(Effect.mapError(fail(pathOf(id))))
      const now = yield* Clock.currentTimeMillis
      const text = messages.map((message) => JSON.stringify({ t: now, message } satisfies SessionLine) + "\n").join("")
      // Appending stays O(1): the whole file is read again only when a load in this
      // process saw damage, or the file ends in a torn line (a crash mid-write).
      if (damagedIds.has(id) || (yield* endsTorn(id))) {
        const existing = yield* readInsideRepo(root, relativeOf(id))
        const damaged = existing === undefined ? [] : damagedLines(existing)
        if (existing !== undefined && damaged.length > 0) yield* quarantine(id, existing, damaged)
        damagedIds.delete(id)
      }
      yield* appendInsideRepo(root, relativeOf(id), async (handle) => {
        // A crash mid-write leaves a last line without its newline; end it first, or
        // this message would be glued to it and lost with it on the next load.
        const { size } = await handle.stat()
        const last = Buffer.alloc(1)
        if (size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a) {
          await handle.appendFile("\n", "utf8")
        }
        await handle.appendFile(text, "utf8")
        if (sync) await handle.sync()
      })
    }).pipe(Effect.mapError(storeError(pathOf(id))))

  return {
    directory,
    /** Start a new session (an empty file); its id sorts by creation time. */
    create: Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-")
      yield* ready.pipe(Effect.mapError(fail(directory)))
      for (let k = 1; ; k++) {
        const id = k === 1 ? stamp : `${stamp}_${k}`
        const created = yield* createInsideRepo(root, relativeOf(id)).pipe(Effect.mapError(storeError(pathOf(id))))
        if (created) {
          yield* Effect.promise(() => syncDirectory(directory))
          return id
        }
      }
    }),
    /** Append one message (buffered by the OS; `appendExchange` makes it durable). */
    append: (id: string, message: Message) => write(id, [message], false),
    /** Append a user/assistant exchange and fsync, so a finished exchange survives a crash. */
    appendExchange: (id: string, user: Message, assistant: Message) => write(id, [user, assistant], true),
    /** Read a session; damaged lines are skipped and reported in `warnings`, never fatal. */
    load: (id: string) =>
      Effect.gen(function* () {
        if (!isValidId(id)) return yield* new SessionNotFound({ id })
        const text = yield* readInsideRepo(root, relativeOf(id)).pipe(Effect.mapError(storeError(pathOf(id))))
        if (text === undefined) return yield* new SessionNotFound({ id })
        // Warnings are returned, not logged: the caller decides where they go (stdout may be JSON).
        const parsed = parseSessionText(text)
        if (parsed.warnings.length > 0) damagedIds.add(id)
        return { id, ...parsed } satisfies LoggedSession
      }),
    /** Sessions on disk, newest first. */
    list: Effect.gen(function* () {
      const names = yield* listInsideRepo(root, folder).pipe(Effect.mapError(storeError(directory)))
      const sessions: Array<LoggedSessionSummary> = []
      for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
        const relative = join(folder, name)
        const info = yield* statInsideRepo(root, relative).pipe(Effect.mapError(storeError(join(directory, name))))
        const text = yield* readInsideRepo(root, relative).pipe(Effect.mapError(storeError(join(directory, name))))
        if (info === undefined || text === undefined) continue
        sessions.push({ id: name.slice(0, -".jsonl".length), messages: parseSessionText(text).messages.length, bytes: info.size, updatedAt: info.mtimeMs })
      }
      return sessions.sort((a, b) => b.updatedAt - a.updatedAt || b.id.localeCompare(a.id)) as ReadonlyArray<LoggedSessionSummary>
    })
  }
}

/**
 * Stores conversation history as JSONL files.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SessionStore } from "@strata/core/effect"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore
 *   const id = yield* store.create
 *   yield* store.appendExchange(id, { role: "user", content: "hi" }, { role: "assistant", content: "hello" })
 *   return (yield* store.load(id)).messages.length // 2
 * }).pipe(Effect.provide(SessionStore.layer("/path/to/repo")))
 * ```
 */
export class SessionStore extends Context.Service<SessionStore, ReturnType<typeof makeStore>>()(
  "@strata/core/SessionStore"
) {
  /** Sessions under `<repoRoot>/.strata/sessions/`; nothing is read or written outside `repoRoot`. */
  static readonly layer = (repoRoot: string) => Layer.succeed(SessionStore, makeStore(repoRoot, join(".strata", "sessions"), false))
  /** Sessions in an explicit directory; nothing is read or written outside it. */
  static readonly layerDirectory = (directory: string) => Layer.succeed(SessionStore, makeStore(directory, ".", true))
}
