/**
 * Provider replies as core `Message`s: each provider's response (the official SDK's
 * non-streaming result, or a stream's final message) decoded with `effect/Schema` into
 * the assistant's text, reasoning and tool calls, with the usage it reports. The inverse
 * of the plugins' rendering: reasoning keeps the provider's signature or encrypted data
 * byte-exact, so the next request sends it back as the provider gave it.
 */
import type { Usage } from "@strata/core"
import type { DecodedReply, Message, ReasoningPart, ToolCallPart, ToolResultOutput } from "@strata/core"
import { Schema } from "effect"
import {
  decodeAiSdkResultUsage,
  decodeAnthropicUsage,
  decodeBedrockUsage,
  decodeGeminiUsage,
  decodeOpenAIChatUsage,
  decodeOpenAIResponsesUsage
} from "./usage.ts"

/** The parts of one assistant message, in the order the provider gave them. */
type AssistantPart = Exclude<Extract<Message, { role: "assistant" }>["content"], string>[number]

/** One assistant message from its parts: a lone text part is stored as a string. */
const assistant = (parts: ReadonlyArray<AssistantPart>): Message => {
  const only = parts[0]
  if (parts.length === 0) return { role: "assistant", content: "" }
  if (parts.length === 1 && only?.type === "text") return { role: "assistant", content: only.text }
  return { role: "assistant", content: [...parts] }
}

/** Run a decode; its error says what the value was expected to be. */
const expecting = <A>(what: string, run: () => A): A => {
  try {
    return run()
  } catch (error) {
    throw new Error(`not ${what}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** A tool call's arguments as a JSON object; text that is not one is kept under `arguments`. */
const argumentsObject = (text: string): ToolCallPart["input"] => {
  try {
    const parsed: unknown = JSON.parse(text === "" ? "{}" : text)
    const object = Schema.decodeUnknownOption(Schema.JsonObject)(parsed)
    return object._tag === "Some" ? object.value : { arguments: text }
  } catch {
    return { arguments: text }
  }
}

const Json = Schema.Json
const JsonObject = Schema.JsonObject
const Opt = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(s)))

// ---------------------------------------------------------------------------------
// Anthropic Messages (and Bedrock InvokeModel with Claude).

const AnthropicBlock = Schema.Struct({
  type: Schema.String,
  text: Schema.optionalKey(Schema.String),
  id: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  input: Schema.optionalKey(Json),
  thinking: Schema.optionalKey(Schema.String),
  signature: Schema.optionalKey(Schema.String),
  data: Schema.optionalKey(Schema.String)
})

/** An Anthropic `Message` (from `messages.create`, or `stream.finalMessage()`). */
export const AnthropicReply = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Array(AnthropicBlock),
  usage: Opt(Schema.Unknown)
})
export type AnthropicReply = typeof AnthropicReply.Type
const decodeAnthropicShape = (value: unknown): AnthropicReply => expecting("an Anthropic message", () => Schema.decodeUnknownSync(AnthropicReply)(value))

const anthropicParts = (blocks: AnthropicReply["content"]): Array<AssistantPart> =>
  blocks.flatMap((b): Array<AssistantPart> => {
    switch (b.type) {
      case "text":
        return [{ type: "text", text: b.text ?? "" }]
      case "tool_use":
        return [{ type: "tool-call", toolCallId: b.id ?? "", toolName: b.name ?? "", input: toObject(b.input) }]
      case "thinking":
        return [{ type: "reasoning", text: b.thinking ?? "", provider: "anthropic", ...(b.signature === undefined ? {} : { signature: b.signature }) }]
      case "redacted_thinking":
        return [{ type: "reasoning", text: "", provider: "anthropic", redactedData: b.data ?? "" }]
      default:
        // Server tool blocks (web search and the like) are the provider's own round trip; not history.
        return []
    }
  })

/** A tool call's input as a JSON object; anything else is kept under `input`. */
const toObject = (value: Schema.Json | undefined): ToolCallPart["input"] => {
  const object = Schema.decodeUnknownOption(JsonObject)(value ?? {})
  return object._tag === "Some" ? object.value : { input: value ?? null }
}

/** An unchecked input (the AI SDK's `unknown`) as a JSON object. */
const jsonObjectOf = (value: unknown): ToolCallPart["input"] => {
  const json = Schema.decodeUnknownOption(Json)(value ?? {})
  return toObject(json._tag === "Some" ? json.value : null)
}

/**
 * An Anthropic Messages reply as core messages and usage: text, `tool_use` calls and
 * thinking (with its signature; redacted thinking as `redactedData`).
 *
 * @example
 * ```ts
 * import { decodeAnthropicReply } from "@strata/providers"
 * decodeAnthropicReply({ role: "assistant", content: [{ type: "text", text: "Hi" }], usage: { input_tokens: 9, output_tokens: 2 } })
 * // { messages: [{ role: "assistant", content: "Hi" }], usage: { input: 9, cacheRead: 0, cacheWrite: 0, output: 2 } }
 * ```
 */
export const decodeAnthropicReply = (reply: unknown): DecodedReply => {
  const r = decodeAnthropicShape(reply)
  return { messages: [assistant(anthropicParts(r.content))], usage: r.usage === undefined || r.usage === null ? undefined : decodeAnthropicUsage(r.usage) }
}

// ---------------------------------------------------------------------------------
// OpenAI Chat Completions (and OpenAI-compatible gateways).

const ChatToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.optionalKey(Schema.String),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

/** An OpenAI `ChatCompletion`: the first choice's message and the usage. */
export const OpenAIChatReply = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: Opt(Schema.String),
      refusal: Opt(Schema.String),
      tool_calls: Opt(Schema.Array(ChatToolCall))
    })
  })).check(Schema.isMinLength(1)),
  usage: Opt(Schema.Unknown)
})
export type OpenAIChatReply = typeof OpenAIChatReply.Type
const decodeChatShape = (value: unknown): OpenAIChatReply => expecting("a Chat Completions response", () => Schema.decodeUnknownSync(OpenAIChatReply)(value))

/**
 * An OpenAI Chat Completions reply (the first choice) as core messages and usage: the
 * text (or refusal) and the `tool_calls`, their JSON arguments parsed.
 *
 * @example
 * ```ts
 * import { decodeOpenAIChatReply } from "@strata/providers"
 * decodeOpenAIChatReply({ choices: [{ message: { content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{\"path\":\"src\"}" } }] } }] })
 * // { messages: [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: { path: "src" } }] }], usage: undefined }
 * ```
 */
export const decodeOpenAIChatReply = (reply: unknown): DecodedReply => {
  const r = decodeChatShape(reply)
  const message = r.choices[0]!.message
  const text = message.content ?? message.refusal ?? ""
  const parts: Array<AssistantPart> = [
    ...(text === "" ? [] : [{ type: "text" as const, text }]),
    ...(message.tool_calls ?? []).map((c): AssistantPart => ({ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: argumentsObject(c.function.arguments) }))
  ]
  return { messages: [assistant(parts)], usage: r.usage === undefined || r.usage === null ? undefined : decodeOpenAIChatUsage(r.usage) }
}

// ---------------------------------------------------------------------------------
// OpenAI Responses.

const ResponsesItem = Schema.Struct({
  type: Schema.String,
  id: Schema.optionalKey(Schema.String),
  call_id: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  arguments: Schema.optionalKey(Schema.String),
  content: Opt(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optionalKey(Schema.String), refusal: Schema.optionalKey(Schema.String) }))),
  summary: Opt(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.String }))),
  encrypted_content: Opt(Schema.String)
})

/** An OpenAI `Response`: its `output` items and the usage. */
export const OpenAIResponsesReply = Schema.Struct({
  output: Schema.Array(ResponsesItem),
  usage: Opt(Schema.Unknown)
})
export type OpenAIResponsesReply = typeof OpenAIResponsesReply.Type
const decodeResponsesShape = (value: unknown): OpenAIResponsesReply => expecting("a Responses API response", () => Schema.decodeUnknownSync(OpenAIResponsesReply)(value))

/**
 * An OpenAI Responses reply as core messages and usage: `message` text, `function_call`
 * items, and `reasoning` items (their id, summary text and `encrypted_content`).
 *
 * @example
 * ```ts
 * import { decodeOpenAIResponsesReply } from "@strata/providers"
 * decodeOpenAIResponsesReply({ output: [{ type: "message", content: [{ type: "output_text", text: "Hi" }] }] }).messages
 * // [{ role: "assistant", content: "Hi" }]
 * ```
 */
export const decodeOpenAIResponsesReply = (reply: unknown): DecodedReply => {
  const r = decodeResponsesShape(reply)
  const parts = r.output.flatMap((item): Array<AssistantPart> => {
    switch (item.type) {
      case "message":
        return (item.content ?? []).flatMap((c): Array<AssistantPart> => {
          const text = c.type === "refusal" ? c.refusal : c.text
          return text === undefined || text === "" ? [] : [{ type: "text", text }]
        })
      case "function_call":
        return [{ type: "tool-call", toolCallId: item.call_id ?? item.id ?? "", toolName: item.name ?? "", input: argumentsObject(item.arguments ?? "") }]
      case "reasoning": {
        const reasoning: ReasoningPart = {
          type: "reasoning",
          text: (item.summary ?? []).map((s) => s.text).join("\n\n"),
          provider: "openai",
          ...(item.id === undefined ? {} : { id: item.id }),
          ...(item.encrypted_content === undefined || item.encrypted_content === null ? {} : { redactedData: item.encrypted_content })
        }
        return [reasoning]
      }
      default:
        return []
    }
  })
  return { messages: [assistant(parts)], usage: r.usage === undefined || r.usage === null ? undefined : decodeOpenAIResponsesUsage(r.usage) }
}

// ---------------------------------------------------------------------------------
// Amazon Bedrock Converse.

const Bytes = Schema.Union([Schema.String, Schema.Uint8Array])

const BedrockBlock = Schema.Struct({
  text: Schema.optionalKey(Schema.String),
  toolUse: Schema.optionalKey(Schema.Struct({ toolUseId: Schema.String, name: Schema.String, input: Schema.optionalKey(Json) })),
  reasoningContent: Schema.optionalKey(Schema.Struct({
    reasoningText: Schema.optionalKey(Schema.Struct({ text: Schema.optionalKey(Schema.String), signature: Schema.optionalKey(Schema.String) })),
    redactedContent: Schema.optionalKey(Bytes)
  }))
})

/** A Bedrock `ConverseCommandOutput`: `output.message` and the usage. */
export const BedrockConverseReply = Schema.Struct({
  output: Schema.Struct({ message: Schema.Struct({ role: Schema.optionalKey(Schema.String), content: Schema.Array(BedrockBlock) }) }),
  usage: Opt(Schema.Unknown)
})
export type BedrockConverseReply = typeof BedrockConverseReply.Type
const decodeBedrockShape = (value: unknown): BedrockConverseReply => expecting("a Converse response", () => Schema.decodeUnknownSync(BedrockConverseReply)(value))

const base64 = (bytes: string | Uint8Array): string => (typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("base64"))

/**
 * A Bedrock Converse reply as core messages and usage: text, `toolUse` calls, and Claude's
 * reasoning (text and signature, or redacted content as base64 `redactedData`).
 *
 * @example
 * ```ts
 * import { decodeBedrockConverseReply } from "@strata/providers"
 * decodeBedrockConverseReply({ output: { message: { role: "assistant", content: [{ text: "Hi" }] } }, usage: { inputTokens: 9, outputTokens: 2 } })
 * // { messages: [{ role: "assistant", content: "Hi" }], usage: { input: 9, cacheRead: 0, cacheWrite: 0, output: 2 } }
 * ```
 */
export const decodeBedrockConverseReply = (reply: unknown): DecodedReply => {
  const r = decodeBedrockShape(reply)
  const parts = r.output.message.content.flatMap((b): Array<AssistantPart> => {
    if (b.text !== undefined) return [{ type: "text", text: b.text }]
    if (b.toolUse !== undefined) return [{ type: "tool-call", toolCallId: b.toolUse.toolUseId, toolName: b.toolUse.name, input: toObject(b.toolUse.input) }]
    const reasoning = b.reasoningContent
    if (reasoning?.redactedContent !== undefined) return [{ type: "reasoning", text: "", provider: "anthropic", redactedData: base64(reasoning.redactedContent) }]
    if (reasoning?.reasoningText !== undefined) {
      const { text, signature } = reasoning.reasoningText
      return [{ type: "reasoning", text: text ?? "", provider: "anthropic", ...(signature === undefined ? {} : { signature }) }]
    }
    return []
  })
  return { messages: [assistant(parts)], usage: r.usage === undefined || r.usage === null ? undefined : decodeBedrockUsage(r.usage) }
}

// ---------------------------------------------------------------------------------
// Google Gemini.

const GeminiReplyPart = Schema.Struct({
  text: Schema.optionalKey(Schema.String),
  thought: Schema.optionalKey(Schema.Boolean),
  thoughtSignature: Schema.optionalKey(Schema.String),
  functionCall: Schema.optionalKey(Schema.Struct({ id: Schema.optionalKey(Schema.String), name: Schema.String, args: Schema.optionalKey(JsonObject) }))
})

/** A Gemini `GenerateContentResponse`: the first candidate's content and `usageMetadata`. */
export const GeminiReply = Schema.Struct({
  candidates: Schema.Array(Schema.Struct({ content: Schema.optionalKey(Schema.Struct({ parts: Schema.optionalKey(Schema.Array(GeminiReplyPart)) })) })).check(Schema.isMinLength(1)),
  usageMetadata: Opt(Schema.Unknown),
  responseId: Schema.optionalKey(Schema.String)
})
export type GeminiReply = typeof GeminiReply.Type
const decodeGeminiShape = (value: unknown): GeminiReply => expecting("a generateContent response", () => Schema.decodeUnknownSync(GeminiReply)(value))

/**
 * A Gemini reply (the first candidate) as core messages and usage. Thoughts become
 * reasoning parts; a thought signature on another part becomes a reasoning part without
 * text just before it (the plugin puts it back on that part). A function call without an
 * id gets one from the response id and its position, so ids stay unique in the history.
 *
 * @example
 * ```ts
 * import { decodeGeminiReply } from "@strata/providers"
 * decodeGeminiReply({ candidates: [{ content: { role: "model", parts: [{ text: "Hi" }] } }] }).messages
 * // [{ role: "assistant", content: "Hi" }]
 * ```
 */
export const decodeGeminiReply = (reply: unknown): DecodedReply => {
  const r = decodeGeminiShape(reply)
  const salt = r.responseId ?? crypto.randomUUID()
  const parts = (r.candidates[0]!.content?.parts ?? []).flatMap((p, i): Array<AssistantPart> => {
    if (p.thought === true) {
      return [{ type: "reasoning", text: p.text ?? "", provider: "gemini", ...(p.thoughtSignature === undefined ? {} : { signature: p.thoughtSignature }) }]
    }
    const signature: Array<AssistantPart> = p.thoughtSignature === undefined ? [] : [{ type: "reasoning", text: "", provider: "gemini", signature: p.thoughtSignature }]
    if (p.functionCall !== undefined) {
      const call = p.functionCall
      return [...signature, { type: "tool-call", toolCallId: call.id ?? `${salt}-${i}`, toolName: call.name, input: call.args ?? {} }]
    }
    return p.text === undefined || p.text === "" ? signature : [...signature, { type: "text", text: p.text }]
  })
  return { messages: [assistant(parts)], usage: r.usageMetadata === undefined || r.usageMetadata === null ? undefined : decodeGeminiUsage(r.usageMetadata) }
}

// ---------------------------------------------------------------------------------
// The Vercel AI SDK.

const AiSdkOptionsField = Opt(Schema.Record(Schema.String, Schema.Unknown))

const AiSdkAssistantPart = Schema.Struct({
  type: Schema.String,
  text: Schema.optionalKey(Schema.String),
  toolCallId: Schema.optionalKey(Schema.String),
  toolName: Schema.optionalKey(Schema.String),
  input: Schema.optionalKey(Schema.Unknown),
  providerOptions: AiSdkOptionsField,
  providerMetadata: AiSdkOptionsField
})

const AiSdkToolOutput = Schema.Struct({ type: Schema.String, value: Schema.optionalKey(Schema.Unknown), reason: Schema.optionalKey(Schema.String) })

const AiSdkToolPart = Schema.Struct({
  type: Schema.String,
  toolCallId: Schema.String,
  toolName: Schema.String,
  output: Schema.optionalKey(AiSdkToolOutput)
})

const AiSdkModelMessage = Schema.Union([
  Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.Union([Schema.String, Schema.Array(AiSdkAssistantPart)]) }),
  Schema.Struct({ role: Schema.Literal("tool"), content: Schema.Array(AiSdkToolPart) })
])

/**
 * What Strata reads of a `generateText` result (or of a `streamText` result once awaited:
 * `{ response: await result.response, totalUsage: await result.totalUsage, providerMetadata: await result.providerMetadata }`).
 */
export const AiSdkReply = Schema.Struct({
  response: Schema.optionalKey(Schema.Struct({ messages: Schema.Array(AiSdkModelMessage) })),
  text: Schema.optionalKey(Schema.String),
  usage: Opt(Schema.Unknown),
  totalUsage: Opt(Schema.Unknown),
  providerMetadata: Opt(Schema.Unknown)
})
export type AiSdkReply = typeof AiSdkReply.Type
const decodeAiSdkShape = (value: unknown): AiSdkReply => expecting("an AI SDK generateText result", () => Schema.decodeUnknownSync(AiSdkReply)(value))

const decodeRecord = Schema.decodeUnknownOption(Schema.Record(Schema.String, Schema.Unknown))
const record = (value: unknown): Record<string, unknown> | undefined => {
  const decoded = decodeRecord(value)
  return decoded._tag === "Some" ? decoded.value : undefined
}
const stringField = (value: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof value?.[key] === "string" ? value[key] : undefined

/** A reasoning part's provider data, from `providerOptions` (or `providerMetadata`) by provider key. */
const aiSdkReasoning = (text: string, options: Record<string, unknown> | undefined, fallback: ReasoningPart["provider"]): ReasoningPart => {
  const openai = record(options?.["openai"])
  if (openai !== undefined) {
    const id = stringField(openai, "itemId")
    const encrypted = stringField(openai, "reasoningEncryptedContent")
    return { type: "reasoning", text, provider: "openai", ...(id === undefined ? {} : { id }), ...(encrypted === undefined ? {} : { redactedData: encrypted }) }
  }
  const google = record(options?.["google"]) ?? record(options?.["vertex"])
  if (google !== undefined) {
    const signature = stringField(google, "thoughtSignature")
    return { type: "reasoning", text, provider: "gemini", ...(signature === undefined ? {} : { signature }) }
  }
  const claude = record(options?.["anthropic"]) ?? record(options?.["bedrock"])
  const signature = stringField(claude, "signature")
  const redacted = stringField(claude, "redactedData")
  return {
    type: "reasoning",
    text,
    provider: claude === undefined ? fallback : "anthropic",
    ...(signature === undefined ? {} : { signature }),
    ...(redacted === undefined ? {} : { redactedData: redacted })
  }
}

const aiSdkToolOutput = (output: typeof AiSdkToolOutput.Type | undefined): ToolResultOutput => {
  if (output === undefined) return { type: "text", value: "" }
  const value = output.value
  switch (output.type) {
    case "text":
    case "error-text":
      return { type: output.type, value: typeof value === "string" ? value : JSON.stringify(value ?? null) }
    case "json":
    case "error-json": {
      const json = Schema.decodeUnknownOption(Json)(value ?? null)
      return { type: output.type, value: json._tag === "Some" ? json.value : null }
    }
    case "execution-denied":
      return { type: "error-text", value: `execution denied${output.reason === undefined ? "" : `: ${output.reason}`}` }
    case "content": {
      const parts = Array.isArray(value) ? value : []
      return {
        type: "content",
        value: parts.flatMap((raw): Array<{ type: "text"; text: string } | { type: "image"; url: string; mediaType?: string }> => {
          const p = record(raw)
          const kind = stringField(p, "type")
          const media = stringField(p, "mediaType")
          if (kind === "text") return [{ type: "text", text: stringField(p, "text") ?? "" }]
          const data = stringField(p, "data")
          if ((kind === "media" || kind === "file-data" || kind === "image-data") && data !== undefined) {
            const type = media ?? "application/octet-stream"
            return [{ type: "image", url: `data:${type};base64,${data}`, mediaType: type }]
          }
          const url = stringField(p, "url")
          if ((kind === "file-url" || kind === "image-url") && url !== undefined) return [media === undefined ? { type: "image", url } : { type: "image", url, mediaType: media }]
          return [{ type: "text", text: JSON.stringify(raw) }]
        })
      }
    }
    default:
      return { type: "text", value: JSON.stringify(output) }
  }
}

/**
 * An AI SDK result as core messages and usage: `response.messages` (every step's
 * assistant messages and the tool messages of tools the SDK ran), or `text` when there
 * are none; `totalUsage` (all steps) or `usage`, with `providerMetadata`'s cache writes.
 * Reasoning keeps its provider data from `providerOptions`; without any it is taken to be
 * `reasoningProvider`'s.
 *
 * @example
 * ```ts
 * import { decodeAiSdkReply } from "@strata/providers"
 * decodeAiSdkReply({ response: { messages: [{ role: "assistant", content: [{ type: "text", text: "Hi" }] }] } }).messages
 * // [{ role: "assistant", content: "Hi" }]
 * ```
 */
export const decodeAiSdkReply = (reply: unknown, reasoningProvider: ReasoningPart["provider"] = "anthropic"): DecodedReply => {
  const r = decodeAiSdkShape(reply)
  const fromMessages = (r.response?.messages ?? []).map((m): Message => {
    if (m.role === "tool") {
      return { role: "tool", content: m.content.filter((p) => p.type === "tool-result").map((p) => ({ type: "tool-result", toolCallId: p.toolCallId, toolName: p.toolName, output: aiSdkToolOutput(p.output) })) }
    }
    if (typeof m.content === "string") return { role: "assistant", content: m.content }
    return assistant(m.content.flatMap((p): Array<AssistantPart> => {
      switch (p.type) {
        case "text":
          return [{ type: "text", text: p.text ?? "" }]
        case "reasoning":
          return [aiSdkReasoning(p.text ?? "", record(p.providerOptions ?? p.providerMetadata), reasoningProvider)]
        case "tool-call":
          return [{ type: "tool-call", toolCallId: p.toolCallId ?? "", toolName: p.toolName ?? "", input: jsonObjectOf(p.input) }]
        default:
          return []
      }
    }))
  })
  const messages = fromMessages.length > 0 ? fromMessages : [assistant(r.text === undefined || r.text === "" ? [] : [{ type: "text", text: r.text }])]
  const usage = r.totalUsage ?? r.usage
  const decoded: Usage | undefined = usage === undefined || usage === null ? undefined : decodeAiSdkResultUsage(usage, r.providerMetadata ?? undefined)
  return { messages, usage: decoded }
}
