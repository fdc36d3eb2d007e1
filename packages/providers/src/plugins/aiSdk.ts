/**
 * The Vercel AI SDK plugin: `system` + `messages` for `generateText` / `streamText` (ai 6
 * and 7), with cache markers as `providerOptions` on the breakpoint messages:
 * `anthropic.cacheControl`, `bedrock.cachePoint`, or for OpenAI and Google no markers.
 * System prompts go in `system` as `SystemModelMessage`s so each can carry a marker: ai 7
 * refuses a system message inside `messages` and ai 6 warns about one on every call.
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
import { decodeAiSdkReply } from "../replies.ts"
import { decodeAiSdkUsage } from "../usage.ts"
import { makePlugin, placedFrom, requestTools, result, leadingToolTokens, type CommonOptions, type PlacementPlugin, type PluginResult } from "./common.ts"
import { limitsFor, reasoningNote, textOnly } from "../internal/plugins/helpers.ts"
import { geminiReasoning } from "./gemini.ts"
import { openAIReasoning } from "./openai.ts"
import { upstreamOf } from "./openaiCompatible.ts"

/** Provider options in the AI SDK's shape (`Record<provider, Record<key, JSON>>`). */
export type AiSdkProviderOptions = Record<string, Record<string, AiSdkJson>>

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
  | { type: "file-data"; mediaType: string; data: string }
  | { type: "file-url"; url: string; mediaType?: string }

/** `ToolResultOutput` as Strata emits it. */
export type AiSdkToolResultOutput =
  | { type: "text"; value: string }
  | { type: "error-text"; value: string }
  | { type: "json"; value: AiSdkJson }
  | { type: "error-json"; value: AiSdkJson }
  | { type: "content"; value: Array<AiSdkToolContent> }

/** A JSON value as the AI SDK types it (`JSONValue`: mutable arrays and records). */
export type AiSdkJson = null | string | number | boolean | AiSdkJsonObject | Array<AiSdkJson>
export interface AiSdkJsonObject {
  [key: string]: AiSdkJson
}

const toAiSdkJson = (value: Schema.Json): AiSdkJson => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(toAiSdkJson)
  const out: AiSdkJsonObject = {}
  for (const [k, v] of Object.entries(value)) out[k] = toAiSdkJson(v)
  return out
}

export interface AiSdkToolResultPart {
  type: "tool-result"
  toolCallId: string
  toolName: string
  output: AiSdkToolResultOutput
}

export type AiSdkAssistantPart = (AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart) & { providerOptions?: AiSdkProviderOptions }

/** A system prompt in the AI SDK's `SystemModelMessage` shape (an entry of `system`). */
export interface AiSdkSystemMessage {
  role: "system"
  content: string
  providerOptions?: AiSdkProviderOptions
}

/** A conversation message (`ModelMessage` without the system role, which ai 7 refuses there). */
export type AiSdkMessage =
  | { role: "user"; content: Array<AiSdkTextPart | AiSdkImagePart>; providerOptions?: AiSdkProviderOptions }
  | { role: "assistant"; content: Array<AiSdkAssistantPart>; providerOptions?: AiSdkProviderOptions }
  | { role: "tool"; content: Array<AiSdkToolResultPart>; providerOptions?: AiSdkProviderOptions }

/**
 * What to spread into `generateText` / `streamText` besides `model` and `tools`. `system`
 * is the field both ai 6 and ai 7 accept (ai 7 also names it `instructions`).
 */
export interface AiSdkBody {
  system?: Array<AiSdkSystemMessage>
  messages: Array<AiSdkMessage>
  providerOptions?: AiSdkProviderOptions
}

/** Which AI SDK provider package the messages are for (`@ai-sdk/<target>`, `amazon-bedrock` for bedrock). */
export type AiSdkTarget = "anthropic" | "bedrock" | "openai" | "google"

/** Options of the AI SDK plugin. */
export interface AiSdkOptions extends CommonOptions {
  /** Default: guessed from the model id like the OpenAI-compatible plugin (`gemini-*` is `google`). */
  readonly target?: AiSdkTarget
  /** `providerOptions.openai.promptCacheKey` for OpenAI targets. */
  readonly promptCacheKey?: string
}

const marker = (target: AiSdkTarget, ttl: CacheTtl | undefined): AiSdkProviderOptions =>
  target === "anthropic"
    ? { anthropic: { cacheControl: ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } } }
    : { bedrock: { cachePoint: { type: "default" } } }

/** Reasoning each target's AI SDK provider passes back, and how it names the opaque data. */
const keepReasoning = (target: AiSdkTarget): ((part: ReasoningPart) => boolean) =>
  target === "openai" ? openAIReasoning : target === "google" ? geminiReasoning : anthropicReasoning

const reasoningOptions = (target: AiSdkTarget, p: ReasoningPart): AiSdkProviderOptions => {
  if (target === "openai") return { openai: { itemId: p.id ?? "", ...(p.redactedData === undefined ? {} : { reasoningEncryptedContent: p.redactedData }) } }
  if (target === "google") return p.signature === undefined ? {} : { google: { thoughtSignature: p.signature } }
  return { [target]: p.redactedData !== undefined ? { redactedData: p.redactedData } : { signature: p.signature ?? "" } }
}

const toolContent = (p: ContentPart): AiSdkToolContent => {
  if (p.type === "text") return { type: "text", text: p.text }
  const data = parseDataUrl(p.url)
  // `file-data` / `file-url`: the shapes both ai 6 and ai 7 accept in a tool result.
  if (data === undefined) return p.mediaType === undefined ? { type: "file-url", url: p.url } : { type: "file-url", url: p.url, mediaType: p.mediaType }
  return { type: "file-data", mediaType: p.mediaType ?? data.mediaType, data: data.base64 }
}

const toolOutput = (output: ToolResultOutput): AiSdkToolResultOutput => {
  switch (output.type) {
    case "content":
      return { type: "content", value: output.value.map(toolContent) }
    case "json":
    case "error-json":
      return { type: output.type, value: toAiSdkJson(output.value) }
    default:
      return output
  }
}

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
 * ```ts no-run
 * import { anthropic } from "@ai-sdk/anthropic"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeAiSdk } from "@strata/providers"
 * import { generateText } from "ai"
 * declare const request: NeutralRequest // from assemble()
 * const { body } = placeAiSdk(request, { target: "anthropic" })
 * // body: { system: [{ role: "system", content, providerOptions }], messages: [...] }
 * await generateText({ model: anthropic("claude-sonnet-4-6"), ...body })
 * ```
 */
export const placeAiSdk = (request: NeutralRequest, options: AiSdkOptions = {}): PluginResult<AiSdkBody> => {
  const provider = "ai-sdk"
  const model = options.model ?? request.model
  const guessed = upstreamOf(model)
  const target: AiSdkTarget = options.target ?? (guessed === "gemini" ? "google" : guessed)
  assertToolPairs(provider, request.messages)
  const limits = limitsFor(target === "google" ? "gemini" : target, model, options)
  const toolTokens = leadingToolTokens(request, options, requestTools(request, options))
  // OpenAI and Gemini cache the longest matching prefix on their own: no markers.
  const automatic = target === "openai" || target === "google"
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens,
    reasoning: keepReasoning(target),
    ...(automatic ? { mode: "automatic" as const } : { mode: "markers" as const }),
    ...(target === "bedrock" ? { spacing: "stacked" as const } : {})
  })
  const notes: Array<string> = [...reasoningNote(request, keepReasoning(target), `the AI SDK's ${target} provider takes back only ${target === "openai" ? "OpenAI reasoning items" : target === "google" ? "Gemini thoughts" : "Anthropic thinking with its signature"}`), ...plan.notes]
  const marks = new Map(automatic ? [] : plan.breakpoints.map((b) => [b.messageIndex, b.ttl] as const))
  if (target === "bedrock" && plan.breakpoints.some((b) => b.ttl === "1h")) {
    notes.push("bedrock cachePoint sent without ttl: the AI SDK's Bedrock provider documents only { type: \"default\" }")
  }
  const locations = new Map<number, string>()
  const system: Array<AiSdkSystemMessage> = []
  const messages: Array<AiSdkMessage> = []
  const where = automatic ? " (automatic prefix)" : ".providerOptions"
  for (const m of plan.messages) {
    if (m.parts.length === 0) continue
    // A message-level marker applies to the message's last part; when that part is reasoning
    // (no marker allowed), the marker goes on the last part that can carry it.
    const markAt = marks.has(m.index) ? markablePart(m) : -1
    const onPart = markAt >= 0 && markAt !== m.parts.length - 1
    const options_ = marks.has(m.index) && !onPart ? { providerOptions: marker(target, marks.get(m.index)) } : {}
    // Leading system messages go to `system`; a later one is sent as a user turn, since
    // every provider reads the system prompt as one prefix before the conversation.
    if (m.role === "system" && messages.length === 0) {
      locations.set(m.index, `system[${system.length}]${where}`)
      system.push({ role: "system", content: textOnly(provider, m, "system").join("\n\n"), ...options_ })
      continue
    }
    locations.set(m.index, `messages[${messages.length}]${onPart && !automatic ? `.content[${markAt}].providerOptions` : where}`)
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
  if (messages.length === 0) throw new PlacementError({ provider, reason: "the request has no user or assistant message; the AI SDK needs at least one besides the system prompt" })
  const body: AiSdkBody = {
    ...(system.length === 0 ? {} : { system }),
    messages,
    ...(target === "openai" && options.promptCacheKey !== undefined ? { providerOptions: { openai: { promptCacheKey: options.promptCacheKey } } } : {})
  }
  return result(provider, body, placedFrom(plan, (i) => locations.get(i) ?? `message ${i}`), plan.dropped, notes)
}

/**
 * The Vercel AI SDK plugin: `{ system, messages }` to spread into `generateText` /
 * `streamText` (ai 6 and 7), replies and usage decoded from a `generateText` result
 * (`response.messages`, `totalUsage`, `providerMetadata`). Call it with options to
 * configure it.
 *
 * @example
 * ```ts
 * import { AiSdkPlacement } from "@strata/providers"
 * const provider = AiSdkPlacement({ target: "anthropic" })
 * const layer = AiSdkPlacement.layer({ target: "bedrock" })
 * ```
 */
export const AiSdkPlacement: PlacementPlugin<AiSdkBody, AiSdkOptions> = makePlugin<AiSdkBody, AiSdkOptions>(
  {
    provider: "ai-sdk",
    place: placeAiSdk,
    decodeReply: (reply, options) => decodeAiSdkReply(reply, options.target === "openai" ? "openai" : options.target === "google" ? "gemini" : "anthropic"),
    decodeUsage: decodeAiSdkUsage
  },
  {}
)
