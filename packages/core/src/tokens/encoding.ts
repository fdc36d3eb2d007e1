/**
 * Which encoding counts a model's tokens, and what its context limits are. OpenAI
 * models get their exact js-tiktoken encoding; every other family is approximated
 * with cl100k_base and flagged `exact: false`.
 */

export type EncodingName = "o200k_base" | "cl100k_base"

/** How a model's tokens are counted. */
export interface EncodingChoice {
  readonly encoding: EncodingName
  /** True only when the encoding is the model's own (OpenAI models). */
  readonly exact: boolean
}

// gpt-oss uses o200k_harmony, which counts plain text exactly like o200k_base.
const O200K_PREFIXES = ["gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"] as const
const CL100K_PREFIXES = ["gpt-4", "gpt-3.5", "gpt-35", "text-embedding-"] as const

/** Strip a provider routing prefix such as `openai/` or `openrouter/openai/`. */
const bareModel = (model: string): string => {
  const lower = model.trim().toLowerCase()
  const slash = lower.lastIndexOf("/")
  return slash < 0 ? lower : lower.slice(slash + 1)
}

/**
 * Pick the encoding for a model id.
 *
 * @example
 * ```ts
 * import { encodingForModel } from "@strata/core"
 * encodingForModel("gpt-4o-mini") // { encoding: "o200k_base", exact: true }
 * encodingForModel("claude-sonnet-4-5") // { encoding: "cl100k_base", exact: false }
 * ```
 */
export const encodingForModel = (model: string): EncodingChoice => {
  const m = bareModel(model)
  // o200k prefixes first: "gpt-4o" and "gpt-4.1" also start with "gpt-4".
  if (O200K_PREFIXES.some((p) => m.startsWith(p))) return { encoding: "o200k_base", exact: true }
  if (CL100K_PREFIXES.some((p) => m.startsWith(p))) return { encoding: "cl100k_base", exact: true }
  return { encoding: "cl100k_base", exact: false }
}

/** A model's context limits. */
export interface ModelInfo {
  readonly model: string
  readonly maxInputTokens: number
  readonly maxOutputTokens: number
}

interface FamilyLimits {
  readonly match: (m: string) => boolean
  readonly maxInputTokens: number
  readonly maxOutputTokens: number
}

const has = (m: string, ...parts: ReadonlyArray<string>) => parts.some((p) => m.includes(p))

// First match wins; order from most to least specific.
const FAMILIES: ReadonlyArray<FamilyLimits> = [
  { match: (m) => has(m, "claude") && has(m, "opus-4-5", "opus-4.5", "opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "opus-4-8", "opus-4.8", "opus-5"), maxInputTokens: 200_000, maxOutputTokens: 128_000 },
  { match: (m) => has(m, "claude") && has(m, "sonnet-4", "sonnet-5", "haiku-4", "opus-4"), maxInputTokens: 200_000, maxOutputTokens: 64_000 },
  { match: (m) => has(m, "claude"), maxInputTokens: 200_000, maxOutputTokens: 8_192 },
  { match: (m) => m.startsWith("gpt-5"), maxInputTokens: 400_000, maxOutputTokens: 128_000 },
  { match: (m) => m.startsWith("gpt-oss"), maxInputTokens: 131_072, maxOutputTokens: 131_072 },
  { match: (m) => m.startsWith("gpt-4.1"), maxInputTokens: 1_047_576, maxOutputTokens: 32_768 },
  { match: (m) => m.startsWith("gpt-4o") || m.startsWith("chatgpt-4o"), maxInputTokens: 128_000, maxOutputTokens: 16_384 },
  { match: (m) => /^o[134]/.test(m), maxInputTokens: 200_000, maxOutputTokens: 100_000 },
  { match: (m) => m.startsWith("gpt-4-turbo"), maxInputTokens: 128_000, maxOutputTokens: 4_096 },
  { match: (m) => m.startsWith("gpt-4"), maxInputTokens: 8_192, maxOutputTokens: 4_096 },
  { match: (m) => m.startsWith("gpt-3.5"), maxInputTokens: 16_385, maxOutputTokens: 4_096 },
  { match: (m) => m.startsWith("gemini"), maxInputTokens: 1_048_576, maxOutputTokens: 65_536 }
]

/** Limits used for a model no family rule knows. */
export const DEFAULT_MODEL_LIMITS = { maxInputTokens: 128_000, maxOutputTokens: 4_096 } as const

/**
 * Context limits for a model, with sensible defaults per family.
 *
 * @example
 * ```ts
 * import { modelInfo } from "@strata/core"
 * modelInfo("gpt-4o").maxInputTokens // 128000
 * ```
 */
export const modelInfo = (model: string): ModelInfo => {
  const m = bareModel(model)
  const family = FAMILIES.find((f) => f.match(m))
  return {
    model,
    maxInputTokens: family?.maxInputTokens ?? DEFAULT_MODEL_LIMITS.maxInputTokens,
    maxOutputTokens: family?.maxOutputTokens ?? DEFAULT_MODEL_LIMITS.maxOutputTokens
  }
}
