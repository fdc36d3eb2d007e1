/**
 * Offline prompt-cache simulators, one per provider, behind one small API:
 * `makeSimulator(provider, { model })` then `send(body, atSeconds)` per request.
 */
import { estimateTokens, IMAGE_TOKENS } from "@strata/core"
import { lookupModel } from "../models.ts"
import { makeAnthropicSimulator, parseAnthropicBody, type AnthropicNativeUsage } from "./anthropic.ts"
import { makeBedrockSimulator, parseConverseBody, type BedrockSimUsage } from "./bedrock.ts"
import { asString, isRecord, type PrefixBlock } from "../internal/simulators/prefixCache.ts"
import { geminiPromptBlocks, makeGeminiSimulator, type GeminiSimulator } from "./gemini.ts"
import { makeOpenAISimulator, openaiPromptBlocks, type OpenAISimUsage } from "./openai.ts"
import { SimulatedRejection, SimulatorInputError, type SimProvider, type Simulator, type SimulatorOptions } from "../simulation.ts"

export * from "../simulation.ts"
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
 * the usage the provider would report: neutral `Usage`, the native usage object,
 * cost and a trace of hits and writes. Deterministic: same inputs, same outputs.
 *
 * @example
 * ```ts
 * import { makeSimulator } from "@strata/providers"
 * const sim = makeSimulator("anthropic", { model: "claude-sonnet-4-6" })
 * const system = [{ type: "text", text: "You review TypeScript. ".repeat(400), cache_control: { type: "ephemeral" } }]
 * const requests = ["Review src/a.ts.", "Review src/b.ts."].map((q) => ({ model: "claude-sonnet-4-6", max_tokens: 1024, system, messages: [{ role: "user", content: q }] }))
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

/** One content block of a request, as the provider's simulator measures it. */
export interface PromptBlock {
  /** What identifies the block's content: its text, or its canonical JSON without cache markers (tool calls, images). */
  readonly content: string
  /** Its prompt tokens under the simulator's counter (images and documents at their fixed cost). */
  readonly tokens: number
}

/**
 * The content blocks of a native request body, in prefix order, measured exactly as
 * `makeSimulator(provider, options)` measures them, without touching any cache. Cache
 * markers and breakpoint limits are ignored. For per-block analyses of a request (the
 * replay's cost bound).
 *
 * @example
 * ```ts
 * import { promptBlocks } from "@strata/providers"
 * const body = { model: "claude-sonnet-4-6", max_tokens: 16, system: "You are terse.", messages: [{ role: "user", content: "hi" }] }
 * promptBlocks("anthropic", body, { model: "claude-sonnet-4-6" }) // [{ content: "You are terse.", tokens: 4 }, { content: "hi", tokens: 1 }]
 * ```
 */
export const promptBlocks = (provider: SimProvider, body: unknown, options: SimulatorOptions): ReadonlyArray<PromptBlock> => {
  if (!isRecord(body)) throw new SimulatedRejection({ provider, reason: "the request body must be a JSON object" })
  const imageTokens = options.imageTokens ?? IMAGE_TOKENS
  const count = options.countTokens ?? estimateTokens
  const unlimited = Number.MAX_SAFE_INTEGER
  let blocks: ReadonlyArray<PrefixBlock>
  switch (provider) {
    case "anthropic":
      blocks = parseAnthropicBody(body, provider, imageTokens, true, unlimited).blocks
      break
    case "bedrock": {
      if (body["anthropic_version"] !== undefined) {
        blocks = parseAnthropicBody(body, provider, imageTokens, false, unlimited).blocks
        break
      }
      const model = asString(body["modelId"]) ?? options.model
      const limits = { ...(options.limits ?? lookupModel("bedrock", model)), maxBreakpoints: unlimited, toolBreakpoints: true }
      blocks = parseConverseBody(body, model, limits, imageTokens).blocks
      break
    }
    case "openai":
      blocks = openaiPromptBlocks(body, imageTokens)
      break
    case "gemini":
      blocks = geminiPromptBlocks(body, imageTokens)
      break
    default:
      throw new SimulatorInputError({ reason: `no simulator for provider "${String(provider)}"; choose one of ${SIM_PROVIDERS.join(", ")}` })
  }
  return blocks.map((b) => ({ content: b.body, tokens: (b.text.length === 0 ? 0 : count(b.text)) + b.extraTokens }))
}
