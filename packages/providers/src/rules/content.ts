/**
 * Content rules every plugin applies before rendering: no empty or whitespace-only
 * text blocks (Bedrock and Anthropic reject them), string content as parts, reasoning
 * only where the provider takes it back, tool calls answered in the next message, and
 * the split of leading system messages from the conversation.
 */
import { historyProblems, PlacementError, type Message, type MessagePart, type ReasoningPart, type Role } from "@strata/core"

/** A message with its content as parts, empty text removed; `index` is its position in the request. */
export interface CleanMessage {
  readonly index: number
  readonly role: Role
  readonly parts: ReadonlyArray<MessagePart>
}

/** Which reasoning parts a provider takes back (by default none: reasoning is provider-bound). */
export type KeepReasoning = (part: ReasoningPart) => boolean

const dropReasoning: KeepReasoning = () => false

/** True when a text is empty or only whitespace. */
export const isBlank = (text: string): boolean => text.trim().length === 0

/**
 * A message's content as parts without blank text parts, and without the reasoning
 * parts `keep` refuses. A message may end up with no parts; renderers skip it and
 * breakpoints move back (see `planBreakpoints`).
 *
 * @example
 * ```ts
 * import { cleanParts } from "@strata/providers"
 * cleanParts({ role: "user", content: "" }) // []
 * cleanParts({ role: "user", content: "hi" }) // [{ type: "text", text: "hi" }]
 * ```
 */
export const cleanParts = (message: Message, keep: KeepReasoning = dropReasoning): ReadonlyArray<MessagePart> => {
  if (typeof message.content === "string") return isBlank(message.content) ? [] : [{ type: "text", text: message.content }]
  const parts: ReadonlyArray<MessagePart> = message.content
  return parts.filter((p) => (p.type === "text" ? !isBlank(p.text) : p.type === "reasoning" ? keep(p) : true))
}

/** Every message of a request, cleaned, with its original index. */
export const cleanMessages = (messages: ReadonlyArray<Message>, keep: KeepReasoning = dropReasoning): ReadonlyArray<CleanMessage> =>
  messages.map((m, index) => ({ index, role: m.role, parts: cleanParts(m, keep) }))

/** Reasoning parts of `messages` that `keep` refuses, for a plugin's notes. */
export const droppedReasoning = (messages: ReadonlyArray<Message>, keep: KeepReasoning = dropReasoning): number =>
  messages.reduce((n, m) => n + (typeof m.content === "string" || m.role !== "assistant" ? 0 : m.content.filter((p) => p.type === "reasoning" && !keep(p)).length), 0)

/**
 * The part of a message a cache marker goes on: the last one that is not reasoning (a
 * breakpoint may not sit on a thinking block), or -1 when there is none.
 */
export const markablePart = (message: CleanMessage): number => {
  for (let k = message.parts.length - 1; k >= 0; k--) if (message.parts[k]!.type !== "reasoning") return k
  return -1
}

/**
 * Throw a `PlacementError` when a request's tool calls and results do not pair up (a
 * call not answered in the next message, a result without its call, a reused id): every
 * provider rejects such a body, so no plugin sends one.
 */
export const assertToolPairs = (provider: string, messages: ReadonlyArray<Message>): void => {
  const problem = historyProblems(messages)[0]
  if (problem !== undefined) throw new PlacementError({ provider, reason: `${problem.issue}; keep each tool call and its result together in the request` })
}

/**
 * The conversation's roles as Anthropic-style APIs see them: a `tool` message is a user
 * turn (its results become the first blocks of that user message).
 */
export const toolAsUser = (messages: ReadonlyArray<CleanMessage>): ReadonlyArray<CleanMessage> =>
  messages.map((m) => (m.role === "tool" ? { ...m, role: "user" } : m))

/**
 * Split cleaned messages into the leading system messages (a provider's top-level
 * system field) and the conversation. A system message after the first non-system
 * message becomes a user message, since no provider here accepts one mid-conversation.
 */
export const splitSystem = (messages: ReadonlyArray<CleanMessage>): {
  readonly system: ReadonlyArray<CleanMessage>
  readonly conversation: ReadonlyArray<CleanMessage>
  readonly demoted: ReadonlyArray<number>
} => {
  const firstOther = messages.findIndex((m) => m.role !== "system")
  const head = firstOther < 0 ? messages.length : firstOther
  const demoted: Array<number> = []
  const conversation = messages.slice(head).map((m): CleanMessage => {
    if (m.role !== "system") return m
    demoted.push(m.index)
    return { ...m, role: "user" }
  })
  return { system: messages.slice(0, head), conversation, demoted }
}

/** A run of consecutive same-role messages rendered as one provider message. */
export interface MergedMessage {
  readonly role: Role
  readonly members: ReadonlyArray<CleanMessage>
}

/**
 * Group consecutive non-empty messages of the same role (Bedrock Converse requires
 * alternating roles; Anthropic merges them server-side anyway). Empty messages vanish.
 */
export const mergeSameRole = (messages: ReadonlyArray<CleanMessage>): ReadonlyArray<MergedMessage> => {
  const out: Array<{ role: Role; members: Array<CleanMessage> }> = []
  for (const m of messages) {
    if (m.parts.length === 0) continue
    const last = out[out.length - 1]
    if (last !== undefined && last.role === m.role) last.members.push(m)
    else out.push({ role: m.role, members: [m] })
  }
  return out
}

/** Parse a `data:` URL into its media type and base64 payload, or undefined for other URLs. */
export const parseDataUrl = (url: string): { readonly mediaType: string; readonly base64: string } | undefined => {
  const match = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,(.*)$/s.exec(url)
  if (match === null) return undefined
  return { mediaType: match[1] ?? "application/octet-stream", base64: match[3] ?? "" }
}
