/**
 * Provider-neutral chat messages. Provider plugins translate these into each API's
 * shape; everything before the plugins speaks this type only.
 */
import { Schema } from "effect"

export const Role = Schema.Literals(["system", "user", "assistant"])
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

export const ContentPart = Schema.Union([TextPart, ImagePart])
export type ContentPart = typeof ContentPart.Type

/**
 * A chat message: a role and either a string or a list of parts.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Message } from "@strata/core"
 * const m = Schema.decodeUnknownSync(Message)({ role: "user", content: "hi" })
 * ```
 */
export const Message = Schema.Struct({
  role: Role,
  content: Schema.Union([Schema.String, Schema.Array(ContentPart)])
})
export type Message = typeof Message.Type

/** The text of a message: the string itself, or its text parts joined with blank lines. */
export const messageText = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n")
