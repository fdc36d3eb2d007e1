/**
 * The Vercel AI SDK plugin: `system` + `messages` for `generateText` / `streamText` (ai 6
 * and 7), with cache markers as `providerOptions` on the breakpoint messages:
 * `anthropic.cacheControl`, `bedrock.cachePoint`, or for OpenAI and Google no markers.
 * System prompts go in `system` as `SystemModelMessage`s so each can carry a marker: ai 7
 * refuses a system message inside `messages` and ai 6 warns about one on every call.
 */
import { PlacementError, type CacheTtl, type NeutralRequest } from "@strata/core"
import { planBreakpoints } from "../rules/plan.ts"
import { placedFrom, placementLayer, result, toolTokenEstimate, canonicalTools, type CommonOptions, type PluginResult } from "./common.ts"
import { limitsFor, textOnly } from "./internal.ts"
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

/** A system prompt in the AI SDK's `SystemModelMessage` shape (an entry of `system`). */
export interface AiSdkSystemMessage {
  role: "system"
  content: string
  providerOptions?: AiSdkProviderOptions
}

/** A conversation message (`ModelMessage` without the system role, which ai 7 refuses there). */
export type AiSdkMessage =
  | { role: "user"; content: Array<AiSdkTextPart | AiSdkImagePart>; providerOptions?: AiSdkProviderOptions }
  | { role: "assistant"; content: Array<AiSdkTextPart>; providerOptions?: AiSdkProviderOptions }

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


/**
 * Build AI SDK messages with cache `providerOptions`. Tool definitions are not emitted
 * (pass your `tools` to `generateText`); give `tools` or `toolTokens` here only so the
 * prefix sizes count them.
 *
 * @example
 * ```ts
 * import { placeAiSdk } from "@strata/providers"
 * const { body } = placeAiSdk(request, { target: "anthropic" })
 * // body: { system: [{ role: "system", content, providerOptions }], messages: [...] }
 * await generateText({ model: anthropic("claude-sonnet-4-5"), ...body })
 * ```
 */
export const placeAiSdk = (request: NeutralRequest, options: AiSdkOptions = {}): PluginResult<AiSdkBody> => {
  const provider = "ai-sdk"
  const model = options.model ?? request.model
  const guessed = upstreamOf(model)
  const target: AiSdkTarget = options.target ?? (guessed === "gemini" ? "google" : guessed)
  const limits = limitsFor(target === "google" ? "gemini" : target, model, options)
  const toolTokens = options.toolTokens ?? toolTokenEstimate(canonicalTools(options.tools))
  // OpenAI and Gemini cache the longest matching prefix on their own: no markers.
  const automatic = target === "openai" || target === "google"
  const plan = planBreakpoints(request, {
    limits,
    ttl: options.ttl,
    toolTokens,
    ...(automatic ? { mode: "automatic" as const } : { mode: "markers" as const }),
    ...(target === "bedrock" ? { spacing: "stacked" as const } : {})
  })
  const notes: Array<string> = [...plan.notes]
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
    const options_ = marks.has(m.index) ? { providerOptions: marker(target, marks.get(m.index)) } : {}
    // Leading system messages go to `system`; a later one is sent as a user turn, since
    // every provider reads the system prompt as one prefix before the conversation.
    if (m.role === "system" && messages.length === 0) {
      locations.set(m.index, `system[${system.length}]${where}`)
      system.push({ role: "system", content: textOnly(provider, m, "system").join("\n\n"), ...options_ })
      continue
    }
    locations.set(m.index, `messages[${messages.length}]${where}`)
    if (m.role === "assistant") {
      messages.push({ role: "assistant", content: textOnly(provider, m, "assistant").map((text) => ({ type: "text", text })), ...options_ })
    } else {
      messages.push({
        role: "user",
        content: m.parts.map((p): AiSdkTextPart | AiSdkImagePart =>
          p.type === "text" ? { type: "text", text: p.text } : p.mediaType === undefined ? { type: "image", image: p.url } : { type: "image", image: p.url, mediaType: p.mediaType }),
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
