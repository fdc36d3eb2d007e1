/**
 * The OpenAI plugin: Chat Completions and Responses bodies. Models before GPT-5.6
 * cache prefixes automatically: no markers, a stable prefix and `prompt_cache_key`.
 * GPT-5.6 and later also take `prompt_cache_breakpoint` on content blocks (never on
 * assistant output or tools) and `prompt_cache_options`, 4 writes per request with
 * one taken by the implicit breakpoint unless `mode` is `explicit`.
 */
import {
  PlacementError,
  toolOutputText,
  type ContentPart,
  type NeutralRequest,
  type ReasoningPart,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultPart
} from "@strata/core"
import type { ModelLimits } from "../models.ts"
import { assertToolPairs, type CleanMessage } from "../rules/content.ts"
import { planBreakpoints, type BreakpointPlan } from "../rules/plan.ts"
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
import { decodeOpenAIChatReply, decodeOpenAIResponsesReply } from "../replies.ts"
import { decodeOpenAIChatUsage, decodeOpenAIResponsesUsage } from "../usage.ts"
import { limitsFor, reasoningNote, textOnly } from "../internal/plugins/helpers.ts"

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

export interface OpenAIChatToolCall {
  id: string
  type: "function"
  function: { name: string; arguments: string }
}

export type OpenAIChatMessage =
  | { role: "system" | "developer"; content: Array<OpenAIChatTextPart> }
  | { role: "user"; content: Array<OpenAIChatTextPart | OpenAIChatImagePart> }
  | { role: "assistant"; content?: Array<{ type: "text"; text: string }>; tool_calls?: Array<OpenAIChatToolCall> }
  | { role: "tool"; tool_call_id: string; content: string | Array<OpenAIChatTextPart> }

export interface OpenAIPromptCacheOptions {
  mode: "implicit" | "explicit"
}

/**
 * The Chat Completions body Strata emits: assignable to the SDK's non-streaming
 * `ChatCompletionCreateParamsNonStreaming`. To stream, spread it with
 * `stream: true, stream_options: { include_usage: true }` (without it no usage arrives).
 */
export interface OpenAIChatBody {
  model: string
  messages: Array<OpenAIChatMessage>
  tools?: Array<OpenAIChatTool>
  prompt_cache_key?: string
  prompt_cache_retention?: "in_memory" | "24h"
  prompt_cache_options?: OpenAIPromptCacheOptions
  max_completion_tokens?: number
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

export interface OpenAIFunctionCall {
  type: "function_call"
  call_id: string
  name: string
  arguments: string
}

export interface OpenAIFunctionCallOutput {
  type: "function_call_output"
  call_id: string
  output: string | Array<OpenAIInputText | OpenAIInputImage>
}

/** A reasoning item passed back (with `encrypted_content` when the response was not stored). */
export interface OpenAIReasoningItem {
  type: "reasoning"
  id: string
  summary: Array<{ type: "summary_text"; text: string }>
  encrypted_content?: string
}

export type OpenAIResponsesInput =
  | { role: "system" | "developer" | "user"; content: Array<OpenAIInputText | OpenAIInputImage> }
  | { role: "assistant"; content: string }
  | OpenAIFunctionCall
  | OpenAIFunctionCallOutput
  | OpenAIReasoningItem

export interface OpenAIResponsesTool {
  type: "function"
  name: string
  description?: string
  parameters: Record<string, unknown>
  strict: boolean
}

/** The Responses body Strata emits: assignable to `ResponseCreateParamsNonStreaming` (spread `stream: true` to stream). */
export interface OpenAIResponsesBody {
  model: string
  input: Array<OpenAIResponsesInput>
  tools?: Array<OpenAIResponsesTool>
  prompt_cache_key?: string
  prompt_cache_retention?: "in_memory" | "24h"
  prompt_cache_options?: OpenAIPromptCacheOptions
  max_output_tokens?: number
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
}

const MARKER: OpenAIBreakpoint = { mode: "explicit" }

interface OpenAIPlan {
  readonly plan: BreakpointPlan
  readonly explicit: boolean
  readonly cacheMode: "implicit" | "explicit" | undefined
  readonly notes: ReadonlyArray<string>
}

/** Reasoning Responses takes back: OpenAI's own items, by id (Chat Completions takes none). */
export const openAIReasoning = (part: ReasoningPart): boolean => part.provider === "openai" && part.id !== undefined

const planOpenAI = (
  request: NeutralRequest,
  options: OpenAIOptions,
  limits: ModelLimits,
  tools: ReadonlyArray<ToolDefinition>,
  reasoning: (part: ReasoningPart) => boolean
): OpenAIPlan => {
  const toolTokens = leadingToolTokens(request, options, tools)
  if (limits.maxBreakpoints === 0) {
    // Automatic prefix caching: report where each tier's prefix is cacheable; emit nothing.
    const plan = planBreakpoints(request, { limits, toolTokens, mode: "automatic", reasoning })
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
    unmarkableReason: "OpenAI takes no breakpoint on assistant output",
    reasoning
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
  readonly role: "system" | "developer" | "user" | "assistant" | "tool"
  readonly marked: boolean
}

/** Rendered items and where each message's marker (or last item) landed, for breakpoint locations. */
interface Rendered<Item> {
  readonly items: Array<Item>
  /** Message index -> location of its marked part (`field[i].content[k]`), or of its last item. */
  readonly marked: Map<number, string>
  readonly last: Map<number, number>
}

/**
 * What Chat Completions and Responses share: the plan, the non-empty messages with their
 * roles (the leading system run keeps `systemRole`, a later system message goes as user),
 * the cache fields, and the result, locating breakpoints in `field`.
 */
const planOpenAITurns = (request: NeutralRequest, options: OpenAIOptions, field: "messages" | "input") => {
  const provider = "openai"
  assertToolPairs(provider, request.messages)
  const model = options.model ?? request.model
  const limits = limitsFor(provider, model, options)
  const tools = requestTools(request, options)
  const reasoning = field === "input" ? openAIReasoning : () => false
  const planned = planOpenAI(request, options, limits, tools, reasoning)
  const marks = new Set(planned.explicit ? planned.plan.breakpoints.map((b) => b.messageIndex) : [])
  const turns: Array<OpenAITurn> = []
  let seenOther = false
  for (const m of planned.plan.messages) {
    if (m.parts.length === 0) continue
    const role = m.role === "system" && !seenOther ? (options.systemRole ?? "system") : m.role === "system" ? "user" : m.role
    if (role !== "system" && role !== "developer") seenOther = true
    turns.push({ m, role, marked: marks.has(m.index) })
  }
  if (turns.length === 0) throw new PlacementError({ provider, reason: "the request has no non-empty message" })
  const why = field === "input" ? "Responses takes back only OpenAI reasoning items (with their id)" : "Chat Completions takes no reasoning back"
  const notes = [...reasoningNote(request, reasoning, why), ...planned.notes]
  return {
    model,
    turns,
    tools,
    cacheFields: cacheFields(options, planned.cacheMode),
    result: <Body, Item>(body: Body, rendered: Rendered<Item>): PluginResult<Body> => {
      const locate = (index: number, target: "tools" | "message") =>
        target === "tools"
          ? "tools"
          : planned.explicit
            ? (rendered.marked.get(index) ?? `message ${index}`)
            : `${field}[${rendered.last.get(index)}] (automatic prefix)`
      return result(provider, body, placedFrom(planned.plan, locate), planned.plan.dropped, notes)
    }
  }
}

const MARK = { prompt_cache_breakpoint: MARKER }

const renderedOf = <Item>(): Rendered<Item> => ({ items: [], marked: new Map(), last: new Map() })

/** Push the items of one turn, recording where its marker went (`markAt`: [item offset, part]) and its last item. */
const pushTurn = <Item>(out: Rendered<Item>, field: string, turn: OpenAITurn, items: ReadonlyArray<Item>, markAt: readonly [number, string] | undefined): void => {
  if (turn.marked && markAt !== undefined) out.marked.set(turn.m.index, `${field}[${out.items.length + markAt[0]}].${markAt[1]}`)
  out.items.push(...items)
  out.last.set(turn.m.index, out.items.length - 1)
}

const toolCallsOf = (m: CleanMessage): Array<ToolCallPart> => m.parts.filter((p): p is ToolCallPart => p.type === "tool-call")

const resultsOf = (m: CleanMessage): Array<ToolResultPart> => m.parts.filter((p): p is ToolResultPart => p.type === "tool-result")

/** A tool result's text parts (Chat tool messages take text only). */
const resultTexts = (m: CleanMessage, r: ToolResultPart): Array<string> => {
  if (r.output.type !== "content") return [toolOutputText(r.output)]
  return r.output.value.map((p) => {
    if (p.type !== "text") throw new PlacementError({ provider: "openai", reason: `tool message ${m.index} returns an image; Chat Completions tool messages take text only (use the Responses API)` })
    return p.text
  })
}

const chatTurn = (turn: OpenAITurn): { items: Array<OpenAIChatMessage>; markAt: readonly [number, string] | undefined } => {
  const { m, role } = turn
  const lastPart = (n: number) => [0, `content[${n - 1}]`] as const
  if (role === "tool") {
    const results = resultsOf(m)
    const items = results.map((r, i): OpenAIChatMessage => {
      const texts = resultTexts(m, r)
      // A marked result goes as text parts so the last one can carry the breakpoint.
      const marked = turn.marked && i === results.length - 1
      return {
        role: "tool",
        tool_call_id: r.toolCallId,
        content: marked ? texts.map((text, k): OpenAIChatTextPart => ({ type: "text", text, ...(k === texts.length - 1 ? MARK : {}) })) : texts.join("\n\n")
      }
    })
    const lastTexts = results.length === 0 ? 1 : resultTexts(m, results[results.length - 1]!).length
    return { items, markAt: [items.length - 1, `content[${lastTexts - 1}]`] }
  }
  if (role === "assistant") {
    const texts = m.parts.filter((p) => p.type !== "tool-call")
    const content = textOnly("openai", { ...m, parts: texts }, "assistant").map((text) => ({ type: "text" as const, text }))
    const calls = toolCallsOf(m).map((c): OpenAIChatToolCall => ({ id: c.toolCallId, type: "function", function: { name: c.toolName, arguments: JSON.stringify(c.input) } }))
    const message: OpenAIChatMessage = calls.length === 0 ? { role, content } : content.length === 0 ? { role, tool_calls: calls } : { role, content, tool_calls: calls }
    return { items: [message], markAt: undefined }
  }
  const markFor = (k: number) => (turn.marked && k === m.parts.length - 1 ? MARK : {})
  if (role === "system" || role === "developer") {
    return { items: [{ role, content: textOnly("openai", m, "system").map((text, k): OpenAIChatTextPart => ({ type: "text", text, ...markFor(k) })) }], markAt: lastPart(m.parts.length) }
  }
  return {
    items: [{
      role,
      content: m.parts.map((p, k): OpenAIChatTextPart | OpenAIChatImagePart => {
        if (p.type === "text") return { type: "text", text: p.text, ...markFor(k) }
        if (p.type === "image") return { type: "image_url", image_url: { url: p.url }, ...markFor(k) }
        throw new PlacementError({ provider: "openai", reason: `user message ${m.index} has a ${p.type} part; only assistant and tool messages take those` })
      })
    }],
    markAt: lastPart(m.parts.length)
  }
}

const inputContent = (p: ContentPart, mark: object): OpenAIInputText | OpenAIInputImage =>
  p.type === "text" ? { type: "input_text", text: p.text, ...mark } : { type: "input_image", image_url: p.url, detail: "auto", ...mark }

const responsesTurn = (turn: OpenAITurn): { items: Array<OpenAIResponsesInput>; markAt: readonly [number, string] | undefined } => {
  const { m, role } = turn
  if (role === "tool") {
    const results = resultsOf(m)
    const items = results.map((r, i): OpenAIFunctionCallOutput => {
      const marked = turn.marked && i === results.length - 1
      const parts: ReadonlyArray<ContentPart> = r.output.type === "content" ? r.output.value : [{ type: "text", text: toolOutputText(r.output) }]
      // Plain text stays a string unless it carries the breakpoint; images need the list form.
      const output = !marked && parts.every((p) => p.type === "text")
        ? parts.map((p) => (p.type === "text" ? p.text : "")).join("\n\n")
        : parts.map((p, k) => inputContent(p, marked && k === parts.length - 1 ? MARK : {}))
      return { type: "function_call_output", call_id: r.toolCallId, output }
    })
    const last = results[results.length - 1]
    const lastParts = last === undefined ? 1 : last.output.type === "content" ? last.output.value.length : 1
    return { items, markAt: [items.length - 1, `output[${lastParts - 1}]`] }
  }
  if (role === "assistant") {
    // Parts in order: consecutive text joins into one assistant message, calls and reasoning are items.
    const items: Array<OpenAIResponsesInput> = []
    let text: Array<string> = []
    const flush = () => {
      if (text.length > 0) items.push({ role, content: text.join("\n\n") })
      text = []
    }
    for (const p of m.parts) {
      if (p.type === "text") {
        text.push(p.text)
        continue
      }
      flush()
      if (p.type === "tool-call") items.push({ type: "function_call", call_id: p.toolCallId, name: p.toolName, arguments: JSON.stringify(p.input) })
      else if (p.type === "reasoning") {
        items.push({
          type: "reasoning",
          id: p.id ?? "",
          summary: p.text.length === 0 ? [] : [{ type: "summary_text", text: p.text }],
          ...(p.redactedData === undefined ? {} : { encrypted_content: p.redactedData })
        })
      } else textOnly("openai", { ...m, parts: [p] }, "assistant")
    }
    flush()
    return { items, markAt: undefined }
  }
  return {
    items: [{
      role,
      content: m.parts.map((p, k): OpenAIInputText | OpenAIInputImage => {
        if (p.type !== "text" && p.type !== "image") throw new PlacementError({ provider: "openai", reason: `${role} message ${m.index} has a ${p.type} part; only assistant and tool messages take those` })
        return inputContent(p, turn.marked && k === m.parts.length - 1 ? MARK : {})
      })
    }],
    markAt: [0, `content[${m.parts.length - 1}]`]
  }
}

/**
 * Build a Chat Completions body.
 *
 * @example
 * ```ts no-run
 * import OpenAI from "openai"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeOpenAIChat } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body } = placeOpenAIChat(request, { promptCacheKey: "session-42" })
 * await new OpenAI().chat.completions.create(body)
 * ```
 */
export const placeOpenAIChat = (request: NeutralRequest, options: OpenAIOptions = {}): PluginResult<OpenAIChatBody> => {
  const placed = planOpenAITurns(request, options, "messages")
  const rendered = renderedOf<OpenAIChatMessage>()
  for (const turn of placed.turns) {
    const { items, markAt } = chatTurn(turn)
    pushTurn(rendered, "messages", turn, items, markAt)
  }
  const body: OpenAIChatBody = {
    model: placed.model,
    messages: rendered.items,
    ...(placed.tools.length > 0 ? { tools: openAIChatTools(placed.tools) } : {}),
    ...placed.cacheFields,
    ...(options.maxTokens === undefined ? {} : { max_completion_tokens: options.maxTokens })
  }
  return placed.result(body, rendered)
}

/**
 * Build a Responses API body. System messages stay in `input` (not `instructions`)
 * so GPT-5.6+ breakpoints can mark them.
 *
 * @example
 * ```ts no-run
 * import OpenAI from "openai"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeOpenAIResponses } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body } = placeOpenAIResponses(request, { model: "gpt-5.6", cacheMode: "explicit" })
 * await new OpenAI().responses.create(body)
 * ```
 */
export const placeOpenAIResponses = (request: NeutralRequest, options: OpenAIOptions = {}): PluginResult<OpenAIResponsesBody> => {
  const placed = planOpenAITurns(request, options, "input")
  const rendered = renderedOf<OpenAIResponsesInput>()
  for (const turn of placed.turns) {
    const { items, markAt } = responsesTurn(turn)
    pushTurn(rendered, "input", turn, items, markAt)
  }
  const body: OpenAIResponsesBody = {
    model: placed.model,
    input: rendered.items,
    ...(placed.tools.length > 0
      ? { tools: placed.tools.map((t): OpenAIResponsesTool => (t.description === undefined ? { type: "function", name: t.name, parameters: t.inputSchema, strict: false } : { type: "function", name: t.name, description: t.description, parameters: t.inputSchema, strict: false })) }
      : {}),
    ...placed.cacheFields,
    ...(options.maxTokens === undefined ? {} : { max_output_tokens: options.maxTokens })
  }
  return placed.result(body, rendered)
}

/**
 * The OpenAI Responses plugin: bodies for `responses.create`, replies and usage decoded
 * from its `Response`. Call it with options to configure it.
 *
 * @example
 * ```ts
 * import { OpenAIResponsesPlacement } from "@strata/providers"
 * const provider = OpenAIResponsesPlacement({ promptCacheKey: "session-42" })
 * ```
 */
export const OpenAIResponsesPlacement: PlacementPlugin<OpenAIResponsesBody, OpenAIOptions> = makePlugin(
  { provider: "openai", place: placeOpenAIResponses, decodeReply: decodeOpenAIResponsesReply, decodeUsage: decodeOpenAIResponsesUsage },
  {}
)

/**
 * The OpenAI Chat Completions plugin: bodies for `chat.completions.create`, replies and
 * usage decoded from its `ChatCompletion`. Call it with options to configure it;
 * `OpenAIPlacement.responses` (`OpenAIResponsesPlacement`) is the Responses API's.
 *
 * @example
 * ```ts
 * import { OpenAIPlacement } from "@strata/providers"
 * const chat = OpenAIPlacement({ promptCacheKey: "session-42" })
 * const responses = OpenAIPlacement.responses({ promptCacheKey: "session-42" })
 * const layer = OpenAIPlacement.layer({ promptCacheKey: "session-42" })
 * ```
 */
export const OpenAIPlacement: PlacementPlugin<OpenAIChatBody, OpenAIOptions> & {
  readonly responses: PlacementPlugin<OpenAIResponsesBody, OpenAIOptions>
  readonly placeResponses: typeof placeOpenAIResponses
  readonly layerResponses: (options?: OpenAIOptions) => ReturnType<PlacementPlugin<OpenAIResponsesBody, OpenAIOptions>["layer"]>
} = Object.assign(
  makePlugin({ provider: "openai", place: placeOpenAIChat, decodeReply: decodeOpenAIChatReply, decodeUsage: decodeOpenAIChatUsage }, {}),
  { responses: OpenAIResponsesPlacement, placeResponses: placeOpenAIResponses, layerResponses: OpenAIResponsesPlacement.layer }
)
