/**
 * Token budgets and their enforcement's third layer (docs/promise-api.md, keeping within budget) as pure
 * functions: the budget report, and pre-request shedding that drops the largest files
 * when a request would exceed 90% of the model's input limit.
 */
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import type { FileContext } from "./FileContext.ts"
import { formatCount as fmt } from "../internal/formatCount.ts"

/** History gets this fraction of the model's input limit for budget reporting (1/16). */
export const HISTORY_BUDGET_DIVISOR = 16
/** Shedding starts when a request's estimate exceeds this fraction of the input limit. */
export const SHED_THRESHOLD = 0.9
/** Added to every estimate for framing the counts miss (headers, overheads). */
export const SHED_MARGIN_TOKENS = 500

/** The budget report. */
export interface TokenBudget {
  readonly historyTokens: number
  /** `maxInputTokens / 16`, rounded down. */
  readonly maxHistoryTokens: number
  readonly maxInputTokens: number
  /** History tokens left before `maxHistoryTokens` (never negative). */
  readonly remaining: number
  /** True when history should be compacted (delegates to the compaction trigger). */
  readonly needsSummary: boolean
}

/**
 * The budget report for a history size. Not a hard limit: compaction has its own trigger.
 *
 * @example
 * ```ts
 * import { tokenBudget } from "@strata/core"
 * tokenBudget(1000, 128_000, false).remaining // 7000
 * ```
 */
export const tokenBudget = (historyTokens: number, maxInputTokens: number, needsSummary: boolean): TokenBudget => {
  const maxHistoryTokens = Math.floor(maxInputTokens / HISTORY_BUDGET_DIVISOR)
  return {
    historyTokens,
    maxHistoryTokens,
    maxInputTokens,
    remaining: Math.max(0, maxHistoryTokens - historyTokens),
    needsSummary
  }
}

/** A file shedding removed, with the tokens it took. */
export interface ShedFile {
  readonly path: string
  readonly tokens: number
}

export interface ShedInput {
  readonly files: FileContext
  /** Tokens of everything else in the request: system prompt, history, prompt, sections. */
  readonly otherTokens: number
  readonly maxInputTokens: number
  readonly counter: Pick<TokenCounter, "count">
  /** Fraction of `maxInputTokens` to stay under. Default 0.9. */
  readonly threshold?: number | undefined
  /** Added to the estimate. Default 500. */
  readonly marginTokens?: number | undefined
}

export interface ShedResult {
  /** The files left in context. */
  readonly files: FileContext
  /** Files removed, largest first; empty when the request was under budget. */
  readonly dropped: ReadonlyArray<ShedFile>
  /** Estimated request tokens before shedding. */
  readonly estimatedTokens: number
  /** Estimated request tokens after shedding. */
  readonly finalTokens: number
  /** The estimate shedding aims to stay under. */
  readonly limitTokens: number
  /** A message for the user, present when files were dropped or the request is still over. */
  readonly warning?: string | undefined
}

/**
 * Pre-request shedding: while the estimate (files + other tokens + margin) is over
 * `threshold` of the input limit, drop the largest file (ties: path order). The
 * request then goes out with less context instead of failing at the API.
 *
 * @example
 * ```ts
 * import { FileContext, makeEstimatingCounter, shedFiles } from "@strata/core"
 * const files = FileContext.of([{ path: "big.txt", content: "x".repeat(40_000) }, { path: "small.txt", content: "y" }])
 * const result = shedFiles({ files, otherTokens: 0, maxInputTokens: 8_000, counter: makeEstimatingCounter() })
 * result.dropped // [{ path: "big.txt", tokens: 10004 }]
 * ```
 */
export const shedFiles = (input: ShedInput): ShedResult => {
  const threshold = input.threshold ?? SHED_THRESHOLD
  const margin = input.marginTokens ?? SHED_MARGIN_TOKENS
  const limitTokens = Math.floor(input.maxInputTokens * threshold)
  const byFile = input.files.getTokensByFile(input.counter)
  let fileTokens = 0
  for (const n of byFile.values()) fileTokens += n
  const estimatedTokens = input.otherTokens + fileTokens + margin
  if (estimatedTokens <= limitTokens) {
    return { files: input.files, dropped: [], estimatedTokens, finalTokens: estimatedTokens, limitTokens }
  }
  const largestFirst = [...byFile.entries()]
    .map(([path, tokens]) => ({ path, tokens }))
    .sort((a, b) => b.tokens - a.tokens || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const dropped: Array<ShedFile> = []
  let files = input.files
  let estimate = estimatedTokens
  for (const file of largestFirst) {
    if (estimate <= limitTokens) break
    files = files.removeFile(file.path)
    dropped.push(file)
    estimate -= file.tokens
  }
  const names = dropped.map((f) => `${f.path} (${fmt(f.tokens)} tokens)`).join(", ")
  const over = `The request was estimated at ${fmt(estimatedTokens)} tokens, over ${Math.round(threshold * 100)}% of the model's ${fmt(input.maxInputTokens)}-token input limit`
  const warning = estimate <= limitTokens
    ? `${over}; removed ${dropped.length === 1 ? "this file" : "these files"} from context: ${names}.`
    : `${over}; ${dropped.length > 0 ? `removed ${names}, but ` : ""}the request is still ${fmt(estimate)} tokens without any files. Compact or clear the history, or shorten the prompt.`
  return { files, dropped, estimatedTokens, finalTokens: estimate, limitTokens, warning }
}
