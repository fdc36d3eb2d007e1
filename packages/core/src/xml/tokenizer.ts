/**
 * Token counting for the chunk builder: the builder's synchronous `createTokenizer(model)`
 * on top of core's `TokenCounter` (same encodings, memo and chars/4 fallback), and the
 * normalization of whatever tokenizer a caller hands `build`.
 */
import { Schema } from "effect"
import { makeCustomCounter, makeEstimatingCounter, makeTokenCounterSync, type TokenCounter } from "../tokens/TokenCounter.ts"

/**
 * What `createTokenizer` returns: a core `TokenCounter` (so it can back the
 * `Tokenizer` service via `Tokenizer.layerFrom`) plus team9's method names.
 */
export interface ContextTokenizer extends TokenCounter {
  /** team9's name for `count`. */
  readonly countTokens: (text: string) => number
  readonly getModelName: () => string
}

/** A tokenizer written against team9's `ITokenizer`: only `countTokens` is needed. */
export interface CountTokensLike {
  readonly countTokens: (text: string) => number
  readonly getModelName?: () => string
  /** Set `false` for an approximation; counts are reported exact otherwise. */
  readonly exact?: boolean
}

/** Anything `build` accepts as `tokenizer`. */
export type TokenizerLike = TokenCounter | CountTokensLike

const isTokenCounter = (u: object): u is TokenCounter =>
  typeof (u as TokenCounter).count === "function" && typeof (u as TokenCounter).countMessages === "function"

const isTokenizerLike = (u: unknown): u is TokenizerLike =>
  typeof u === "object" && u !== null && (isTokenCounter(u) || typeof (u as CountTokensLike).countTokens === "function")

/** Schema for the `tokenizer` option: a `TokenCounter` or an object with `countTokens`. */
export const TokenizerLike = Schema.declare(isTokenizerLike, {
  identifier: "TokenizerLike",
  expected: "a TokenCounter or an object with countTokens(text)"
})

const tokenizers = new Map<string, ContextTokenizer>()

/**
 * A synchronous tokenizer for a model: o200k_base for GPT-4o and later, cl100k_base
 * for GPT-4 and GPT-3.5 (exact), cl100k_base as an approximation for Claude and
 * other families (`exact: false`, so builds report `tokenCountExact: false`). One
 * instance per model per process, so its memo of counts is shared by every build.
 * The first call for an encoding blocks while its ranks load (about half a second).
 *
 * @example
 * ```ts
 * import { createContextBuilder, createTokenizer } from "@strata/core"
 * const builder = createContextBuilder(createTokenizer("gpt-4o"))
 * ```
 */
export const createTokenizer = (model: string): ContextTokenizer => {
  const cached = tokenizers.get(model)
  if (cached) return cached
  const counter = makeTokenCounterSync(model)
  const tokenizer: ContextTokenizer = {
    model: counter.model,
    encoding: counter.encoding,
    get exact() {
      return counter.exact
    },
    count: counter.count,
    countMessage: counter.countMessage,
    countMessages: counter.countMessages,
    stats: counter.stats,
    countTokens: counter.count,
    getModelName: () => model
  }
  tokenizers.set(model, tokenizer)
  return tokenizer
}

const estimating = makeEstimatingCounter()
const wrapped = new WeakMap<CountTokensLike, TokenCounter>()

/** The counter behind a tokenizer option; the chars/4 estimate when there is none. */
export const toTokenCounter = (tokenizer: TokenizerLike | undefined): TokenCounter => {
  if (tokenizer === undefined) return estimating
  if (isTokenCounter(tokenizer)) return tokenizer
  const known = wrapped.get(tokenizer)
  if (known) return known
  const counter = makeCustomCounter(tokenizer.getModelName?.() ?? "custom", (t) => tokenizer.countTokens(t), {
    exact: tokenizer.exact ?? true
  })
  wrapped.set(tokenizer, counter)
  return counter
}
