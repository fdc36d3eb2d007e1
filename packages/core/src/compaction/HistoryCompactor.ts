/**
 * The `HistoryCompactor` service: decides when history is too long, asks a cheap
 * detection model for a topic boundary and a summary, and shrinks the history in one
 * large step. Any model failure falls back to summary-less truncation; nothing here
 * fails the turn. After compaction the tracker's history entries are purged.
 */
import { Context, Duration, Effect, Layer, Option, Ref, Result, Schema } from "effect"
import type { Message } from "../domain/Message.ts"
import { CACHED_TIERS, tierRank } from "../domain/Tier.ts"
import { cacheImpactOfJournalRestart } from "../pipeline/journal/journalPlan.ts"
import { AssemblySession } from "../pipeline/assemblySession.ts"
import { Prompts, type PromptText } from "../prompts/Prompts.ts"
import { Tracker, type TrackerSnapshot } from "../services/Tracker.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import {
  applyDetection,
  type CompactionConfig,
  type CompactionKind,
  type Detection,
  DEFAULT_COMPACTION_CONFIG,
  emergencyTruncate,
  formatDetectionTranscript,
  minStepTokens,
  parseDetection,
  shouldCompact,
  verbatimStart
} from "./algorithm.ts"
import { loadCompactionPrompt } from "./prompt.ts"

/** The detection model failed: transport error, timeout, rate limit after retries... */
export class CompactionModelError extends Schema.TaggedError<CompactionModelError>()("CompactionModelError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `The compaction model failed: ${this.reason}`
  }
}

/** A request to the detection model. */
export interface CompactionModelRequest {
  readonly system: string
  readonly user: string
  readonly maxTokens: number
  /** `detectionModel` from the compaction config, when set; the model layer's own model otherwise. */
  readonly model?: string | undefined
}

/**
 * The model the compactor asks for a topic boundary and a summary. `@strata/providers`
 * provides layers backed by its LLM clients; any function from prompt to text works.
 */
export class CompactionModel extends Context.Service<CompactionModel, {
  readonly complete: (request: CompactionModelRequest) => Effect.Effect<string, CompactionModelError>
}>()("@strata/core/CompactionModel") {}

/** Status for a UI: whether compaction is on, and how close history is to the trigger. */
export interface CompactionStatus {
  readonly enabled: boolean
  readonly tokens: number
  readonly threshold: number
  /** tokens / threshold in percent, capped at 999; 0 when the threshold is 0. */
  readonly percent: number
}

/** What one compaction did. */
export interface CompactionResult {
  readonly compacted: boolean
  /** `emergency` when compaction failed and history was over twice the trigger. */
  readonly kind: CompactionKind | "emergency" | "none"
  readonly history: ReadonlyArray<Message>
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly tokensSaved: number
  /**
   * Cached tokens this compaction made useless: every item of the most stable cached
   * tier that held history and of each less stable cached tier after it (a prefix cache
   * is invalid from the first changed byte on), history included. 0 when no history sat
   * in a cached tier or no `Tracker` is provided.
   */
  readonly cacheTokensInvalidated: number
  /**
   * The part of `cacheTokensInvalidated` the next request writes to the cache again: the
   * items of those tiers that stay (symbols, files...). The purged history is not
   * rewritten; the compacted history starts over in active.
   */
  readonly cacheTokensRewritten: number
  readonly reason: string
  /** Why the detector's answer was not used, when it was not, and other things to tell the user. */
  readonly warnings: ReadonlyArray<string>
}

/**
 * A compaction without a `HistoryCompactor`, where only layer 2 (emergency truncation)
 * can act: nothing done while history is under the trigger or under twice it (`truncated`
 * undefined or as long as `history`), else the oldest messages dropped. Pure.
 */
export const truncationResult = (
  history: ReadonlyArray<Message>,
  tokensBefore: number,
  overTrigger: boolean,
  truncated?: { readonly history: ReadonlyArray<Message>; readonly tokensAfter: number; readonly dropped: number },
  impact: { readonly invalidated: number; readonly rewritten: number } = { invalidated: 0, rewritten: 0 }
): CompactionResult => {
  const done = overTrigger && truncated !== undefined && truncated.dropped > 0
  const tokensAfter = done ? truncated.tokensAfter : tokensBefore
  return {
    compacted: done,
    kind: done ? "emergency" : "none",
    history: done ? truncated.history : history,
    tokensBefore,
    tokensAfter,
    tokensSaved: tokensBefore - tokensAfter,
    cacheTokensInvalidated: done ? impact.invalidated : 0,
    cacheTokensRewritten: done ? impact.rewritten : 0,
    reason: done
      ? `no HistoryCompactor is provided and history is over twice the trigger (${tokensBefore} tokens); oldest messages dropped`
      : overTrigger
        ? "no HistoryCompactor is provided and history is under twice the trigger"
        : "history is below the trigger",
    warnings: []
  }
}

/**
 * Status for a UI.
 *
 * @example
 * ```ts
 * import { compactionStatus, DEFAULT_COMPACTION_CONFIG } from "@strata/core"
 * compactionStatus(12_000, DEFAULT_COMPACTION_CONFIG) // { enabled: true, tokens: 12000, threshold: 24000, percent: 50 }
 * ```
 */
export const compactionStatus = (tokens: number, config: CompactionConfig): CompactionStatus => ({
  enabled: config.enabled,
  tokens,
  threshold: config.triggerTokens,
  percent: config.triggerTokens <= 0 ? 0 : Math.min(999, Math.round((tokens / config.triggerTokens) * 100))
})

/**
 * What purging history costs the provider cache: the tokens of every item from the most
 * stable cached tier holding a `history:` entry down to L3 (`invalidated`), and the part
 * of them that is not history (`rewritten`: written again by the next request).
 *
 * @example
 * ```ts
 * import { cacheImpactOfHistoryPurge } from "@strata/core"
 * // with a tracker snapshot where L3 holds a 500-token symbol entry and 600 tokens of history:
 * // cacheImpactOfHistoryPurge(snapshot) // { invalidated: 1100, rewritten: 500 }
 * ```
 */
export const cacheImpactOfHistoryPurge = (snapshot: Pick<TrackerSnapshot, "itemsIn">): { readonly invalidated: number; readonly rewritten: number } => {
  const firstWithHistory = CACHED_TIERS.find((tier) => snapshot.itemsIn(tier).some((item) => item.key.startsWith("history:")))
  if (firstWithHistory === undefined) return { invalidated: 0, rewritten: 0 }
  let invalidated = 0
  let rewritten = 0
  for (const tier of CACHED_TIERS) {
    if (tierRank(tier) < tierRank(firstWithHistory)) continue
    for (const item of snapshot.itemsIn(tier)) {
      invalidated += item.tokens
      if (!item.key.startsWith("history:")) rewritten += item.tokens
    }
  }
  return { invalidated, rewritten }
}

/**
 * What purging history costs the cache in the layout the pipeline uses: the journal's
 * restart when the session has journal memory (the default layout), else the tracker's
 * tiers from the most stable one holding history (seed layout). Zero without either.
 */
export const historyPurgeImpact = (
  tracker: Option.Option<Tracker["Service"]>,
  session: Option.Option<AssemblySession["Service"]>
): Effect.Effect<{ readonly invalidated: number; readonly rewritten: number }> =>
  Effect.gen(function* () {
    const memory = Option.isSome(session) ? yield* Ref.get(session.value.journal) : undefined
    if (memory !== undefined) return cacheImpactOfJournalRestart(memory)
    return Option.isSome(tracker) ? cacheImpactOfHistoryPurge(yield* tracker.value.current) : { invalidated: 0, rewritten: 0 }
  })

export interface HistoryCompactorOptions {
  readonly config?: Partial<CompactionConfig>
  /**
   * The detector's instructions. Default: `compaction.md` read at each compaction from
   * the `Prompts` service when one is provided (the user's folder, then the bundled
   * default), else the bundled `prompts/compaction.md`.
   */
  readonly prompt?: string
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

type Warnings = Array<string>

/** Asks the detection model for a boundary and a summary: its answer, or why there is none. Never fails. */
type Detect = (history: ReadonlyArray<Message>, warnings: Warnings) => Effect.Effect<Result.Result<Detection, string>>

const makeDetect = (
  config: CompactionConfig,
  model: Option.Option<CompactionModel["Service"]>,
  promptText: Effect.Effect<PromptText, unknown>
): Detect => (history, warnings) =>
  Effect.gen(function* () {
    if (Option.isNone(model)) return Result.fail("no compaction model is configured")
    const prompt = yield* promptText.pipe(Effect.result)
    if (Result.isFailure(prompt)) return Result.fail(`the compaction prompt could not be read: ${describe(prompt.failure)}`)
    warnings.push(...prompt.success.warnings)
    const request: CompactionModelRequest = {
      system: prompt.success.text.replaceAll("{summary_budget}", String(config.summaryBudgetTokens)),
      user: formatDetectionTranscript(history),
      maxTokens: Math.max(256, config.summaryBudgetTokens * 2),
      model: config.detectionModel
    }
    return yield* model.value.complete(request).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(config.timeoutMs),
        orElse: () => Effect.fail(new CompactionModelError({ reason: `no answer within ${config.timeoutMs} ms` }))
      }),
      Effect.map(parseDetection),
      Effect.catch((error: CompactionModelError) => Effect.succeed(Result.fail(error.message))),
      // A defect in a user-supplied model must not crash the turn either.
      Effect.catchDefect((defect) => Effect.succeed(Result.fail(`the compaction model crashed: ${describe(defect)}`)))
    )
  })

/** Purge tracker history entries; returns what that costs the provider cache. A failed purge is a warning. */
const purgeTrackerHistory = (
  tracker: Option.Option<Tracker["Service"]>,
  session: Option.Option<AssemblySession["Service"]>,
  warnings: Warnings
) =>
  Effect.gen(function* () {
    const impact = yield* historyPurgeImpact(tracker, session)
    if (Option.isNone(tracker)) return impact
    const purged = yield* tracker.value.purgeHistory.pipe(Effect.result)
    if (Result.isFailure(purged)) warnings.push(`the tracker's history entries could not be purged: ${purged.failure.message}`)
    return impact
  })

/** A history after one compaction layer, with what was done and why. */
interface Step {
  readonly history: ReadonlyArray<Message>
  readonly kind: CompactionResult["kind"]
  readonly reason: string
}

/**
 * Layer 1: summarize (or drop) what lies outside the verbatim window, once enough lies
 * there to be worth rewriting the cache for.
 */
const summarizeOlder = Effect.fnUntraced(function* (
  history: ReadonlyArray<Message>,
  tokensBefore: number,
  config: CompactionConfig,
  tokenizer: TokenCounter,
  detect: Detect,
  warnings: Warnings
) {
  const start = verbatimStart(history, tokenizer, config)
  const removable = start === 0 ? 0 : tokenizer.countMessages(history.slice(0, start))
  const minStep = minStepTokens(config)
  if (removable < Math.max(1, minStep)) {
    // Too little outside the verbatim window: wait for more history rather than
    // rewrite the cache for a small gain (layer 2 still guards the budget).
    return { history, kind: "none", reason: `only ${removable} tokens lie outside the verbatim window (minimum step ${minStep}); waiting for more history` } satisfies Step
  }
  const detected = yield* detect(history, warnings)
  if (Result.isFailure(detected)) warnings.push(detected.failure)
  let outcome = applyDetection(history, Result.isSuccess(detected) ? detected.success : undefined, start, config)
  if (outcome.kind === "summarized" && tokenizer.countMessages(outcome.history) >= tokensBefore) {
    warnings.push("the summary was longer than the messages it replaced; they were dropped without it")
    outcome = applyDetection(history, undefined, start, config)
  }
  return { history: outcome.history, kind: outcome.kind, reason: outcome.reason } satisfies Step
})

/** Layer 2: what is left is still far over budget, so the oldest messages go. Pure. */
const truncateIfFarOver = (step: Step, config: CompactionConfig, tokenizer: TokenCounter): Step => {
  if (config.triggerTokens <= 0 || tokenizer.countMessages(step.history) <= 2 * config.triggerTokens) return step
  const truncated = emergencyTruncate(step.history, config.triggerTokens, tokenizer)
  if (truncated.length === step.history.length) return step
  return {
    history: truncated,
    kind: "emergency",
    reason: `history over twice the trigger (${tokenizer.countMessages(step.history)} tokens); oldest messages dropped`
  }
}

const make = (options: HistoryCompactorOptions = {}) =>
  Effect.gen(function* () {
    const config: CompactionConfig = { ...DEFAULT_COMPACTION_CONFIG, ...options.config }
    const tokenizer = yield* Tokenizer
    const tracker = yield* Effect.serviceOption(Tracker)
    const session = yield* Effect.serviceOption(AssemblySession)
    const prompts = yield* Effect.serviceOption(Prompts)
    const promptText = options.prompt !== undefined
      ? Effect.succeed({ text: options.prompt, warnings: [] as ReadonlyArray<string> })
      : loadCompactionPrompt(Option.getOrUndefined(prompts))
    const detect = makeDetect(config, yield* Effect.serviceOption(CompactionModel), promptText)
    const historyTokens = (history: ReadonlyArray<Message>) => tokenizer.countMessages(history)

    const compactHistoryIfNeeded = Effect.fn("HistoryCompactor.compactHistoryIfNeeded")(function* (
      history: ReadonlyArray<Message>
    ) {
      const tokensBefore = historyTokens(history)
      const warnings: Warnings = []
      const result = (step: Step, compacted: boolean, impact = { invalidated: 0, rewritten: 0 }): CompactionResult => {
        const tokensAfter = compacted ? historyTokens(step.history) : tokensBefore
        return {
          compacted,
          kind: compacted ? step.kind : "none",
          history: compacted ? step.history : history,
          tokensBefore,
          tokensAfter,
          tokensSaved: tokensBefore - tokensAfter,
          cacheTokensInvalidated: impact.invalidated,
          cacheTokensRewritten: impact.rewritten,
          reason: step.reason,
          warnings
        }
      }
      if (!shouldCompact(tokensBefore, config)) return result({ history, kind: "none", reason: "history is below the trigger" }, false)
      const step = truncateIfFarOver(yield* summarizeOlder(history, tokensBefore, config, tokenizer, detect, warnings), config, tokenizer)
      if (step.history === history) return result(step, false)
      return result(step, true, yield* purgeTrackerHistory(tracker, session, warnings))
    })

    return {
      config,
      shouldCompact: (history: ReadonlyArray<Message>) => shouldCompact(historyTokens(history), config),
      getCompactionStatus: (history: ReadonlyArray<Message>) => compactionStatus(historyTokens(history), config),
      compactHistoryIfNeeded
    }
  })

/**
 * Compacts conversation history. Uses `Tokenizer`; uses `CompactionModel`, `Tracker`
 * and `Prompts` when provided (without a model, compaction drops older messages
 * without a summary).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { CompactionModel, HistoryCompactor, Tokenizer } from "@strata/core/effect"
 *
 * const model = Layer.succeed(CompactionModel, {
 *   complete: () => Effect.succeed('{"boundary_index":null,"boundary_reason":"","confidence":0,"summary":"We set up the repo."}')
 * })
 * const layer = HistoryCompactor.layer({ config: { triggerTokens: 2000 } }).pipe(
 *   Layer.provide(Layer.mergeAll(model, Tokenizer.layerEstimate))
 * )
 * ```
 */
export class HistoryCompactor extends Context.Service<HistoryCompactor, Effect.Success<ReturnType<typeof make>>>()(
  "@strata/core/HistoryCompactor"
) {
  static readonly layer = (options: HistoryCompactorOptions = {}) => Layer.effect(HistoryCompactor, make(options))
}
