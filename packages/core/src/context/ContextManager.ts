/**
 * The `ContextManager` service (seed 004): the session's state holder. It keeps the
 * conversation history and the files in context, reports token budgets, and runs the
 * three enforcement layers: compaction (through the optional `HistoryCompactor`),
 * emergency truncation, and pre-request shedding of the largest files. With a
 * `SessionStore` it also records every message and resumes stored sessions.
 */
import { Context, Effect, Exit, Cause, Layer, Option, Ref, Schema, Semaphore } from "effect"
import { InvalidInput } from "../domain/errors.ts"
import { ContentPart, History, historyProblems, Message, Role } from "../domain/Message.ts"
import type { TrackerPersistError } from "../services/Tracker.ts"
import { Tracker } from "../services/Tracker.ts"
import { AssemblySession } from "../pipeline/assemblySession.ts"
import {
  type CompactionConfig,
  DEFAULT_COMPACTION_CONFIG,
  emergencyTruncate as truncateOldest,
  shouldCompact as overTrigger
} from "../compaction/algorithm.ts"
import {
  historyPurgeImpact,
  type CompactionResult,
  type CompactionStatus,
  compactionStatus,
  HistoryCompactor,
  truncationResult
} from "../compaction/HistoryCompactor.ts"
import {
  type LoadedSession,
  SessionStore,
  type SessionNotFound,
  type SessionRefusal,
  type SessionStoreError,
  SessionStoreMissing,
  type SessionSummary
} from "../session/SessionStore.ts"
import { FILES_ACTIVE_HEADER } from "../assembly/headers.ts"
import { modelInfo } from "../models/modelTable.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { type ShedFile, shedFiles, type TokenBudget, tokenBudget } from "./requestBudget.ts"
import { FileContext, type FileError, RepoFiles } from "./FileContext.ts"

/** What the manager holds: history and files, both immutable values. */
export interface SessionState {
  readonly history: ReadonlyArray<Message>
  readonly files: FileContext
  /** The stored session new messages are appended to (with a `SessionStore`); undefined until the first one. */
  readonly sessionId?: string | undefined
}

/** Errors of recording a message in the session store. */
export type SessionWriteError = SessionStoreError | SessionNotFound | SessionRefusal

/** A message's content: a string, or text and image parts. */
export const MessageContent = Schema.Union([Schema.String, Schema.Array(ContentPart)])
export type MessageContent = typeof MessageContent.Type

/** The outcome of emergency truncation. */
export interface TruncationResult {
  /** Messages dropped from the front of the history (0 when nothing was done). */
  readonly dropped: number
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly history: ReadonlyArray<Message>
}

/** The outcome of pre-request shedding (the files are already removed from context). */
export interface ShedReport {
  readonly dropped: ReadonlyArray<ShedFile>
  readonly estimatedTokens: number
  readonly finalTokens: number
  readonly limitTokens: number
  readonly warning?: string | undefined
}

export interface ContextManagerOptions {
  /** Override the model's input limit (default: `modelInfo(model).maxInputTokens`). */
  readonly maxInputTokens?: number | undefined
  /**
   * Compaction settings, used for `shouldCompact`, the status and emergency truncation
   * when no `HistoryCompactor` is provided (a provided compactor's own config wins).
   */
  readonly compaction?: Partial<CompactionConfig> | undefined
}

const decodeHistory = Schema.decodeUnknownExit(History)
const decodeMessage = Schema.decodeUnknownExit(Message)

// The SchemaError's message names the bad field, e.g. `Expected "user" | ... at [1]["role"]`.
const issueText = (cause: Cause.Cause<Schema.SchemaError>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : String(error)
}

const decodeOrFail = <A>(what: string, exit: Exit.Exit<A, Schema.SchemaError>): Effect.Effect<A, InvalidInput> =>
  Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.fail(new InvalidInput({ what, issue: issueText(exit.cause) }))

/** A copy the caller may mutate without touching the manager's state (messages are plain JSON data). */
const copyMessage = (m: Message): Message => structuredClone(m)

/**
 * Fail when `added` cannot follow `current`: a tool call left unanswered, a result that
 * answers no call of the message before it, a reused id. The last message's calls may
 * stay pending (their results come next).
 */
const checkAppend = (what: string, current: ReadonlyArray<Message>, added: ReadonlyArray<Message>): Effect.Effect<void, InvalidInput> => {
  const problem = historyProblems([...current, ...added], { pending: true }).find((p) => p.index >= current.length - 1)
  return problem === undefined ? Effect.void : Effect.fail(new InvalidInput({ what, issue: problem.issue }))
}

/**
 * Replace `snapshot` with `next` in `current`, keeping messages appended to `current`
 * since the snapshot was taken (a compaction runs while the conversation goes on).
 * Returns undefined when `current` no longer extends `snapshot` (it was replaced).
 */
const rebase = (
  current: ReadonlyArray<Message>,
  snapshot: ReadonlyArray<Message>,
  next: ReadonlyArray<Message>
): ReadonlyArray<Message> | undefined => {
  if (current === snapshot) return next
  if (current.length < snapshot.length) return undefined
  for (let i = 0; i < snapshot.length; i++) if (current[i] !== snapshot[i]) return undefined
  return [...next, ...current.slice(snapshot.length)]
}

/** What the manager's operations share: its services, settings and state. */
interface Manager {
  readonly counter: TokenCounter
  readonly repoFiles: RepoFiles["Service"]
  readonly tracker: Option.Option<Tracker["Service"]>
  readonly session: Option.Option<AssemblySession["Service"]>
  readonly compactor: Option.Option<HistoryCompactor["Service"]>
  readonly store: Option.Option<SessionStore["Service"]>
  /** One writer at a time, so two messages never race to create the session file. */
  readonly storeLock: Semaphore.Semaphore
  readonly compactionConfig: CompactionConfig
  readonly maxInputTokens: number
  readonly state: Ref.Ref<SessionState>
}

const historyOf = (m: Manager) => Effect.map(Ref.get(m.state), (s) => s.history)
const filesOf = (m: Manager) => Effect.map(Ref.get(m.state), (s) => s.files)
const setHistoryValue = (m: Manager, next: ReadonlyArray<Message>) => Ref.update(m.state, (s) => ({ ...s, history: next }))

/** Purge the tracker's `history:` entries (nothing without a tracker). */
const purgeTracker = (m: Manager): Effect.Effect<void, TrackerPersistError> =>
  Option.isSome(m.tracker) ? Effect.asVoid(m.tracker.value.purgeHistory) : Effect.void

/**
 * Record messages in the session store (a new session on the first message), then
 * in memory. Stored first: when the write fails nothing changes, so a retry cannot
 * duplicate a message.
 */
const append = (m: Manager, messages: ReadonlyArray<Message>, exchangeEnd: boolean): Effect.Effect<void, SessionWriteError> => {
  const appendInMemory = Ref.update(m.state, (s) => ({ ...s, history: [...s.history, ...messages] }))
  if (Option.isNone(m.store)) return appendInMemory
  const sessions = m.store.value
  return m.storeLock.withPermit(
    Effect.gen(function* () {
      const current = (yield* Ref.get(m.state)).sessionId
      const id = current ?? (yield* sessions.create)
      if (current === undefined) yield* Ref.update(m.state, (s) => ({ ...s, sessionId: id }))
      if (exchangeEnd && messages.length === 2) yield* sessions.appendExchange(id, messages[0]!, messages[1]!)
      else for (const message of messages) yield* sessions.append(id, message)
      yield* appendInMemory
    })
  )
}

/** Adding, replacing and clearing messages. */
const historyOperations = (m: Manager) => {
  const addMessage = Effect.fn("ContextManager.addMessage")(function* (role: Role, content: MessageContent) {
    const message = yield* decodeOrFail("message", decodeMessage({ role, content }))
    yield* checkAppend("message", yield* historyOf(m), [message])
    yield* append(m, [message], false)
  })

  const addExchange = Effect.fn("ContextManager.addExchange")(function* (user: MessageContent, assistant: MessageContent) {
    const pair = yield* decodeOrFail("exchange", decodeHistory([{ role: "user", content: user }, { role: "assistant", content: assistant }]))
    yield* checkAppend("exchange", yield* historyOf(m), pair)
    yield* append(m, pair, true)
  })

  const setHistory = Effect.fn("ContextManager.setHistory")(function* (messages: unknown) {
    const decoded = yield* decodeOrFail("history", decodeHistory(messages))
    yield* setHistoryValue(m, decoded)
  })

  return {
    addMessage,
    addExchange,
    getHistory: Effect.map(historyOf(m), (h) => h.map(copyMessage)),
    setHistory,
    // Purge first: if the tracker cannot be saved, the history stays as it was.
    clearHistory: Effect.andThen(purgeTracker(m), setHistoryValue(m, [])).pipe(Effect.withSpan("ContextManager.clearHistory")),
    reregisterHistoryItems: purgeTracker(m),
    historyTokenCount: Effect.map(historyOf(m), (h) => m.counter.countMessages(h))
  }
}

/** The files in context. */
const fileOperations = (m: Manager) => {
  const addFile = Effect.fn("ContextManager.addFile")(function* (path: string, content?: string) {
    const file = content === undefined ? yield* m.repoFiles.read(path) : { path: yield* m.repoFiles.normalize(path), content }
    yield* Ref.update(m.state, (s) => ({ ...s, files: s.files.addFile(file.path, file.content) }))
    return file.path
  })

  const removeFile = Effect.fn("ContextManager.removeFile")(function* (path: string) {
    const relative = yield* m.repoFiles.normalize(path)
    return yield* Ref.modify(m.state, (s) => [s.files.hasFile(relative), { ...s, files: s.files.removeFile(relative) }] as const)
  })

  const withFiles = <A>(f: (files: FileContext, relative: string) => A) => (path: string) =>
    Effect.flatMap(m.repoFiles.normalize(path), (relative) => Effect.map(filesOf(m), (fc) => f(fc, relative)))

  const files = filesOf(m)
  return {
    addFile,
    removeFile,
    getFiles: Effect.map(files, (fc) => [...fc.getFiles()]),
    getFileContent: withFiles((fc, p) => fc.getContent(p)),
    hasFile: withFiles((fc, p) => fc.hasFile(p)),
    clearFiles: Ref.update(m.state, (s) => ({ ...s, files: s.files.clear() })),
    formatFilesForPrompt: Effect.map(files, (fc) => fc.formatForPrompt(FILES_ACTIVE_HEADER)),
    countFileTokens: Effect.map(files, (fc) => fc.countTokens(m.counter)),
    getTokensByFile: Effect.map(files, (fc) => Object.fromEntries(fc.getTokensByFile(m.counter)) as Readonly<Record<string, number>>)
  }
}

/** Layer 2: when history is over twice the trigger, drop the oldest exchanges until it fits under it. */
const emergencyTruncate = (m: Manager) => Effect.fn("ContextManager.emergencyTruncate")(function* () {
  const snapshot = yield* historyOf(m)
  const tokensBefore = m.counter.countMessages(snapshot)
  const next = truncateOldest(snapshot, m.compactionConfig.triggerTokens, m.counter)
  if (next.length === snapshot.length) {
    return { dropped: 0, tokensBefore, tokensAfter: tokensBefore, history: snapshot } satisfies TruncationResult
  }
  yield* purgeTracker(m)
  const applied = yield* Ref.modify(m.state, (s) => {
    const rebased = rebase(s.history, snapshot, next)
    return [rebased, rebased === undefined ? s : { ...s, history: rebased }] as const
  })
  const final = applied ?? (yield* historyOf(m))
  return {
    dropped: applied === undefined ? 0 : snapshot.length - next.length,
    tokensBefore,
    tokensAfter: m.counter.countMessages(final),
    history: final
  } satisfies TruncationResult
})

/** Layer 1 through the `HistoryCompactor`, applied to the history unless it was replaced meanwhile. */
const compactWithCompactor = Effect.fnUntraced(function* (m: Manager, compactor: HistoryCompactor["Service"]) {
  const snapshot = yield* historyOf(m)
  const result = yield* compactor.compactHistoryIfNeeded(snapshot)
  if (!result.compacted) return result
  const applied = yield* Ref.modify(m.state, (s) => {
    const rebased = rebase(s.history, snapshot, result.history)
    return [rebased, rebased === undefined ? s : { ...s, history: rebased }] as const
  })
  return applied === undefined
    ? { ...result, compacted: false, kind: "none", history: yield* historyOf(m), reason: "history was replaced while compaction ran; result discarded" } satisfies CompactionResult
    : { ...result, history: applied } satisfies CompactionResult
})

/** No compactor: only layer 2 (emergency truncation) can act. */
const compactByTruncation = Effect.fnUntraced(function* (m: Manager) {
  const snapshot = yield* historyOf(m)
  const tokensBefore = m.counter.countMessages(snapshot)
  if (!overTrigger(tokensBefore, m.compactionConfig)) return truncationResult(snapshot, tokensBefore, false)
  const impact = yield* historyPurgeImpact(m.tracker, m.session)
  return truncationResult(snapshot, tokensBefore, true, yield* emergencyTruncate(m)(), impact)
})

/** Budgets and the three enforcement layers. */
const budgetOperations = (m: Manager) => {
  const historyTokenCount = Effect.map(historyOf(m), (h) => m.counter.countMessages(h))

  const compactHistoryIfNeeded = Effect.fn("ContextManager.compactHistoryIfNeeded")(function* () {
    return Option.isSome(m.compactor) ? yield* compactWithCompactor(m, m.compactor.value) : yield* compactByTruncation(m)
  })

  const shedFilesIfNeeded = Effect.fn("ContextManager.shedFilesIfNeeded")(function* (otherTokens: number) {
    const current = yield* Ref.get(m.state)
    const result = shedFiles({
      files: current.files,
      otherTokens: otherTokens + m.counter.countMessages(current.history),
      maxInputTokens: m.maxInputTokens,
      counter: m.counter
    })
    // The warning is returned, not logged: callers such as a CLI printing JSON decide where it goes.
    if (result.dropped.length > 0) {
      yield* Ref.update(m.state, (s) => ({ ...s, files: result.dropped.reduce((fc, f) => fc.removeFile(f.path), s.files) }))
    }
    return {
      dropped: result.dropped,
      estimatedTokens: result.estimatedTokens,
      finalTokens: result.finalTokens,
      limitTokens: result.limitTokens,
      warning: result.warning
    } satisfies ShedReport
  })

  return {
    getTokenBudget: Effect.map(historyTokenCount, (tokens) => tokenBudget(tokens, m.maxInputTokens, overTrigger(tokens, m.compactionConfig))),
    shouldCompact: Effect.map(historyTokenCount, (tokens) => overTrigger(tokens, m.compactionConfig)),
    getCompactionStatus: Effect.map(historyTokenCount, (tokens): CompactionStatus => compactionStatus(tokens, m.compactionConfig)),
    compactHistoryIfNeeded: compactHistoryIfNeeded(),
    emergencyTruncate: emergencyTruncate(m)(),
    shedFilesIfNeeded
  }
}

/** Loading, resuming, listing and resetting stored sessions. */
const sessionOperations = (m: Manager) => {
  const loadSession = Effect.fn("ContextManager.loadSession")(function* (messages: unknown) {
    const decoded = yield* decodeOrFail("session history", decodeHistory(messages))
    yield* purgeTracker(m)
    yield* setHistoryValue(m, decoded)
    return decoded.length
  })

  const requireStore = (operation: string) =>
    Option.isSome(m.store) ? Effect.succeed(m.store.value) : Effect.fail(new SessionStoreMissing({ operation }))

  // Seed 004 "Loading a Previous Session": clear the history, read the stored messages,
  // add them, and continue in that session (new messages are appended to its file).
  const resumeSession = Effect.fn("ContextManager.resumeSession")(function* (id: string) {
    const sessions = yield* requireStore(`resume session "${id}"`)
    const loaded = yield* sessions.load(id)
    yield* purgeTracker(m)
    yield* m.storeLock.withPermit(Ref.update(m.state, (s) => ({ ...s, history: loaded.messages, sessionId: loaded.id })))
    return loaded
  })

  return {
    // Seed 004 "Session Reset": history cleared, tracker history purged, and the next
    // message starts a new stored session.
    resetSession: Effect.andThen(
      purgeTracker(m),
      Ref.update(m.state, (s) => ({ ...s, history: [], sessionId: undefined }))
    ).pipe(Effect.withSpan("ContextManager.resetSession")),
    loadSession,
    sessionId: Effect.map(Ref.get(m.state), (s) => s.sessionId),
    resumeSession,
    listSessions: Effect.flatMap(requireStore("list sessions"), (sessions) => sessions.list)
  }
}

const make = (options: ContextManagerOptions) =>
  Effect.gen(function* () {
    const counter: TokenCounter = yield* Tokenizer
    const repoFiles = yield* RepoFiles
    const compactor = yield* Effect.serviceOption(HistoryCompactor)
    const m: Manager = {
      counter,
      repoFiles,
      tracker: yield* Effect.serviceOption(Tracker),
      session: yield* Effect.serviceOption(AssemblySession),
      compactor,
      store: yield* Effect.serviceOption(SessionStore),
      storeLock: yield* Semaphore.make(1),
      compactionConfig: Option.isSome(compactor) ? compactor.value.config : { ...DEFAULT_COMPACTION_CONFIG, ...options.compaction },
      maxInputTokens: options.maxInputTokens ?? modelInfo(counter.model).maxInputTokens,
      state: yield* Ref.make<SessionState>({ history: [], files: FileContext.empty })
    }
    return {
      model: counter.model,
      counter,
      maxInputTokens: m.maxInputTokens,
      compactionConfig: m.compactionConfig,
      root: repoFiles.root,
      /** The current history and files (immutable values; safe to keep). */
      state: Ref.get(m.state),
      ...historyOperations(m),
      ...fileOperations(m),
      ...budgetOperations(m),
      ...sessionOperations(m)
    } satisfies ContextManagerShape
  })

/** The manager's interface (see the README for each operation). */
export interface ContextManagerShape {
  readonly model: string
  readonly counter: TokenCounter
  readonly maxInputTokens: number
  readonly compactionConfig: CompactionConfig
  /** The absolute repository root. */
  readonly root: string
  readonly state: Effect.Effect<SessionState>
  /** Append a message (and record it in the session store, when one is provided). */
  readonly addMessage: (role: Role, content: MessageContent) => Effect.Effect<void, InvalidInput | SessionWriteError>
  /** Append an exchange; with a session store it is on disk (fsync) before this returns. */
  readonly addExchange: (user: MessageContent, assistant: MessageContent) => Effect.Effect<void, InvalidInput | SessionWriteError>
  /** A copy of the history; mutating it does not change the manager. */
  readonly getHistory: Effect.Effect<ReadonlyArray<Message>>
  /** Replace the history; malformed input fails naming the bad field and changes nothing. */
  readonly setHistory: (messages: unknown) => Effect.Effect<void, InvalidInput>
  /** Empty the history and purge the tracker's `history:` entries. */
  readonly clearHistory: Effect.Effect<void, TrackerPersistError>
  /** Purge the tracker's `history:` entries, keeping the history. */
  readonly reregisterHistoryItems: Effect.Effect<void, TrackerPersistError>
  readonly historyTokenCount: Effect.Effect<number>
  /** Add a file (read from disk when `content` is omitted); returns its repo-relative path. */
  readonly addFile: (path: string, content?: string) => Effect.Effect<string, FileError>
  /** Remove a file; false when it was not in context. */
  readonly removeFile: (path: string) => Effect.Effect<boolean, FileError>
  readonly getFiles: Effect.Effect<ReadonlyArray<string>>
  readonly getFileContent: (path: string) => Effect.Effect<string | undefined, FileError>
  readonly hasFile: (path: string) => Effect.Effect<boolean, FileError>
  readonly clearFiles: Effect.Effect<void>
  /** The Working Files section for the files in context ("" when none). */
  readonly formatFilesForPrompt: Effect.Effect<string>
  readonly countFileTokens: Effect.Effect<number>
  readonly getTokensByFile: Effect.Effect<Readonly<Record<string, number>>>
  readonly getTokenBudget: Effect.Effect<TokenBudget>
  readonly shouldCompact: Effect.Effect<boolean>
  readonly getCompactionStatus: Effect.Effect<CompactionStatus>
  /** Layer 1 (compaction via `HistoryCompactor`), falling back to layer 2 (emergency truncation). */
  readonly compactHistoryIfNeeded: Effect.Effect<CompactionResult, TrackerPersistError>
  /** Layer 2: when history is over twice the trigger, drop the oldest exchanges until it fits under it. */
  readonly emergencyTruncate: Effect.Effect<TruncationResult, TrackerPersistError>
  /** Layer 3: drop the largest files when history + files + `otherTokens` exceed 90% of the input limit. */
  readonly shedFilesIfNeeded: (otherTokens: number) => Effect.Effect<ShedReport>
  /** Start over: empty history, tracker history entries purged, next message starts a new stored session; files stay. */
  readonly resetSession: Effect.Effect<void, TrackerPersistError>
  /** Replace the history with a stored session's messages; returns how many were loaded. */
  readonly loadSession: (messages: unknown) => Effect.Effect<number, InvalidInput | TrackerPersistError>
  /** The stored session new messages go to; undefined before the first message (or without a store). */
  readonly sessionId: Effect.Effect<string | undefined>
  /**
   * Continue a stored session (seed 004 "Loading a Previous Session"): the history is
   * replaced by its messages, the tracker's history entries are purged, and new messages
   * are appended to that session. Damaged lines are skipped and listed in `warnings`.
   */
  readonly resumeSession: (id: string) => Effect.Effect<LoadedSession, SessionStoreMissing | SessionNotFound | SessionStoreError | SessionRefusal | TrackerPersistError>
  /** Stored sessions, newest first. */
  readonly listSessions: Effect.Effect<ReadonlyArray<SessionSummary>, SessionStoreMissing | SessionStoreError | SessionRefusal>
}

/**
 * The session's context state: history, files, budgets and their enforcement. Needs
 * `Tokenizer` and `RepoFiles`; uses `Tracker`, `HistoryCompactor` and `SessionStore`
 * when provided.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextManager, RepoFiles, Tokenizer } from "@strata/core/effect"
 * const layer = ContextManager.layer().pipe(
 *   Layer.provide(Layer.mergeAll(Tokenizer.layer("gpt-4o"), RepoFiles.layer({ root: "." })))
 * )
 * const program = Effect.gen(function* () {
 *   const manager = yield* ContextManager
 *   yield* manager.addExchange("Hi", "Hello!")
 *   return yield* manager.getTokenBudget
 * }).pipe(Effect.provide(layer))
 * ```
 */
export class ContextManager extends Context.Service<ContextManager, ContextManagerShape>()("@strata/core/ContextManager") {
  static readonly layer = (options: ContextManagerOptions = {}): Layer.Layer<ContextManager, never, Tokenizer | RepoFiles> =>
    Layer.effect(ContextManager, make(options))
}
