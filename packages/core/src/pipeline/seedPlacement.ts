/**
 * Core's default `Placement`: the request in the seeds' own format (OpenAI-compatible: the
 * system message inside the array, `cache_control: {type: "ephemeral"}` on the last text
 * block of each breakpoint's message), as gateways that pass `cache_control` through
 * expect it. The provider plugins in `@strata/providers` replace it per provider.
 */
import { Context, Effect, Layer } from "effect"
import { toSeedMessages } from "../assembly/tiered.ts"
import type { NeutralRequest } from "../domain/Block.ts"
import type { CachedTier } from "../domain/Tier.ts"
import { Placement, type PlacedBreakpoint, type PlacementResult } from "../services/Placement.ts"

/**
 * Place a neutral request in the seeds' format; pure.
 *
 * @example
 * ```ts
 * import { placeSeedFormat } from "@strata/core/effect"
 * placeSeedFormat({ model: "m", blocks: [], messages: [], breakpoints: [] }).body // { model: "m", messages: [] }
 * ```
 */
export const placeSeedFormat = (request: NeutralRequest): PlacementResult => {
  const messages = toSeedMessages(request)
  const prefix = new Map<CachedTier, number>()
  let tokens = 0
  for (const block of request.blocks) {
    tokens += block.tokens
    if (block.tier !== "active") prefix.set(block.tier, tokens)
  }
  const breakpoints = request.breakpoints.map((b): PlacedBreakpoint => {
    const content = messages[b.messageIndex]?.content
    const at = typeof content === "string" || content === undefined ? 0 : Math.max(0, content.map((c) => c.type).lastIndexOf("text"))
    return { tier: b.tier, location: `messages[${b.messageIndex}].content[${at}]`, prefixTokens: prefix.get(b.tier) ?? 0, ...(b.ttl === undefined ? {} : { ttl: b.ttl }) }
  })
  return { provider: "openai-compatible", body: { model: request.model, messages }, breakpoints, dropped: [] }
}

/**
 * The default placement service: `placeSeedFormat`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Placement, seedPlacementLayer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const placement = yield* Placement
 *   return yield* placement.place({ model: "m", blocks: [], messages: [], breakpoints: [] })
 * }).pipe(Effect.provide(seedPlacementLayer))
 * ```
 */
export const seedPlacement: Context.Service.Shape<typeof Placement> = {
  provider: "openai-compatible",
  place: (request) => Effect.sync(() => placeSeedFormat(request))
}

export const seedPlacementLayer: Layer.Layer<Placement> = Layer.succeed(Placement, seedPlacement)

/** @deprecated Renamed `seedPlacement` (`@strata/providers` has an `OpenAICompatiblePlacement` of its own). */
export const openAICompatiblePlacement = seedPlacement

/** @deprecated Renamed `seedPlacementLayer`. */
export const openAICompatiblePlacementLayer = seedPlacementLayer
