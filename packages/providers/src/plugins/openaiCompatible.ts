/**
 * The OpenAI-compatible plugin: core's default format, as LiteLLM and OpenRouter take
 * it. The system message stays in the array; each breakpoint message gets
 * `cache_control: {type:"ephemeral"}` on its last content block (a string content is
 * wrapped as `[{type:"text",text,cache_control}]`). Limits follow the model behind the
 * gateway (Claude by default).
 */
import { PlacementError, toolOutputText, type ContentPart, type MessagePart, type NeutralRequest, type ToolCallPart, type ToolResultPart } from "@strata/core"
import { normalizeModelId, type ProviderId } from "../models.ts"
import { assertToolPairs, type CleanMessage } from "../rules/content.ts"
import { planBreakpoints, type PlanOptions } from "../rules/plan.ts"
import { cacheControl, type AnthropicCacheControl } from "./anthropic.ts"
import {
  makePlugin,
  openAIChatTools,
  placedFrom,
  requestTools,
  result,
  leadingToolTokens,
  type CommonOptions,
  type PlacementPlugin,
  type OpenAIChatTool,
  type PluginResult
} from "./common.ts"
import { decodeOpenAIChatReply } from "../replies.ts"
import { decodeOpenAIChatUsage } from "../usage.ts"
import { limitsFor, reasoningNote, textOnly } from "../internal/plugins/helpers.ts"
import type { OpenAIChatToolCall } from "./openai.ts"

export interface CompatTextPart {
  type: "text"
  text: string
  cache_control?: AnthropicCacheControl
}

export interface CompatImagePart {
  type: "image_url"
  image_url: { url: string }
  cache_control?: AnthropicCacheControl
}

export type CompatMessage =
  | { role: "system"; content: string | Array<CompatTextPart> }
  | { role: "user"; content: string | Array<CompatTextPart | CompatImagePart> }
  | { role: "assistant"; content?: string | Array<CompatTextPart>; tool_calls?: Array<OpenAIChatToolCall> }
  | { role: "tool"; tool_call_id: string; content: string | Array<CompatTextPart> }

/**
 * The Chat Completions body with `cache_control` parts (what LiteLLM and OpenRouter accept),
 * for a non-streaming create. The seed format streams with usage: spread
 * `stream: true, stream_options: { include_usage: true }` into it to do so.
 */
export interface CompatBody {
  model: string
  messages: Array<CompatMessage>
  tools?: Array<OpenAIChatTool>
  prompt_cache_key?: string
  max_tokens?: number
}

/** Options of the OpenAI-compatible plugin. */
export interface CompatOptions extends CommonOptions {
  /**
   * The provider behind the gateway, whose limits apply. Default: guessed from the model
   * id (`claude` → anthropic, or bedrock for `bedrock/` and regional ids; `gemini` →
   * gemini; `gpt-`/`o1`/`o3`/`o4` → openai), else anthropic.
   */
  readonly upstream?: ProviderId
  /** `prompt_cache_key` (sticky routing on OpenRouter, OpenAI upstreams). */
  readonly promptCacheKey?: string
  readonly maxTokens?: number
}

/**
 * Which provider a gateway model id routes to.
 *
 * @example
 * ```ts
 * import { upstreamOf } from "@strata/providers"
 * upstreamOf("openrouter/anthropic/claude-sonnet-4.6") // "anthropic"
 * upstreamOf("bedrock/us.anthropic.claude-sonnet-4-6") // "bedrock"
 * ```
 */
export const upstreamOf = (model: string): ProviderId => {
  const lower = model.toLowerCase()
  const bare = normalizeModelId(model)
  if (bare.startsWith("claude")) {
    return lower.startsWith("bedrock/") || /(^|\/)(us|eu|apac|global)\.anthropic\./.test(lower) || lower.includes("/anthropic.claude") ? "bedrock" : "anthropic"
  }
  if (bare.startsWith("gemini")) return "gemini"
  if (/^(gpt-|chatgpt-|o[134](-|$))/.test(bare)) return "openai"
  return "anthropic"
}

// `cache_control` rides on content parts: an assistant message whose content is only
// tool calls (in `tool_calls`) has no part to carry it.
const hasContent = (m: CleanMessage) => m.role !== "assistant" || m.parts.some((p) => p.type === "text")
const NO_CONTENT = "an assistant message with only tool calls has no content part for cache_control"

const planOptions = (upstream: ProviderId, limits: PlanOptions["limits"]): Omit<PlanOptions, "limits"> => {
  switch (upstream) {
    case "anthropic": return { mode: "markers", markable: hasContent, unmarkableReason: NO_CONTENT }
    case "bedrock": return { mode: "markers", spacing: "stacked", markable: hasContent, unmarkableReason: NO_CONTENT }
    // OpenRouter: Gemini takes any number of markers but only the last one is used.
    case "gemini": return { mode: "markers", maxBreakpoints: 1, markable: hasContent, unmarkableReason: NO_CONTENT }
    case "openai":
      return limits.maxBreakpoints === 0
        ? { mode: "automatic" }
        : {
            mode: "markers",
            reservedSlots: 1,
            reservedFor: "OpenAI's implicit breakpoint",
            markable: (m: CleanMessage) => m.role !== "assistant",
            unmarkableReason: "OpenAI takes no breakpoint on assistant output"
          }
  }
}

const contentPart = (p: ContentPart): CompatTextPart | CompatImagePart =>
  p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: p.url } }

const userPart = (provider: string, m: CleanMessage, p: MessagePart): CompatTextPart | CompatImagePart => {
  if (p.type === "text" || p.type === "image") return contentPart(p)
  throw new PlacementError({ provider, reason: `user message ${m.index} has a ${p.type} part; only assistant and tool messages take those` })
}

/** A tool result's text (Chat tool messages take text only). */
const resultText = (provider: string, m: CleanMessage, r: ToolResultPart): string => {
  if (r.output.type === "content" && r.output.value.some((p) => p.type === "image")) {
    throw new PlacementError({ provider, reason: `tool message ${m.index} returns an image; Chat Completions tool messages take text only` })
  }
  return toolOutputText(r.output)
}

/** One `tool` message per result; a marked message's last result carries the marker on a text part. */
const toolMessages = (provider: string, m: CleanMessage, mark: AnthropicCacheControl | undefined): Array<CompatMessage> => {
  const results = m.parts.filter((p): p is ToolResultPart => p.type === "tool-result")
  return results.map((r, i) => {
    const text = resultText(provider, m, r)
    return {
      role: "tool",
      tool_call_id: r.toolCallId,
      content: mark !== undefined && i === results.length - 1 ? [{ type: "text", text, cache_control: mark }] : text
    }
  })
}

const toolCallsOf = (m: CleanMessage): Array<OpenAIChatToolCall> =>
  m.parts
    .filter((p): p is ToolCallPart => p.type === "tool-call")
    .map((c) => ({ id: c.toolCallId, type: "function", function: { name: c.toolName, arguments: JSON.stringify(c.input) } }))

/**
 * Build the OpenAI-compatible body with `cache_control` markers.
 *
 * @example
 * ```ts no-run
 * import type { NeutralRequest } from "@strata/core"
 * import { placeOpenAICompatible } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body } = placeOpenAICompatible(request, { model: "anthropic/claude-sonnet-4.6" })
 * await fetch("http://localhost:4000/v1/chat/completions", { method: "POST", body: JSON.stringify(body) })
 * ```
 */
export const placeOpenAICompatible = (request: NeutralRequest, options: CompatOptions = {}): PluginResult<CompatBody> => {
  const provider = "openai-compatible"
  const model = options.model ?? request.model
  const upstream = options.upstream ?? upstreamOf(model)
  assertToolPairs(provider, request.messages)
  const limits = limitsFor(upstream, model, options)
  const tools = requestTools(request, options)
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens: leadingToolTokens(request, options, tools),
    ...planOptions(upstream, limits)
  })
  const automatic = upstream === "openai" && limits.maxBreakpoints === 0
  const marks = new Map(automatic ? [] : plan.breakpoints.map((b) => [b.messageIndex, b.ttl] as const))
  const locations = new Map<number, string>()
  const messages: Array<CompatMessage> = []
  for (const m of plan.messages) {
    if (m.parts.length === 0) continue
    const original = request.messages[m.index]!
    const marked = marks.has(m.index)
    if (m.role === "tool") {
      const results = toolMessages(provider, m, marked ? cacheControl(marks.get(m.index)) : undefined)
      messages.push(...results)
      locations.set(m.index, marked ? `messages[${messages.length - 1}].content[0]` : `messages[${messages.length - 1}]`)
      continue
    }
    // The seed format: the marker goes on the last text block (the last block if there is no text).
    // An assistant's tool calls go to `tool_calls`, outside the content.
    const own = m.role === "assistant" ? m.parts.filter((p) => p.type !== "tool-call") : m.parts
    const lastText = own.map((p) => p.type).lastIndexOf("text")
    const last = lastText >= 0 ? lastText : own.length - 1
    const mark = (k: number) => (marked && k === last ? { cache_control: cacheControl(marks.get(m.index)) } : {})
    locations.set(m.index, marked ? `messages[${messages.length}].content[${last}]` : `messages[${messages.length}]`)
    // Unmarked messages keep their own form: a string stays a string.
    const keepString = !marked && typeof original.content === "string"
    if (m.role === "user") {
      messages.push({ role: "user", content: keepString ? m.parts.map((p) => (p.type === "text" ? p.text : "")).join("") : m.parts.map((p, k) => ({ ...userPart(provider, m, p), ...mark(k) })) })
    } else {
      const calls = toolCallsOf(m)
      const texts = textOnly(provider, { ...m, parts: own }, m.role).map((text): CompatTextPart => ({ type: "text", text }))
      const content = keepString ? texts.map((t) => t.text).join("") : texts.map((t, k) => ({ ...t, ...mark(k) }))
      if (m.role === "system") messages.push({ role: "system", content })
      else if (calls.length === 0) messages.push({ role: "assistant", content })
      else messages.push(texts.length === 0 ? { role: "assistant", tool_calls: calls } : { role: "assistant", content, tool_calls: calls })
    }
  }
  if (messages.length === 0) throw new PlacementError({ provider, reason: "the request has no non-empty message" })
  const body: CompatBody = {
    model,
    messages,
    ...(tools.length > 0 ? { tools: openAIChatTools(tools) } : {}),
    ...(options.promptCacheKey === undefined ? {} : { prompt_cache_key: options.promptCacheKey }),
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens })
  }
  const notes = [
    ...(upstream === "gemini" && request.breakpoints.length > 1 ? ["Gemini behind a gateway uses only the last marker; the others were merged into it"] : []),
    ...reasoningNote(request, () => false, "the Chat Completions format has no place for reasoning"),
    ...plan.notes
  ]
  const placed = placedFrom(plan, (i) => (automatic ? `${locations.get(i)} (automatic prefix)` : (locations.get(i) ?? `message ${i}`)))
  return result(provider, body, placed, plan.dropped, notes)
}

/**
 * The OpenAI-compatible gateway plugin (LiteLLM, OpenRouter...): the Chat
 * Completions body with `cache_control` passed through, replies and usage decoded as Chat
 * Completions. Call it with options to configure it.
 *
 * @example
 * ```ts
 * import { OpenAICompatiblePlacement } from "@strata/providers"
 * const provider = OpenAICompatiblePlacement({ promptCacheKey: "session-42" })
 * const layer = OpenAICompatiblePlacement.layer({ promptCacheKey: "session-42" })
 * ```
 */
export const OpenAICompatiblePlacement: PlacementPlugin<CompatBody, CompatOptions> = makePlugin(
  { provider: "openai-compatible", place: placeOpenAICompatible, decodeReply: decodeOpenAIChatReply, decodeUsage: decodeOpenAIChatUsage },
  {}
)
