/**
 * Core's default `Placement`: the request in the seeds' own format (OpenAI-compatible: the
 * system message inside the array, `cache_control: {type: "ephemeral"}` on the last text
 * block of each breakpoint's message), as gateways that pass `cache_control` through
 * expect it. The provider plugins in `@strata/providers` replace it per provider.
 */
import { Context, Effect, Layer } from "effect"
import type { NeutralRequest } from "../domain/Block.ts"
import type { Message } from "../domain/Message.ts"
import type { CachedTier } from "../domain/Tier.ts"
import { Placement, type PlacedBreakpoint, type PlacementResult } from "../services/Placement.ts"

/** `cache_control` as the seeds and Anthropic-compatible gateways spell it. */
export interface CacheControl {
  readonly type: "ephemeral"
}
export interface SeedTextBlock {
  readonly type: "text"
  readonly text: string
  readonly cache_control?: CacheControl
}
export interface SeedImageBlock {
  readonly type: "image_url"
  readonly image_url: { readonly url: string }
}
/** A message in the seeds' format: the system message sits inside the array. */
export interface SeedMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string | ReadonlyArray<SeedTextBlock | SeedImageBlock>
}

const EPHEMERAL: CacheControl = { type: "ephemeral" }

/**
 * One message in the seeds' format. A marked message carries `cache_control` on its last
 * text block; a string content is wrapped as one text block first.
 */
export const toSeedMessage = (message: Message, cached: boolean): SeedMessage => {
  if (typeof message.content === "string") {
    return cached
      ? { role: message.role, content: [{ type: "text", text: message.content, cache_control: EPHEMERAL }] }
      : { role: message.role, content: message.content }
  }
  const blocks: Array<SeedTextBlock | SeedImageBlock> = message.content.map((p) =>
    p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: p.url } }
  )
  if (cached) {
    let last = -1
    for (let i = 0; i < blocks.length; i++) if (blocks[i]?.type === "text") last = i
    const at = last >= 0 ? last : blocks.length - 1
    const target = blocks[at]
    if (target !== undefined) blocks[at] = { ...target, cache_control: EPHEMERAL } as SeedTextBlock | SeedImageBlock
  }
  return { role: message.role, content: blocks }
}

/** The whole request in the seeds' format, with one `cache_control` per breakpoint. */
export const toSeedMessages = (request: NeutralRequest): ReadonlyArray<SeedMessage> => {
  const marked = new Set(request.breakpoints.map((b) => b.messageIndex))
  return request.messages.map((m, i) => toSeedMessage(m, marked.has(i)))
}

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
