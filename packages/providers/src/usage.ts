/**
 * One neutral usage (core's `Usage`) for every provider, decoders from each provider's response
 * and streaming usage fields, and cost from the dated price table in models.ts.
 * Providers disagree on whether "input" includes cached tokens; here it never does.
 */
import { ZERO_USAGE, type Usage } from "@strata/core"
import { Schema } from "effect"
import { lookupModel, ttlSpec, type LookupOptions, type ModelLimits, type ProviderId, type Provenance } from "./models.ts"

/**
 * The neutral usage is core's `Usage` (one schema for the monorepo: `input`, `cacheRead`,
 * `cacheWrite`, `output`, optional `cacheWriteByTtl`; the prompt is the first three).
 * Import it from `@strata/core`, with `ZERO_USAGE` and `sumUsage`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Usage } from "@strata/core"
 * Schema.decodeUnknownSync(Usage)({ input: 12, cacheRead: 4096, cacheWrite: 0, output: 300 })
 * ```
 */

/** Total prompt tokens: `input + cacheRead + cacheWrite`. */
export const promptTokens = (u: Usage): number => u.input + u.cacheRead + u.cacheWrite

/** Share of prompt tokens read from the cache (0 when the prompt is empty). */
export const cacheHitRate = (u: Usage): number => {
  const total = promptTokens(u)
  return total === 0 ? 0 : u.cacheRead / total
}

// ---------------------------------------------------------------------------------
// Decoding. Provider responses are external input, so they are read through schemas
// with every field optional: a missing count is 0, a wrong type is an error.

const N = Schema.optionalKey(Schema.NullOr(Schema.Number))
const num = (v: number | null | undefined): number => (typeof v === "number" && Number.isFinite(v) ? Math.max(0, v) : 0)

const withTtls = (base: Usage, byTtl: Record<string, number>): Usage => {
  const nonZero = Object.fromEntries(Object.entries(byTtl).filter(([, v]) => v > 0))
  return Object.keys(nonZero).length === 0 ? base : { ...base, cacheWriteByTtl: nonZero }
}

/** Anthropic `usage` (Messages response, `message_start.message.usage`, `message_delta.usage`). */
export const AnthropicUsage = Schema.Struct({
  input_tokens: N,
  output_tokens: N,
  cache_creation_input_tokens: N,
  cache_read_input_tokens: N,
  cache_creation: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    ephemeral_5m_input_tokens: N,
    ephemeral_1h_input_tokens: N
  })))
})
export type AnthropicUsage = typeof AnthropicUsage.Type

/**
 * Decode Anthropic (and Bedrock InvokeModel) usage. `input_tokens` is already the
 * uncached tail after the last breakpoint.
 *
 * @example
 * ```ts
 * import { decodeAnthropicUsage } from "@strata/providers"
 * decodeAnthropicUsage({ input_tokens: 20, cache_read_input_tokens: 4000, cache_creation_input_tokens: 0, output_tokens: 50 })
 * // { input: 20, cacheRead: 4000, cacheWrite: 0, output: 50 }
 * ```
 */
export const decodeAnthropicUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(AnthropicUsage)(raw)
  const base: Usage = {
    input: num(u.input_tokens),
    cacheRead: num(u.cache_read_input_tokens),
    cacheWrite: num(u.cache_creation_input_tokens),
    output: num(u.output_tokens)
  }
  return withTtls(base, {
    "5m": num(u.cache_creation?.ephemeral_5m_input_tokens),
    "1h": num(u.cache_creation?.ephemeral_1h_input_tokens)
  })
}

// OpenAI's `prompt_tokens_details` / `input_tokens_details`: both counts are part of the prompt count.
const OpenAICacheDetails = Schema.optionalKey(Schema.NullOr(Schema.Struct({
  cached_tokens: N,
  cache_write_tokens: N
})))

/** Usage from a prompt count that includes the tokens read from and written to the cache. */
const fromPromptCount = (prompt: number, cacheRead: number, cacheWrite: number, output: number): Usage => ({
  input: Math.max(0, prompt - cacheRead - cacheWrite),
  cacheRead,
  cacheWrite,
  output
})

/** OpenAI Chat Completions `usage`. */
export const OpenAIChatUsage = Schema.Struct({
  prompt_tokens: N,
  completion_tokens: N,
  prompt_tokens_details: OpenAICacheDetails
})
export type OpenAIChatUsage = typeof OpenAIChatUsage.Type

/**
 * Decode OpenAI Chat Completions usage (also LiteLLM's and OpenRouter's normalized
 * usage). `prompt_tokens` includes cached tokens; LiteLLM's Anthropic
 * `cache_creation_input_tokens` is read as the write count when present.
 */
export const decodeOpenAIChatUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(OpenAIChatUsage)(raw)
  const extra = Schema.decodeUnknownSync(Schema.Struct({ cache_creation_input_tokens: N }))(raw)
  const cacheWrite = num(u.prompt_tokens_details?.cache_write_tokens) || num(extra.cache_creation_input_tokens)
  return fromPromptCount(num(u.prompt_tokens), num(u.prompt_tokens_details?.cached_tokens), cacheWrite, num(u.completion_tokens))
}

/** OpenAI Responses `usage`. */
export const OpenAIResponsesUsage = Schema.Struct({
  input_tokens: N,
  output_tokens: N,
  input_tokens_details: OpenAICacheDetails
})
export type OpenAIResponsesUsage = typeof OpenAIResponsesUsage.Type

/** Decode OpenAI Responses usage; `input_tokens` includes cached and written tokens. */
export const decodeOpenAIResponsesUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(OpenAIResponsesUsage)(raw)
  return fromPromptCount(num(u.input_tokens), num(u.input_tokens_details?.cached_tokens), num(u.input_tokens_details?.cache_write_tokens), num(u.output_tokens))
}

/** Bedrock Converse `usage` (response and the stream's `metadata` event). */
export const BedrockUsage = Schema.Struct({
  inputTokens: N,
  outputTokens: N,
  totalTokens: N,
  cacheReadInputTokens: N,
  cacheWriteInputTokens: N,
  cacheDetails: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Struct({
    ttl: Schema.optionalKey(Schema.NullOr(Schema.String)),
    inputTokens: N
  }))))
})
export type BedrockUsage = typeof BedrockUsage.Type

/** Decode Bedrock Converse usage; `inputTokens` is already the non-cached part. */
export const decodeBedrockUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(BedrockUsage)(raw)
  const byTtl: Record<string, number> = {}
  for (const d of u.cacheDetails ?? []) {
    const ttl = d.ttl ?? "5m"
    byTtl[ttl] = (byTtl[ttl] ?? 0) + num(d.inputTokens)
  }
  return withTtls({
    input: num(u.inputTokens),
    cacheRead: num(u.cacheReadInputTokens),
    cacheWrite: num(u.cacheWriteInputTokens),
    output: num(u.outputTokens)
  }, byTtl)
}

/** Gemini `usageMetadata`. */
export const GeminiUsage = Schema.Struct({
  promptTokenCount: N,
  cachedContentTokenCount: N,
  candidatesTokenCount: N,
  thoughtsTokenCount: N,
  toolUsePromptTokenCount: N
})
export type GeminiUsage = typeof GeminiUsage.Type

/**
 * Decode Gemini `usageMetadata`. `promptTokenCount` includes cached tokens; Gemini
 * reports no writes; thinking tokens are billed as output.
 */
export const decodeGeminiUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(GeminiUsage)(raw)
  const prompt = num(u.promptTokenCount) + num(u.toolUsePromptTokenCount)
  return fromPromptCount(prompt, num(u.cachedContentTokenCount), 0, num(u.candidatesTokenCount) + num(u.thoughtsTokenCount))
}

/** Which response shape a usage object comes from. */
export type UsageFormat = "anthropic" | "openai-chat" | "openai-responses" | "bedrock" | "gemini"

/** Decode a usage object of the given format. */
export const decodeUsage = (format: UsageFormat, raw: unknown): Usage => {
  switch (format) {
    case "anthropic": return decodeAnthropicUsage(raw)
    case "openai-chat": return decodeOpenAIChatUsage(raw)
    case "openai-responses": return decodeOpenAIResponsesUsage(raw)
    case "bedrock": return decodeBedrockUsage(raw)
    case "gemini": return decodeGeminiUsage(raw)
  }
}

// ---------------------------------------------------------------------------------
// Streaming. Each provider reports usage in different events; feed every event (or
// SSE `data` payload, parsed) to `usageFromStream` and it keeps what matters.

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Fold one streaming event into the usage seen so far (undefined before any usage).
 * - anthropic: `message_start.message.usage`, then `message_delta.usage`, whose counts
 *   are cumulative (fields it omits keep their `message_start` value).
 * - openai-chat: the final chunk's `usage` (needs `stream_options.include_usage`).
 * - openai-responses: `response.completed` → `response.usage`.
 * - bedrock: ConverseStream `metadata.usage` (also accepts `{ metadata: { usage } }`).
 * - gemini: the last chunk's `usageMetadata`.
 */
export const foldStreamUsage = (format: UsageFormat, acc: Usage | undefined, event: unknown): Usage | undefined => {
  if (!isRecord(event)) return acc
  switch (format) {
    case "anthropic": {
      if (event["type"] === "message_start" && isRecord(event["message"]) && isRecord(event["message"]["usage"])) {
        return decodeAnthropicUsage(event["message"]["usage"])
      }
      if (event["type"] === "message_delta" && isRecord(event["usage"])) {
        const delta = event["usage"]
        const prior = acc ?? ZERO_USAGE
        const has = (k: string) => typeof delta[k] === "number"
        const d = decodeAnthropicUsage(delta)
        const merged: Usage = {
          input: has("input_tokens") ? d.input : prior.input,
          cacheRead: has("cache_read_input_tokens") ? d.cacheRead : prior.cacheRead,
          cacheWrite: has("cache_creation_input_tokens") ? d.cacheWrite : prior.cacheWrite,
          output: has("output_tokens") ? d.output : prior.output
        }
        const byTtl = d.cacheWriteByTtl ?? prior.cacheWriteByTtl
        return byTtl === undefined ? merged : { ...merged, cacheWriteByTtl: byTtl }
      }
      return acc
    }
    case "openai-chat":
      return isRecord(event["usage"]) ? decodeOpenAIChatUsage(event["usage"]) : acc
    case "openai-responses":
      if (event["type"] === "response.completed" && isRecord(event["response"]) && isRecord(event["response"]["usage"])) {
        return decodeOpenAIResponsesUsage(event["response"]["usage"])
      }
      return acc
    case "bedrock": {
      const meta = isRecord(event["metadata"]) ? event["metadata"] : event
      return isRecord(meta["usage"]) ? decodeBedrockUsage(meta["usage"]) : acc
    }
    case "gemini":
      return isRecord(event["usageMetadata"]) ? decodeGeminiUsage(event["usageMetadata"]) : acc
  }
}

/**
 * The usage a stream reported, from all its events in order; undefined when no event
 * carried usage (e.g. an OpenAI stream without `include_usage`, or a cut stream).
 *
 * @example
 * ```ts
 * import { usageFromStream } from "@strata/providers"
 * usageFromStream("anthropic", [
 *   { type: "message_start", message: { usage: { input_tokens: 10, cache_read_input_tokens: 2048, output_tokens: 1 } } },
 *   { type: "message_delta", usage: { output_tokens: 42 } }
 * ]) // { input: 10, cacheRead: 2048, cacheWrite: 0, output: 42 }
 * ```
 */
export const usageFromStream = (format: UsageFormat, events: Iterable<unknown>): Usage | undefined => {
  let acc: Usage | undefined
  for (const e of events) acc = foldStreamUsage(format, acc, e)
  return acc
}

// ---------------------------------------------------------------------------------
// Cost.

/** Cost of one request in USD, by part, with where the prices came from. */
export interface Cost {
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly output: number
  /** Gemini explicit-cache storage, when `storageTokenHours` was given. */
  readonly storage: number
  readonly total: number
  /** What the same prompt would cost with no caching at all (every input token at full price). */
  readonly uncachedTotal: number
  readonly currency: "USD"
  /** Provenance of the base price and the multipliers used. */
  readonly priceSource: Provenance | undefined
  readonly multiplierSource: Provenance | undefined
}

/** Options for `computeCost`. */
export interface CostOptions {
  /** TTL name writes without a per-TTL split are billed at (default: the model's default TTL). */
  readonly ttl?: string
  /** Explicit-cache storage in token-hours (Gemini `cachedContents`). */
  readonly storageTokenHours?: number
}

/**
 * Cost of a usage under a model's dated prices:
 * `input×price + Σ write(ttl)×price×mult + read×price×mult + output×outPrice (+ storage)`.
 * Returns undefined when the table has no price for the model; pass a `table` row
 * through `lookupModel` options to price it.
 *
 * @example
 * ```ts
 * import { computeCost, lookupModel } from "@strata/providers"
 * const limits = lookupModel("anthropic", "claude-sonnet-4-6")
 * computeCost({ input: 1_000, cacheRead: 100_000, cacheWrite: 0, output: 500 }, limits)?.total
 * // 0.003 + 0.03 + 0.0075 = 0.0405
 * ```
 */
export const computeCost = (usage: Usage, limits: ModelLimits, options: CostOptions = {}): Cost | undefined => {
  const price = limits.price
  if (price === undefined) return undefined
  const prompt = promptTokens(usage)
  const long = price.longContext !== undefined && prompt > price.longContext.thresholdTokens ? price.longContext : undefined
  const inPrice = (long?.inputPerMTok ?? price.inputPerMTok) / 1_000_000
  const outPrice = (long?.outputPerMTok ?? price.outputPerMTok) / 1_000_000
  const defaultTtl = ttlSpec(limits, options.ttl)

  let writeCost = 0
  let splitTokens = 0
  for (const [name, tokens] of Object.entries(usage.cacheWriteByTtl ?? {})) {
    writeCost += tokens * inPrice * ttlSpec(limits, name).write
    splitTokens += tokens
  }
  writeCost += Math.max(0, usage.cacheWrite - splitTokens) * inPrice * defaultTtl.write

  const input = usage.input * inPrice
  const cacheRead = usage.cacheRead * inPrice * defaultTtl.read
  const output = usage.output * outPrice
  const storageRate = limits.ttls.find((t) => t.storagePerMTokHour !== undefined)?.storagePerMTokHour ?? 0
  const storage = ((options.storageTokenHours ?? 0) * storageRate) / 1_000_000
  return {
    input,
    cacheRead,
    cacheWrite: writeCost,
    output,
    storage,
    total: input + cacheRead + writeCost + output + storage,
    uncachedTotal: prompt * inPrice + output,
    currency: "USD",
    priceSource: limits.provenance.price,
    multiplierSource: limits.provenance.ttls
  }
}

/**
 * `computeCost` by provider and model id in one call.
 *
 * @example
 * ```ts
 * import { costOf } from "@strata/providers"
 * costOf("openai", "gpt-4o", { input: 500, cacheRead: 1_536, cacheWrite: 0, output: 100 })?.total
 * ```
 */
export const costOf = (
  provider: ProviderId,
  model: string,
  usage: Usage,
  options: CostOptions & LookupOptions = {}
): Cost | undefined => computeCost(usage, lookupModel(provider, model, options), options)

// ---------------------------------------------------------------------------------
// The Vercel AI SDK. Its language models report one usage shape for every provider.

const AiSdkCount = Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(Schema.Number)))

/**
 * A language model's `usage` as the AI SDK reports it: nested in a model's result on ai 6
 * and 7 (`inputTokens: { total, noCache, cacheRead, cacheWrite }`), flat with details in
 * `generateText`'s result on ai 6 and 7 (`inputTokens`, `inputTokenDetails: { noCacheTokens,
 * cacheReadTokens, cacheWriteTokens }`), flat on ai 5 (`inputTokens`, `cachedInputTokens`).
 */
export const AiSdkUsage = Schema.Struct({
  inputTokens: Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(Schema.Union([
    Schema.Number,
    Schema.Struct({ total: AiSdkCount, noCache: AiSdkCount, cacheRead: AiSdkCount, cacheWrite: AiSdkCount })
  ])))),
  inputTokenDetails: Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(Schema.Struct({
    noCacheTokens: AiSdkCount,
    cacheReadTokens: AiSdkCount,
    cacheWriteTokens: AiSdkCount
  })))),
  outputTokens: Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(Schema.Union([Schema.Number, Schema.Struct({ total: AiSdkCount })])))),
  cachedInputTokens: AiSdkCount
})
export type AiSdkUsage = typeof AiSdkUsage.Type

/**
 * Decode the AI SDK's usage (a `doGenerate` result, a stream's `finish` part, or
 * `generateText`'s `usage` / `totalUsage`). Where only a total and the cache read are
 * known, the uncached part is the rest.
 *
 * @example
 * ```ts
 * import { decodeAiSdkUsage } from "@strata/providers"
 * decodeAiSdkUsage({ inputTokens: { total: 5000, noCache: 200, cacheRead: 4000, cacheWrite: 800 }, outputTokens: { total: 90 } })
 * // { input: 200, cacheRead: 4000, cacheWrite: 800, output: 90 }
 * decodeAiSdkUsage({ inputTokens: 5000, inputTokenDetails: { noCacheTokens: 200, cacheReadTokens: 4000, cacheWriteTokens: 800 }, outputTokens: 90 })
 * // the same
 * ```
 */
export const decodeAiSdkUsage = (raw: unknown): Usage => {
  const u = Schema.decodeUnknownSync(AiSdkUsage)(raw)
  const output = typeof u.outputTokens === "number" ? num(u.outputTokens) : num(u.outputTokens?.total)
  const input = u.inputTokens
  if (input === undefined || input === null || typeof input === "number") {
    const details = u.inputTokenDetails
    const cacheRead = details?.cacheReadTokens ?? u.cachedInputTokens
    const cacheWrite = num(details?.cacheWriteTokens)
    if (typeof details?.noCacheTokens === "number") return { input: num(details.noCacheTokens), cacheRead: num(cacheRead), cacheWrite, output }
    return fromPromptCount(num(input), num(cacheRead), cacheWrite, output)
  }
  const cacheRead = num(input.cacheRead)
  const cacheWrite = num(input.cacheWrite)
  const uncached = typeof input.noCache === "number" ? num(input.noCache) : Math.max(0, num(input.total) - cacheRead - cacheWrite)
  return { input: uncached, cacheRead, cacheWrite, output }
}

/** The cache writes a provider reports in the AI SDK's `providerMetadata` (Anthropic, Bedrock). */
const ProviderMetadataWrites = Schema.Struct({
  anthropic: Schema.optionalKey(Schema.NullOr(Schema.Struct({ cacheCreationInputTokens: AiSdkCount }))),
  bedrock: Schema.optionalKey(Schema.NullOr(Schema.Struct({ usage: Schema.optionalKey(Schema.NullOr(Schema.Struct({ cacheWriteInputTokens: AiSdkCount }))) })))
})

/**
 * Usage from an AI SDK result's `usage` and `providerMetadata`: where the usage reports no
 * cache write but the provider's metadata does (Anthropic's `cacheCreationInputTokens`,
 * Bedrock's `usage.cacheWriteInputTokens`), the write is taken from there, out of the
 * uncached input.
 *
 * @example
 * ```ts
 * import { decodeAiSdkResultUsage } from "@strata/providers"
 * decodeAiSdkResultUsage({ inputTokens: 5000, cachedInputTokens: 4000, outputTokens: 9 }, { anthropic: { cacheCreationInputTokens: 800 } })
 * // { input: 200, cacheRead: 4000, cacheWrite: 800, output: 9 }
 * ```
 */
export const decodeAiSdkResultUsage = (usage: unknown, providerMetadata?: unknown): Usage => {
  const decoded = decodeAiSdkUsage(usage)
  if (decoded.cacheWrite > 0 || providerMetadata === undefined || providerMetadata === null) return decoded
  const meta = Schema.decodeUnknownSync(ProviderMetadataWrites)(providerMetadata)
  const write = num(meta.anthropic?.cacheCreationInputTokens) || num(meta.bedrock?.usage?.cacheWriteInputTokens)
  if (write === 0) return decoded
  return { ...decoded, input: Math.max(0, decoded.input - write), cacheWrite: write }
}
