/**
 * The Gemini plugin: `generateContent` parameters (the `@google/genai` shape) relying on
 * implicit prefix caching, and optionally an explicit `cachedContents` resource for the
 * cached tiers: the create request for everything up to the last breakpoint, and a
 * request that references it and carries only the rest.
 */
import {
  isToolError,
  PlacementError,
  sha256,
  toolOutputText,
  type ContentPart,
  type MessagePart,
  type NeutralRequest,
  type ReasoningPart,
  type ToolResultPart
} from "@strata/core"
import { assertToolPairs, mergeSameRole, parseDataUrl, splitSystem, toolAsUser, type CleanMessage } from "../rules/content.ts"
import { planBreakpoints } from "../rules/plan.ts"
import { serializeBody } from "../rules/serialize.ts"
import {
  makePlugin,
  placedFrom,
  requestTools,
  result,
  leadingToolTokens,
  type CommonOptions,
  type PlacementPlugin,
  type PluginResult
} from "./common.ts"
import { decodeGeminiReply } from "../replies.ts"
import { decodeGeminiUsage } from "../usage.ts"
import { limitsFor, reasoningNote } from "../internal/plugins/helpers.ts"

type GeminiMedia = { inlineData: { mimeType: string; data: string } } | { fileData: { fileUri: string; mimeType: string } }

export interface GeminiFunctionCall {
  functionCall: { id: string; name: string; args: Record<string, unknown> }
  thoughtSignature?: string
}

export interface GeminiFunctionResponse {
  functionResponse: { id: string; name: string; response: Record<string, unknown>; parts?: Array<GeminiMedia> }
}

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | GeminiMedia
  | GeminiFunctionCall
  | GeminiFunctionResponse

export interface GeminiContent {
  role: "user" | "model"
  parts: Array<GeminiPart>
}

export interface GeminiTool {
  functionDeclarations: Array<{ name: string; description?: string; parametersJsonSchema: Record<string, unknown> }>
}

export interface GeminiConfig {
  systemInstruction?: { parts: Array<{ text: string }> }
  tools?: Array<GeminiTool>
  cachedContent?: string
  maxOutputTokens?: number
}

/** `generateContent` parameters Strata emits (a subset of `GenerateContentParameters`). */
export interface GeminiBody {
  model: string
  contents: Array<GeminiContent>
  config?: GeminiConfig
}

/** `caches.create` parameters for an explicit cache (a subset of `CreateCachedContentParameters`). */
export interface GeminiCacheCreate {
  model: string
  config: {
    displayName: string
    ttl: string
    systemInstruction?: { parts: Array<{ text: string }> }
    tools?: Array<GeminiTool>
    contents: Array<GeminiContent>
  }
}

/** Options of the Gemini plugin. */
export interface GeminiOptions extends CommonOptions {
  /** `config.maxOutputTokens`; omitted when undefined. */
  readonly maxTokens?: number
  /**
   * Use an explicit cache for the cached tiers. Without `name` the body stays a full
   * implicit request and `cache.create` says what to create; call again with the
   * created cache's `name` to get the request that references it.
   */
  readonly explicitCache?: {
    readonly name?: string
    /** Cache lifetime in seconds; default 3600 (Gemini's default). */
    readonly ttlSeconds?: number
    /** Default `strata-<key>`, so an existing cache can be found by its display name. */
    readonly displayName?: string
  }
}

/** A Gemini result: the request, and the explicit cache it uses or would use. */
export interface GeminiResult extends PluginResult<GeminiBody> {
  readonly cache?: {
    /** Hash of the cached prefix (model, system, tools, contents); equal prefixes, equal keys. */
    readonly key: string
    readonly create: GeminiCacheCreate
    /** True when `body` references the cache (a `name` was given). */
    readonly used: boolean
  }
}

/** Reasoning Gemini takes back: its own thoughts and thought signatures. */
export const geminiReasoning = (part: ReasoningPart): boolean => part.provider === "gemini"

const media = (provider: string, p: Extract<ContentPart, { type: "image" }>): GeminiMedia => {
  const data = parseDataUrl(p.url)
  if (data !== undefined) return { inlineData: { mimeType: p.mediaType ?? data.mediaType, data: data.base64 } }
  if (p.mediaType === undefined) throw new PlacementError({ provider, reason: `image "${p.url.slice(0, 40)}" needs a mediaType for Gemini fileData` })
  return { fileData: { fileUri: p.url, mimeType: p.mediaType } }
}

/** `functionResponse.response`: `{ output }` or `{ error }` as Gemini documents it; images go to `parts`. */
const functionResponse = (provider: string, r: ToolResultPart): GeminiFunctionResponse => {
  const { output } = r
  const value = output.type === "json" || output.type === "error-json" ? output.value : toolOutputText(output)
  const images = output.type === "content" ? output.value.flatMap((p) => (p.type === "image" ? [media(provider, p)] : [])) : []
  return {
    functionResponse: {
      id: r.toolCallId,
      name: r.toolName,
      response: isToolError(output) ? { error: value } : { output: value },
      ...(images.length > 0 ? { parts: images } : {})
    }
  }
}

/**
 * A message's parts as Gemini parts. A Gemini reasoning part with text is a thought
 * (`thought: true`); one without text carries only the thought signature of the part
 * that follows it, and the signature goes back on that part, byte-exact.
 */
const geminiParts = (provider: string, parts: ReadonlyArray<MessagePart>): Array<GeminiPart> => {
  const out: Array<GeminiPart> = []
  let signature: string | undefined
  const push = (part: GeminiPart) => {
    out.push(signature === undefined ? part : { ...part, thoughtSignature: signature })
    signature = undefined
  }
  for (const p of parts) {
    switch (p.type) {
      case "text":
        push({ text: p.text })
        break
      case "image":
        push(media(provider, p))
        break
      case "tool-call":
        push({ functionCall: { id: p.toolCallId, name: p.toolName, args: { ...p.input } } })
        break
      case "tool-result":
        push(functionResponse(provider, p))
        break
      case "reasoning":
        if (p.text.length > 0) push({ text: p.text, thought: true, ...(p.signature === undefined ? {} : { thoughtSignature: p.signature }) })
        else signature = p.signature
    }
  }
  if (signature !== undefined) out.push({ text: "", thoughtSignature: signature })
  return out
}

const renderContents = (provider: string, messages: ReadonlyArray<CleanMessage>, locations: Map<number, string>, offset: number): Array<GeminiContent> =>
  mergeSameRole(toolAsUser(messages)).map((merged, i) => {
    const parts: Array<GeminiPart> = []
    for (const m of merged.members) {
      parts.push(...geminiParts(provider, m.parts))
      locations.set(m.index, `contents[${offset + i}].parts[${parts.length - 1}]`)
    }
    return { role: merged.role === "assistant" ? "model" : "user", parts }
  })

/**
 * Build Gemini `generateContent` parameters (for `ai.models.generateContent(body)`).
 *
 * @example
 * ```ts no-run
 * import { GoogleGenAI } from "@google/genai"
 * import type { NeutralRequest } from "@strata/core"
 * import { placeGemini } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const ai = new GoogleGenAI({})
 * const first = placeGemini(request, { explicitCache: {} })
 * const cache = await ai.caches.create(first.cache!.create)
 * const { body } = placeGemini(request, { explicitCache: { name: cache.name! } })
 * await ai.models.generateContent(body)
 * ```
 */
export const placeGemini = (request: NeutralRequest, options: GeminiOptions = {}): GeminiResult => {
  const provider = "gemini"
  assertToolPairs(provider, request.messages)
  const model = options.model ?? request.model
  const limits = limitsFor("gemini", model, options)
  const tools = requestTools(request, options)
  const notes: Array<string> = reasoningNote(request, geminiReasoning, "Gemini takes back only its own thoughts and thought signatures")
  const explicitTtl = limits.ttls.find((t) => t.name === "explicit")
  let explicit = options.explicitCache
  if (explicit !== undefined && explicitTtl === undefined) {
    notes.push(`explicit cache not used: ${limits.family} does not support cachedContents; implicit caching applies`)
    explicit = undefined
  }
  const plan = planBreakpoints(request, {
    limits,
    toolTokens: leadingToolTokens(request, options, tools),
    reasoning: geminiReasoning,
    // One cache reference per request: explicit caching keeps only the last breakpoint.
    ...(explicit === undefined ? { mode: "automatic" as const } : { mode: "markers" as const, maxBreakpoints: 1 })
  })
  notes.push(...plan.notes)
  const { system: systemMessages, conversation } = splitSystem(plan.messages)
  const systemTexts: Array<{ text: string }> = []
  for (const m of systemMessages) {
    for (const p of m.parts) {
      if (p.type !== "text") throw new PlacementError({ provider, reason: `system message ${m.index} has an image; the system instruction takes text only` })
      systemTexts.push({ text: p.text })
    }
  }
  const systemInstruction = systemTexts.length > 0 ? { parts: systemTexts } : undefined
  const geminiTools: Array<GeminiTool> | undefined = tools.length > 0
    ? [{ functionDeclarations: tools.map((t) => (t.description === undefined ? { name: t.name, parametersJsonSchema: t.inputSchema } : { name: t.name, description: t.description, parametersJsonSchema: t.inputSchema })) }]
    : undefined
  const locations = new Map<number, string>()
  for (const m of systemMessages) locations.set(m.index, "config.systemInstruction")
  const maxTokens = options.maxTokens === undefined ? {} : { maxOutputTokens: options.maxTokens }
  const last = plan.breakpoints[plan.breakpoints.length - 1]

  if (explicit === undefined || last === undefined) {
    if (explicit !== undefined) notes.push("explicit cache not used: no breakpoint has a cacheable prefix")
    const contents = renderContents(provider, conversation, locations, 0)
    if (contents.length === 0) throw new PlacementError({ provider, reason: "the request has no user or model message" })
    const config: GeminiConfig = {
      ...(systemInstruction === undefined ? {} : { systemInstruction }),
      ...(geminiTools === undefined ? {} : { tools: geminiTools }),
      ...maxTokens
    }
    const body: GeminiBody = { model, contents, ...(Object.keys(config).length > 0 ? { config } : {}) }
    const placed = placedFrom(plan, (i) => `${locations.get(i) ?? `message ${i}`} (implicit prefix)`)
    return result(provider, body, placed, plan.dropped, notes)
  }

  // Explicit: the cache holds system, tools and the conversation through the last breakpoint.
  const cachedMessages = conversation.filter((m) => m.index <= last.messageIndex)
  const restMessages = conversation.filter((m) => m.index > last.messageIndex)
  const cachedContents = renderContents(provider, cachedMessages, locations, 0)
  const prefixCreate = {
    model,
    ...(systemInstruction === undefined ? {} : { systemInstruction }),
    ...(geminiTools === undefined ? {} : { tools: geminiTools }),
    contents: cachedContents
  }
  const key = sha256(serializeBody(prefixCreate)).slice(0, 16)
  const create: GeminiCacheCreate = {
    model,
    config: {
      displayName: explicit.displayName ?? `strata-${key}`,
      ttl: `${explicit.ttlSeconds ?? explicitTtl!.seconds}s`,
      ...(systemInstruction === undefined ? {} : { systemInstruction }),
      ...(geminiTools === undefined ? {} : { tools: geminiTools }),
      contents: cachedContents
    }
  }
  const placedCache = placedFrom(plan, (i) => `cachedContents ${locations.get(i) ?? `message ${i}`}`)
  if (explicit.name === undefined) {
    const contents = [...cachedContents, ...renderContents(provider, restMessages, locations, cachedContents.length)]
    const config: GeminiConfig = {
      ...(systemInstruction === undefined ? {} : { systemInstruction }),
      ...(geminiTools === undefined ? {} : { tools: geminiTools }),
      ...maxTokens
    }
    const body: GeminiBody = { model, contents, ...(Object.keys(config).length > 0 ? { config } : {}) }
    notes.push(`explicit cache ${create.config.displayName} not referenced yet: create it with cache.create, then call again with its name`)
    return { ...result(provider, body, placedCache, plan.dropped, notes), cache: { key, create, used: false } }
  }
  // Gemini rejects system_instruction, tools or tool_config next to cachedContent: they live in the cache.
  const rest = renderContents(provider, restMessages, new Map(), 0)
  if (rest.length === 0) throw new PlacementError({ provider, reason: "nothing follows the cached prefix; a request needs at least one new message" })
  const body: GeminiBody = { model, contents: rest, config: { cachedContent: explicit.name, ...maxTokens } }
  return { ...result(provider, body, placedCache, plan.dropped, notes), cache: { key, create, used: true } }
}

/**
 * The Gemini plugin: `generateContent` parameters (`ai.models.generateContent(body)`),
 * replies and usage decoded from its `GenerateContentResponse`. Call it with options to
 * configure it.
 *
 * @example
 * ```ts
 * import { GeminiPlacement } from "@strata/providers"
 * const provider = GeminiPlacement({ model: "gemini-2.5-flash" })
 * const layer = GeminiPlacement.layer({ model: "gemini-2.5-flash" })
 * ```
 */
export const GeminiPlacement: PlacementPlugin<GeminiBody, GeminiOptions> = makePlugin(
  { provider: "gemini", place: placeGemini, decodeReply: decodeGeminiReply, decodeUsage: decodeGeminiUsage },
  {}
)
