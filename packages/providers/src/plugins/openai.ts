/**
 * The OpenAI plugin: Chat Completions and Responses bodies. Models before GPT-5.6
 * cache prefixes automatically: no markers, a stable prefix and `prompt_cache_key`.
 * GPT-5.6 and later also take `prompt_cache_breakpoint` on content blocks (never on
 * assistant output or tools) and `prompt_cache_options`, 4 writes per request with
 * one taken by the implicit breakpoint unless `mode` is `explicit`.
 */
import { PlacementError, type ContentPart, type NeutralRequest } from "@strata/core"
import type { ModelLimits } from "../models.ts"
import type { CleanMessage } from "../rules/content.ts"
import { planBreakpoints, type BreakpointPlan } from "../rules/plan.ts"
import {
  canonicalTools,
  placedFrom,
  placementLayer,
  result,
  toolTokenEstimate,
  type CommonOptions,
  type OpenAIChatTool,
  type PluginResult,
  type ToolDefinition
} from "./common.ts"
import { limitsFor, openAIChatTools, textOnly } from "./internal.ts"

/** The explicit breakpoint marker (GPT-5.6+); it inherits the request TTL. */
export interface OpenAIBreakpoint {
  mode: "explicit"
}

export interface OpenAIChatTextPart {
  type: "text"
  text: string
  prompt_cache_breakpoint?: OpenAIBreakpoint
}

export interface OpenAIChatImagePart {
  type: "image_url"
  image_url: { url: string }
  prompt_cache_breakpoint?: OpenAIBreakpoint
}

export type OpenAIChatMessage =
  | { role: "system" | "developer"; content: Array<OpenAIChatTextPart> }
  | { role: "user"; content: Array<OpenAIChatTextPart | OpenAIChatImagePart> }
  | { role: "assistant"; content: Array<{ type: "text"; text: string }> }

export interface OpenAIPromptCacheOptions {
  mode: "implicit" | "explicit"
}

/** The Chat Completions body Strata emits (a subset of `ChatCompletionCreateParams`). */
export interface OpenAIChatBody {
  model: string
  messages: Array<OpenAIChatMessage>
  tools?: Array<OpenAIChatTool>
  prompt_cache_key?: string
  prompt_cache_retention?: "in_memory" | "24h"
  prompt_cache_options?: OpenAIPromptCacheOptions
  max_completion_tokens?: number
  stream?: boolean
  stream_options?: { include_usage: boolean }
}

export interface OpenAIInputText {
  type: "input_text"
  text: string
  prompt_cache_breakpoint?: OpenAIBreakpoint
}

export interface OpenAIInputImage {
  type: "input_image"
  image_url: string
  detail: "auto"
  prompt_cache_breakpoint?: OpenAIBreakpoint
}

export type OpenAIResponsesInput =
  | { role: "system" | "developer" | "user"; content: Array<OpenAIInputText | OpenAIInputImage> }
  | { role: "assistant"; content: string }

export interface OpenAIResponsesTool {
  type: "function"
  name: string
  description?: string
  parameters: Record<string, unknown>
  strict: boolean
}

/** The Responses body Strata emits (a subset of `ResponseCreateParams`). */
export interface OpenAIResponsesBody {
  model: string
  input: Array<OpenAIResponsesInput>
  tools?: Array<OpenAIResponsesTool>
  prompt_cache_key?: string
  prompt_cache_retention?: "in_memory" | "24h"
  prompt_cache_options?: OpenAIPromptCacheOptions
  max_output_tokens?: number
  stream?: boolean
}

/** Options of the OpenAI plugins. */
export interface OpenAIOptions extends CommonOptions {
  /** `prompt_cache_key`: routes requests sharing a prefix to the same cache (e.g. a session id). */
  readonly promptCacheKey?: string
  /** `prompt_cache_retention` (models before GPT-5.5 accept `in_memory`; GPT-5.5+ only `24h`). */
  readonly promptCacheRetention?: "in_memory" | "24h"
  /**
   * GPT-5.6+: `implicit` (default) keeps OpenAI's implicit breakpoint and writes up to 3
   * explicit ones; `explicit` writes up to 4 explicit ones and no implicit one.
   */
  readonly cacheMode?: "implicit" | "explicit"
  /** Role for system messages: `system` (default) or `developer` (reasoning models). */
  readonly systemRole?: "system" | "developer"
  /** `max_completion_tokens` / `max_output_tokens`; omitted when undefined. */
  readonly maxTokens?: number
  /** Stream; Chat Completions also gets `stream_options.include_usage` so the final chunk carries usage. */
  readonly stream?: boolean
}

const MARKER: OpenAIBreakpoint = { mode: "explicit" }

interface OpenAIPlan {
  readonly plan: BreakpointPlan
  readonly explicit: boolean
  readonly cacheMode: "implicit" | "explicit" | undefined
  readonly notes: ReadonlyArray<string>
}

const planOpenAI = (request: NeutralRequest, options: OpenAIOptions, limits: ModelLimits, tools: ReadonlyArray<ToolDefinition>): OpenAIPlan => {
  const toolTokens = options.toolTokens ?? toolTokenEstimate(tools)
  if (limits.maxBreakpoints === 0) {
    // Automatic prefix caching: report where each tier's prefix is cacheable; emit nothing.
    const plan = planBreakpoints(request, { limits, toolTokens, mode: "automatic" })
    const step = limits.hitIncrementTokens === undefined ? [] : [`${limits.family} caches automatically; hits count in ${limits.hitIncrementTokens}-token steps, so up to ${limits.hitIncrementTokens - 1} tokens before each breakpoint may bill as uncached input`]
    return { plan, explicit: false, cacheMode: undefined, notes: [...step, ...plan.notes] }
  }
  const wanted = options.cacheMode ?? "implicit"
  const planFor = (mode: "implicit" | "explicit") => planBreakpoints(request, {
    limits,
    toolTokens,
    mode: "markers",
    reservedSlots: mode === "implicit" ? 1 : 0,
    reservedFor: "OpenAI's implicit breakpoint",
    markable: (m: CleanMessage) => m.role !== "assistant",
    unmarkableReason: "OpenAI takes no breakpoint on assistant output"
  })
  const plan = planFor(wanted)
  if (wanted === "explicit" && plan.breakpoints.length === 0) {
    // Explicit mode without markers disables caching altogether; implicit still caches.
    const fallback = planFor("implicit")
    return { plan: fallback, explicit: true, cacheMode: "implicit", notes: ["cacheMode explicit with no breakpoint left would disable caching; sent implicit instead", ...fallback.notes] }
  }
  return { plan, explicit: true, cacheMode: wanted, notes: plan.notes }
}

const cacheFields = (options: OpenAIOptions, cacheMode: "implicit" | "explicit" | undefined) => ({
  ...(options.promptCacheKey === undefined ? {} : { prompt_cache_key: options.promptCacheKey }),
  ...(options.promptCacheRetention === undefined ? {} : { prompt_cache_retention: options.promptCacheRetention }),
  ...(cacheMode === undefined ? {} : { prompt_cache_options: { mode: cacheMode } })
})

/** A message as it goes out: its OpenAI role, and whether its last part takes the breakpoint marker. */
interface OpenAITurn {
  readonly m: CleanMessage
  readonly role: "system" | "developer" | "user" | "assistant"
  readonly marked: boolean
}

/**
 * What Chat Completions and Responses share: the plan, the non-empty messages with their
 * roles (the leading system run keeps `systemRole`, a later system message goes as user),
 * the cache fields, and the result, locating breakpoints in `field` (`turns[i]` is
 * rendered at `field[i]`).
 */
const planOpenAITurns = (request: NeutralRequest, options: OpenAIOptions, field: "messages" | "input") => {
  const provider = "openai"
  const model = options.model ?? request.model
  const limits = limitsFor(provider, model, options)
  const tools = canonicalTools(options.tools)
  const planned = planOpenAI(request, options, limits, tools)
  const marks = new Set(planned.explicit ? planned.plan.breakpoints.map((b) => b.messageIndex) : [])
  const positions = new Map<number, number>()
  const partOf = new Map<number, number>()
  const turns: Array<OpenAITurn> = []
  let seenOther = false
  for (const m of planned.plan.messages) {
    if (m.parts.length === 0) continue
    positions.set(m.index, turns.length)
    partOf.set(m.index, m.parts.length - 1)
    const role = m.role === "system" && !seenOther ? (options.systemRole ?? "system") : m.role === "system" ? "user" : m.role
    if (role !== "system" && role !== "developer") seenOther = true
    turns.push({ m, role, marked: marks.has(m.index) })
  }
  if (turns.length === 0) throw new PlacementError({ provider, reason: "the request has no non-empty message" })
  const locate = (index: number, target: "tools" | "message") =>
    target === "tools"
      ? "tools"
      : planned.explicit
        ? `${field}[${positions.get(index)}].content[${partOf.get(index)}]`
        : `${field}[${positions.get(index)}] (automatic prefix)`
  return {
    model,
    turns,
    tools,
    cacheFields: cacheFields(options, planned.cacheMode),
    result: <Body>(body: Body): PluginResult<Body> => result(provider, body, placedFrom(planned.plan, locate), planned.plan.dropped, planned.notes)
  }
}

/** The breakpoint marker for part `k` of a turn: on its last part when the turn is marked. */
const markFor = ({ m, marked }: OpenAITurn, k: number) => (marked && k === m.parts.length - 1 ? { prompt_cache_breakpoint: MARKER } : {})

const chatMessage = (turn: OpenAITurn): OpenAIChatMessage => {
  const { m, role } = turn
  if (role === "assistant") return { role, content: textOnly("openai", m, "assistant").map((text) => ({ type: "text", text })) }
  if (role === "system" || role === "developer") {
    return { role, content: textOnly("openai", m, "system").map((text, k): OpenAIChatTextPart => ({ type: "text", text, ...markFor(turn, k) })) }
  }
  return {
    role,
    content: m.parts.map((p: ContentPart, k): OpenAIChatTextPart | OpenAIChatImagePart =>
      p.type === "text" ? { type: "text", text: p.text, ...markFor(turn, k) } : { type: "image_url", image_url: { url: p.url }, ...markFor(turn, k) })
  }
}

const responsesInput = (turn: OpenAITurn): OpenAIResponsesInput => {
  const { m, role } = turn
  if (role === "assistant") return { role, content: textOnly("openai", m, "assistant").join("\n\n") }
  return {
    role,
    content: m.parts.map((p, k): OpenAIInputText | OpenAIInputImage =>
      p.type === "text" ? { type: "input_text", text: p.text, ...markFor(turn, k) } : { type: "input_image", image_url: p.url, detail: "auto", ...markFor(turn, k) })
  }
}

/**
 * Build a Chat Completions body.
 *
 * @example
 * ```ts
 * import { placeOpenAIChat } from "@strata/providers"
 * const { body } = placeOpenAIChat(request, { promptCacheKey: "session-42", stream: true })
 * await new OpenAI().chat.completions.create(body)
 * ```
 */
export const placeOpenAIChat = (request: NeutralRequest, options: OpenAIOptions = {}): PluginResult<OpenAIChatBody> => {
  const placed = planOpenAITurns(request, options, "messages")
  const body: OpenAIChatBody = {
    model: placed.model,
    messages: placed.turns.map(chatMessage),
    ...(placed.tools.length > 0 ? { tools: openAIChatTools(placed.tools) } : {}),
    ...placed.cacheFields,
    ...(options.maxTokens === undefined ? {} : { max_completion_tokens: options.maxTokens }),
    ...(options.stream === true ? { stream: true, stream_options: { include_usage: true } } : {})
  }
  return placed.result(body)
}

/**
 * Build a Responses API body. System messages stay in `input` (not `instructions`)
 * so GPT-5.6+ breakpoints can mark them.
 *
 * @example
 * ```ts
 * import { placeOpenAIResponses } from "@strata/providers"
 * const { body } = placeOpenAIResponses(request, { model: "gpt-5.6", cacheMode: "explicit" })
 * await new OpenAI().responses.create(body)
 * ```
 */
export const placeOpenAIResponses = (request: NeutralRequest, options: OpenAIOptions = {}): PluginResult<OpenAIResponsesBody> => {
  const placed = planOpenAITurns(request, options, "input")
  const body: OpenAIResponsesBody = {
    model: placed.model,
    input: placed.turns.map(responsesInput),
    ...(placed.tools.length > 0
      ? { tools: placed.tools.map((t): OpenAIResponsesTool => (t.description === undefined ? { type: "function", name: t.name, parameters: t.inputSchema, strict: false } : { type: "function", name: t.name, description: t.description, parameters: t.inputSchema, strict: false })) }
      : {}),
    ...placed.cacheFields,
    ...(options.maxTokens === undefined ? {} : { max_output_tokens: options.maxTokens }),
    ...(options.stream === true ? { stream: true } : {})
  }
  return placed.result(body)
}

/**
 * Layers for core's `Placement` service: Chat Completions (default) or Responses.
 *
 * @example
 * ```ts
 * const layer = OpenAIPlacement.layer({ promptCacheKey: "session-42" })
 * ```
 */
export const OpenAIPlacement = {
  provider: "openai",
  place: placeOpenAIChat,
  placeResponses: placeOpenAIResponses,
  layer: (options: OpenAIOptions = {}) => placementLayer("openai", (request) => placeOpenAIChat(request, options)),
  layerResponses: (options: OpenAIOptions = {}) => placementLayer("openai", (request) => placeOpenAIResponses(request, options))
} as const
