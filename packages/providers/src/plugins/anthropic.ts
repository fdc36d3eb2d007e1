/**
 * The Anthropic plugin: a Messages API body with the system prompt as top-level text
 * blocks, `cache_control` (with `ttl` for 1 h) on the last block of each breakpoint,
 * optional tool and automatic markers, all within the 4-marker limit. Bedrock's
 * InvokeModel takes the same body (see bedrock.ts).
 */
import { isToolError, modelInfo, PlacementError, type CacheTtl, type JsonSchemaObject, type ToolDefinition, type ContentPart, type MessagePart, type NeutralRequest, type ReasoningPart, type ToolResultPart } from "@strata/core"
import type { ProviderId } from "../models.ts"
import {
  assertToolPairs,
  cleanMessages,
  markablePart,
  mergeSameRole,
  parseDataUrl,
  splitSystem,
  toolAsUser,
  type CleanMessage
} from "../rules/content.ts"
import { planBreakpoints, type BreakpointPlan } from "../rules/plan.ts"
import { decodeAnthropicReply } from "../replies.ts"
import { decodeAnthropicUsage } from "../usage.ts"
import {
  makePlugin,
  placedFrom,
  requestTools,
  result,
  leadingToolTokens,
  type CommonOptions,
  type PlacementPlugin,
  type PluginResult
} from "./common.ts"
import { limitsFor, reasoningNote } from "../internal/plugins/helpers.ts"

/** `cache_control` as the Messages API takes it; `ttl` only when it is not the 5 min default. */
export interface AnthropicCacheControl {
  type: "ephemeral"
  ttl?: "5m" | "1h"
}

export type AnthropicImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp"

export interface AnthropicTextBlock {
  type: "text"
  text: string
  cache_control?: AnthropicCacheControl
}

export interface AnthropicImageBlock {
  type: "image"
  source: { type: "base64"; media_type: AnthropicImageMediaType; data: string } | { type: "url"; url: string }
  cache_control?: AnthropicCacheControl
}

export interface AnthropicToolUseBlock {
  type: "tool_use"
  id: string
  name: string
  input: unknown
  cache_control?: AnthropicCacheControl
}

export interface AnthropicToolResultBlock {
  type: "tool_result"
  tool_use_id: string
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>
  is_error?: boolean
  cache_control?: AnthropicCacheControl
}

/** A thinking block, passed back byte-exact with its signature; it never carries a marker. */
export interface AnthropicThinkingBlock {
  type: "thinking"
  thinking: string
  signature: string
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking"
  data: string
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock

export interface AnthropicMessage {
  role: "user" | "assistant"
  content: Array<AnthropicContentBlock>
}

export interface AnthropicTool {
  name: string
  description?: string
  input_schema: JsonSchemaObject
  cache_control?: AnthropicCacheControl
}

/**
 * The Messages API request body Strata emits: assignable to the SDK's non-streaming
 * `MessageCreateParamsNonStreaming`, so `messages.create(body)` returns a `Message`. To
 * stream, spread it: `messages.stream(body)` or `create({ ...body, stream: true })`.
 */
export interface AnthropicBody {
  model: string
  max_tokens: number
  system?: Array<AnthropicTextBlock>
  tools?: Array<AnthropicTool>
  messages: Array<AnthropicMessage>
  cache_control?: AnthropicCacheControl
}

/** Options of the Anthropic plugin. */
export interface AnthropicOptions extends CommonOptions {
  /** `max_tokens`; default `defaultMaxTokens(model, { stream })`, from the model table. */
  readonly maxTokens?: number
  /**
   * The body will be streamed (`messages.stream`, `create({ ...body, stream: true })`, the
   * providers' `LlmClient`): the default `max_tokens` is then the model's whole output
   * limit. Default false: a default safe for a non-streaming `messages.create(body)`.
   */
  readonly stream?: boolean
  /** Put a marker on the last tool definition (takes one of the 4 slots). */
  readonly cacheTools?: boolean
  /** Add the top-level automatic `cache_control` (takes one slot; caches through the last block). */
  readonly automatic?: boolean
}

/** @deprecated The fixed default of earlier versions; the default is now `defaultMaxTokens(model)`. */
export const DEFAULT_MAX_TOKENS = 4096

/**
 * The largest `max_tokens` the Anthropic SDK accepts on a non-streaming call: it refuses
 * one it expects to run past its 10-minute timeout (an hour per 128,000 output tokens),
 * so at most 21,333.
 */
export const NON_STREAMING_MAX_TOKENS = 21_333

// Model ids the SDK caps lower for non-streaming calls (its MODEL_NONSTREAMING_TOKENS, 1.12).
const NON_STREAMING_CAPS: ReadonlyArray<readonly [RegExp, number]> = [[/claude-opus-4(-1)?([@-]2025\d{4}|-v1:0|$)|claude-opus-4-1@/, 8_192]]

/**
 * The default `max_tokens` of a request to `model`: the model's output limit from the
 * model table (64,000 for Claude 4 models) when the body is streamed; otherwise no more
 * than a non-streaming call may ask for (`NON_STREAMING_MAX_TOKENS`, 8,192 for the Opus 4
 * ids the SDK caps lower). Pure.
 *
 * @example
 * ```ts
 * import { defaultMaxTokens } from "@strata/providers"
 * defaultMaxTokens("claude-sonnet-4-6", { stream: true }) // 64000
 * defaultMaxTokens("claude-sonnet-4-6") // 21333
 * ```
 */
export const defaultMaxTokens = (model: string, options: { readonly stream?: boolean | undefined } = {}): number => {
  const limit = modelInfo(model).maxOutputTokens
  if (options.stream === true) return limit
  const cap = NON_STREAMING_CAPS.find(([pattern]) => pattern.test(model))?.[1] ?? NON_STREAMING_MAX_TOKENS
  return Math.min(limit, cap)
}

const IMAGE_TYPES: ReadonlyArray<AnthropicImageMediaType> = ["image/jpeg", "image/png", "image/gif", "image/webp"]

/** `cache_control` for a TTL: the bare `{type:"ephemeral"}` for 5 min. */
export const cacheControl = (ttl: CacheTtl | undefined): AnthropicCacheControl =>
  ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" }

const imageBlock = (provider: string, url: string, mediaType: string | undefined): AnthropicImageBlock => {
  const data = parseDataUrl(url)
  if (data === undefined) {
    if (!/^https?:\/\//.test(url)) throw new PlacementError({ provider, reason: `image URL "${url.slice(0, 40)}" is neither a data: URL nor http(s); pass one of those` })
    return { type: "image", source: { type: "url", url } }
  }
  const media = (mediaType ?? data.mediaType) as AnthropicImageMediaType
  if (!IMAGE_TYPES.includes(media)) {
    throw new PlacementError({ provider, reason: `image type ${media} is not accepted; use one of ${IMAGE_TYPES.join(", ")}` })
  }
  return { type: "image", source: { type: "base64", media_type: media, data: data.base64 } }
}

/**
 * Reasoning the Anthropic family takes back: Anthropic's own thinking with its signature,
 * or redacted thinking (signatures are valid on the Claude API, Bedrock and Vertex alike).
 */
export const anthropicReasoning = (part: ReasoningPart): boolean =>
  part.provider === "anthropic" && (part.signature !== undefined || part.redactedData !== undefined)

const contentBlock = (provider: string, part: ContentPart): AnthropicTextBlock | AnthropicImageBlock =>
  part.type === "text" ? { type: "text", text: part.text } : imageBlock(provider, part.url, part.mediaType)

const toolResultBlock = (provider: string, part: ToolResultPart): AnthropicToolResultBlock => {
  const { output } = part
  const content = output.type === "content"
    ? output.value.map((p) => contentBlock(provider, p))
    : output.type === "text" || output.type === "error-text" ? output.value : JSON.stringify(output.value)
  return {
    type: "tool_result",
    tool_use_id: part.toolCallId,
    // An empty result is sent without content rather than as an empty text.
    ...(content.length === 0 ? {} : { content }),
    ...(isToolError(output) ? { is_error: true } : {})
  }
}

/** One neutral part as an Anthropic content block (reasoning already filtered by `anthropicReasoning`). */
export const anthropicBlock = (provider: string, part: MessagePart): AnthropicContentBlock => {
  switch (part.type) {
    case "text":
    case "image":
      return contentBlock(provider, part)
    case "tool-call":
      return { type: "tool_use", id: part.toolCallId, name: part.toolName, input: part.input }
    case "tool-result":
      return toolResultBlock(provider, part)
    case "reasoning":
      return part.redactedData !== undefined
        ? { type: "redacted_thinking", data: part.redactedData }
        : { type: "thinking", thinking: part.text, signature: part.signature ?? "" }
  }
}

const withMarker = <B extends { cache_control?: AnthropicCacheControl }>(block: B, ttl: CacheTtl | undefined): B => ({
  ...block,
  cache_control: cacheControl(ttl)
})

/** A block with `cache_control`; thinking blocks take none (the plan never marks them). */
const markBlock = (block: AnthropicContentBlock, ttl: CacheTtl | undefined): AnthropicContentBlock =>
  block.type === "thinking" || block.type === "redacted_thinking" ? block : withMarker(block, ttl)

/** What an Anthropic-shaped body is made of, before the variant adds its own fields. */
export interface AnthropicParts {
  readonly system: Array<AnthropicTextBlock>
  readonly tools: Array<AnthropicTool>
  readonly messages: Array<AnthropicMessage>
  readonly locate: (messageIndex: number, target: "tools" | "message") => string
}

/**
 * Render cleaned messages and a plan into Anthropic system blocks, tools and messages
 * with `cache_control` on the planned blocks. Shared by the Messages API and Bedrock
 * InvokeModel.
 */
export const renderAnthropicParts = (
  provider: string,
  plan: BreakpointPlan,
  tools: ReadonlyArray<ToolDefinition>
): AnthropicParts => {
  const marks = new Map(plan.breakpoints.map((b) => [b.messageIndex, b.ttl] as const))
  const locations = new Map<number, string>()
  const { system: systemMessages, conversation } = splitSystem(plan.messages)

  const system: Array<AnthropicTextBlock> = []
  for (const m of systemMessages) {
    m.parts.forEach((part, k) => {
      if (part.type !== "text") throw new PlacementError({ provider, reason: `system message ${m.index} has an image; the system prompt takes text only` })
      const last = k === m.parts.length - 1
      const block: AnthropicTextBlock = { type: "text", text: part.text }
      if (last && marks.has(m.index)) {
        locations.set(m.index, `system[${system.length}]`)
        system.push(withMarker(block, marks.get(m.index)))
      } else system.push(block)
    })
  }

  // A tool message is a user turn whose tool_result blocks come first (it directly
  // follows the assistant message with the calls, so merging keeps them in front).
  const messages: Array<AnthropicMessage> = []
  for (const merged of mergeSameRole(toolAsUser(conversation))) {
    const content: Array<AnthropicContentBlock> = []
    for (const m of merged.members) {
      const markAt = marks.has(m.index) ? markablePart(m) : -1
      m.parts.forEach((part, k) => {
        const block = anthropicBlock(provider, part)
        if (k === markAt) {
          locations.set(m.index, `messages[${messages.length}].content[${content.length}]`)
          content.push(markBlock(block, marks.get(m.index)))
        } else content.push(block)
      })
    }
    messages.push({ role: merged.role === "assistant" ? "assistant" : "user", content })
  }

  const toolMark = plan.breakpoints.find((b) => b.target === "tools")
  const renderedTools = tools.map((t, i): AnthropicTool => {
    const base: AnthropicTool = t.description === undefined
      ? { name: t.name, input_schema: t.inputSchema }
      : { name: t.name, description: t.description, input_schema: t.inputSchema }
    return toolMark !== undefined && i === tools.length - 1 ? withMarker(base, toolMark.ttl) : base
  })

  return {
    system,
    tools: renderedTools,
    messages,
    locate: (index, target) => (target === "tools" ? `tools[${tools.length - 1}]` : (locations.get(index) ?? `message ${index}`))
  }
}

/** The last message that renders (non-empty, non-system), or undefined. */
const lastRenderedIndex = (messages: ReadonlyArray<CleanMessage>): number | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.parts.length > 0) return messages[i]!.index
  return undefined
}

/** Plan an Anthropic-family request (Anthropic API, Bedrock InvokeModel). */
export const planAnthropic = (
  providerId: ProviderId,
  request: NeutralRequest,
  options: AnthropicOptions,
  automatic: boolean
): { readonly plan: BreakpointPlan; readonly automatic: boolean; readonly notes: ReadonlyArray<string> } => {
  assertToolPairs(providerId, request.messages)
  const limits = limitsFor(providerId, options.model ?? request.model, options)
  const tools = requestTools(request, options)
  const notes: Array<string> = reasoningNote(request, anthropicReasoning, "the Anthropic API takes back only Anthropic thinking blocks with their signature (or redacted data)")
  // The automatic marker lands on the last block; if a breakpoint is already there it adds nothing.
  let useAutomatic = automatic
  if (automatic) {
    const last = lastRenderedIndex(cleanMessages(request.messages, anthropicReasoning))
    if (last !== undefined && request.breakpoints.some((b) => b.messageIndex === last)) {
      useAutomatic = false
      notes.push("automatic marker omitted: the last block already carries a breakpoint")
    }
  }
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens: leadingToolTokens(request, options, tools),
    toolMarker: options.cacheTools === true && tools.length > 0,
    reservedSlots: useAutomatic ? 1 : 0,
    reservedFor: "the automatic marker",
    mode: "markers",
    spacing: providerId === "bedrock" ? "stacked" : "cumulative",
    reasoning: anthropicReasoning
  })
  return { plan, automatic: useAutomatic, notes: [...notes, ...plan.notes] }
}

/**
 * Build an Anthropic Messages API body. Throws `PlacementError` when the request
 * cannot be expressed (no user message, an unsupported image).
 *
 * @example
 * ```ts no-run
 * import Anthropic from "@anthropic-ai/sdk"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeAnthropic } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body, breakpoints, dropped } = placeAnthropic(request, { ttl: "1h", maxTokens: 1024 })
 * await new Anthropic().messages.create(body)
 * ```
 */
export const placeAnthropic = (request: NeutralRequest, options: AnthropicOptions = {}): PluginResult<AnthropicBody> => {
  const provider = "anthropic"
  const tools = requestTools(request, options)
  const planned = planAnthropic("anthropic", request, options, options.automatic === true)
  const parts = renderAnthropicParts(provider, planned.plan, tools)
  if (parts.messages.length === 0) {
    throw new PlacementError({ provider, reason: "the request has no user or assistant message; the Messages API needs at least one" })
  }
  const notes = [...planned.notes]
  let automaticControl: AnthropicCacheControl | undefined
  if (planned.automatic) {
    const allLong = planned.plan.breakpoints.every((b) => b.ttl === "1h")
    automaticControl = cacheControl(options.ttl === "1h" && allLong ? "1h" : "5m")
    notes.push(`automatic marker (top-level cache_control) caches through messages[${parts.messages.length - 1}]`)
  }
  const model = options.model ?? request.model
  const body: AnthropicBody = {
    model,
    max_tokens: options.maxTokens ?? defaultMaxTokens(model, { stream: options.stream }),
    ...(parts.system.length > 0 ? { system: parts.system } : {}),
    ...(parts.tools.length > 0 ? { tools: parts.tools } : {}),
    messages: parts.messages,
    ...(automaticControl === undefined ? {} : { cache_control: automaticControl })
  }
  return result(provider, body, placedFrom(planned.plan, parts.locate), planned.plan.dropped, notes)
}

/**
 * The Anthropic Messages API plugin: bodies for `messages.create`, replies and usage
 * decoded from its `Message`. Call it with options to configure it.
 *
 * @example
 * ```ts
 * import { AnthropicPlacement } from "@strata/providers"
 * const provider = AnthropicPlacement({ ttl: "1h" }) // for createContextEngine({ provider })
 * const layer = AnthropicPlacement.layer({ ttl: "1h" }) // core's Placement, for Effect
 * ```
 */
export const AnthropicPlacement: PlacementPlugin<AnthropicBody, AnthropicOptions> = makePlugin(
  { provider: "anthropic", place: placeAnthropic, decodeReply: decodeAnthropicReply, decodeUsage: decodeAnthropicUsage },
  {}
)
