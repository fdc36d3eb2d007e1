/**
 * The Bedrock plugin. Converse: `cachePoint` blocks appended after the cached content
 * in `system`, `messages[].content` and `toolConfig.tools`, each checkpoint at least
 * k × the model minimum, roles alternating, no blank text. InvokeModel: the Anthropic
 * body with `anthropic_version` (no automatic marker, which InvokeModel rejects).
 */
import { isToolError, PlacementError, type CacheTtl, type ContentPart, type JsonSchemaObject, type MessagePart, type NeutralRequest, type ToolResultOutput } from "@strata/core"
import type { Schema } from "effect"
import { assertToolPairs, markablePart, mergeSameRole, parseDataUrl, splitSystem, toolAsUser } from "../rules/content.ts"
import { planBreakpoints } from "../rules/plan.ts"
import { serializeBody } from "../rules/serialize.ts"
import {
  anthropicReasoning,
  defaultMaxTokens,
  planAnthropic,
  renderAnthropicParts,
  type AnthropicMessage,
  type AnthropicOptions,
  type AnthropicTextBlock,
  type AnthropicTool
} from "./anthropic.ts"
import {
  makePlugin,
  placedFrom,
  placementLayer,
  requestTools,
  result,
  leadingToolTokens,
  type CommonOptions,
  type PlacementPlugin,
  type PluginResult
} from "./common.ts"
import { decodeBedrockConverseReply } from "../replies.ts"
import { decodeBedrockUsage } from "../usage.ts"
import { limitsFor, reasoningNote } from "../internal/plugins/helpers.ts"

/** A Converse cache checkpoint; `ttl` only for 1 h (5 min is the default). */
export interface BedrockCachePoint {
  cachePoint: { type: "default"; ttl?: "5m" | "1h" }
}

export type BedrockImageFormat = "png" | "jpeg" | "gif" | "webp"

export type BedrockImageBlock = { image: { format: BedrockImageFormat; source: { bytes: Uint8Array } } }

export type BedrockToolResultContent = { text: string } | { json: BedrockDocument } | BedrockImageBlock

export type BedrockContentBlock =
  | { text: string }
  | BedrockImageBlock
  | { toolUse: { toolUseId: string; name: string; input: BedrockDocument } }
  | { toolResult: { toolUseId: string; content: Array<BedrockToolResultContent>; status?: "error" } }
  | { reasoningContent: { reasoningText: { text: string; signature: string } } | { redactedContent: Uint8Array } }
  | BedrockCachePoint

export type BedrockSystemBlock = { text: string } | BedrockCachePoint

export interface BedrockMessage {
  role: "user" | "assistant"
  content: Array<BedrockContentBlock>
}

/** JSON as the AWS SDK types documents (`DocumentType`). */
export type BedrockDocument = null | boolean | number | string | Array<BedrockDocument> | { [key: string]: BedrockDocument }

export type BedrockTool =
  | { toolSpec: { name: string; description?: string; inputSchema: { json: BedrockDocument } } }
  | BedrockCachePoint

// Tool schemas are JSON by contract (ToolDefinition); only their static type is wider.
const asDocument = (schema: JsonSchemaObject): BedrockDocument => schema as unknown as BedrockDocument

/** A JSON value as the SDK's mutable `DocumentType` (a copy; the input stays untouched). */
const toDocument = (value: Schema.Json): BedrockDocument => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(toDocument)
  const out: { [key: string]: BedrockDocument } = {}
  for (const [k, v] of Object.entries(value)) out[k] = toDocument(v)
  return out
}

/** The Converse request Strata emits (a subset of `ConverseCommandInput`). */
export interface BedrockConverseBody {
  modelId: string
  system?: Array<BedrockSystemBlock>
  messages: Array<BedrockMessage>
  toolConfig?: { tools: Array<BedrockTool> }
  inferenceConfig?: { maxTokens: number }
}

/** Options of the Bedrock Converse plugin. */
export interface BedrockOptions extends CommonOptions {
  /** `inferenceConfig.maxTokens`; omitted when undefined (the model's default applies). */
  readonly maxTokens?: number
  /** Put a checkpoint after the tool definitions (takes one of the 4 slots). */
  readonly cacheTools?: boolean
}

const cachePoint = (ttl: CacheTtl | undefined): BedrockCachePoint =>
  ttl === "1h" ? { cachePoint: { type: "default", ttl: "1h" } } : { cachePoint: { type: "default" } }

const FORMATS: Readonly<Record<string, BedrockImageFormat>> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp"
}

const imageOrText = (provider: string, part: ContentPart): { text: string } | BedrockImageBlock => {
  if (part.type === "text") return { text: part.text }
  const data = parseDataUrl(part.url)
  if (data === undefined) {
    throw new PlacementError({ provider, reason: "Converse takes images as bytes (or S3); pass the image as a data: URL" })
  }
  const format = FORMATS[part.mediaType ?? data.mediaType]
  if (format === undefined) throw new PlacementError({ provider, reason: `image type ${part.mediaType ?? data.mediaType} is not accepted; use png, jpeg, gif or webp` })
  return { image: { format, source: { bytes: new Uint8Array(Buffer.from(data.base64, "base64")) } } }
}

const toolResultContent = (provider: string, output: ToolResultOutput): Array<BedrockToolResultContent> => {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value.length === 0 ? [] : [{ text: output.value }]
    case "json":
    case "error-json":
      // Converse takes a JSON object as `json`; any other JSON value goes as its text.
      return typeof output.value === "object" && output.value !== null && !Array.isArray(output.value)
        ? [{ json: toDocument(output.value) }]
        : [{ text: JSON.stringify(output.value) }]
    case "content":
      return output.value.map((p) => imageOrText(provider, p))
  }
}

/** One neutral part as a Converse content block (reasoning already filtered by `anthropicReasoning`). */
const contentBlock = (provider: string, part: MessagePart): BedrockContentBlock => {
  switch (part.type) {
    case "text":
    case "image":
      return imageOrText(provider, part)
    case "tool-call":
      return { toolUse: { toolUseId: part.toolCallId, name: part.toolName, input: toDocument(part.input) } }
    case "tool-result":
      return {
        toolResult: {
          toolUseId: part.toolCallId,
          content: toolResultContent(provider, part.output),
          ...(isToolError(part.output) ? { status: "error" as const } : {})
        }
      }
    case "reasoning":
      return part.redactedData !== undefined
        ? { reasoningContent: { redactedContent: new Uint8Array(Buffer.from(part.redactedData, "base64")) } }
        : { reasoningContent: { reasoningText: { text: part.text, signature: part.signature ?? "" } } }
  }
}

/**
 * Build a Bedrock Converse request. Throws `PlacementError` when the request cannot be
 * expressed (no message, an image given by URL).
 *
 * @example
 * ```ts no-run
 * import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeBedrockConverse } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body } = placeBedrockConverse(request, { model: "us.anthropic.claude-sonnet-4-6" })
 * await new BedrockRuntimeClient({}).send(new ConverseCommand(body))
 * ```
 */
export const placeBedrockConverse = (request: NeutralRequest, options: BedrockOptions = {}): PluginResult<BedrockConverseBody> => {
  const provider = "bedrock"
  assertToolPairs(provider, request.messages)
  const modelId = options.model ?? request.model
  const limits = limitsFor("bedrock", modelId, options)
  const tools = requestTools(request, options)
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens: leadingToolTokens(request, options, tools),
    toolMarker: options.cacheTools === true && tools.length > 0,
    mode: "markers",
    spacing: "stacked",
    reasoning: anthropicReasoning
  })
  const marks = new Map(plan.breakpoints.map((b) => [b.messageIndex, b.ttl] as const))
  const locations = new Map<number, string>()
  const { system: systemMessages, conversation } = splitSystem(plan.messages)

  const system: Array<BedrockSystemBlock> = []
  for (const m of systemMessages) {
    for (const part of m.parts) {
      if (part.type !== "text") throw new PlacementError({ provider, reason: `system message ${m.index} has an image; the system prompt takes text only` })
      system.push({ text: part.text })
    }
    if (marks.has(m.index)) {
      locations.set(m.index, `system[${system.length}]`)
      system.push(cachePoint(marks.get(m.index)))
    }
  }

  // Tool results are a user turn, first in it; roles alternate, so same-role runs merge.
  const messages: Array<BedrockMessage> = []
  for (const merged of mergeSameRole(toolAsUser(conversation))) {
    const content: Array<BedrockContentBlock> = []
    for (const m of merged.members) {
      // The checkpoint follows the last block that is not reasoning.
      const markAt = marks.has(m.index) ? markablePart(m) : -1
      m.parts.forEach((part, k) => {
        content.push(contentBlock(provider, part))
        if (k !== markAt) return
        locations.set(m.index, `messages[${messages.length}].content[${content.length}]`)
        content.push(cachePoint(marks.get(m.index)))
      })
    }
    messages.push({ role: merged.role === "assistant" ? "assistant" : "user", content })
  }
  if (messages.length === 0) throw new PlacementError({ provider, reason: "the request has no user or assistant message; Converse needs at least one" })

  const toolMark = plan.breakpoints.find((b) => b.target === "tools")
  const renderedTools: Array<BedrockTool> = tools.map((t) => ({
    toolSpec: t.description === undefined
      ? { name: t.name, inputSchema: { json: asDocument(t.inputSchema) } }
      : { name: t.name, description: t.description, inputSchema: { json: asDocument(t.inputSchema) } }
  }))
  if (toolMark !== undefined) renderedTools.push(cachePoint(toolMark.ttl))

  const body: BedrockConverseBody = {
    modelId,
    ...(system.length > 0 ? { system } : {}),
    messages,
    ...(renderedTools.length > 0 ? { toolConfig: { tools: renderedTools } } : {}),
    ...(options.maxTokens === undefined ? {} : { inferenceConfig: { maxTokens: options.maxTokens } })
  }
  const locate = (index: number, target: "tools" | "message") =>
    target === "tools" ? `toolConfig.tools[${tools.length}]` : (locations.get(index) ?? `message ${index}`)
  const notes = [...reasoningNote(request, anthropicReasoning, "Converse takes back only Claude reasoning with its signature (or redacted content)"), ...plan.notes]
  return result(provider, body, placedFrom(plan, locate), plan.dropped, notes)
}

/** The InvokeModel JSON payload for Claude: the Messages body with `anthropic_version`, without `model`. */
export interface BedrockInvokeBody {
  anthropic_version: "bedrock-2023-05-31"
  max_tokens: number
  system?: Array<AnthropicTextBlock>
  tools?: Array<AnthropicTool>
  messages: Array<AnthropicMessage>
}

/**
 * Build a Bedrock InvokeModel payload for Claude (`cache_control` on blocks). The
 * automatic top-level marker is never emitted: InvokeModel does not accept it.
 *
 * @example
 * ```ts no-run
 * import { BedrockRuntimeClient, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime"
 * import type { NeutralRequest } from "@strata/core"
 * import { invokeModelInput, placeBedrockInvoke } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const placed = placeBedrockInvoke(request, { model: "anthropic.claude-sonnet-4-6" })
 * await new BedrockRuntimeClient({}).send(new InvokeModelCommand(invokeModelInput(placed, "anthropic.claude-sonnet-4-6")))
 * ```
 */
export const placeBedrockInvoke = (request: NeutralRequest, options: AnthropicOptions = {}): PluginResult<BedrockInvokeBody> => {
  const provider = "bedrock"
  const tools = requestTools(request, options)
  const planned = planAnthropic("bedrock", request, options, false)
  const parts = renderAnthropicParts(provider, planned.plan, tools)
  if (parts.messages.length === 0) throw new PlacementError({ provider, reason: "the request has no user or assistant message; InvokeModel needs at least one" })
  const notes = options.automatic === true
    ? ["automatic marker not emitted: Bedrock InvokeModel does not accept top-level cache_control", ...planned.notes]
    : planned.notes
  const body: BedrockInvokeBody = {
    anthropic_version: "bedrock-2023-05-31",
    max_tokens: options.maxTokens ?? defaultMaxTokens(options.model ?? request.model, { stream: options.stream }),
    ...(parts.system.length > 0 ? { system: parts.system } : {}),
    ...(parts.tools.length > 0 ? { tools: parts.tools } : {}),
    messages: parts.messages
  }
  return result(provider, body, placedFrom(planned.plan, parts.locate), planned.plan.dropped, notes)
}

/** The `InvokeModelCommand` input for a placed InvokeModel payload (body serialized byte-stably). */
export const invokeModelInput = (
  placed: PluginResult<BedrockInvokeBody>,
  modelId: string
): { modelId: string; contentType: "application/json"; accept: "application/json"; body: string } => ({
  modelId,
  contentType: "application/json",
  accept: "application/json",
  body: serializeBody(placed.body)
})

/**
 * The Bedrock Converse plugin: `ConverseCommandInput` bodies (send with `new
 * ConverseCommand(body)`), replies and usage decoded from `ConverseCommandOutput`. Call it
 * with options to configure it. `placeInvoke` / `layerInvoke` emit InvokeModel bodies.
 *
 * @example
 * ```ts
 * import { BedrockPlacement } from "@strata/providers"
 * const provider = BedrockPlacement({ model: "us.anthropic.claude-sonnet-4-6" })
 * const layer = BedrockPlacement.layer({ model: "us.anthropic.claude-sonnet-4-6" })
 * ```
 */
export const BedrockPlacement: PlacementPlugin<BedrockConverseBody, BedrockOptions> & {
  readonly placeInvoke: typeof placeBedrockInvoke
  readonly layerInvoke: (options?: AnthropicOptions) => ReturnType<typeof placementLayer>
} = Object.assign(
  makePlugin({ provider: "bedrock", place: placeBedrockConverse, decodeReply: decodeBedrockConverseReply, decodeUsage: decodeBedrockUsage }, {}),
  {
    placeInvoke: placeBedrockInvoke,
    layerInvoke: (options: AnthropicOptions = {}) => placementLayer("bedrock", (request) => placeBedrockInvoke(request, options))
  }
)
