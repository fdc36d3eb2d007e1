/**
 * The Vercel AI SDK plugin: `ModelMessage[]` for `generateText` / `streamText`, with
 * cache markers as `providerOptions` on the breakpoint messages: `anthropic.cacheControl`,
 * `bedrock.cachePoint`, or for OpenAI no markers and a call-level `promptCacheKey`.
 * System prompts stay leading `role: "system"` messages so each can carry a marker.
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

export type AiSdkMessage =
  | { role: "system"; content: string; providerOptions?: AiSdkProviderOptions }
  | { role: "user"; content: Array<AiSdkTextPart | AiSdkImagePart>; providerOptions?: AiSdkProviderOptions }
  | { role: "assistant"; content: Array<AiSdkTextPart>; providerOptions?: AiSdkProviderOptions }

/** What to pass to `generateText` / `streamText` besides `model` and `tools`. */
export interface AiSdkBody {
  messages: Array<AiSdkMessage>
  providerOptions?: AiSdkProviderOptions
}

/** Which AI SDK provider package the messages are for. */
export type AiSdkTarget = "anthropic" | "bedrock" | "openai"

/** Options of the AI SDK plugin. */
export interface AiSdkOptions extends CommonOptions {
  /** Default: guessed from the model id like the OpenAI-compatible plugin (gemini is not supported). */
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
 * await generateText({ model: anthropic("claude-sonnet-4-5"), ...body })
 * ```
 */
export const placeAiSdk = (request: NeutralRequest, options: AiSdkOptions = {}): PluginResult<AiSdkBody> => {
  const provider = "ai-sdk"
  const model = options.model ?? request.model
  const guessed = upstreamOf(model)
  const target: AiSdkTarget = options.target ?? (guessed === "gemini" ? "anthropic" : guessed)
  const limits = limitsFor(target, model, options)
  const toolTokens = options.toolTokens ?? toolTokenEstimate(canonicalTools(options.tools))
  const automatic = target === "openai"
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
  const messages: Array<AiSdkMessage> = []
  let seenOther = false
  for (const m of plan.messages) {
    if (m.parts.length === 0) continue
    const options_ = marks.has(m.index) ? { providerOptions: marker(target, marks.get(m.index)) } : {}
    locations.set(m.index, `messages[${messages.length}]${automatic ? " (automatic prefix)" : ".providerOptions"}`)
    if (m.role === "system" && !seenOther) {
      messages.push({ role: "system", content: textOnly(provider, m, "system").join("\n\n"), ...options_ })
      continue
    }
    seenOther = true
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
  if (messages.length === 0) throw new PlacementError({ provider, reason: "the request has no non-empty message" })
  const body: AiSdkBody = {
    messages,
    ...(automatic && options.promptCacheKey !== undefined ? { providerOptions: { openai: { promptCacheKey: options.promptCacheKey } } } : {})
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
