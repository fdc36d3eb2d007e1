/**
 * Offline prompt-cache simulators, one per provider, behind one small API:
 * `makeSimulator(provider, { model })` then `send(body, atSeconds)` per request.
 */
import { makeAnthropicSimulator, type AnthropicNativeUsage } from "./anthropic.ts"
import { makeBedrockSimulator, type BedrockSimUsage } from "./bedrock.ts"
import { makeGeminiSimulator, type GeminiSimulator } from "./gemini.ts"
import { makeOpenAISimulator, type OpenAISimUsage } from "./openai.ts"
import { SimulatorInputError, type SimProvider, type Simulator, type SimulatorOptions } from "./types.ts"

export * from "./types.ts"
export { makeAnthropicSimulator, type AnthropicNativeUsage } from "./anthropic.ts"
export { makeBedrockSimulator, type BedrockNativeUsage, type BedrockSimUsage } from "./bedrock.ts"
export { makeOpenAISimulator, type OpenAIChatNativeUsage, type OpenAIResponsesNativeUsage, type OpenAISimUsage } from "./openai.ts"
export { makeGeminiSimulator, type GeminiNativeUsage, type GeminiSimulator, type SimCachedContent } from "./gemini.ts"

/** The simulator type for each provider. */
export interface SimulatorFor {
  readonly anthropic: Simulator<AnthropicNativeUsage>
  readonly bedrock: Simulator<BedrockSimUsage>
  readonly openai: Simulator<OpenAISimUsage>
  readonly gemini: GeminiSimulator
}

/** Every provider with a simulator. */
export const SIM_PROVIDERS: ReadonlyArray<SimProvider> = ["anthropic", "bedrock", "openai", "gemini"]

/**
 * Make the prompt-cache simulator for a provider. Each `send(body, atSeconds)` takes
 * the provider's native request body (as the placement plugins emit it) and returns
 * the usage the provider would report: neutral `CacheUsage`, the native usage object,
 * cost and a trace of hits and writes. Deterministic: same inputs, same outputs.
 *
 * @example
 * ```ts
 * import { makeSimulator } from "@strata/providers"
 * const sim = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
 * for (const [t, body] of requests.entries()) console.log(sim.send(body, t * 30).usage)
 * ```
 */
export const makeSimulator = <P extends SimProvider>(provider: P, options: SimulatorOptions): SimulatorFor[P] => {
  const make: { readonly [K in SimProvider]: (o: SimulatorOptions) => SimulatorFor[K] } = {
    anthropic: makeAnthropicSimulator,
    bedrock: makeBedrockSimulator,
    openai: makeOpenAISimulator,
    gemini: makeGeminiSimulator
  }
  const factory = make[provider] as ((o: SimulatorOptions) => SimulatorFor[P]) | undefined
  if (factory === undefined) {
    throw new SimulatorInputError({ reason: `no simulator for provider "${String(provider)}"; choose one of ${SIM_PROVIDERS.join(", ")}` })
  }
  return factory(options)
}
