/**
 * Persistent conversation history: one append-only JSONL file per session under
 * `<repo>/.strata/sessions/`, one line per message, fsync at the end of each
 * exchange. A crash mid-write leaves at most a truncated last line, which loading
 * detects and drops with a warning; nothing before it is lost.
 */
import { mkdir, open, readdir, readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Message } from "../domain/Message.ts"

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

export interface SessionSummary {
  readonly id: string
  readonly messages: number
  readonly bytes: number
  /** Milliseconds since the epoch of the last write. */
  readonly updatedAt: number
}

export interface LoadedSession {
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

/**
 * Append JSONL `text` to the session file at `path` (creating it), fsynced when `sync`.
 * A crash mid-write leaves a last line without its newline; it is ended first, or the
 * new text would be glued to it and lost with it on the next load.
 */
const appendLines = async (directory: string, path: string, text: string, sync: boolean): Promise<void> => {
  await mkdir(directory, { recursive: true })
  const handle = await open(path, "a+")
  try {
    const { size } = await handle.stat()
    const last = Buffer.alloc(1)
    if (size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a) {
      await handle.appendFile("\n", "utf8")
    }
    await handle.appendFile(text, "utf8")
    if (sync) await handle.sync()
  } finally {
    await handle.close()
  }
}

/** The session files in `directory`, newest first (none when it does not exist). */
const listSessionFiles = async (directory: string): Promise<ReadonlyArray<SessionSummary>> => {
  const names = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as Array<string>
    throw error
  })
  const sessions = await Promise.all(
    names.filter((n) => n.endsWith(".jsonl")).map(async (name) => {
      const path = join(directory, name)
      const [info, text] = await Promise.all([stat(path), readFile(path, "utf8")])
      return {
        id: name.slice(0, -".jsonl".length),
        messages: parseSessionText(text).messages.length,
        bytes: info.size,
        updatedAt: info.mtimeMs
      }
    })
  )
  return sessions.sort((a, b) => b.updatedAt - a.updatedAt || b.id.localeCompare(a.id))
}

const makeStore = (directory: string) => {
  const pathOf = (id: string) => join(directory, `${id}.jsonl`)
  const fail = (path: string) => (error: unknown) =>
    new SessionStoreError({ path, reason: error instanceof Error ? error.message : String(error) })

  const write = (id: string, messages: ReadonlyArray<Message>, sync: boolean) =>
    Effect.gen(function* () {
      if (!isValidId(id)) return yield* new SessionNotFound({ id })
      const path = pathOf(id)
      const now = yield* Clock.currentTimeMillis
      const text = messages.map((message) => JSON.stringify({ t: now, message } satisfies SessionLine) + "\n").join("")
      yield* Effect.tryPromise({ try: () => appendLines(directory, path, text, sync), catch: fail(path) })
    })

  /** Create `<id>.jsonl` exclusively; false when it already exists. */
  const createExclusive = (id: string) =>
    Effect.tryPromise({
      try: async () => {
        await mkdir(directory, { recursive: true })
        try {
          const handle = await open(pathOf(id), "wx")
          await handle.close()
          await syncDirectory(directory)
          return true
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
          throw error
        }
      },
      catch: fail(pathOf(id))
    })

  return {
    directory,
    /** Start a new session (an empty file); its id sorts by creation time. */
    create: Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-")
      for (let k = 1; ; k++) {
        const id = k === 1 ? stamp : `${stamp}_${k}`
        if (yield* createExclusive(id)) return id
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
        const path = pathOf(id)
        const text = yield* Effect.tryPromise({
          try: () => readFile(path, "utf8"),
          catch: (error) =>
            (error as NodeJS.ErrnoException).code === "ENOENT" ? new SessionNotFound({ id }) : fail(path)(error)
        })
        // Warnings are returned, not logged: the caller decides where they go (stdout may be JSON).
        return { id, ...parseSessionText(text) } satisfies LoadedSession
      }),
    /** Sessions on disk, newest first. */
    list: Effect.tryPromise({ try: () => listSessionFiles(directory), catch: fail(directory) })
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
  /** Sessions under `<repoRoot>/.strata/sessions/`. */
  static readonly layer = (repoRoot: string) => Layer.succeed(SessionStore, makeStore(join(repoRoot, ".strata", "sessions")))
  /** Sessions in an explicit directory. */
  static readonly layerDirectory = (directory: string) => Layer.succeed(SessionStore, makeStore(directory))
}
