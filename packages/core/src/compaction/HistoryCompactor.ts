/**
 * The `HistoryCompactor` service: decides when history is too long, asks a cheap
 * detection model for a topic boundary and a summary, and shrinks the history in one
 * large step. Any model failure falls back to summary-less truncation; nothing here
 * fails the turn. After compaction the tracker's history entries are purged.
 */
import { Context, Duration, Effect, Layer, Option, Result, Schema } from "effect"
import type { Message } from "../domain/Message.ts"
import { isCachedTier } from "../domain/Tier.ts"
import { Tracker } from "../services/Tracker.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import {
  applyDetection,
  type CompactionConfig,
  type CompactionKind,
  type Detection,
  DEFAULT_COMPACTION_CONFIG,
  emergencyTruncate,
  formatDetectionTranscript,
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
  /** Tokens of history that sat in cached tiers and must be written again. */
  readonly cacheTokensInvalidated: number
  readonly reason: string
  /** Why the detector's answer was not used, when it was not. */
  readonly warnings: ReadonlyArray<string>
}

export const compactionStatus = (tokens: number, config: CompactionConfig): CompactionStatus => ({
  enabled: config.enabled,
  tokens,
  threshold: config.triggerTokens,
  percent: config.triggerTokens <= 0 ? 0 : Math.min(999, Math.round((tokens / config.triggerTokens) * 100))
})

export interface HistoryCompactorOptions {
  readonly config?: Partial<CompactionConfig>
  /** The detector's instructions; default: the bundled `prompts/compaction.md`. */
  readonly prompt?: string
}

const make = (options: HistoryCompactorOptions = {}) =>
  Effect.gen(function* () {
    const config: CompactionConfig = { ...DEFAULT_COMPACTION_CONFIG, ...options.config }
    const tokenizer = yield* Tokenizer
    const model = yield* Effect.serviceOption(CompactionModel)
    const tracker = yield* Effect.serviceOption(Tracker)
    const prompt = options.prompt ?? (yield* loadCompactionPrompt)

    const historyTokens = (history: ReadonlyArray<Message>) => tokenizer.countMessages(history)

    const detect = (history: ReadonlyArray<Message>): Effect.Effect<Result.Result<Detection, string>> => {
      if (Option.isNone(model)) return Effect.succeed(Result.fail("no compaction model is configured"))
      const request: CompactionModelRequest = {
        system: prompt.replaceAll("{summary_budget}", String(config.summaryBudgetTokens)),
        user: formatDetectionTranscript(history),
        maxTokens: Math.max(256, config.summaryBudgetTokens * 2)
      }
      return model.value.complete(request).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(config.timeoutMs),
          orElse: () => Effect.fail(new CompactionModelError({ reason: `no answer within ${config.timeoutMs} ms` }))
        }),
        Effect.map(parseDetection),
        Effect.catch((error: CompactionModelError) => Effect.succeed(Result.fail(error.message)))
      )
    }

    /** Purge tracker history entries and return the cached tokens they held. */
    const purgeTracker = Effect.gen(function* () {
      if (Option.isNone(tracker)) return 0
      const snapshot = yield* tracker.value.current
      let cached = 0
      for (const tier of ["L0", "L1", "L2", "L3"] as const) {
        for (const item of snapshot.itemsIn(tier)) {
          if (item.key.startsWith("history:") && isCachedTier(item.tier)) cached += item.tokens
        }
      }
      yield* tracker.value.purgeHistory.pipe(
        Effect.catch((error) => Effect.logWarning(`Compaction could not purge tracker history: ${error.message}`))
      )
      return cached
    })

    const compactHistoryIfNeeded = Effect.fn("HistoryCompactor.compactHistoryIfNeeded")(function* (
      history: ReadonlyArray<Message>
    ) {
      const tokensBefore = historyTokens(history)
      const unchanged = (reason: string, warnings: ReadonlyArray<string> = []): CompactionResult => ({
        compacted: false,
        kind: "none",
        history,
        tokensBefore,
        tokensAfter: tokensBefore,
        tokensSaved: 0,
        cacheTokensInvalidated: 0,
        reason,
        warnings
      })
      if (!shouldCompact(tokensBefore, config)) return unchanged("history is below the trigger")

      const start = verbatimStart(history, tokenizer, config)
      const warnings: Array<string> = []
      let detection: Detection | undefined = undefined
      if (start > 0) {
        const detected = yield* detect(history)
        if (Result.isSuccess(detected)) detection = detected.success
        else warnings.push(detected.failure)
      }
      let outcome = start > 0 ? applyDetection(history, detection, start, config) : undefined
      let kind: CompactionResult["kind"] = outcome?.kind ?? "none"
      let next = outcome?.history ?? history
      let reason = outcome?.reason ?? "the verbatim window covers the whole history"

      // Layer 2: compaction could not shrink history and it is far over budget.
      if (historyTokens(next) >= tokensBefore) {
        const truncated = emergencyTruncate(history, config.triggerTokens, tokenizer)
        if (truncated.length < history.length) {
          next = truncated
          kind = "emergency"
          reason = `history over twice the trigger (${tokensBefore} tokens); oldest messages dropped`
          outcome = undefined
        }
      }
      if (next === history) return unchanged(reason, warnings)

      const cacheTokensInvalidated = yield* purgeTracker
      const tokensAfter = historyTokens(next)
      return {
        compacted: true,
        kind,
        history: next,
        tokensBefore,
        tokensAfter,
        tokensSaved: tokensBefore - tokensAfter,
        cacheTokensInvalidated,
        reason,
        warnings
      } satisfies CompactionResult
    })

    return {
      config,
      shouldCompact: (history: ReadonlyArray<Message>) => shouldCompact(historyTokens(history), config),
      getCompactionStatus: (history: ReadonlyArray<Message>) => compactionStatus(historyTokens(history), config),
      compactHistoryIfNeeded
    }
  })

/**
 * Compacts conversation history.
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
