/**
 * Content rules every plugin applies before rendering: no empty or whitespace-only
 * text blocks (Bedrock and Anthropic reject them), string content as parts, and the
 * split of leading system messages from the conversation.
 */
import type { ContentPart, Message, Role } from "@strata/core"

/** A message with its content as parts, empty text removed; `index` is its position in the request. */
export interface CleanMessage {
  readonly index: number
  readonly role: Role
  readonly parts: ReadonlyArray<ContentPart>
}

/** True when a text is empty or only whitespace. */
export const isBlank = (text: string): boolean => text.trim().length === 0

/**
 * A message's content as parts without blank text parts. A message may end up with no
 * parts; renderers skip it and breakpoints move back (see `planBreakpoints`).
 *
 * @example
 * ```ts
 * cleanParts({ role: "user", content: "" }) // []
 * cleanParts({ role: "user", content: "hi" }) // [{ type: "text", text: "hi" }]
 * ```
 */
export const cleanParts = (message: Message): ReadonlyArray<ContentPart> =>
  typeof message.content === "string"
    ? isBlank(message.content) ? [] : [{ type: "text", text: message.content }]
    : message.content.filter((p) => p.type !== "text" || !isBlank(p.text))

/** Every message of a request, cleaned, with its original index. */
export const cleanMessages = (messages: ReadonlyArray<Message>): ReadonlyArray<CleanMessage> =>
  messages.map((m, index) => ({ index, role: m.role, parts: cleanParts(m) }))

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
