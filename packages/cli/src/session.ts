/**
 * The CLI's session file, `.strata/session.json`: what `hud`, `breakdown` and `chat`
 * need between invocations (the selected files, the history's session id, the last
 * request's usage and tier changes, session totals). Tracker state and history live in
 * their own packages' files. A corrupt session file is reported and replaced, never fatal.
 */
import { join } from "node:path"
import { Effect, Result, Schema } from "effect"
import { TierChange } from "@strata/core"
import { decodeJournalMemory, encodeJournalMemory, type JournalMemory } from "@strata/core/effect"
import { formatSchemaIssue } from "./config.ts"
import { STRATA_DIR } from "./context.ts"
import { readTextIfExists, writeTextAtomic, type StateFileError } from "./fsutil.ts"

/** Token usage of one request: what the provider reported, or what a simulator predicted. */
export const Usage = Schema.Struct({
  input: Schema.Number,
  cacheRead: Schema.Number,
  cacheWrite: Schema.Number,
  output: Schema.Number
})
export type Usage = typeof Usage.Type

export const emptyUsage: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
export const addUsage = (a: Usage, b: Usage): Usage => ({
  input: a.input + b.input,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheWrite: a.cacheWrite + b.cacheWrite,
  output: a.output + b.output
})

/** The last request of the session, for the HUD. */
export const LastRequest = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  /** Milliseconds since the epoch. */
  at: Schema.Number,
  /** Prompt tokens Strata counted for the request. */
  promptTokens: Schema.Number,
  usage: Usage,
  /** `provider`: reported by the provider; `simulated`: the provider's cache simulator; `none`: not sent. */
  usageSource: Schema.Literals(["provider", "simulated", "none"]),
  changes: Schema.Array(TierChange),
  emptyTiers: Schema.Number
})
export type LastRequest = typeof LastRequest.Type

export const SESSION_VERSION = 1

export const SessionFile = Schema.Struct({
  version: Schema.Literal(SESSION_VERSION),
  /** The history store's session id (`.strata/sessions/<id>.jsonl`), once there is history. */
  historyId: Schema.NullOr(Schema.String),
  /** Files in active context, repository-relative, sorted. */
  selected: Schema.Array(Schema.String),
  turns: Schema.Number,
  emptyTiersTotal: Schema.Number,
  totals: Usage,
  last: Schema.NullOr(LastRequest),
  /** The symbol map's path aliases, fixed at the session's first index so the legend never changes. */
  aliases: Schema.NullOr(Schema.Array(Schema.Struct({ token: Schema.String, prefix: Schema.String })))
})
export type SessionFile = typeof SessionFile.Type

export const emptySession: SessionFile = {
  version: SESSION_VERSION,
  historyId: null,
  selected: [],
  turns: 0,
  emptyTiersTotal: 0,
  totals: emptyUsage,
  last: null,
  aliases: null
}

export const SESSION_PATH = join(STRATA_DIR, "session.json")

const decode = Schema.decodeUnknownResult(SessionFile)

/** The journal layout's memory between invocations (see `@strata/core`'s journalCodec). */
export const JOURNAL_PATH = join(STRATA_DIR, "journal.json")

/**
 * The journal memory the last recorded turn left, or `undefined` when there is none or
 * it cannot be used (another tokenizer, another format, a broken file): the next
 * request then rebuilds its frozen tiers, which costs cache writes, not correctness.
 */
export const loadJournal = (root: string, encoding: string): Effect.Effect<JournalMemory | undefined> =>
  readTextIfExists(root, JOURNAL_PATH).pipe(
    Effect.map((text) => {
      if (text === undefined) return undefined
      try {
        return decodeJournalMemory(JSON.parse(text), encoding)
      } catch {
        return undefined
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )

/** Save the journal memory after a recorded turn (compact JSON: it holds the cached text). */
export const saveJournal = (root: string, memory: JournalMemory, encoding: string): Effect.Effect<void, StateFileError> =>
  writeTextAtomic(root, JOURNAL_PATH, JSON.stringify(encodeJournalMemory(memory, encoding)) + "\n")

/** Parse a session file's text; a problem description instead of a throw. Pure. */
export const parseSession = (text: string): { readonly session: SessionFile } | { readonly problem: string } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problem: "not valid JSON" }
  }
  const decoded = decode(json)
  return Result.isSuccess(decoded) ? { session: decoded.success } : { problem: formatSchemaIssue(decoded.failure.message) }
}

/** Load `.strata/session.json`; a missing file is an empty session, a broken one too (with a warning). */
export const loadSession = (root: string): Effect.Effect<{ readonly session: SessionFile; readonly warning: string | undefined }, StateFileError> =>
  Effect.map(readTextIfExists(root, SESSION_PATH), (text) => {
    if (text === undefined) return { session: emptySession, warning: undefined }
    const parsed = parseSession(text)
    return "session" in parsed
      ? { session: parsed.session, warning: undefined }
      : { session: emptySession, warning: `${SESSION_PATH} is unusable (${parsed.problem}); starting a fresh session` }
  })

export const saveSession = (root: string, session: SessionFile): Effect.Effect<void, StateFileError> =>
  writeTextAtomic(root, SESSION_PATH, JSON.stringify(session, null, 2) + "\n")
