/**
 * Shared plumbing for the provider simulators: resolving limits and options once,
 * and turning a cache step into a `SimResult` with cost.
 */
import type { Usage } from "@strata/core"
import { estimateTokens, IMAGE_TOKENS } from "@strata/core"
import { lookupModel, ttlSpec, type ModelLimits, type ProviderId } from "../../models.ts"
import { computeCost } from "../../usage.ts"
import { makeCacheStore, makePrefixHasher, type CacheStore, type PrefixHasher } from "./prefixCache.ts"
import type { SendOptions, SimProvider, SimResult, SimTrace, Simulator, SimulatorOptions } from "../../simulation.ts"

/** What every adapter needs: limits per model, a hasher, a store and the timing options. */
export interface SimContext {
  readonly model: string
  readonly limits: ModelLimits
  /** Limits for a body that names another model (memoized). */
  readonly limitsFor: (model: string | undefined) => ModelLimits
  readonly hasher: PrefixHasher
  readonly store: CacheStore
  readonly imageTokens: number
  readonly visibleAt: (at: number, options: SendOptions | undefined) => number
  readonly options: SimulatorOptions
}

/** Build the context for one simulator of `provider`. */
export const makeContext = (provider: ProviderId, options: SimulatorOptions): SimContext => {
  const lookup = (model: string): ModelLimits =>
    options.asOf === undefined ? lookupModel(provider, model) : lookupModel(provider, model, { asOf: options.asOf })
  const limits = options.limits ?? lookup(options.model)
  const firstToken = options.firstTokenSeconds ?? 1
  return {
    model: options.model,
    limits,
    // lookupModel keeps the rows it built; the session's own model may carry given limits.
    limitsFor: (model) => (model === undefined || model === options.model ? limits : lookup(model)),
    hasher: makePrefixHasher(options.countTokens ?? estimateTokens, provider),
    store: makeCacheStore(),
    imageTokens: options.imageTokens ?? IMAGE_TOKENS,
    visibleAt: (at, send) => at + (send?.firstTokenSeconds ?? firstToken),
    options
  }
}

/** A simulator whose cache is the context's store; `send` is what each provider does its own way. */
export const simulatorOf = <Native>(provider: SimProvider, ctx: SimContext, send: Simulator<Native>["send"]): Simulator<Native> => ({
  provider,
  model: ctx.model,
  limits: ctx.limits,
  send,
  liveEntries: (at) => ctx.store.live(at),
  reset: () => ctx.store.clear()
})

/** Input priced in base-input tokens under the model's multipliers. */
export const inputEquivalent = (usage: Usage, limits: ModelLimits, ttl?: string): number => {
  const base = ttlSpec(limits, ttl)
  let split = 0
  let writes = 0
  for (const [name, tokens] of Object.entries(usage.cacheWriteByTtl ?? {})) {
    writes += tokens * ttlSpec(limits, name).write
    split += tokens
  }
  writes += Math.max(0, usage.cacheWrite - split) * base.write
  return usage.input + writes + usage.cacheRead * base.read
}

/** Assemble a result; `ttl` names the TTL whose multipliers price unsplit writes and reads. */
export const makeResult = <Native>(
  limits: ModelLimits,
  usage: Usage,
  native: Native,
  trace: SimTrace,
  pricing: { readonly ttl?: string; readonly storageTokenHours?: number } = {}
): SimResult<Native> => ({
  usage,
  native,
  cost: {
    inputEquivalentTokens: inputEquivalent(usage, limits, pricing.ttl),
    usd: computeCost(usage, limits, pricing)
  },
  trace
})

/** Neutral usage from counts, with the TTL split when there is one. */
export const neutralUsage = (
  input: number,
  cacheRead: number,
  byTtl: Readonly<Record<string, number>>,
  output: number
): Usage => {
  let cacheWrite = 0
  const split: Record<string, number> = {}
  for (const [k, v] of Object.entries(byTtl)) {
    if (v <= 0) continue
    cacheWrite += v
    split[k] = v
  }
  const base = { input, cacheRead, cacheWrite, output }
  return Object.keys(split).length === 0 ? base : { ...base, cacheWriteByTtl: split }
}
