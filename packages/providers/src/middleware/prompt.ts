/**
 * The AI SDK's prompt as plain data: the structural shape shared by `ModelMessage`
 * (what an application passes to `generateText`) and the language-model prompt a
 * middleware sees (`LanguageModelV3Prompt` on ai 6, V4 on ai 7), its cacheable blocks,
 * and its rendering as the native body `@ai-sdk/anthropic` or `@ai-sdk/amazon-bedrock`
 * sends, so the simulators can score it without a network.
 */
import { estimateTokens, IMAGE_TOKENS } from "@strata/core"
import { canonicalJson, isRecord } from "../internal/json.ts"

/** Provider options as the AI SDK carries them: `{ anthropic: { cacheControl: ... } }`. */
export type PromptProviderOptions = Readonly<Record<string, Readonly<Record<string, unknown>>>>

/** A content part: `text`, `file`, `image`, `reasoning`, `tool-call`, `tool-result`... */
export interface PromptPart {
  readonly type: string
  readonly providerOptions?: PromptProviderOptions | undefined
}

/** One message of a prompt (system content is a string; others a string or parts). */
export interface PromptMessage {
  readonly role: string
  readonly content: string | ReadonlyArray<PromptPart>
  readonly providerOptions?: PromptProviderOptions | undefined
}

export type Prompt = ReadonlyArray<PromptMessage>

/**
 * A tool definition as a call's options carry it (`{ type: "function", name, inputSchema }`
 * or a provider tool): the providers put the tools first in the cached prefix.
 */
export interface PromptTool {
  readonly type: string
  readonly name: string
  readonly providerOptions?: PromptProviderOptions | undefined
}

/** Identities leave provider options out: markers and metadata do not change what is cached. */
const NO_OPTIONS: ReadonlySet<string> = new Set(["providerOptions"])

/** The tool definitions' identity (without provider options) and estimated tokens; empty when there are none. */
export const toolsPrefix = (
  tools: ReadonlyArray<PromptTool> | undefined,
  options: { readonly countTokens?: ((text: string) => number) | undefined } = {}
): { readonly identity: string; readonly tokens: number } => {
  if (tools === undefined || tools.length === 0) return { identity: "", tokens: 0 }
  const identity = canonicalJson(tools, NO_OPTIONS)
  return { identity, tokens: (options.countTokens ?? estimateTokens)(identity) }
}

/** Which native body a prompt renders to. */
export type NativeTarget = "anthropic" | "bedrock"

/** One cacheable block of a prompt: a system message, or one content part. */
export interface AiSdkPromptBlock {
  readonly message: number
  /** Index of the part within the message; -1 for string content. */
  readonly part: number
  /** The part's type (`text` for string content and system messages). */
  readonly kind: string
  /** Content identity without provider options (markers and metadata). */
  readonly identity: string
  readonly tokens: number
  /** True for the last block of its message. */
  readonly messageEnd: boolean
}

const field = (part: PromptPart, key: string): unknown => (isRecord(part) ? part[key] : undefined)
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** Parts of a message, string content as one text part. */
export const partsOf = (message: PromptMessage): ReadonlyArray<PromptPart> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content } as PromptPart] : message.content

const partTokens = (part: PromptPart, count: (text: string) => number, image: number): number => {
  switch (part.type) {
    case "text":
    case "reasoning":
      return count(str(field(part, "text")) ?? "")
    case "image":
    case "file":
      return image
    default:
      return count(canonicalJson(part, NO_OPTIONS))
  }
}

/**
 * The blocks a prompt puts in the provider's prefix, in order: each system message,
 * then every content part. This is the unit of Anthropic's and Bedrock's 20-block
 * lookback window.
 */
export const aiSdkPromptBlocks = (
  prompt: Prompt,
  options: { readonly countTokens?: ((text: string) => number) | undefined; readonly imageTokens?: number | undefined } = {}
): ReadonlyArray<AiSdkPromptBlock> => {
  const count = options.countTokens ?? estimateTokens
  const image = options.imageTokens ?? IMAGE_TOKENS
  const blocks: Array<AiSdkPromptBlock> = []
  prompt.forEach((message, m) => {
    if (typeof message.content === "string") {
      blocks.push({ message: m, part: -1, kind: "text", identity: `${message.role}\u0000${JSON.stringify(message.content)}`, tokens: count(message.content), messageEnd: true })
      return
    }
    message.content.forEach((part, p) => {
      blocks.push({
        message: m,
        part: p,
        kind: part.type,
        identity: `${message.role}\u0000${canonicalJson(part, NO_OPTIONS)}`,
        tokens: partTokens(part, count, image),
        messageEnd: p === message.content.length - 1
      })
    })
  })
  return blocks
}

// ---------------------------------------------------------------------------------
// Native rendering. Mirrors @ai-sdk/anthropic 4.x for text, files, reasoning with a
// signature, tool calls and tool results (checked against its wire bodies in the
// middleware tests); Bedrock follows @ai-sdk/amazon-bedrock's documented shapes.

/** The cache marker a message or part asks for, in either provider's spelling. */
export const markerOf = (options: PromptProviderOptions | undefined, target: NativeTarget): Record<string, unknown> | undefined => {
  if (options === undefined) return undefined
  if (target === "bedrock") {
    const cp = options["bedrock"]?.["cachePoint"]
    return isRecord(cp) ? cp : undefined
  }
  const a = options["anthropic"]
  const cc = a?.["cacheControl"] ?? a?.["cache_control"]
  return isRecord(cc) ? cc : undefined
}

/** Tool-call input as Anthropic takes it: an object (JSON strings are parsed). */
const toolInput = (input: unknown): unknown => {
  if (typeof input === "string") {
    try {
      const parsed: unknown = JSON.parse(input)
      if (isRecord(parsed)) return parsed
    } catch {
      // not JSON: sent as rawInvalidInput below
    }
  }
  return isRecord(input) ? input : { rawInvalidInput: input }
}

/** A tool result's output as text or content parts, and whether it is an error. */
const toolOutput = (output: unknown): { readonly content: unknown; readonly error: boolean } => {
  if (!isRecord(output)) return { content: JSON.stringify(output ?? null), error: false }
  const type = str(output["type"])
  const value = output["value"]
  switch (type) {
    case "text":
    case "error-text":
      return { content: str(value) ?? "", error: type === "error-text" }
    case "execution-denied":
      return { content: str(output["reason"]) ?? "Tool call execution denied.", error: false }
    case "content":
      return {
        // Text parts as text blocks; files keep their JSON (identity only: the simulators price them as images).
        content: (Array.isArray(value) ? value : []).flatMap((p: unknown): Array<Record<string, unknown>> =>
          isRecord(p) && p["type"] === "text" ? [{ type: "text", text: str(p["text"]) ?? "" }] : isRecord(p) ? [{ type: "image", source: { type: "base64", media_type: str(p["mediaType"]) ?? "image/png", data: canonicalJson(p["data"]) } }] : []),
        error: false
      }
    default:
      return { content: JSON.stringify(value ?? null), error: type === "error-json" }
  }
}

/** A file or image part as an Anthropic block; the payload does not matter for caching beyond its identity. */
const mediaBlock = (part: PromptPart): Record<string, unknown> => {
  const mediaType = str(field(part, "mediaType")) ?? "image/png"
  const data = field(part, "data") ?? field(part, "image")
  const payload = isRecord(data) && data["type"] === "url" ? { type: "url", url: String(data["url"]) } : { type: "base64", media_type: mediaType, data: canonicalJson(isRecord(data) ? data["data"] : data) }
  return { type: mediaType.startsWith("image/") ? "image" : "document", source: payload }
}

/** A Messages API body (model, system, messages) for a prompt, with its cache markers. */
export const anthropicBodyOf = (prompt: Prompt, model: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> => {
  const system: Array<Record<string, unknown>> = []
  const messages: Array<{ role: string; content: Array<Record<string, unknown>> }> = []
  const marked = (block: Record<string, unknown>, cc: Record<string, unknown> | undefined) => (cc === undefined ? block : { ...block, cache_control: cc })
  prompt.forEach((message, m) => {
    const parts = partsOf(message)
    if (message.role === "system") {
      system.push(marked({ type: "text", text: typeof message.content === "string" ? message.content : "" }, markerOf(message.providerOptions, "anthropic")))
      return
    }
    const role = message.role === "assistant" ? "assistant" : "user"
    const last = messages.at(-1)
    const into = last !== undefined && last.role === role ? last.content : []
    if (into !== last?.content) messages.push({ role, content: into })
    const kept = role === "assistant" ? parts.filter((p) => p.type !== "text" || (str(field(p, "text")) ?? "").length > 0) : parts
    kept.forEach((part, p) => {
      const cc = markerOf(part.providerOptions, "anthropic") ?? (p === kept.length - 1 ? markerOf(message.providerOptions, "anthropic") : undefined)
      const text = str(field(part, "text")) ?? ""
      switch (part.type) {
        case "text": {
          // @ai-sdk/anthropic trims the text of a trailing assistant message (a prefill).
          const trim = role === "assistant" && m === prompt.length - 1 && p === kept.length - 1
          into.push(marked({ type: "text", text: trim ? text.trim() : text }, cc))
          return
        }
        case "image":
        case "file":
          into.push(marked(mediaBlock(part), cc))
          return
        case "reasoning": {
          const signature = str(part.providerOptions?.["anthropic"]?.["signature"])
          const redacted = str(part.providerOptions?.["anthropic"]?.["redactedData"])
          if (signature !== undefined) into.push({ type: "thinking", thinking: text, signature })
          else if (redacted !== undefined) into.push({ type: "redacted_thinking", data: redacted })
          return
        }
        case "tool-call":
          into.push(marked({ type: "tool_use", id: str(field(part, "toolCallId")) ?? "", name: str(field(part, "toolName")) ?? "", input: toolInput(field(part, "input")) }, cc))
          return
        case "tool-result": {
          const out = toolOutput(field(part, "output") ?? field(part, "result"))
          into.push(marked({ type: "tool_result", tool_use_id: str(field(part, "toolCallId")) ?? "", content: out.content, ...(out.error ? { is_error: true } : {}) }, cc))
          return
        }
        default:
          return
      }
    })
    // @ai-sdk/anthropic moves an assistant turn's tool_use blocks after its text.
    if (role === "assistant") {
      const uses = into.filter((b) => b["type"] === "tool_use")
      const rest = into.filter((b) => b["type"] !== "tool_use")
      into.splice(0, into.length, ...rest, ...uses)
    }
  })
  return { model, ...extra, ...(system.length > 0 ? { system } : {}), messages }
}

const BEDROCK_IMAGE_FORMATS: Readonly<Record<string, string>> = { "image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp" }

/** A Converse body (modelId, system, messages) for a prompt, with `cachePoint` blocks. */
export const converseBodyOf = (prompt: Prompt, model: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> => {
  const system: Array<Record<string, unknown>> = []
  const messages: Array<{ role: string; content: Array<Record<string, unknown>> }> = []
  const point = (cp: Record<string, unknown> | undefined, into: Array<Record<string, unknown>>) => {
    if (cp !== undefined) into.push({ cachePoint: { type: "default" } })
  }
  for (const message of prompt) {
    if (message.role === "system") {
      system.push({ text: typeof message.content === "string" ? message.content : "" })
      point(markerOf(message.providerOptions, "bedrock"), system)
      continue
    }
    const role = message.role === "assistant" ? "assistant" : "user"
    const last = messages.at(-1)
    const into = last !== undefined && last.role === role ? last.content : []
    if (into !== last?.content) messages.push({ role, content: into })
    for (const part of partsOf(message)) {
      const text = str(field(part, "text")) ?? ""
      switch (part.type) {
        case "text":
          into.push({ text })
          break
        case "image":
        case "file": {
          const mediaType = str(field(part, "mediaType")) ?? "image/png"
          into.push({ image: { format: BEDROCK_IMAGE_FORMATS[mediaType] ?? "png", source: { bytes: canonicalJson(field(part, "data") ?? field(part, "image")) } } })
          break
        }
        case "reasoning":
          into.push({ reasoningContent: { reasoningText: { text } } })
          break
        case "tool-call":
          into.push({ toolUse: { toolUseId: str(field(part, "toolCallId")) ?? "", name: str(field(part, "toolName")) ?? "", input: toolInput(field(part, "input")) } })
          break
        case "tool-result": {
          const out = toolOutput(field(part, "output") ?? field(part, "result"))
          const content = typeof out.content === "string" ? [{ text: out.content }] : out.content
          into.push({ toolResult: { toolUseId: str(field(part, "toolCallId")) ?? "", content, ...(out.error ? { status: "error" } : {}) } })
          break
        }
        default:
          break
      }
      point(markerOf(part.providerOptions, "bedrock"), into)
    }
    point(markerOf(message.providerOptions, "bedrock"), into)
  }
  return { modelId: model, ...extra, ...(system.length > 0 ? { system } : {}), messages }
}

/**
 * The native body a prompt renders to for a target, as the AI SDK provider would send it.
 *
 * @example
 * ```ts
 * import { nativeBodyOf } from "@strata/providers"
 * const prompt = [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "hi" }] }]
 * nativeBodyOf(prompt, "anthropic", "claude-sonnet-4-6")
 * // { model: "claude-sonnet-4-6", system: [{ type: "text", text: "Be brief." }], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }
 * ```
 */
export const nativeBodyOf = (prompt: Prompt, target: NativeTarget, model: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> =>
  target === "anthropic" ? anthropicBodyOf(prompt, model, extra) : converseBodyOf(prompt, model, extra)
