/**
 * The shared vocabulary of the prompt-cache simulators: options, per-request results,
 * traces and the errors a simulated provider raises. Every simulator has the same
 * shape so the replay benchmark can drive any provider through one API.
 */
import { Schema } from "effect"
import type { ModelLimits } from "./models.ts"
import type { Usage } from "@strata/core"
import type { Cost } from "./usage.ts"

/** The providers with a simulator. Gateways (OpenRouter, LiteLLM) route to one of these. */
export type SimProvider = "anthropic" | "bedrock" | "openai" | "gemini"

/** Options shared by every simulator. */
export interface SimulatorOptions {
  /** The model whose limits (minimum, TTLs, multipliers, prices) apply; a body's own `model` wins when present. */
  readonly model: string
  /**
   * Counts the tokens of a string. Default: core's chars/4 `estimateTokens`, which is
   * deterministic and fast; pass `(await makeTokenCounter(model)).count` for tiktoken.
   */
  readonly countTokens?: (text: string) => number
  /** Tokens charged per image or document part. Default: core's `IMAGE_TOKENS`. */
  readonly imageTokens?: number
  /**
   * Seconds from a request's send time until its response starts; a cache entry the
   * request writes is readable only from then on. Default 1.
   */
  readonly firstTokenSeconds?: number
  /** Resolve the model table as it stood on this date (`YYYY-MM[-DD]`). Default: newest. */
  readonly asOf?: string
  /** Use these limits instead of looking the model up (tests, negotiated prices). */
  readonly limits?: ModelLimits
  /**
   * Bedrock only: how the per-checkpoint minimum applies. `perCheckpoint` (default,
   * AWS's worked example: first checkpoint after 1,024 tokens, second after 2,048)
   * requires `minCacheTokens` since the previous accepted checkpoint; `cumulative`
   * compares the whole prefix, as Anthropic does.
   */
  readonly bedrockMinimum?: "perCheckpoint" | "cumulative"
}

/** Per-request options. */
export interface SendOptions {
  /** Output tokens the simulated response reports. Default 0. */
  readonly outputTokens?: number
  /** Overrides `SimulatorOptions.firstTokenSeconds` for this request. */
  readonly firstTokenSeconds?: number
}

/** A cache write one request made: the block it ends at and the cumulative prefix tokens there. */
export interface SimWrite {
  readonly block: number
  readonly tokens: number
  /** The TTL name from the model table (`5m`, `1h`, `in_memory`, `30m`, ...). */
  readonly ttl: string
  /** False when the entry already existed (a refresh at no charge). */
  readonly charged: boolean
}

/** A breakpoint that did not write, and why. */
export interface SimSkip {
  readonly block: number
  readonly reason: string
}

/** What the simulated cache did for one request. */
export interface SimTrace {
  /** Content blocks in canonical prefix order. */
  readonly blocks: number
  /** Total prompt tokens. */
  readonly promptTokens: number
  /** Index of the block the longest hit ends at, or -1. */
  readonly hitBlock: number
  /** Cumulative tokens read from cache. */
  readonly hitTokens: number
  readonly writes: ReadonlyArray<SimWrite>
  readonly skipped: ReadonlyArray<SimSkip>
}

/** Cost of one request. */
export interface SimCost {
  /**
   * Input priced in base-input tokens: uncached x1 + writes x write multiplier +
   * reads x read multiplier. Comparable across strategies even without a price.
   */
  readonly inputEquivalentTokens: number
  /** USD from the dated price table (`computeCost`); undefined when the model has no price. */
  readonly usd: Cost | undefined
}

/**
 * One simulated response: neutral usage (with `cacheWriteByTtl` where the provider
 * reports the split), the provider's own usage object, cost and a trace.
 */
export interface SimResult<Native = unknown> {
  readonly usage: Usage
  /** The usage object exactly as the provider would return it (native field names). */
  readonly native: Native
  readonly cost: SimCost
  readonly trace: SimTrace
}

/** An offline model of one provider's prompt cache. */
export interface Simulator<Native = unknown> {
  readonly provider: SimProvider
  readonly model: string
  /** The limits resolved for `model`. */
  readonly limits: ModelLimits
  /**
   * Simulate a request sent at `atSeconds` (non-decreasing across calls). Throws
   * `SimulatedRejection` where the provider would answer 400, `SimulatorInputError`
   * when time runs backwards.
   */
  readonly send: (body: unknown, atSeconds: number, options?: SendOptions) => SimResult<Native>
  /** Live (unexpired) cache entries at a time; for tests and HUDs. */
  readonly liveEntries: (atSeconds: number) => number
  /** Forget every cache entry and the clock. */
  readonly reset: () => void
}

/** The provider would refuse this request (HTTP 400 or similar). The message is the provider's reason. */
export class SimulatedRejection extends Schema.TaggedError<SimulatedRejection>()("SimulatedRejection", {
  provider: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.provider} would reject this request: ${this.reason}`
  }
}

/** The simulator itself was driven incorrectly (time going backwards, an unknown provider). */
export class SimulatorInputError extends Schema.TaggedError<SimulatorInputError>()("SimulatorInputError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `Simulator misuse: ${this.reason}`
  }
}
