/**
 * The one table of provider-independent facts about models: how a model id is
 * normalised, which family it belongs to, which encoding counts its tokens, and its
 * context limits. `@strata/providers` keys its caching rules and prices by the same
 * normalised id (`normalizeModelId`), so both packages read an id the same way.
 */

/** The js-tiktoken encodings Strata counts with. */
export type EncodingName = "o200k_base" | "cl100k_base"

/** How a model's tokens are counted. */
export interface EncodingChoice {
  readonly encoding: EncodingName
  /** True only when the encoding is the model's own (OpenAI models). */
  readonly exact: boolean
}

/** A model's context limits. */
export interface ModelInfo {
  readonly model: string
  readonly maxInputTokens: number
  readonly maxOutputTokens: number
}

/** Everything the table says about a model id. */
export interface ModelFacts extends ModelInfo, EncodingChoice {
  /** The normalised id the table matched (`normalizeModelId(model)`). */
  readonly id: string
  /** The family row that matched, e.g. `Claude 4` or `GPT-4o`; `unknown` when none did. */
  readonly family: string
  /** False when the table does not know the model's limits and `DEFAULT_MODEL_LIMITS` were assumed. */
  readonly known: boolean
}

/** Limits used for a model no family row knows. */
export const DEFAULT_MODEL_LIMITS = { maxInputTokens: 128_000, maxOutputTokens: 4_096 } as const

/** The encoding assumed for a model no family row knows (an approximation). */
const DEFAULT_ENCODING: EncodingChoice = { encoding: "cl100k_base", exact: false }

/**
 * Normalize a model id: lowercase, drop routing prefixes (`openrouter/anthropic/`,
 * `models/`), Bedrock region and vendor prefixes (`us.anthropic.`), and date/version
 * suffixes (`-20250929`, `@20250929`, `-v1:0`, `-latest`). Every model lookup in Strata
 * (encodings, limits, caching rules, prices) goes through this one function.
 *
 * @example
 * ```ts
 * import { normalizeModelId } from "@strata/core"
 * normalizeModelId("us.anthropic.claude-haiku-4-5-20251001-v1:0") // "claude-haiku-4-5"
 * normalizeModelId("openrouter/openai/gpt-4o") // "gpt-4o"
 * ```
 */
export const normalizeModelId = (model: string): string => {
  // Each pass strips one layer; repeat until nothing changes, so normalising twice is
  // normalising once ("x-2024-01-01-20240101", "a @b" whose trim shows after the cut).
  let m = model
  for (;;) {
    const next = normalizeOnce(m)
    if (next === m) return m
    m = next
  }
}

const normalizeOnce = (model: string): string => {
  let m = model.trim().toLowerCase()
  const slash = m.lastIndexOf("/")
  if (slash >= 0) m = m.slice(slash + 1)
  m = m.replace(/^(?:us|eu|apac|global|us-gov|jp|au|ca)\./, "")
  m = m.replace(/^(?:anthropic|amazon|openai|google|meta)\./, "")
  m = m.replace(/-v\d+(?::\d+)?$/, "")
  m = m.replace(/:.*$/, "")
  m = m.replace(/@.*$/, "")
  m = m.replace(/-latest$/, "")
  m = m.replace(/-\d{8}$/, "")
  m = m.replace(/-\d{4}-\d{2}-\d{2}$/, "")
  return m.trim()
}

/** One family of models: which normalised ids it covers and what is known about them. */
interface FamilyRow extends EncodingChoice {
  readonly family: string
  readonly match: (id: string) => boolean
  /** Absent when the table knows the encoding but not the limits. */
  readonly limits?: { readonly maxInputTokens: number; readonly maxOutputTokens: number }
}

const has = (id: string, ...parts: ReadonlyArray<string>) => parts.some((p) => id.includes(p))
const startsWith = (...prefixes: ReadonlyArray<string>) => (id: string) => prefixes.some((p) => id.startsWith(p))
const limits = (maxInputTokens: number, maxOutputTokens: number) => ({ maxInputTokens, maxOutputTokens })

// Claude and Gemini have no public tokenizer: cl100k_base approximates them.
const approximate = { encoding: "cl100k_base", exact: false } as const
// gpt-oss uses o200k_harmony, which counts plain text exactly like o200k_base.
const o200k = { encoding: "o200k_base", exact: true } as const
const cl100k = { encoding: "cl100k_base", exact: true } as const

// First match wins; order from most to least specific ("gpt-4o" and "gpt-4.1" also
// start with "gpt-4").
const FAMILIES: ReadonlyArray<FamilyRow> = [
  {
    family: "Claude Opus 4.5+",
    match: (id) => has(id, "claude") && has(id, "opus-4-5", "opus-4.5", "opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "opus-4-8", "opus-4.8", "opus-5"),
    ...approximate,
    limits: limits(200_000, 128_000)
  },
  { family: "Claude 4", match: (id) => has(id, "claude") && has(id, "sonnet-4", "sonnet-5", "haiku-4", "opus-4"), ...approximate, limits: limits(200_000, 64_000) },
  { family: "Claude", match: (id) => has(id, "claude"), ...approximate, limits: limits(200_000, 8_192) },
  { family: "GPT-5", match: startsWith("gpt-5"), ...o200k, limits: limits(400_000, 128_000) },
  { family: "gpt-oss", match: startsWith("gpt-oss"), ...o200k, limits: limits(131_072, 131_072) },
  { family: "GPT-4.1", match: startsWith("gpt-4.1"), ...o200k, limits: limits(1_047_576, 32_768) },
  { family: "GPT-4o", match: startsWith("gpt-4o", "chatgpt-4o"), ...o200k, limits: limits(128_000, 16_384) },
  // Limits as GPT-4's: the table has no GPT-4.5 figures of its own yet.
  { family: "GPT-4.5", match: startsWith("gpt-4.5"), ...o200k, limits: limits(8_192, 4_096) },
  { family: "o-series", match: startsWith("o1", "o3", "o4"), ...o200k, limits: limits(200_000, 100_000) },
  { family: "GPT-4 Turbo", match: startsWith("gpt-4-turbo"), ...cl100k, limits: limits(128_000, 4_096) },
  { family: "GPT-4", match: startsWith("gpt-4"), ...cl100k, limits: limits(8_192, 4_096) },
  { family: "GPT-3.5", match: startsWith("gpt-3.5"), ...cl100k, limits: limits(16_385, 4_096) },
  // Azure's deployment names and the embedding models: the encoding is known, the limits are not.
  { family: "GPT-3.5 (Azure name)", match: startsWith("gpt-35"), ...cl100k },
  { family: "OpenAI embeddings", match: startsWith("text-embedding-"), ...cl100k },
  { family: "Gemini", match: startsWith("gemini"), ...approximate, limits: limits(1_048_576, 65_536) }
]

/**
 * What the model table says about a model id: its normalised id, family, encoding and
 * context limits. An id no row knows gets `DEFAULT_MODEL_LIMITS` and a cl100k_base
 * approximation, with `known: false`.
 *
 * @example
 * ```ts
 * import { modelFacts } from "@strata/core"
 * modelFacts("openrouter/openai/gpt-4o-2024-08-06")
 * // { model: "openrouter/openai/gpt-4o-2024-08-06", id: "gpt-4o", family: "GPT-4o",
 * //   encoding: "o200k_base", exact: true, maxInputTokens: 128000, maxOutputTokens: 16384, known: true }
 * ```
 */
export const modelFacts = (model: string): ModelFacts => {
  const known = factsMemo.get(model)
  if (known !== undefined) return known
  const facts = Object.freeze(factsOf(model))
  // A request looks its model up several times (limits, encoding, warnings); the table is fixed.
  if (factsMemo.size >= FACTS_MEMO_SIZE) factsMemo.clear()
  factsMemo.set(model, facts)
  return facts
}

const FACTS_MEMO_SIZE = 256
const factsMemo = new Map<string, ModelFacts>()

const factsOf = (model: string): ModelFacts => {
  const id = normalizeModelId(model)
  const row = FAMILIES.find((f) => f.match(id))
  const known = row?.limits ?? DEFAULT_MODEL_LIMITS
  return {
    model,
    id,
    family: row?.family ?? "unknown",
    encoding: row?.encoding ?? DEFAULT_ENCODING.encoding,
    exact: row?.exact ?? DEFAULT_ENCODING.exact,
    maxInputTokens: known.maxInputTokens,
    maxOutputTokens: known.maxOutputTokens,
    known: row?.limits !== undefined
  }
}

/**
 * Pick the encoding for a model id.
 *
 * @example
 * ```ts
 * import { encodingForModel } from "@strata/core"
 * encodingForModel("gpt-4o-mini") // { encoding: "o200k_base", exact: true }
 * encodingForModel("claude-sonnet-4-6") // { encoding: "cl100k_base", exact: false }
 * ```
 */
export const encodingForModel = (model: string): EncodingChoice => {
  const facts = modelFacts(model)
  return { encoding: facts.encoding, exact: facts.exact }
}

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
  const facts = modelFacts(model)
  return { model, maxInputTokens: facts.maxInputTokens, maxOutputTokens: facts.maxOutputTokens }
}

/**
 * The warning for a model the table does not know, naming the model and the defaults
 * assumed for it; undefined for a known model. Assembly results carry it; the Promise
 * API and the CLI show it once.
 *
 * @example
 * ```ts
 * import { unknownModelWarning } from "@strata/core"
 * unknownModelWarning("llama-3.3-70b")
 * // 'Model "llama-3.3-70b" is not in the model table; assumed an input limit of 128000 tokens, ...'
 * unknownModelWarning("gpt-4o") // undefined
 * ```
 */
export const unknownModelWarning = (model: string): string | undefined => {
  const facts = modelFacts(model)
  if (facts.known) return undefined
  const counting = facts.exact ? "" : ` and approximate token counts (${facts.encoding})`
  return `Model "${model}" is not in the model table; assumed an input limit of ${facts.maxInputTokens} tokens, ` +
    `${facts.maxOutputTokens} output tokens${counting}.`
}
