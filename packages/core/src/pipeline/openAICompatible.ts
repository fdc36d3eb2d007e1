/**
 * Core's default `Placement`: the seeds' OpenAI-compatible request (system message inside
 * the array, `cache_control: {type: "ephemeral"}` on the last text block of each
 * breakpoint's message), as gateways that pass `cache_control` through expect it.
 */
import { Context, Effect, Layer } from "effect"
import { seedMessageIndex, toSeedMessages } from "../assembly/tiered.ts"
import type { NeutralRequest } from "../domain/Block.ts"
import type { CachedTier } from "../domain/Tier.ts"
import { Placement, type PlacedBreakpoint, type PlacementResult } from "../services/Placement.ts"

/** Place a neutral request in the seeds' format; pure. */
export const placeOpenAICompatible = (request: NeutralRequest): PlacementResult => {
  const messages = toSeedMessages(request)
  const prefix = new Map<CachedTier, number>()
  let tokens = 0
  for (const block of request.blocks) {
    tokens += block.tokens
    if (block.tier !== "active") prefix.set(block.tier, tokens)
  }
  const breakpoints = request.breakpoints.map((b): PlacedBreakpoint => {
    const index = seedMessageIndex(request.messages, b.messageIndex)
    const content = messages[index]?.content
    const at = typeof content === "string" || content === undefined ? 0 : Math.max(0, content.map((c) => c.type).lastIndexOf("text"))
    return { tier: b.tier, location: `messages[${index}].content[${at}]`, prefixTokens: prefix.get(b.tier) ?? 0, ...(b.ttl === undefined ? {} : { ttl: b.ttl }) }
  })
  return { provider: "openai-compatible", body: { model: request.model, messages }, breakpoints, dropped: [] }
}

/**
 * The default placement service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Placement, openAICompatiblePlacementLayer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const placement = yield* Placement
 *   return yield* placement.place({ model: "m", blocks: [], messages: [], breakpoints: [] })
 * }).pipe(Effect.provide(openAICompatiblePlacementLayer))
 * ```
 */
export const openAICompatiblePlacement: Context.Service.Shape<typeof Placement> = {
  provider: "openai-compatible",
  place: (request) => Effect.sync(() => placeOpenAICompatible(request))
}

export const openAICompatiblePlacementLayer: Layer.Layer<Placement> = Layer.succeed(Placement, openAICompatiblePlacement)
