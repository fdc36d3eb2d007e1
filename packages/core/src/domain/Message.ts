/**
 * Provider-neutral chat messages, named after the Vercel AI SDK's `ModelMessage`:
 * system, user, assistant (text, reasoning, tool calls) and tool (tool results).
 * Provider plugins translate these into each API's shape; everything before the
 * plugins speaks this type only. `History` decodes a whole conversation and checks
 * that every tool call is answered by the next message.
 */
import { Schema } from "effect"

export const Role = Schema.Literals(["system", "user", "assistant", "tool"])
export type Role = typeof Role.Type

/** A text part of a multimodal message. */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
export type TextPart = typeof TextPart.Type

/**
 * An image part: a `data:` URL or an `https:` URL, with an optional media type.
 */
export const ImagePart = Schema.Struct({
  type: Schema.Literal("image"),
  url: Schema.String,
  mediaType: Schema.optionalKey(Schema.String)
})
export type ImagePart = typeof ImagePart.Type

/** A part of a system or user message: text or an image. */
export const ContentPart = Schema.Union([TextPart, ImagePart])
export type ContentPart = typeof ContentPart.Type

/**
 * A tool call the model made (an assistant part). `input` is the JSON object of
 * arguments; `toolCallId` is unique in a history and names the result that answers it.
 *
 * @example
 * ```ts
 * import type { ToolCallPart } from "@strata/core"
 * const call: ToolCallPart = { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "src/a.ts" } }
 * ```
 */
export const ToolCallPart = Schema.Struct({
  type: Schema.Literal("tool-call"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: Schema.JsonObject
})
export type ToolCallPart = typeof ToolCallPart.Type

/** Which provider family produced a reasoning part's opaque data; only that family takes it back. */
export const ReasoningProvider = Schema.Literals(["anthropic", "openai", "gemini"])
export type ReasoningProvider = typeof ReasoningProvider.Type

/**
 * The model's reasoning (an assistant part). The opaque fields are kept byte-exact and
 * sent back only to the provider family that produced them (`provider`): Anthropic (and
 * Claude on Bedrock) rejects or re-bills a thinking block whose text or signature changed.
 *
 * - `signature`: Anthropic/Bedrock thinking signature; Gemini `thoughtSignature` (a
 *   Gemini signature belongs to the part that follows the reasoning part).
 * - `redactedData`: Anthropic `redacted_thinking` data; Bedrock `redactedContent`
 *   (base64); OpenAI Responses `encrypted_content`.
 * - `id`: the OpenAI Responses reasoning item id.
 *
 * @example
 * ```ts
 * import type { ReasoningPart } from "@strata/core"
 * const thinking: ReasoningPart = { type: "reasoning", text: "Read the file first.", provider: "anthropic", signature: "EqQBCkgIARABGAIiQL..." }
 * ```
 */
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  provider: ReasoningProvider,
  signature: Schema.optionalKey(Schema.String),
  redactedData: Schema.optionalKey(Schema.String),
  id: Schema.optionalKey(Schema.String)
})
export type ReasoningPart = typeof ReasoningPart.Type

/**
 * What a tool returned, in the AI SDK's `ToolResultOutput` shape: text, JSON, an error
 * as text or JSON, or content parts (text and images). An error output is sent as the
 * provider's error result (`is_error`, `status: "error"`, Gemini's `error` key).
 */
export const ToolResultOutput = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), value: Schema.String }),
  Schema.Struct({ type: Schema.Literal("json"), value: Schema.Json }),
  Schema.Struct({ type: Schema.Literal("error-text"), value: Schema.String }),
  Schema.Struct({ type: Schema.Literal("error-json"), value: Schema.Json }),
  Schema.Struct({ type: Schema.Literal("content"), value: Schema.Array(ContentPart) })
])
export type ToolResultOutput = typeof ToolResultOutput.Type

/**
 * The result of one tool call (a part of a `tool` message).
 *
 * @example
 * ```ts
 * import type { ToolResultPart } from "@strata/core"
 * const ok: ToolResultPart = { type: "tool-result", toolCallId: "call_1", toolName: "read_file", output: { type: "text", value: "export const a = 1" } }
 * const failed: ToolResultPart = { type: "tool-result", toolCallId: "call_2", toolName: "read_file", output: { type: "error-text", value: "ENOENT" } }
 * ```
 */
export const ToolResultPart = Schema.Struct({
  type: Schema.Literal("tool-result"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  output: ToolResultOutput
})
export type ToolResultPart = typeof ToolResultPart.Type

/** A part of an assistant message. Images are accepted for older histories; plugins reject them. */
export const AssistantPart = Schema.Union([TextPart, ImagePart, ReasoningPart, ToolCallPart])
export type AssistantPart = typeof AssistantPart.Type

/** Any part of any message. */
export type MessagePart = ContentPart | ReasoningPart | ToolCallPart | ToolResultPart

export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.Union([Schema.String, Schema.Array(ContentPart)])
})
export type SystemMessage = typeof SystemMessage.Type

export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union([Schema.String, Schema.Array(ContentPart)])
})
export type UserMessage = typeof UserMessage.Type

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Union([Schema.String, Schema.Array(AssistantPart)])
})
export type AssistantMessage = typeof AssistantMessage.Type

/** The results answering the previous assistant message's tool calls; nothing else. */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: Schema.Array(ToolResultPart)
})
export type ToolMessage = typeof ToolMessage.Type

/**
 * A chat message, discriminated by `role` like the AI SDK's `ModelMessage`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Message } from "@strata/core"
 * const m = Schema.decodeUnknownSync(Message)({ role: "user", content: "hi" })
 * ```
 */
export const Message = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolMessage]).annotate({
  identifier: "Message",
  // Shown when no member's role matches; a known role with bad content names the bad field instead.
  message: `Expected a message whose role is "system", "user", "assistant" or "tool"`
})
export type Message = typeof Message.Type

/** A message's content as parts (a string is one text part). */
export const messageParts = (message: Message): ReadonlyArray<MessagePart> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content

/** The text of a tool result's output: its text, or its JSON. */
export const toolOutputText = (output: ToolResultOutput): string => {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value
    case "json":
    case "error-json":
      return JSON.stringify(output.value)
    case "content":
      return output.value.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n")
  }
}

/** True when a tool result reports a failure (`error-text` or `error-json`). */
export const isToolError = (output: ToolResultOutput): boolean => output.type === "error-text" || output.type === "error-json"

/**
 * The text a part contributes to a prompt, for counting and transcripts: a text or
 * reasoning part's text, a tool call's name and JSON input, a result's output; `""`
 * for an image.
 */
export const partText = (part: MessagePart): string => {
  switch (part.type) {
    case "text":
    case "reasoning":
      return part.text
    case "image":
      return ""
    case "tool-call":
      return `${part.toolName} ${JSON.stringify(part.input)}`
    case "tool-result":
      return toolOutputText(part.output)
  }
}

/** Images a part carries (an image part, or images inside a tool result's content). */
export const partImages = (part: MessagePart): number =>
  part.type === "image" ? 1 : part.type === "tool-result" && part.output.type === "content" ? part.output.value.filter((p) => p.type === "image").length : 0

/**
 * The text of a message: the string itself, or the text of its parts (see `partText`)
 * joined with blank lines, parts without text left out.
 */
export const messageText = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : messageParts(message).flatMap((p) => {
      const text = partText(p)
      return p.type === "image" || (p.type !== "text" && text.length === 0) ? [] : [text]
    }).join("\n\n")

/** The tool calls of a message (none unless it is an assistant message with tool-call parts). */
export const toolCalls = (message: Message): ReadonlyArray<ToolCallPart> =>
  message.role === "assistant" && typeof message.content !== "string" ? message.content.filter((p): p is ToolCallPart => p.type === "tool-call") : []

/** A pairing problem in a history: the message index, the id, and what is wrong. */
export interface HistoryProblem {
  readonly index: number
  readonly path: ReadonlyArray<string | number>
  readonly issue: string
}

/**
 * The pairing problems of a history: every tool call must be answered in the next
 * message (a `tool` message), every result must answer a call of the message before,
 * and tool call ids are unique. `pending: true` accepts unanswered calls on the last
 * message (a history the caller is still appending to). Pure; `[]` when valid.
 *
 * @example
 * ```ts
 * import { historyProblems } from "@strata/core"
 * historyProblems([{ role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "text", value: "a.ts" } }] }])
 * // [{ index: 0, path: [0, "content", 0, "toolCallId"], issue: 'message 0: tool result "c1" answers no tool call ...' }]
 * ```
 */
export const historyProblems = (
  messages: ReadonlyArray<Message>,
  options: { readonly pending?: boolean } = {}
): ReadonlyArray<HistoryProblem> => {
  const problems: Array<HistoryProblem> = []
  const seen = new Map<string, number>()
  messages.forEach((message, index) => {
    if (message.role === "assistant" && typeof message.content !== "string") {
      message.content.forEach((part, k) => {
        if (part.type !== "tool-call") return
        const first = seen.get(part.toolCallId)
        if (first !== undefined) {
          problems.push({ index, path: [index, "content", k, "toolCallId"], issue: `message ${index}: tool call id ${JSON.stringify(part.toolCallId)} is already used by message ${first}; tool call ids must be unique` })
          return
        }
        seen.set(part.toolCallId, index)
      })
      const calls = toolCalls(message)
      const next = messages[index + 1]
      if (calls.length > 0 && next?.role !== "tool" && !(next === undefined && options.pending === true)) {
        const call = calls[0]!
        problems.push({
          index,
          path: [index, "content", message.content.indexOf(call), "toolCallId"],
          issue: `message ${index}: tool call ${JSON.stringify(call.toolCallId)} (${call.toolName}) is not answered: message ${index + 1} must be a tool message with its result${next === undefined ? ", but the history ends" : `, but it is a ${next.role} message`}`
        })
      }
      return
    }
    if (message.role !== "tool") return
    const previous = index === 0 ? undefined : messages[index - 1]
    const calls = previous === undefined ? [] : toolCalls(previous)
    const answered = new Set<string>()
    message.content.forEach((result, k) => {
      const call = calls.find((c) => c.toolCallId === result.toolCallId)
      const at = [index, "content", k, "toolCallId"]
      if (call === undefined) {
        problems.push({ index, path: at, issue: `message ${index}: tool result ${JSON.stringify(result.toolCallId)} answers no tool call of ${index === 0 ? "the message before it (there is none)" : `message ${index - 1}`}; a result must directly follow the assistant message that made its call` })
      } else if (answered.has(result.toolCallId)) {
        problems.push({ index, path: at, issue: `message ${index}: tool call ${JSON.stringify(result.toolCallId)} is answered twice` })
      } else if (call.toolName !== result.toolName) {
        problems.push({ index, path: [index, "content", k, "toolName"], issue: `message ${index}: tool result ${JSON.stringify(result.toolCallId)} names tool ${JSON.stringify(result.toolName)}, but the call was to ${JSON.stringify(call.toolName)}` })
      }
      answered.add(result.toolCallId)
    })
    if (calls.length === 0 && message.content.length === 0) {
      problems.push({ index, path: [index, "content"], issue: `message ${index}: a tool message must answer the tool calls of the assistant message before it` })
    }
    for (const call of calls) {
      if (!answered.has(call.toolCallId)) {
        problems.push({ index, path: [index, "content"], issue: `message ${index}: tool call ${JSON.stringify(call.toolCallId)} (${call.toolName}) of message ${index - 1} has no result here; every call must be answered in the next message` })
      }
    }
  })
  return problems
}

const pairedToolCalls = Schema.makeFilter((messages: ReadonlyArray<Message>) =>
  historyProblems(messages).map((p): Schema.FilterIssue => ({ path: p.path, issue: p.issue }))
)

/**
 * A conversation: messages whose tool calls are each answered by a result in the next
 * message, with unique ids. Decode untrusted histories with it; the error names the
 * message index and the id.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { History } from "@strata/core"
 * Schema.decodeUnknownSync(History)([
 *   { role: "user", content: "What is in src?" },
 *   { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: { path: "src" } }] },
 *   { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "text", value: "a.ts" } }] },
 *   { role: "assistant", content: "src holds a.ts." }
 * ])
 * ```
 */
export const History = Schema.Array(Message).check(pairedToolCalls).annotate({ identifier: "History" })
export type History = typeof History.Type
