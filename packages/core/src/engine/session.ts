/**
 * What the Promise engine does with its session, as Effects: turns (the request from the
 * files in context and the prompts, the history, tracker and journal from the store) and
 * their commits (a provider reply decoded with the engine's plugin), and the history
 * operations (append, replace, clear, compact, truncate), each one compare-and-set
 * commit in the session's `StateStore`. The class in ContextEngine.ts calls these.
 */
import { Effect, Option, Ref, Schema } from "effect"
import type { ContextBreakdown } from "../breakdown/index.ts"
import { emergencyTruncate as truncateOldest, shouldCompact as overTrigger } from "../compaction/algorithm.ts"
import { cacheImpactOfHistoryPurge, compactionStatus, HistoryCompactor, truncationResult, type CompactionResult, type CompactionStatus } from "../compaction/HistoryCompactor.ts"
import { ContextManager, type TruncationResult } from "../context/ContextManager.ts"
import { tokenBudget, type TokenBudget } from "../context/requestBudget.ts"
import { InvalidInput } from "../domain/errors.ts"
import { History, ImagePart, Message, ToolResultPart } from "../domain/Message.ts"
import { Usage } from "../domain/Usage.ts"
import { cacheImpactOfJournalRestart } from "../pipeline/journal/journalPlan.ts"
import { decodeJournalMemory } from "../pipeline/journal/journalCodec.ts"
import { UrlContent, type AssemblyInput } from "../pipeline/base/state.ts"
import { Prompts } from "../prompts/Prompts.ts"
import type { ProviderPlugin } from "../services/Placement.ts"
import { StateStore, TurnId, type StateSnapshot } from "../services/StateStore.ts"
import { Tracker, TrackerState } from "../services/Tracker.ts"
import { SessionStore, SessionStoreMissing } from "../session/SessionStore.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { appendHistory, rewriteSessionHistory } from "../turn/history.ts"
import { decodeSessionRecord, type SessionRecord } from "../turn/record.ts"
import { beginTurn, turnBreakdown, type Turn, type TurnCommitted, type TurnRequest } from "../turn/turn.ts"
import { EngineSession } from "./layer.ts"

/** What a caller adds to the session for one request. */
export interface EngineTurnRequest {
  /** The user's prompt (the system reminder is appended by assembly). May be empty after tool results. */
  readonly prompt?: string | undefined
  readonly images?: ReadonlyArray<string | ImagePart> | undefined
  /** Fetched URL contents, formatted for the prompt; at most 3 are used. */
  readonly urls?: ReadonlyArray<UrlContent> | undefined
  /** Code review context (review mode). */
  readonly review?: string | undefined
  /** Include the symbol map and file tree (default true). */
  readonly useRepoMap?: boolean | undefined
  /** Results of the tool calls the history ends with (an agent's next request). */
  readonly toolResults?: ReadonlyArray<ToolResultPart> | undefined
  /** The turn's id, kept across retries of the same logical turn (default: random). */
  readonly turnId?: string | undefined
}

/** What came back for a turn, as the provider gave it. */
export interface EngineTurnOutcome {
  /**
   * The reply: the provider SDK's response (decoded by the engine's `provider` plugin:
   * an Anthropic `Message`, a `ChatCompletion`, a Responses `Response`, a Converse output,
   * a Gemini response, an AI SDK `generateText` result), the reply's text, or core
   * `Message`s. Omitted: the request was not sent; nothing is appended to the history.
   */
  readonly reply?: unknown
  /**
   * The usage: the provider's usage object (`message.usage`, `usageMetadata`, the AI SDK's
   * `totalUsage`) or core `Usage`. Default: the usage the reply carries.
   */
  readonly usage?: unknown
  /** Where `usage` came from: the provider (default) or a cache simulator (the request was not sent). */
  readonly usageSource?: "provider" | "simulated" | undefined
  /** Commit time, milliseconds since the epoch (default now). */
  readonly at?: number | undefined
  /** Why the request read less from the cache than the one before left there, for the HUD. */
  readonly lastMiss?: string | undefined
}

/**
 * `EngineTurnRequest` at the Promise API's boundary: the same schemas the store decodes
 * the history with (`ToolResultPart`, `ImagePart`), so a turn that begins is one the
 * store keeps. Unknown keys are ignored.
 */
const TurnRequestInput = Schema.Struct({
  prompt: Schema.optional(Schema.String),
  images: Schema.optional(Schema.Array(Schema.Union([Schema.String, ImagePart]))),
  urls: Schema.optional(Schema.Array(UrlContent)),
  review: Schema.optional(Schema.String),
  useRepoMap: Schema.optional(Schema.Boolean),
  toolResults: Schema.optional(Schema.Array(ToolResultPart)),
  turnId: Schema.optional(TurnId)
})
const decodeTurnRequest = (request: unknown, what: string) =>
  Effect.mapError(Schema.decodeUnknownEffect(TurnRequestInput)(request ?? {}), (error) => new InvalidInput({ what, issue: error.message }))

/** `EngineTurnOutcome`'s plain fields (the reply and usage are decoded by the plugin). */
const TurnOutcomeInput = Schema.Struct({
  usageSource: Schema.optional(Schema.Literals(["provider", "simulated"])),
  at: Schema.optional(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0))),
  lastMiss: Schema.optional(Schema.String)
})
const decodeOutcome = (outcome: unknown) =>
  Effect.mapError(Schema.decodeUnknownEffect(TurnOutcomeInput)(outcome ?? {}), (error) => new InvalidInput({ what: "commit outcome", issue: error.message }))

const decodeMessages = Schema.decodeUnknownOption(Schema.Array(Message))
const decodeUsage = Schema.decodeUnknownOption(Usage)
const decodeHistoryExit = Schema.decodeUnknownEffect(History)

const issueOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A reply as core messages: text, messages, or the provider's response through the plugin. */
const replyMessages = (reply: unknown, plugin: ProviderPlugin<unknown>) =>
  Effect.gen(function* () {
    if (typeof reply === "string") return { messages: [{ role: "assistant", content: reply }] satisfies ReadonlyArray<Message>, usage: undefined }
    const messages = Array.isArray(reply) ? decodeMessages(reply) : Option.none()
    if (Option.isSome(messages)) return { messages: messages.value, usage: undefined }
    return yield* Effect.try({ try: () => plugin.decodeReply(reply), catch: (error) => new InvalidInput({ what: `${plugin.provider} reply`, issue: issueOf(error) }) })
  })

/** Usage as given (core `Usage`, or the provider's through the plugin), else the reply's. */
const usageOf = (usage: unknown, fromReply: Usage | undefined, plugin: ProviderPlugin<unknown>) =>
  Effect.gen(function* () {
    if (usage === undefined || usage === null) return fromReply
    const neutral = decodeUsage(usage)
    if (Option.isSome(neutral)) return neutral.value
    return yield* Effect.try({ try: () => plugin.decodeUsage(usage), catch: (error) => new InvalidInput({ what: `${plugin.provider} usage`, issue: issueOf(error) }) })
  })

/** Record messages in the JSONL log too, when the engine keeps one (`sessions`). */
const logMessages = (messages: ReadonlyArray<Message>) =>
  Effect.gen(function* () {
    const log = yield* Effect.serviceOption(SessionStore)
    if (Option.isNone(log) || messages.length === 0) return
    const session = yield* EngineSession
    const id = (yield* Ref.get(session.log)) ?? (yield* log.value.create)
    yield* Ref.set(session.log, id)
    const [user, assistant] = messages
    if (messages.length === 2 && user?.role === "user" && assistant?.role === "assistant") yield* log.value.appendExchange(id, user, assistant)
    else for (const message of messages) yield* log.value.append(id, message)
  })

// ---------------------------------------------------------------------------------
// Turns.

/** The request's input from the files in context and the prompts (the history comes from the store). */
const turnInput = Effect.fnUntraced(function* (request: EngineTurnRequest) {
  const manager = yield* ContextManager
  const prompts = yield* Prompts
  const system = yield* prompts.systemPrompt
  const reminder = yield* prompts.systemReminder
  const files = yield* manager.files
  const input: Omit<AssemblyInput, "history"> = {
    model: manager.model,
    prompt: request.prompt ?? "",
    systemPrompt: system.text,
    systemReminder: reminder.text,
    files: files.entries(),
    ...(request.images === undefined ? {} : { images: request.images }),
    ...(request.urls === undefined ? {} : { urls: request.urls }),
    ...(request.review === undefined ? {} : { review: request.review }),
    ...(request.useRepoMap === undefined ? {} : { useRepoMap: request.useRepoMap })
  }
  return { input, warnings: [...system.warnings, ...reminder.warnings] }
})

const turnRequest = Effect.fnUntraced(function* (request: EngineTurnRequest, turnId: string) {
  const session = yield* EngineSession
  const { input, warnings } = yield* turnInput(request)
  const turn: TurnRequest = { session: session.key, input, toolResults: request.toolResults, turnId }
  return { turn, warnings }
})


/**
 * Begin the session's next turn: load the state and assemble once. Pre-request shedding
 * (docs/configuration.md) is the pipeline's: the files the `inputLimit` stage (or the flat
 * request's shedding) left out of this request over 90% of the input limit also leave
 * context, with its warning; the request is not assembled again.
 */
export const beginEngineTurn = Effect.fn("ContextEngine.assemble")(function* <Body>(raw: EngineTurnRequest, plugin: ProviderPlugin<Body>) {
  const request: EngineTurnRequest = yield* decodeTurnRequest(raw, "assemble request")
  const session = yield* EngineSession
  const manager = yield* ContextManager
  const { turn: next, warnings } = yield* turnRequest(request, request.turnId ?? crypto.randomUUID())
  const turn = yield* beginTurn(next, { plugin, tracker: session.tracker })
  for (const file of turn.assembly.report.leftOut?.files ?? []) yield* manager.removeFile(file.path)
  return { turn, warnings: [...warnings, ...turn.warnings, ...turn.assembly.warnings] }
})

/** Commit a turn with what came back: the reply decoded, the usage decoded, conflicts retried. */
export const commitEngineTurn = Effect.fn("ContextEngine.commit")(function* <Body>(
  turn: Turn<Body>,
  outcome: EngineTurnOutcome,
  plugin: ProviderPlugin<Body>,
  retries?: number
) {
  const session = yield* EngineSession
  const fields = yield* decodeOutcome(outcome)
  const decoded = outcome.reply === undefined ? undefined : yield* replyMessages(outcome.reply, plugin)
  const usage = yield* usageOf(outcome.usage, decoded?.usage, plugin)
  const committed: TurnCommitted = yield* turn.commit(
    { reply: decoded?.messages, usage, usageSource: fields.usageSource ?? "provider", at: fields.at, lastMiss: fields.lastMiss },
    { retries: retries ?? session.retries }
  )
  yield* logMessages(committed.appended)
  return committed
})

/** The context breakdown (docs/pipeline.md) of the session's next request, nothing sent or committed. */
export const engineBreakdown = Effect.fn("ContextEngine.getContextBreakdown")(function* (raw: EngineTurnRequest = {}) {
  const request: EngineTurnRequest = yield* decodeTurnRequest(raw, "breakdown request")
  const session = yield* EngineSession
  const { turn } = yield* turnRequest(request, "breakdown")
  const breakdown: ContextBreakdown = yield* turnBreakdown(turn, { tracker: session.tracker })
  return breakdown
})

// ---------------------------------------------------------------------------------
// The session's state.

/** The session's stored state. */
export const engineSnapshot: Effect.Effect<StateSnapshot, Effect.Error<ReturnType<StateStore["Service"]["load"]>>, StateStore | EngineSession> = Effect.gen(function* () {
  const session = yield* EngineSession
  const store = yield* StateStore
  return (yield* store.load(session.key)).snapshot
})

/** The session record (usage totals, the last request, turns). */
export const engineRecord = Effect.map(engineSnapshot, (s): SessionRecord => decodeSessionRecord(s.record).record)

/** The session's history. */
export const engineHistory = Effect.map(engineSnapshot, (s) => s.history)

const historyTokens = (history: ReadonlyArray<Message>) => ContextManager.use((m) => Effect.succeed(m.counter.countMessages(history)))

/** `{ historyTokens, maxHistoryTokens, maxInputTokens, remaining, needsSummary }` of the stored history. */
export const engineBudget = Effect.gen(function* () {
  const manager = yield* ContextManager
  const tokens = yield* Effect.flatMap(engineHistory, historyTokens)
  const budget: TokenBudget = tokenBudget(tokens, manager.maxInputTokens, overTrigger(tokens, manager.compactionConfig))
  return budget
})

/** The compaction status of the stored history. */
export const engineCompactionStatus = Effect.gen(function* () {
  const manager = yield* ContextManager
  const tokens = yield* Effect.flatMap(engineHistory, historyTokens)
  const status: CompactionStatus = compactionStatus(tokens, manager.compactionConfig)
  return status
})

const decodeContent = (role: string, content: unknown) =>
  Effect.mapError(Schema.decodeUnknownEffect(Message)({ role, content }), (error) => new InvalidInput({ what: "message", issue: error.message }))

/** Append messages to the stored history (checked with the `History` rules), and to the JSONL log. */
export const engineAppend = Effect.fn("ContextEngine.addMessage")(function* (messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>) {
  const session = yield* EngineSession
  const decoded: Array<Message> = []
  for (const m of messages) decoded.push(yield* decodeContent(m.role, m.content))
  yield* appendHistory(session.key, decoded, { tracker: session.tracker, retries: session.historyRetries })
  yield* logMessages(decoded)
})

/** Replace the stored history with `messages` (decoded with `History`); `purge` also drops the tracker's history entries. */
export const engineReplace = Effect.fn("ContextEngine.setHistory")(function* (messages: unknown, options: { readonly purge: boolean; readonly what: string }) {
  const session = yield* EngineSession
  const history = yield* Effect.mapError(decodeHistoryExit(messages), (error) => new InvalidInput({ what: options.what, issue: error.message }))
  yield* rewriteSessionHistory(session.key, () => Effect.succeed({ history, value: undefined }), {
    purgeTracker: options.purge,
    tracker: session.tracker,
    retries: session.historyRetries
  })
  return history.length
})

/** Purge the tracker's history entries, keeping the history. */
export const enginePurge = Effect.gen(function* () {
  const session = yield* EngineSession
  yield* rewriteSessionHistory(session.key, (s) => Effect.succeed({ history: s.history, value: undefined }), { purgeTracker: true, tracker: session.tracker, retries: session.historyRetries })
})

/**
 * What purging history costs the cache, from the stored state: the journal's restart when
 * it has journal memory (the default layout), else the tracker's tiers from the most
 * stable one holding history.
 */
const purgeImpact = (snapshot: StateSnapshot, mode: "service" | undefined) =>
  Effect.gen(function* () {
    const encoding = (yield* Tokenizer).encoding
    const memory = snapshot.journal === null ? undefined : decodeJournalMemory(snapshot.journal, encoding)
    if (memory !== undefined) return cacheImpactOfJournalRestart(memory)
    const states = yield* Effect.serviceOption(TrackerState)
    if (mode === undefined && Option.isSome(states)) {
      const seeded = yield* states.value.seed(snapshot.tracker)
      return cacheImpactOfHistoryPurge(yield* seeded.tracker.current)
    }
    const tracker = yield* Effect.serviceOption(Tracker)
    return Option.isSome(tracker) ? cacheImpactOfHistoryPurge(yield* tracker.value.current) : { invalidated: 0, rewritten: 0 }
  })

/**
 * Layer 2 over the stored history: when it is over twice the trigger, drop the oldest
 * exchanges until it fits under it (one commit, the tracker's history entries purged).
 */
export const engineTruncate = Effect.fn("ContextEngine.emergencyTruncate")(function* () {
  const session = yield* EngineSession
  const manager = yield* ContextManager
  const counter = manager.counter
  const { value } = yield* rewriteSessionHistory(session.key, (snapshot) =>
    Effect.sync(() => {
      const before = snapshot.history
      const next = truncateOldest(before, manager.compactionConfig.triggerTokens, counter)
      const tokensBefore = counter.countMessages(before)
      const result: TruncationResult = { dropped: before.length - next.length, tokensBefore, tokensAfter: counter.countMessages(next), history: next }
      return { history: next.length === before.length ? undefined : next, value: result }
    }), { purgeTracker: true, tracker: session.tracker, retries: session.historyRetries })
  return value
})

/** The compacted history `result` made of `original`, over what was appended since (`current`). */
const rebase = (current: ReadonlyArray<Message>, original: ReadonlyArray<Message>, compacted: ReadonlyArray<Message>): ReadonlyArray<Message> | undefined => {
  if (current.length < original.length) return undefined
  for (let i = 0; i < original.length; i++) if (JSON.stringify(current[i]) !== JSON.stringify(original[i])) return undefined
  return [...compacted, ...current.slice(original.length)]
}

/**
 * Layer 1 over the stored history (through the `HistoryCompactor`, falling back to layer
 * 2 without one), committed as one history rewrite with the tracker's history purged. A
 * conflict keeps the compaction and re-applies it over the messages appended meanwhile;
 * a history replaced meanwhile is compacted again.
 */
export const engineCompact = Effect.fn("ContextEngine.compactHistoryIfNeeded")(function* () {
  const session = yield* EngineSession
  const manager = yield* ContextManager
  const compactor = yield* Effect.serviceOption(HistoryCompactor)
  let done: { readonly original: ReadonlyArray<Message>; readonly result: CompactionResult } | undefined
  const { value } = yield* rewriteSessionHistory(session.key, (snapshot) =>
    Effect.gen(function* () {
      const rebased = done === undefined || !done.result.compacted ? undefined : rebase(snapshot.history, done.original, done.result.history)
      if (done !== undefined && rebased !== undefined) return { history: rebased, value: { ...done.result, history: rebased } }
      const impact = yield* purgeImpact(snapshot, session.tracker)
      const result = Option.isSome(compactor)
        ? yield* compactor.value.compactHistoryIfNeeded(snapshot.history)
        : truncation(snapshot.history, manager)
      const withImpact: CompactionResult = result.compacted ? { ...result, cacheTokensInvalidated: impact.invalidated, cacheTokensRewritten: impact.rewritten } : result
      done = { original: snapshot.history, result: withImpact }
      return { history: withImpact.compacted ? withImpact.history : undefined, value: withImpact }
    }), { purgeTracker: true, tracker: session.tracker, retries: session.historyRetries })
  return value
})

/** Without a compactor only layer 2 can act. Pure. */
const truncation = (history: ReadonlyArray<Message>, manager: ContextManager["Service"]): CompactionResult => {
  const counter = manager.counter
  const config = manager.compactionConfig
  const tokensBefore = counter.countMessages(history)
  if (!overTrigger(tokensBefore, config)) return truncationResult(history, tokensBefore, false)
  const next = truncateOldest(history, config.triggerTokens, counter)
  return truncationResult(history, tokensBefore, true, { history: next, tokensAfter: counter.countMessages(next), dropped: history.length - next.length })
}

/** The JSONL log, or `SessionStoreMissing` naming the operation that needs it. */
const requireLog = (operation: string) =>
  Effect.flatMap(Effect.serviceOption(SessionStore), (log) =>
    Option.isSome(log) ? Effect.succeed(log.value) : Effect.fail(new SessionStoreMissing({ operation })))

/** Continue a JSONL-logged session: the stored history becomes its messages (tracker history purged). */
export const engineResume = Effect.fn("ContextEngine.resumeSession")(function* (id: string) {
  const session = yield* EngineSession
  const log = yield* requireLog(`resume session "${id}"`)
  const loaded = yield* log.load(id)
  yield* rewriteSessionHistory(session.key, () => Effect.succeed({ history: loaded.messages, value: undefined }), { purgeTracker: true, tracker: session.tracker, retries: session.historyRetries })
  yield* Ref.set(session.log, loaded.id)
  return loaded
})

/** The JSONL log's sessions, newest first. */
export const engineLoggedSessions = Effect.flatMap(requireLog("list sessions"), (log) => log.list)
