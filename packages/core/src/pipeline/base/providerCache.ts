/**
 * What the pipeline's cache decisions assume about the provider's prompt cache: how long
 * an unused entry lives (`CacheExpiryMillis`) and what reading and writing it cost
 * (`CachePrices`). The journal layout's rebuilds and the context-editing stage weigh
 * rewrites against reads with these; a provider's placement layer sets the prices.
 */
import { Context } from "effect"

/**
 * How long a provider keeps an unused cache entry, in milliseconds (default 5 minutes:
 * Anthropic's and Bedrock's default TTL, the low end of OpenAI's retention). A request
 * later than this after the last one finds nothing cached, writes its whole prefix
 * anyway, and so rebuilds the frozen tiers for free ("cache expired"). Set it to your
 * TTL (3,600,000 with Anthropic's 1 h cache), or to `Infinity` to never assume expiry.
 */
export const CacheExpiryMillis = Context.Reference<number>("@strata/core/pipeline/CacheExpiryMillis", {
  defaultValue: () => 5 * 60 * 1000
})

/** The long cache lifetime `AdaptiveTtl` asks for (Anthropic's and Bedrock's 1 h). */
export const LONG_TTL_MILLIS = 60 * 60 * 1000

/** Price of a cache read relative to base input (Anthropic, OpenAI's newer models, Gemini 2.5: 0.1). */
export const READ_RATIO = 0.1
/** Price of a cache write relative to base input (Anthropic 5 min: 1.25). */
export const WRITE_RATIO = 1.25

/** A provider's cache prices for one model, as multiples of its base input price. */
export interface CachePriceRatios {
  /** A cache read. */
  readonly read: number
  /** A cache write with the default lifetime (Anthropic 5 min: 1.25; OpenAI, Gemini: 1, a write is plain input). */
  readonly write: number
  /** A cache write with the long lifetime the journal asks for after a long gap (Anthropic 1 h: 2). */
  readonly writeLong: number
}

/** Anthropic's 5-minute prices, the defaults when no provider layer says otherwise. */
export const DEFAULT_CACHE_PRICES: CachePriceRatios = { read: READ_RATIO, write: WRITE_RATIO, writeLong: 2 }

/**
 * The cache prices of the provider the request goes to, per model. `@strata/providers`'
 * placement layers set it from their price tables (OpenAI and Gemini write at 1x, read
 * at 0.1x to 0.5x by model); the default is Anthropic's. The journal layout's rent-or-buy
 * rebuilds and the context-editing stage read it.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { CachePrices } from "@strata/core/effect"
 * // A gateway that bills cache writes as plain input and reads at a quarter.
 * const prices = Layer.succeed(CachePrices, () => ({ read: 0.25, write: 1, writeLong: 1 }))
 * ```
 */
export const CachePrices = Context.Reference<(model: string) => CachePriceRatios>("@strata/core/pipeline/CachePrices", {
  defaultValue: () => () => DEFAULT_CACHE_PRICES
})
