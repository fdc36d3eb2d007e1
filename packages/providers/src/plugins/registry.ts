/**
 * Plugins by name, for callers that pick the provider at run time (the CLI's
 * `--provider`, a config file): one function to place a request, one to get the Layer.
 */
import type { Layer } from "effect"
import type { NeutralRequest, Placement } from "@strata/core"
import { placeAiSdk, type AiSdkOptions } from "./aiSdk.ts"
import { placeAnthropic, type AnthropicOptions } from "./anthropic.ts"
import { placeBedrockConverse, placeBedrockInvoke, type BedrockOptions } from "./bedrock.ts"
import { placementLayer, type PluginResult } from "./common.ts"
import { placeGemini, type GeminiOptions } from "./gemini.ts"
import { placeOpenAIChat, placeOpenAIResponses, type OpenAIOptions } from "./openai.ts"
import { placeOpenAICompatible, type CompatOptions } from "./openaiCompatible.ts"

/** Each plugin's name and its options. */
export interface PluginOptionsByName {
  readonly anthropic: AnthropicOptions
  readonly bedrock: BedrockOptions
  readonly "bedrock-invoke": AnthropicOptions
  readonly openai: OpenAIOptions
  readonly "openai-responses": OpenAIOptions
  readonly gemini: GeminiOptions
  readonly "openai-compatible": CompatOptions
  readonly "ai-sdk": AiSdkOptions
}

export type PluginName = keyof PluginOptionsByName

export const PLUGIN_NAMES: ReadonlyArray<PluginName> = [
  "anthropic",
  "bedrock",
  "bedrock-invoke",
  "openai",
  "openai-responses",
  "gemini",
  "openai-compatible",
  "ai-sdk"
]

/** True when `name` is a plugin name (for validating user input). */
export const isPluginName = (name: string): name is PluginName => (PLUGIN_NAMES as ReadonlyArray<string>).includes(name)

/**
 * Place a request with the plugin of that name.
 *
 * @example
 * ```ts no-run
 * import type { NeutralRequest } from "@strata/core"
 * import { placeWith } from "@strata/providers"
 * declare const request: NeutralRequest // from assemble()
 * const { body, breakpoints } = placeWith("bedrock", request, { maxTokens: 1024 })
 * ```
 */
export const placeWith = <N extends PluginName>(
  name: N,
  request: NeutralRequest,
  options: PluginOptionsByName[N] = {} as PluginOptionsByName[N]
): PluginResult<unknown> => {
  // Each case narrows `name`; the options type follows it by construction of PluginOptionsByName.
  switch (name) {
    case "anthropic": return placeAnthropic(request, options as AnthropicOptions)
    case "bedrock": return placeBedrockConverse(request, options as BedrockOptions)
    case "bedrock-invoke": return placeBedrockInvoke(request, options as AnthropicOptions)
    case "openai": return placeOpenAIChat(request, options as OpenAIOptions)
    case "openai-responses": return placeOpenAIResponses(request, options as OpenAIOptions)
    case "gemini": return placeGemini(request, options as GeminiOptions)
    case "openai-compatible": return placeOpenAICompatible(request, options as CompatOptions)
    default: return placeAiSdk(request, options as AiSdkOptions)
  }
}

/**
 * The `Placement` Layer of the plugin of that name.
 *
 * @example
 * ```ts
 * import { placementLayerFor } from "@strata/providers"
 * const layer = placementLayerFor("openai", { promptCacheKey: "session-42" })
 * ```
 */
export const placementLayerFor = <N extends PluginName>(
  name: N,
  options: PluginOptionsByName[N] = {} as PluginOptionsByName[N]
): Layer.Layer<Placement> =>
  placementLayer(name === "bedrock-invoke" ? "bedrock" : name === "openai-responses" ? "openai" : name, (request) => placeWith(name, request, options))
