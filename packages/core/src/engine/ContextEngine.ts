/**
 * The Promise facade: `createContextEngine(options)` returns a `ContextEngine` that
 * owns one `ManagedRuntime` over the engine Layer, so users who do not use Effect get
 * every capability as async methods. Failures throw the tagged error itself
 * (`instanceof` and `_tag` work); an aborted signal rejects with the signal's reason.
 */
import { Cause, Effect, Exit, ManagedRuntime, Result } from "effect"
import type { CompactionResult, CompactionStatus } from "../compaction/HistoryCompactor.ts"
import type { TokenBudget } from "../context/requestBudget.ts"
import {
  ContextManager,
  type MessageContent,
  type SessionState,
  type ShedReport,
  type TruncationResult
} from "../context/ContextManager.ts"
import { assembleFlatRequest, type FlatRequest, type FlatRequestInput } from "../context/flatRequest.ts"
import type { Message, Role } from "../domain/Message.ts"
import { unknownModelWarning } from "../models/modelTable.ts"
import { Prompts, type PromptText } from "../prompts/Prompts.ts"
import type { LoadedSession, SessionSummary } from "../session/SessionStore.ts"
import type { ContextBreakdown } from "../breakdown/index.ts"
import type { AssemblyResult } from "../pipeline/assemble.ts"
import { assembleSession, sessionBreakdown, type SessionAssemblyRequest } from "./fromSession.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { type ContextEngineOptions, type EngineServices, makeEngineLayer, validateEngineOptions } from "./layer.ts"

/** An assembled request from `ContextEngine.assemble`; `commit()` advances the tracker. */
export interface EngineAssembly extends Omit<AssemblyResult, "commit"> {
  readonly commit: (options?: CallOptions) => Promise<void>
}

/** Per-call options every engine method accepts. */
export interface CallOptions {
  /** Abort the call; the promise rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined
}

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("The operation was aborted.", "AbortError")

/**
 * A context engine for one session: history, files in context, budgets, prompts and
 * flat assembly. Create it with `createContextEngine`; call `dispose()` (or use
 * `await using`) when done.
 *
 * @example
 * ```ts no-run
 * import { createContextEngine } from "@strata/core"
 * await using engine = createContextEngine({ model: "gpt-4o", repoRoot: "." })
 * await engine.addFile("README.md")
 * const { messages } = await engine.assembleFlat({ prompt: "Summarize the README." })
 * ```
 */
export class ContextEngine implements AsyncDisposable {
  readonly model: string
  protected readonly runtime: ManagedRuntime.ManagedRuntime<EngineServices, unknown>
  #disposed = false
  /**
   * The unknown-model warning and whether an assembly returned it yet: assembly names an
   * unknown model in every result, an engine says it once. Counted as shown from the start
   * when the caller set `maxInputTokens`: then no limit was assumed.
   */
  #modelWarning: { readonly text: string; shown: boolean } | undefined

  /** Throws `InvalidInput` naming the field when an option is malformed (`model: ""`, `maxInputTokens: -5`). */
  constructor(options: ContextEngineOptions) {
    const valid = validateEngineOptions(options)
    if (Result.isFailure(valid)) throw valid.failure
    this.model = options.model
    this.runtime = ManagedRuntime.make(makeEngineLayer(options))
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

  // History

  /**
   * Append one message. Throws `InvalidInput` for a malformed role or content; with
   * `sessions` on, also `SessionStoreError` when it cannot be stored (nothing changes then).
   */
  addMessage(role: Role, content: MessageContent, options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.addMessage(role, content), options)
  }

  /** Append a user message and the assistant's reply together (stored and fsynced first with `sessions` on). */
  addExchange(user: MessageContent, assistant: MessageContent, options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.addExchange(user, assistant), options)
  }

  /** A copy of the history; changing it does not change the engine. */
  getHistory(options?: CallOptions): Promise<ReadonlyArray<Message>> {
    return this.withManager((m) => m.getHistory, options)
  }

  /** Replace the history. Throws `InvalidInput` naming the bad field; the history is then unchanged. */
  setHistory(messages: ReadonlyArray<Message> | unknown, options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.setHistory(messages), options)
  }

  /** Empty the history and purge the tracker's history entries. */
  clearHistory(options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.clearHistory, options)
  }

  /** Purge the tracker's history entries without touching the history. */
  reregisterHistoryItems(options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.reregisterHistoryItems, options)
  }

  historyTokenCount(options?: CallOptions): Promise<number> {
    return this.withManager((m) => m.historyTokenCount, options)
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
    return this.withManager((m) => m.getTokenBudget, options)
  }

  shouldCompact(options?: CallOptions): Promise<boolean> {
    return this.withManager((m) => m.shouldCompact, options)
  }

  /** `{ enabled, tokens, threshold, percent }` for a UI. */
  getCompactionStatus(options?: CallOptions): Promise<CompactionStatus> {
    return this.withManager((m) => m.getCompactionStatus, options)
  }

  /** Compact the history when it passed the trigger (call after each response). */
  compactHistoryIfNeeded(options?: CallOptions): Promise<CompactionResult> {
    return this.withManager((m) => m.compactHistoryIfNeeded, options)
  }

  /** Drop the oldest exchanges when history is over twice the compaction trigger. */
  emergencyTruncate(options?: CallOptions): Promise<TruncationResult> {
    return this.withManager((m) => m.emergencyTruncate, options)
  }

  /**
   * Drop the largest files when history + files + `otherTokens` pass 90% of the input
   * limit; the report carries a warning to show the user.
   */
  shedFilesIfNeeded(otherTokens: number, options?: CallOptions): Promise<ShedReport> {
    return this.withManager((m) => m.shedFilesIfNeeded(otherTokens), options)
  }

  // Lifecycle

  /** Start over: empty the history, purge the tracker's history entries, and (with `sessions`) start a new stored session; files stay. */
  resetSession(options?: CallOptions): Promise<void> {
    return this.withManager((m) => m.resetSession, options)
  }

  /** Replace the history with messages you stored yourself (validated first); returns how many. */
  loadSession(messages: ReadonlyArray<Message> | unknown, options?: CallOptions): Promise<number> {
    return this.withManager((m) => m.loadSession(messages), options)
  }

  /**
   * Continue a session from the session store (needs `sessions`): the history becomes its
   * messages, the tracker's history entries are purged, and new messages are appended to
   * it. Damaged lines (an interrupted write) are skipped and listed in `warnings`. Throws
   * `SessionNotFound`, `SessionStoreError` or `SessionStoreMissing`. Call
   * `compactHistoryIfNeeded()` afterwards if the session is long.
   */
  resumeSession(id: string, options?: CallOptions): Promise<LoadedSession> {
    return this.withManager((m) => m.resumeSession(id), options)
  }

  /** Sessions in the session store, newest first (needs `sessions`). */
  listSessions(options?: CallOptions): Promise<ReadonlyArray<SessionSummary>> {
    return this.withManager((m) => m.listSessions, options)
  }

  /** The stored session new messages go to (undefined before the first message, or without `sessions`). */
  getSessionId(options?: CallOptions): Promise<string | undefined> {
    return this.withManager((m) => m.sessionId, options)
  }

  /** The current history and files as immutable values. */
  getState(options?: CallOptions): Promise<SessionState> {
    return this.withManager((m) => m.state, options)
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
    return this.#warnOnce(await this.run(assembleFlatRequest(input), options))
  }

  /**
   * A tiered request (seed 002) from the session: history and files from the engine,
   * prompts re-read, the symbol map from a provided `SymbolIndex`, tiers from a provided
   * `Tracker` (without one: flat fallback), the body from the provided `Placement`
   * (default: OpenAI-compatible with `cache_control`). Call `commit()` once the provider
   * call succeeded; a failed request skips it and the tracker stays as it was. The map is
   * cut to its budget, files and map blocks are shed over 90% of the input limit, and a
   * request still over the limit throws `RequestTooLarge`.
   */
  async assemble(request: SessionAssemblyRequest, options?: CallOptions): Promise<EngineAssembly> {
    const result = this.#warnOnce(await this.run(assembleSession(request), options))
    return { ...result, commit: (commitOptions?: CallOptions) => this.run(result.commit, commitOptions) }
  }

  /** The seed 003 breakdown JSON of the session's next request, without sending or committing anything. */
  getContextBreakdown(request: Partial<SessionAssemblyRequest> = {}, options?: CallOptions): Promise<ContextBreakdown> {
    return this.run(sessionBreakdown(request), options)
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
 * const engine = createContextEngine({ model: "claude-sonnet-4-5", repoRoot: "/path/to/repo" })
 * await engine.addExchange("What does src/a.ts do?", "It exports a.")
 * console.log(await engine.getTokenBudget())
 * await engine.dispose()
 * ```
 */
export const createContextEngine = (options: ContextEngineOptions): ContextEngine => new ContextEngine(options)
