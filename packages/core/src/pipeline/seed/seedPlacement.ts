/**
 * Core's default `Placement`: the request in the default format (OpenAI-compatible: the
 * system message inside the array, `cache_control: {type: "ephemeral"}` on the last text
 * block of each breakpoint's message), as gateways that pass `cache_control` through
 * expect it. The provider plugins in `@strata/providers` replace it per provider.
 */
import { Context, Effect, Layer } from "effect"
import type { NeutralRequest } from "../../domain/Block.ts"
import { toolOutputText, type Message, type ToolMessage } from "../../domain/Message.ts"
import type { CachedTier } from "../../domain/Tier.ts"
import type { JsonSchemaObject, ToolDefinition } from "../../domain/Tool.ts"
import { Placement, type PlacedBreakpoint, type PlacementResult, type ProviderPlugin } from "../../services/Placement.ts"

/** `cache_control` as Anthropic-compatible gateways spell it. */
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
/** A tool call on an assistant message, in the Chat Completions shape the default format extends. */
export interface SeedToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}
/**
 * A message in the default format: the system message sits inside the array. Tool calls
 * and results take the Chat Completions shape (`tool_calls`, one `tool` message per result).
 */
export interface SeedMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string | ReadonlyArray<SeedTextBlock | SeedImageBlock>
  readonly tool_calls?: ReadonlyArray<SeedToolCall>
  readonly tool_call_id?: string
}

const EPHEMERAL: CacheControl = { type: "ephemeral" }

const markLastText = (blocks: Array<SeedTextBlock | SeedImageBlock>): void => {
  let last = -1
  for (let i = 0; i < blocks.length; i++) if (blocks[i]?.type === "text") last = i
  const at = last >= 0 ? last : blocks.length - 1
  const target = blocks[at]
  if (target !== undefined) blocks[at] = { ...target, cache_control: EPHEMERAL } as SeedTextBlock | SeedImageBlock
}

/**
 * One message in the default format. A marked message carries `cache_control` on its last
 * text block; a string content is wrapped as one text block first. Reasoning is left out
 * (the format has no place for it); tool calls go to `tool_calls`.
 */
export const toSeedMessage = (message: Exclude<Message, ToolMessage>, cached: boolean): SeedMessage => {
  if (typeof message.content === "string") {
    return cached
      ? { role: message.role, content: [{ type: "text", text: message.content, cache_control: EPHEMERAL }] }
      : { role: message.role, content: message.content }
  }
  const blocks: Array<SeedTextBlock | SeedImageBlock> = []
  const calls: Array<SeedToolCall> = []
  for (const p of message.content) {
    if (p.type === "text") blocks.push({ type: "text", text: p.text })
    else if (p.type === "image") blocks.push({ type: "image_url", image_url: { url: p.url } })
    else if (p.type === "tool-call") calls.push({ id: p.toolCallId, type: "function", function: { name: p.toolName, arguments: JSON.stringify(p.input) } })
  }
  if (cached) markLastText(blocks)
  return calls.length === 0 ? { role: message.role, content: blocks } : { role: message.role, content: blocks, tool_calls: calls }
}

/** A tool message in the default format: one `tool` message per result, the last one marked when `cached`. */
export const toolSeedMessages = (message: ToolMessage, cached: boolean): ReadonlyArray<SeedMessage> =>
  message.content.map((r, k): SeedMessage => {
    const text = toolOutputText(r.output)
    const content = cached && k === message.content.length - 1 ? [{ type: "text" as const, text, cache_control: EPHEMERAL }] : text
    return { role: "tool", tool_call_id: r.toolCallId, content }
  })

/** A tool definition in the Chat Completions shape the default format extends. */
export interface SeedTool {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: JsonSchemaObject }
}

/** The request's tools in the default format (`tools` on the body, before the messages). */
export const toSeedTools = (tools: ReadonlyArray<ToolDefinition>): ReadonlyArray<SeedTool> =>
  tools.map((t) => ({
    type: "function",
    function: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.inputSchema }
  }))

/** The whole request in the default format, with one `cache_control` per breakpoint. */
export const toSeedMessages = (request: NeutralRequest): ReadonlyArray<SeedMessage> => {
  const marked = new Set(request.breakpoints.map((b) => b.messageIndex))
  return request.messages.flatMap((m, i) => (m.role === "tool" ? toolSeedMessages(m, marked.has(i)) : [toSeedMessage(m, marked.has(i))]))
}

/** Where message `index` of a request lands in `toSeedMessages` (a tool message becomes one message per result). */
export const seedMessageIndex = (messages: ReadonlyArray<Message>, index: number): number => {
  let at = 0
  for (let i = 0; i < index; i++) {
    const m = messages[i]!
    at += m.role === "tool" ? m.content.length : 1
  }
  const self = messages[index]
  return self?.role === "tool" ? at + self.content.length - 1 : at
}

/** A request body in the default format: the model and the messages (an OpenAI-compatible Chat Completions body). */
export interface SeedBody {
  readonly model: string
  readonly messages: ReadonlyArray<SeedMessage>
}

/**
 * Place a neutral request in the default format; pure.
 *
 * @example
 * ```ts
 * import { placeSeedFormat } from "@strata/core/effect"
 * placeSeedFormat({ model: "m", blocks: [], messages: [], breakpoints: [] }).body // { model: "m", messages: [] }
 * ```
 */
export const placeSeedFormat = (request: NeutralRequest): PlacementResult<SeedBody> => {
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
  const tools = request.tools === undefined || request.tools.length === 0 ? {} : { tools: toSeedTools(request.tools) }
  return { provider: "openai-compatible", body: { model: request.model, ...tools, messages }, breakpoints, dropped: [] }
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

/**
 * The default format as a provider plugin value: the Promise API's default when no
 * `provider` is given. It decodes no provider response: commit the reply's text or messages.
 *
 * @example
 * ```ts
 * import { seedPlugin } from "@strata/core"
 * seedPlugin.place({ model: "m", blocks: [], messages: [], breakpoints: [] }).body // { model: "m", messages: [] }
 * ```
 */
export const seedPlugin: ProviderPlugin<SeedBody> = {
  provider: "openai-compatible",
  place: placeSeedFormat,
  decodeReply: () => {
    throw new Error("the engine has no provider plugin to decode a provider's response; commit the reply's text or messages, or create the engine with a provider from @strata/providers")
  },
  decodeUsage: () => {
    throw new Error("the engine has no provider plugin to decode a provider's usage; pass { input, cacheRead, cacheWrite, output }, or create the engine with a provider from @strata/providers")
  }
}

/** @deprecated Renamed `seedPlacement` (`@strata/providers` has an `OpenAICompatiblePlacement` of its own). */
export const openAICompatiblePlacement = seedPlacement

/** @deprecated Renamed `seedPlacementLayer`. */
export const openAICompatiblePlacementLayer = seedPlacementLayer
