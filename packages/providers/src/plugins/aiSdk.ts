/**
 * The Vercel AI SDK plugin: `ModelMessage[]` for `generateText` / `streamText`, with
 * cache markers as `providerOptions` on the breakpoint messages: `anthropic.cacheControl`,
 * `bedrock.cachePoint`, or for OpenAI no markers and a call-level `promptCacheKey`.
 * System prompts stay leading `role: "system"` messages so each can carry a marker.
 */
import {
  PlacementError,
  type CacheTtl,
  type ContentPart,
  type MessagePart,
  type NeutralRequest,
  type ReasoningPart,
  type ToolResultOutput
} from "@strata/core"
import type { Schema } from "effect"
import { assertToolPairs, markablePart, parseDataUrl, type CleanMessage } from "../rules/content.ts"
import { planBreakpoints } from "../rules/plan.ts"
import { anthropicReasoning } from "./anthropic.ts"
import { placedFrom, placementLayer, requestTools, result, toolTokenEstimate, type CommonOptions, type PluginResult } from "./common.ts"
import { limitsFor, reasoningNote, textOnly } from "./internal.ts"
import { openAIReasoning } from "./openai.ts"
import { upstreamOf } from "./openaiCompatible.ts"

/** Provider options in the AI SDK's shape (`Record<provider, Record<key, JSON>>`). */
export type AiSdkProviderOptions = Record<string, Record<string, AiSdkJson>>
export type AiSdkJson = null | string | number | boolean | { [key: string]: AiSdkJson } | Array<AiSdkJson>

export interface AiSdkTextPart {
  type: "text"
  text: string
}

export interface AiSdkImagePart {
  type: "image"
  image: string
  mediaType?: string
}

/** A tool call part (`ToolCallPart`); `input` is the call's JSON arguments. */
export interface AiSdkToolCallPart {
  type: "tool-call"
  toolCallId: string
  toolName: string
  input: Schema.Json
  providerOptions?: AiSdkProviderOptions
}

/** A reasoning part; the provider's signature or encrypted data rides in `providerOptions`. */
export interface AiSdkReasoningPart {
  type: "reasoning"
  text: string
  providerOptions?: AiSdkProviderOptions
}

/** Content of a tool result: text, or an image as a file part. */
export type AiSdkToolContent =
  | { type: "text"; text: string }
  | { type: "file"; mediaType: string; data: { type: "data"; data: string } | { type: "url"; url: URL } }

/** `ToolResultOutput` as Strata emits it. */
export type AiSdkToolResultOutput =
  | { type: "text" | "error-text"; value: string }
  | { type: "json" | "error-json"; value: Schema.Json }
  | { type: "content"; value: Array<AiSdkToolContent> }

export interface AiSdkToolResultPart {
  type: "tool-result"
  toolCallId: string
  toolName: string
  output: AiSdkToolResultOutput
}

export type AiSdkAssistantPart = (AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart) & { providerOptions?: AiSdkProviderOptions }

export type AiSdkMessage =
  | { role: "system"; content: string; providerOptions?: AiSdkProviderOptions }
  | { role: "user"; content: Array<AiSdkTextPart | AiSdkImagePart>; providerOptions?: AiSdkProviderOptions }
  | { role: "assistant"; content: Array<AiSdkAssistantPart>; providerOptions?: AiSdkProviderOptions }
  | { role: "tool"; content: Array<AiSdkToolResultPart>; providerOptions?: AiSdkProviderOptions }

/** What to pass to `generateText` / `streamText` besides `model` and `tools`. */
export interface AiSdkBody {
  messages: Array<AiSdkMessage>
  providerOptions?: AiSdkProviderOptions
}

/** Which AI SDK provider package the messages are for. */
export type AiSdkTarget = "anthropic" | "bedrock" | "openai"

/** Options of the AI SDK plugin. */
export interface AiSdkOptions extends CommonOptions {
  /** Default: guessed from the model id like the OpenAI-compatible plugin (gemini is not supported). */
  readonly target?: AiSdkTarget
  /** `providerOptions.openai.promptCacheKey` for OpenAI targets. */
  readonly promptCacheKey?: string
}

const marker = (target: AiSdkTarget, ttl: CacheTtl | undefined): AiSdkProviderOptions =>
  target === "anthropic"
    ? { anthropic: { cacheControl: ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } } }
    : { bedrock: { cachePoint: { type: "default" } } }

/** Reasoning each target's AI SDK provider passes back, and how it names the opaque data. */
const keepReasoning = (target: AiSdkTarget): ((part: ReasoningPart) => boolean) => (target === "openai" ? openAIReasoning : anthropicReasoning)

const reasoningOptions = (target: AiSdkTarget, p: ReasoningPart): AiSdkProviderOptions => {
  if (target === "openai") return { openai: { itemId: p.id ?? "", ...(p.redactedData === undefined ? {} : { reasoningEncryptedContent: p.redactedData }) } }
  return { [target]: p.redactedData !== undefined ? { redactedData: p.redactedData } : { signature: p.signature ?? "" } }
}

const toolContent = (p: ContentPart): AiSdkToolContent => {
  if (p.type === "text") return { type: "text", text: p.text }
  const data = parseDataUrl(p.url)
  const mediaType = p.mediaType ?? data?.mediaType ?? "image"
  return data === undefined ? { type: "file", mediaType, data: { type: "url", url: new URL(p.url) } } : { type: "file", mediaType, data: { type: "data", data: data.base64 } }
}

const toolOutput = (output: ToolResultOutput): AiSdkToolResultOutput =>
  output.type === "content" ? { type: "content", value: output.value.map(toolContent) } : output

const assistantPart = (provider: string, target: AiSdkTarget, m: CleanMessage, p: MessagePart): AiSdkAssistantPart => {
  switch (p.type) {
    case "text":
      return { type: "text", text: p.text }
    case "tool-call":
      return { type: "tool-call", toolCallId: p.toolCallId, toolName: p.toolName, input: p.input }
    case "reasoning":
      return { type: "reasoning", text: p.text, providerOptions: reasoningOptions(target, p) }
    default:
      return { type: "text", text: textOnly(provider, { ...m, parts: [p] }, "assistant")[0] ?? "" }
  }
}


/**
 * Build AI SDK messages with cache `providerOptions`. Tool definitions are not emitted
 * (pass your `tools` to `generateText`); give `tools` or `toolTokens` here only so the
 * prefix sizes count them.
 *
 * @example
 * ```ts
 * import { placeAiSdk } from "@strata/providers"
 * const { body } = placeAiSdk(request, { target: "anthropic" })
 * await generateText({ model: anthropic("claude-sonnet-4-5"), ...body })
 * ```
 */
export const placeAiSdk = (request: NeutralRequest, options: AiSdkOptions = {}): PluginResult<AiSdkBody> => {
  const provider = "ai-sdk"
  const model = options.model ?? request.model
  const guessed = upstreamOf(model)
  const target: AiSdkTarget = options.target ?? (guessed === "gemini" ? "anthropic" : guessed)
  assertToolPairs(provider, request.messages)
  const limits = limitsFor(target, model, options)
  const toolTokens = options.toolTokens ?? toolTokenEstimate(requestTools(request, options))
  const automatic = target === "openai"
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens,
    reasoning: keepReasoning(target),
    ...(automatic ? { mode: "automatic" as const } : { mode: "markers" as const }),
    ...(target === "bedrock" ? { spacing: "stacked" as const } : {})
  })
  const notes: Array<string> = [...reasoningNote(request, keepReasoning(target), `the AI SDK's ${target} provider takes back only ${target === "openai" ? "OpenAI reasoning items" : "Anthropic thinking with its signature"}`), ...plan.notes]
  const marks = new Map(automatic ? [] : plan.breakpoints.map((b) => [b.messageIndex, b.ttl] as const))
  if (target === "bedrock" && plan.breakpoints.some((b) => b.ttl === "1h")) {
    notes.push("bedrock cachePoint sent without ttl: the AI SDK's Bedrock provider documents only { type: \"default\" }")
  }
  const locations = new Map<number, string>()
  const messages: Array<AiSdkMessage> = []
  let seenOther = false
  for (const m of plan.messages) {
    if (m.parts.length === 0) continue
    // A message-level marker applies to the message's last part; when that part is reasoning
    // (no marker allowed), the marker goes on the last part that can carry it.
    const markAt = marks.has(m.index) ? markablePart(m) : -1
    const onPart = markAt >= 0 && markAt !== m.parts.length - 1
    const options_ = marks.has(m.index) && !onPart ? { providerOptions: marker(target, marks.get(m.index)) } : {}
    locations.set(m.index, `messages[${messages.length}]${automatic ? " (automatic prefix)" : onPart ? `.content[${markAt}].providerOptions` : ".providerOptions"}`)
    if (m.role === "system" && !seenOther) {
      messages.push({ role: "system", content: textOnly(provider, m, "system").join("\n\n"), ...options_ })
      continue
    }
    seenOther = true
    if (m.role === "assistant") {
      const content = m.parts.map((p, k): AiSdkAssistantPart => {
        const part = assistantPart(provider, target, m, p)
        return onPart && k === markAt ? { ...part, providerOptions: { ...part.providerOptions, ...marker(target, marks.get(m.index)) } } : part
      })
      messages.push({ role: "assistant", content, ...options_ })
    } else if (m.role === "tool") {
      const content = m.parts.flatMap((p): Array<AiSdkToolResultPart> =>
        p.type === "tool-result" ? [{ type: "tool-result", toolCallId: p.toolCallId, toolName: p.toolName, output: toolOutput(p.output) }] : [])
      messages.push({ role: "tool", content, ...options_ })
    } else {
      messages.push({
        role: "user",
        content: m.parts.map((p): AiSdkTextPart | AiSdkImagePart => {
          if (p.type === "text") return { type: "text", text: p.text }
          if (p.type !== "image") throw new PlacementError({ provider, reason: `user message ${m.index} has a ${p.type} part; only assistant and tool messages take those` })
          return p.mediaType === undefined ? { type: "image", image: p.url } : { type: "image", image: p.url, mediaType: p.mediaType }
        }),
        ...options_
      })
    }
  }
  if (messages.length === 0) throw new PlacementError({ provider, reason: "the request has no non-empty message" })
  const body: AiSdkBody = {
    messages,
    ...(automatic && options.promptCacheKey !== undefined ? { providerOptions: { openai: { promptCacheKey: options.promptCacheKey } } } : {})
  }
  return result(provider, body, placedFrom(plan, (i) => locations.get(i) ?? `message ${i}`), plan.dropped, notes)
}

/**
 * Layer for core's `Placement` service that emits AI SDK messages.
 *
 * @example
 * ```ts
 * const layer = AiSdkPlacement.layer({ target: "bedrock" })
 * ```
 */
export const AiSdkPlacement = {
  provider: "ai-sdk",
  place: placeAiSdk,
  layer: (options: AiSdkOptions = {}) => placementLayer("ai-sdk", (request) => placeAiSdk(request, options))
} as const
