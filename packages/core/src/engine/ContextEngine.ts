/**
 * The Promise facade: `createContextEngine(options)` returns a `ContextEngine` that
 * owns one `ManagedRuntime` over the engine Layer, so users who do not use Effect get
 * every capability as async methods. Failures throw the tagged error itself
 * (`instanceof` and `_tag` work); an aborted signal rejects with the signal's reason.
 */
import { Cause, Effect, Exit, ManagedRuntime, Ref, Result } from "effect"
import type { ContextBreakdown } from "../breakdown/index.ts"
import type { CompactionResult, CompactionStatus } from "../compaction/HistoryCompactor.ts"
import { ContextManager, type EngineState, type ShedReport, type TruncationResult } from "../context/ContextManager.ts"
import { assembleFlatRequest, type FlatRequest, type FlatRequestInput } from "../context/flatRequest.ts"
import type { TokenBudget } from "../context/requestBudget.ts"
import type { NeutralRequest } from "../domain/Block.ts"
import type { Message, MessagePart, Role } from "../domain/Message.ts"
import { sessionHudLines, type HudOptions } from "../hud/index.ts"
import { unknownModelWarning } from "../models/modelTable.ts"
import { Prompts, type PromptText } from "../prompts/Prompts.ts"
import { seedPlugin, type SeedBody } from "../pipeline/seed/seedPlacement.ts"
import type { ProviderPlugin } from "../services/Placement.ts"
import type { SessionKey } from "../services/StateStore.ts"
import type { LoggedSession, LoggedSessionSummary } from "../session/SessionStore.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import type { SessionRecord } from "../turn/record.ts"
import type { Turn, TurnAssembly, TurnCommitted } from "../turn/turn.ts"
import { DEFAULT_TOOL_ROUNDS, openToolCalls, replyText, roundLimitResults, runToolCalls, type ToolLoopOptions, type ToolLoopResult } from "./toolLoop.ts"
import { EngineSession, makeEngineLayer, newSessionId, validateEngineOptions, type ContextEngineOptions, type EngineServices } from "./layer.ts"
import {
  beginEngineTurn,
  commitEngineTurn,
  engineAppend,
  engineBreakdown,
  engineBudget,
  engineCompact,
  engineCompactionStatus,
  engineHistory,
  engineLoggedSessions,
  enginePurge,
  engineRecord,
  engineReplace,
  engineResume,
  engineTruncate,
  type EngineTurnOutcome,
  type EngineTurnRequest
} from "./session.ts"

/**
 * One turn of the session from `ContextEngine.assemble`: the provider's request body,
 * typed by the engine's `provider` plugin, and what assembly reports about it. Send
 * `request`, then `commit` what came back; a turn never committed changes nothing.
 */
export interface EngineTurn<Body = unknown> extends Omit<TurnAssembly<Body>, "request"> {
  /** The provider's request body: pass it to the SDK's create call as it is (or spread it into `generateText`). */
  readonly request: Body
  /** The provider-neutral request (blocks, messages, breakpoints) the body was rendered from. */
  readonly neutral: NeutralRequest
  /** The turn's id, kept when the commit retries. */
  readonly id: string
  /** The version of the session's state the request was assembled from. */
  readonly version: number
  /** The session record before this turn (usage totals, the last request). */
  readonly record: SessionRecord
  /**
   * Store the turn: the prompt (and tool results) with the reply appended to the history,
   * the tracker advanced, the usage added to the session totals, as one atomic commit.
   * A turn commits once (again: `TurnAlreadyCommitted`). When another commit changed the
   * session since this turn was assembled, the commit fails with `StaleTurn` and stores
   * nothing, unless you opt in to re-assembly (`retries`, or the engine's
   * `commitRetries`): then the request is re-assembled on the new state and the same reply
   * committed (that many times, then `StateConflict`). Malformed input fails with
   * `InvalidInput` before anything is written.
   */
  readonly commit: (outcome?: EngineTurnOutcome, options?: CommitCallOptions) => Promise<TurnCommitted>
}

/** Options of `EngineTurn.commit`. */
export interface CommitCallOptions extends CallOptions {
  /** Opt in to re-assembly on a changed session, this many times (default: the engine's `commitRetries`, 0: `StaleTurn`). */
  readonly retries?: number | undefined
}

/** A message's content for the history methods: text, or parts (text, images, tool calls, tool results, reasoning). */
export type HistoryContent = string | ReadonlyArray<MessagePart>

/** Per-call options every engine method accepts. */
export interface CallOptions {
  /** Abort the call; the promise rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined
}

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("The operation was aborted.", "AbortError")

/**
 * A context engine for one session: its history, tracker, journal and record in a
 * `StateStore` (memory unless a `store` is given), the files in context, budgets,
 * prompts, tiered turns typed by the provider plugin, and flat assembly. Create it with
 * `createContextEngine`; call `dispose()` (or use `await using`) when done.
 *
 * @example
 * ```ts no-run
 * import { createContextEngine } from "@strata/core"
 * await using engine = createContextEngine({ model: "gpt-4o", repoRoot: "." })
 * await engine.addFile("README.md")
 * const { messages } = await engine.assembleFlat({ prompt: "Summarize the README." })
 * ```
 */
export class ContextEngine<Body = unknown> implements AsyncDisposable {
  readonly model: string
  /**
   * The session this engine works on in its store: the `session` option, or a new id
   * (`s-<uuid>`) when none was given. Pass it as `session` to continue the session from
   * another engine or process. (`getSessionId()` names the optional JSONL log instead.)
   */
  readonly sessionId: string
  /** Renders the turns' bodies and decodes replies: the `provider` option, else the seeds' format. */
  readonly #plugin: ProviderPlugin<Body>
  protected readonly runtime: ManagedRuntime.ManagedRuntime<EngineServices, unknown>
  #disposed = false
  /**
   * The unknown-model warning and whether an assembly returned it yet: assembly names an
   * unknown model in every result, an engine says it once. Counted as shown from the start
   * when the caller set `maxInputTokens`: then no limit was assumed.
   */
  #modelWarning: { readonly text: string; shown: boolean } | undefined

  /**
   * Use `createContextEngine`, which fills `plugin` from `options.provider` (default: the
   * seeds' format). Throws `InvalidInput` naming the field when an option is malformed
   * (`model: ""`, `maxInputTokens: -5`).
   */
  constructor(options: ContextEngineOptions<Body>, plugin: ProviderPlugin<Body>) {
    const valid = validateEngineOptions(options)
    if (Result.isFailure(valid)) throw valid.failure
    this.model = options.model
    this.#plugin = plugin
    // Sessions never mix: without a name the engine starts a session of its own.
    this.sessionId = options.session ?? newSessionId()
    this.runtime = ManagedRuntime.make(makeEngineLayer({ ...options, session: this.sessionId }))
    // Assembly names the counter's model (the manager's), which is `model` unless a counter was given.
    const text = unknownModelWarning(options.tokenCounter?.model ?? options.model)
    this.#modelWarning = text === undefined ? undefined : { text, shown: options.maxInputTokens !== undefined }
  }

  /** `warnings` with the unknown-model warning kept only the first time. */
  #warnOnce<R extends { readonly warnings: ReadonlyArray<string> }>(result: R): R {
    const once = this.#modelWarning
    if (once === undefined || !result.warnings.includes(once.text)) return result
    if (!once.shown) {
      once.shown = true
      return result
    }
    return { ...result, warnings: result.warnings.filter((w) => w !== once.text) }
  }

  /**
   * Run an Effect on the engine's runtime and settle like a plain async function.
   * Methods added later (tiered `assemble`, `getContextBreakdown`) are one call each.
   */
  protected async run<A, E>(effect: Effect.Effect<A, E, EngineServices>, options?: CallOptions): Promise<A> {
    if (this.#disposed) throw new Error("This ContextEngine was disposed; create a new one with createContextEngine().")
    const signal = options?.signal
    if (signal?.aborted) throw abortError(signal)
    const exit = await this.runtime.runPromiseExit(effect, signal === undefined ? undefined : { signal })
    if (Exit.isSuccess(exit)) return exit.value
    if (signal?.aborted && Cause.hasInterruptsOnly(exit.cause)) throw abortError(signal)
    throw Cause.squash(exit.cause)
  }

  /** Run a function of the `ContextManager`. */
  protected withManager<A, E>(f: (manager: ContextManager["Service"]) => Effect.Effect<A, E>, options?: CallOptions): Promise<A> {
    return this.run(ContextManager.use(f), options)
  }

  // History (kept in the session's store)

  /**
   * Append one message: text or parts, tool calls and tool results included (a tool
   * message answers the calls of the message before it). Throws `InvalidInput` naming the
   * problem (nothing changes then); with `sessions` on, also `SessionStoreError`.
   */
  addMessage(role: Role, content: HistoryContent, options?: CallOptions): Promise<void> {
    return this.run(engineAppend([{ role, content }]), options)
  }

  /** Append several messages as one step (a tool exchange, say), checked together. */
  addMessages(messages: ReadonlyArray<Message>, options?: CallOptions): Promise<void> {
    return this.run(engineAppend(messages), options)
  }

  /** Append a user message and the assistant's reply together. */
  addExchange(user: HistoryContent, assistant: HistoryContent, options?: CallOptions): Promise<void> {
    return this.run(engineAppend([{ role: "user", content: user }, { role: "assistant", content: assistant }]), options)
  }

  /** A copy of the history; changing it does not change the engine. */
  async getHistory(options?: CallOptions): Promise<ReadonlyArray<Message>> {
    return structuredClone(await this.run(engineHistory, options))
  }

  /** Replace the history. Throws `InvalidInput` naming the bad field; the history is then unchanged. */
  async setHistory(messages: ReadonlyArray<Message> | unknown, options?: CallOptions): Promise<void> {
    await this.run(engineReplace(messages, { purge: false, what: "history" }), options)
  }

  /** Empty the history and purge the tracker's history entries. */
  async clearHistory(options?: CallOptions): Promise<void> {
    await this.run(engineReplace([], { purge: true, what: "history" }), options)
  }

  /** Purge the tracker's history entries without touching the history. */
  reregisterHistoryItems(options?: CallOptions): Promise<void> {
    return this.run(enginePurge, options)
  }

  async historyTokenCount(options?: CallOptions): Promise<number> {
    return (await this.run(engineBudget, options)).historyTokens
  }

  // Files

  /**
   * Add a file to context, reading it from disk when `content` is omitted. Returns the
   * repo-relative path. Throws `PathOutsideRepo`, `FileNotFound`, `BinaryFile`,
   * `FileTooLarge`, `FileReadError` or `InvalidInput`.
   */
  addFile(path: string, content?: string, options?: CallOptions): Promise<string> {
    return this.withManager((m) => m.addFile(path, content), options)
  }

  /** Remove a file; false when it was not in context. */
  removeFile(path: string, options?: CallOptions): Promise<boolean> {
    return this.withManager((m) => m.removeFile(path), options)
  }

  /** Paths in context, sorted. */
  getFiles(options?: CallOptions): Promise<ReadonlyArray<string>> {
    return this.withManager((m) => m.getFiles, options)
  }

  getFileContent(path: string, options?: CallOptions): Promise<string | undefined> {
    return this.withManager((m) => m.getFileContent(path), options)
  }

  hasFile(path: string, options?: CallOptions): Promise<boolean> {
    return this.withManager((m) => m.hasFile(path), options)
  }

  clearFiles(options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.clearFiles, options)
  }

  /** The Working Files section (header and fenced files), or "" with no files. */
  formatFilesForPrompt(options?: CallOptions): Promise<string> {
    return this.withManager((m) => m.formatFilesForPrompt, options)
  }

  countFileTokens(options?: CallOptions): Promise<number> {
    return this.withManager((m) => m.countFileTokens, options)
  }

  getTokensByFile(options?: CallOptions): Promise<Readonly<Record<string, number>>> {
    return this.withManager((m) => m.getTokensByFile, options)
  }

  // Budgets and enforcement

  /** `{ historyTokens, maxHistoryTokens, maxInputTokens, remaining, needsSummary }`. */
  getTokenBudget(options?: CallOptions): Promise<TokenBudget> {
    return this.run(engineBudget, options)
  }

  async shouldCompact(options?: CallOptions): Promise<boolean> {
    return (await this.run(engineBudget, options)).needsSummary
  }

  /** `{ enabled, tokens, threshold, percent }` for a UI. */
  getCompactionStatus(options?: CallOptions): Promise<CompactionStatus> {
    return this.run(engineCompactionStatus, options)
  }

  /**
   * Compact the history when it passed the trigger (call after each response): one
   * history rewrite in the store, with the tracker's history entries purged.
   */
  compactHistoryIfNeeded(options?: CallOptions): Promise<CompactionResult> {
    return this.run(engineCompact(), options)
  }

  /** Drop the oldest exchanges when history is over twice the compaction trigger. */
  emergencyTruncate(options?: CallOptions): Promise<TruncationResult> {
    return this.run(engineTruncate(), options)
  }

  /**
   * Drop the largest files when history + files + `otherTokens` pass 90% of the input
   * limit; the report carries a warning to show the user.
   */
  shedFilesIfNeeded(otherTokens: number, options?: CallOptions): Promise<ShedReport> {
    return this.run(
      Effect.gen(function* () {
        const { historyTokens } = yield* engineBudget
        return yield* (yield* ContextManager).shedFilesIfNeeded(otherTokens + historyTokens)
      }),
      options
    )
  }

  // Session

  /**
   * Start over: empty the history, purge the tracker's history entries, and (with
   * `sessions`) log to a new JSONL session from the next message; files stay.
   */
  async resetSession(options?: CallOptions): Promise<void> {
    await this.run(
      Effect.gen(function* () {
        yield* engineReplace([], { purge: true, what: "history" })
        yield* Ref.set((yield* EngineSession).log, undefined)
      }),
      options
    )
  }

  /** Replace the history with messages you stored yourself (validated first); returns how many. */
  loadSession(messages: ReadonlyArray<Message> | unknown, options?: CallOptions): Promise<number> {
    return this.run(engineReplace(messages, { purge: true, what: "session history" }), options)
  }

  /**
   * Continue a JSONL-logged session (needs `sessions`): the history becomes its messages,
   * the tracker's history entries are purged, and new messages are logged to it. Damaged
   * lines (an interrupted write) are skipped and listed in `warnings`. Throws
   * `SessionNotFound`, `SessionStoreError` or `SessionStoreMissing`. Call
   * `compactHistoryIfNeeded()` afterwards if the session is long.
   */
  resumeSession(id: string, options?: CallOptions): Promise<LoggedSession> {
    return this.run(engineResume(id), options)
  }

  /** Sessions in the JSONL log, newest first (needs `sessions`). */
  listSessions(options?: CallOptions): Promise<ReadonlyArray<LoggedSessionSummary>> {
    return this.run(engineLoggedSessions, options)
  }

  /** The JSONL session new messages are logged to (undefined before the first message, or without `sessions`). */
  getSessionId(options?: CallOptions): Promise<string | undefined> {
    return this.run(Effect.flatMap(EngineSession.use(Effect.succeed), (s) => Ref.get(s.log)), options)
  }

  /** The session's key in its store (repository identity and name). */
  getSessionKey(options?: CallOptions): Promise<SessionKey> {
    return this.run(Effect.map(EngineSession.use(Effect.succeed), (s) => s.key), options)
  }

  /** The session record: usage totals, the last request's usage and tier changes, turns. */
  getSessionRecord(options?: CallOptions): Promise<SessionRecord> {
    return this.run(engineRecord, options)
  }

  /** The stored history and the files in context as immutable values. */
  getState(options?: CallOptions): Promise<EngineState> {
    return this.run(
      Effect.gen(function* () {
        const files = yield* (yield* ContextManager).files
        return { history: yield* engineHistory, files }
      }),
      options
    )
  }

  /**
   * The HUD as lines of text: the next request's cache blocks (assembled, not sent), the
   * token breakdown with the last request's usage and the session totals, tier changes.
   */
  async hud(hudOptions: HudOptions = {}, options?: CallOptions): Promise<ReadonlyArray<string>> {
    const plugin = this.#plugin
    return this.run(
      Effect.gen(function* () {
        const { turn } = yield* beginEngineTurn({ prompt: "" }, plugin)
        return sessionHudLines(turn.assembly.report, turn.record, hudOptions)
      }),
      options
    )
  }

  // Prompts, tokens and assembly

  /** `system.md` + `system_extra.md`, read now from the prompts folder (bundled fallback). */
  getSystemPrompt(options?: CallOptions): Promise<PromptText> {
    return this.run(Prompts.use((p) => p.systemPrompt), options)
  }

  /** `system_reminder.md`, read now. */
  getSystemReminder(options?: CallOptions): Promise<PromptText> {
    return this.run(Prompts.use((p) => p.systemReminder), options)
  }

  /** The engine's token counter (memoized; synchronous once loaded). */
  getTokenCounter(options?: CallOptions): Promise<TokenCounter> {
    return this.run(Effect.service(Tokenizer), options)
  }

  /** Tokens of a text with the engine's model tokenizer. */
  countTokens(text: string, options?: CallOptions): Promise<number> {
    return this.run(Tokenizer.use((t) => Effect.succeed(t.count(text))), options)
  }

  /**
   * A flat (non-tiered) request from the session: system prompt and symbol map, file
   * tree, URLs, Working Files, history, prompt + reminder. Sheds files first when the
   * request would pass 90% of the input limit; warnings say what happened. Throws
   * `RequestTooLarge` when it is still over the limit (the history, most often).
   */
  async assembleFlat(input: FlatRequestInput, options?: CallOptions): Promise<FlatRequest> {
    return this.#warnOnce(await this.run(Effect.flatMap(engineHistory, (history) => assembleFlatRequest(input, history)), options))
  }

  /**
   * The session's next request (the tiered pipeline, docs/pipeline.md): files and prompts from the engine, history,
   * tiers and journal from the session's state, the symbol map from `symbols`, the body
   * from `provider` (typed; default the seeds' OpenAI-compatible format). Without a
   * `tracker` the request is flat. Send `turn.request`, then `turn.commit({ reply })`.
   * The map is cut to its budget, files and map blocks are shed over 90% of the input
   * limit, and a request still over the limit throws `RequestTooLarge`.
   *
   * @example
   * ```ts
   * import { createContextEngine } from "@strata/core"
   * await using engine = createContextEngine({ model: "gpt-4o", repoRoot: "." })
   * const turn = await engine.assemble({ prompt: "What does src/a.ts do?" })
   * // ... send turn.request ...
   * await turn.commit({ reply: "It exports a.", usage: { input: 900, cacheRead: 0, cacheWrite: 0, output: 5 } })
   * ```
   */
  async assemble(request: EngineTurnRequest, options?: CallOptions): Promise<EngineTurn<Body>> {
    const { turn, warnings } = await this.run(beginEngineTurn(request, this.#plugin), options)
    return this.#engineTurn(turn, this.#warnOnce({ warnings }).warnings)
  }

  #engineTurn(turn: Turn<Body>, warnings: ReadonlyArray<string>): EngineTurn<Body> {
    const plugin = this.#plugin
    const { request: neutral, ...assembly } = turn.assembly
    return {
      ...assembly,
      request: turn.assembly.placed.body,
      neutral,
      warnings,
      id: turn.id,
      version: turn.baseVersion,
      record: turn.record,
      commit: (outcome: EngineTurnOutcome = {}, commitOptions?: CommitCallOptions) =>
        this.run(commitEngineTurn(turn, outcome, plugin, commitOptions?.retries), commitOptions)
    }
  }

  /**
   * Run an agent loop: assemble the request, `send` it, commit the reply, run the tools
   * it calls (in parallel; a thrown error or an unknown tool goes back to the model as an
   * error result), assemble the next request with their results, and so on until the
   * model answers without calling a tool. Every round is one strict commit; every request
   * after tool results ends with them. The tools' definitions reach the model through the
   * provider plugin's `tools` option.
   *
   * @example
   * ```ts no-run
   * import Anthropic from "@anthropic-ai/sdk"
   * import { createContextEngine } from "@strata/core"
   * import { AnthropicPlacement } from "@strata/providers"
   * import { readFile } from "node:fs/promises"
   *
   * const client = new Anthropic()
   * const tools = [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] } }]
   * await using engine = createContextEngine({ model: "claude-sonnet-4-6", provider: AnthropicPlacement({ tools }) })
   * const { text } = await engine.runToolLoop({
   *   prompt: "What does math.ts export?",
   *   send: (request) => client.messages.create(request),
   *   tools: { read_file: (input) => readFile(String(Object(input).path), "utf8") }
   * })
   * ```
   */
  async runToolLoop(options: ToolLoopOptions<Body>): Promise<ToolLoopResult> {
    const { send, tools, signal } = options
    const maxRounds = options.maxRounds ?? DEFAULT_TOOL_ROUNDS
    const call = signal === undefined ? undefined : { signal }
    const messages: Array<Message> = []
    let request: EngineTurnRequest = { prompt: options.prompt ?? "" }
    for (let requests = 1, toolRounds = 0; ; requests++) {
      const turn = await this.assemble(request, call)
      if (signal?.aborted) throw abortError(signal)
      const reply = await send(turn.request, { round: requests, signal })
      const committed = await turn.commit({ reply }, call)
      messages.push(...committed.appended)
      const calls = openToolCalls(committed.appended)
      if (calls.length === 0) return { text: replyText(committed.appended.at(-1)), requests, toolRounds, messages, committed }
      if (toolRounds >= maxRounds) {
        request = { toolResults: roundLimitResults(calls, maxRounds) }
        continue
      }
      toolRounds++
      request = { toolResults: await runToolCalls(calls, tools, signal) }
    }
  }

  /** The context breakdown JSON (docs/pipeline.md) of the session's next request, without sending or committing anything. */
  getContextBreakdown(request: EngineTurnRequest = {}, options?: CallOptions): Promise<ContextBreakdown> {
    return this.run(engineBreakdown(request), options)
  }

  /** Release the runtime. Later calls throw. */
  async dispose(): Promise<void> {
    if (this.#disposed) return
    this.#disposed = true
    await this.runtime.dispose()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/**
 * Create a context engine for one session.
 *
 * @example
 * ```ts
 * import { createContextEngine } from "@strata/core"
 * const engine = createContextEngine({ model: "claude-sonnet-4-6", repoRoot: "/path/to/repo" })
 * await engine.addExchange("What does src/a.ts do?", "It exports a.")
 * console.log(await engine.getTokenBudget())
 * await engine.dispose()
 * ```
 */
export function createContextEngine<Body>(options: ContextEngineOptions<Body> & { readonly provider: ProviderPlugin<Body> }): ContextEngine<Body>
export function createContextEngine(options: ContextEngineOptions<SeedBody> & { readonly provider?: undefined }): ContextEngine<SeedBody>
export function createContextEngine(options: ContextEngineOptions): ContextEngine {
  return new ContextEngine(options, options.provider ?? seedPlugin)
}
