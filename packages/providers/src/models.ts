/**
 * The dated per-model table of prompt-caching limits and prices: minimum cacheable
 * prefix, breakpoint slots, TTLs with their read/write multipliers, and base prices.
 * Sources disagree and change over time, so every value is a dated revision with its
 * source (reference keys of the research notes, providers.md: A1-A9 Anthropic, B1-B3 AWS,
 * O1-O4 OpenAI, G1-G5 Google, X* third-party; X16 = third-party Claude pricing changelogs
 * of Oct 2026, X17 = a third-party OpenAI price table of Mar 2026); `lookupModel`
 * resolves one date. Rows match core's normalised model id (`normalizeModelId`), and a
 * lookup carries core's provider-independent facts (encoding, context limits) with it.
 */
import { modelFacts, normalizeModelId, type ModelFacts } from "@strata/core"

export { normalizeModelId }

/** The providers whose caching rules the table describes. Gateways route to one of these. */
export type ProviderId = "anthropic" | "bedrock" | "openai" | "gemini"

export const PROVIDER_IDS: ReadonlyArray<ProviderId> = ["anthropic", "bedrock", "openai", "gemini"]

/**
 * One cache lifetime a model offers, with its price multipliers on the base input price.
 * `name` is the provider's own word for it (`5m`, `1h`, `in_memory`, `24h`, `30m`,
 * `implicit`, `explicit`); the first TTL of a model is its default.
 */
export interface TtlSpec {
  readonly name: string
  /** Lifetime after the last write or hit, in seconds (a typical value where the provider gives a range). */
  readonly seconds: number
  /** True when a hit restarts the lifetime at no cost. */
  readonly sliding: boolean
  /** Hard cap on the lifetime in seconds even with hits, when the provider states one. */
  readonly maxSeconds?: number
  /** Cache-write price as a multiple of the base input price. */
  readonly write: number
  /** Cache-read price as a multiple of the base input price. */
  readonly read: number
  /** Storage price in USD per million tokens per hour (Gemini explicit caches). */
  readonly storagePerMTokHour?: number
}

/** Base prices in USD per million tokens. */
export interface Price {
  readonly inputPerMTok: number
  readonly outputPerMTok: number
  /** Prices once the prompt exceeds `thresholdTokens` (Gemini Pro, Claude 1M context). */
  readonly longContext?: {
    readonly thresholdTokens: number
    readonly inputPerMTok: number
    readonly outputPerMTok: number
  }
}

/** How far back a provider looks for a cached prefix from each breakpoint. */
export interface Lookback {
  readonly unit: "blocks" | "breakpoints"
  readonly count: number
}

/** Every field a model's caching is described by. */
export interface ModelFields {
  /** Minimum cumulative prefix tokens at a breakpoint; shorter prefixes are silently not cached. */
  readonly minCacheTokens: number
  /** Explicit markers a request may carry, counting tool and automatic markers (0: no markers). */
  readonly maxBreakpoints: number
  /** True when the provider caches prefixes without markers (OpenAI, Gemini implicit). */
  readonly automatic: boolean
  /** True when a marker may sit on the tool definitions. */
  readonly toolBreakpoints: boolean
  /** Supported TTLs, the default first. */
  readonly ttls: ReadonlyArray<TtlSpec>
  /** Lookup window per breakpoint, when the provider states one. */
  readonly lookback?: Lookback
  /** Cached-prefix hits are rounded down to a multiple of this (OpenAI before GPT-5.6). */
  readonly hitIncrementTokens?: number
  /** Base prices; absent when the research notes give none for this model. */
  readonly price?: Price
}

export type ModelField = keyof ModelFields

/** Where a value came from: the date of the source revision and its reference key. */
export interface Provenance {
  /** `YYYY-MM` or `YYYY-MM-DD` of the source revision. */
  readonly asOf: string
  /** Reference key in the research notes (`A1`, `B1`, …) or `default`. */
  readonly source: string
  readonly note?: string
}

/** Values a source gave for a model on a date. Later revisions override earlier ones field by field. */
export interface Revision extends Provenance {
  readonly set: Partial<ModelFields>
}

/** A row of the table: one model family at one provider. */
export interface ModelEntry {
  readonly provider: ProviderId
  /** Human name, e.g. `Claude Sonnet 4.5`. */
  readonly family: string
  /** Patterns over the normalized model id (core's `normalizeModelId`); the first matching row wins. */
  readonly patterns: ReadonlyArray<RegExp>
  readonly revisions: ReadonlyArray<Revision>
}

/** A model's caching limits and prices as of one date, with the provenance of each field. */
export interface ModelLimits extends ModelFields {
  readonly provider: ProviderId
  /** The id that was looked up. */
  readonly model: string
  readonly family: string
  /** False when no row matched and the provider defaults were used. */
  readonly known: boolean
  readonly provenance: { readonly [K in ModelField]?: Provenance }
  /** The provider-independent facts from core's model table: normalised id, encoding, context limits. */
  readonly facts: ModelFacts
}

// ---------------------------------------------------------------------------------
// TTL presets. Multipliers are on the base input price.

const anthropic5m = (read = 0.1): TtlSpec => ({ name: "5m", seconds: 300, sliding: true, write: 1.25, read })
const anthropic1h = (read = 0.1): TtlSpec => ({ name: "1h", seconds: 3600, sliding: true, write: 2, read })
const anthropicTtls = (read = 0.1): ReadonlyArray<TtlSpec> => [anthropic5m(read), anthropic1h(read)]

// OpenAI before GPT-5.6: no write fee; in-memory retention is 5-10 min idle, at most 1 h.
const openaiInMemory = (read: number): TtlSpec => ({ name: "in_memory", seconds: 300, sliding: true, maxSeconds: 3600, write: 1, read })
const openai24h = (read: number): TtlSpec => ({ name: "24h", seconds: 86_400, sliding: false, write: 1, read })
const openaiAutomatic = (read: number): ReadonlyArray<TtlSpec> => [openaiInMemory(read), openai24h(read)]

// Gemini implicit: "on average 3-5 minutes"; explicit: default 1 h, fixed expiry, storage billed.
const geminiImplicit = (read: number): TtlSpec => ({ name: "implicit", seconds: 240, sliding: true, write: 1, read })
const geminiExplicit = (read: number, storagePerMTokHour: number): TtlSpec => ({
  name: "explicit",
  seconds: 3600,
  sliding: false,
  write: 1,
  read,
  storagePerMTokHour
})

const price = (inputPerMTok: number, outputPerMTok: number, longContext?: Price["longContext"]): Price =>
  longContext === undefined ? { inputPerMTok, outputPerMTok } : { inputPerMTok, outputPerMTok, longContext }

// ---------------------------------------------------------------------------------
// Provider defaults: used for fields a row leaves unset and for models no row matches.

/** Defaults per provider, applied before any row's revisions. */
export const PROVIDER_DEFAULTS: Readonly<Record<ProviderId, Revision>> = {
  anthropic: {
    asOf: "2025-05",
    source: "A2",
    note: "provider default; unknown Claude models assume the common 1024-token minimum",
    set: { minCacheTokens: 1024, maxBreakpoints: 4, automatic: false, toolBreakpoints: true, ttls: anthropicTtls(), lookback: { unit: "blocks", count: 20 } }
  },
  bedrock: {
    asOf: "2026-01",
    source: "B1",
    note: "provider default; 1 h TTL only where the AWS table lists it",
    set: { minCacheTokens: 1024, maxBreakpoints: 4, automatic: false, toolBreakpoints: true, ttls: [anthropic5m()], lookback: { unit: "blocks", count: 20 } }
  },
  openai: {
    asOf: "2025-10",
    source: "O1",
    note: "provider default: automatic prefix caching, 1024-token minimum, 128-token hit steps",
    set: { minCacheTokens: 1024, maxBreakpoints: 0, automatic: true, toolBreakpoints: false, ttls: openaiAutomatic(0.5), hitIncrementTokens: 128 }
  },
  gemini: {
    asOf: "2025-05",
    source: "L1",
    note: "provider default: implicit caching; LiteLLM's 1024-token minimum",
    set: { minCacheTokens: 1024, maxBreakpoints: 0, automatic: true, toolBreakpoints: false, ttls: [geminiImplicit(0.25)] }
  }
}

// ---------------------------------------------------------------------------------
// Patterns. Ids are normalized first (lowercase, routing/region/vendor prefixes and
// date/version suffixes removed), so `us.anthropic.claude-sonnet-4-5-20250929-v1:0`,
// `anthropic/claude-sonnet-4.5` and `claude-sonnet-4-5@20250929` all read
// `claude-sonnet-4-5` / `claude-sonnet-4.5`.

/** `claude-<family>-<version>` in new naming, not followed by a further version digit. */
const claude = (family: string, version: string): RegExp =>
  new RegExp(`^claude-${family}-${version.replace(".", "[.-]")}(?![.-]?\\d)`)
/** `claude-<version>-<family>` in the 3.x naming. */
const claude3 = (version: string, family: string): RegExp =>
  new RegExp(`^claude-${version.replace(".", "[.-]")}-${family}(?![.-]?\\d)`)
/** A model id prefix not followed by a further version character. */
const exact = (id: string): RegExp => new RegExp(`^${id.replace(/\./g, "\\.")}(?![.\\d])(?!-(mini|nano|pro|turbo|lite))`)

// ---------------------------------------------------------------------------------
// Anthropic (Claude API). Minimums [X1 quoting A1, 2026]; prices [A3].

const ANTHROPIC: ReadonlyArray<ModelEntry> = [
  { provider: "anthropic", family: "Claude Fable 5.1", patterns: [claude("fable", "5.1")], revisions: [
    { asOf: "2026-07", source: "A1", set: { minCacheTokens: 512 } },
    { asOf: "2026-09", source: "A3", note: "cache hits $0.25/MTok = 0.025x (also X6)", set: { ttls: anthropicTtls(0.025), price: price(10, 50) } }
  ] },
  { provider: "anthropic", family: "Claude Fable 5", patterns: [claude("fable", "5")], revisions: [
    { asOf: "2026-07", source: "A1", set: { minCacheTokens: 512 } },
    { asOf: "2026-09", source: "A3", set: { price: price(10, 50) } }
  ] },
  { provider: "anthropic", family: "Claude Mythos 5.1", patterns: [claude("mythos", "5.1")], revisions: [
    { asOf: "2026-07", source: "A1", set: { minCacheTokens: 512 } },
    { asOf: "2026-09", source: "A3", note: "limited availability; cache hits 0.025x", set: { ttls: anthropicTtls(0.025), price: price(10, 50) } }
  ] },
  { provider: "anthropic", family: "Claude Mythos 5", patterns: [claude("mythos", "5")], revisions: [
    { asOf: "2026-07", source: "A1", set: { minCacheTokens: 512 } },
    { asOf: "2026-09", source: "A3", note: "limited availability", set: { price: price(10, 50) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 5.5", patterns: [claude("opus", "5.5")], revisions: [
    { asOf: "2026-09", source: "A3", note: "cache hits $0.20/MTok = 0.05x (X6; model page); minimum not in the sources", set: { ttls: anthropicTtls(0.05), price: price(4, 20) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 5.5", patterns: [claude("sonnet", "5.5")], revisions: [
    { asOf: "2026-09", source: "A3", note: "model page: cache read $0.20/MTok = 0.1x; minimum not in the sources", set: { ttls: anthropicTtls(0.1), price: price(2, 10) } },
    { asOf: "2026-10-07", source: "X16", note: "cache reads cut to $0.10/MTok = 0.05x (third-party pricing changelogs; X6 also lists 0.05x)", set: { ttls: anthropicTtls(0.05) } }
  ] },
  { provider: "anthropic", family: "Claude Haiku 5.5", patterns: [claude("haiku", "5.5")], revisions: [
    { asOf: "2026-10-07", source: "X16", note: "third-party pricing changelogs: prompts over 100k tokens bill every token at the higher rates; minimum not in the sources", set: { price: price(0.1, 0.5, { thresholdTokens: 100_000, inputPerMTok: 0.5, outputPerMTok: 2.5 }) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 5", patterns: [claude("opus", "5")], revisions: [
    { asOf: "2026-07", source: "A1", set: { minCacheTokens: 512, price: price(5, 25) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 5", patterns: [claude("sonnet", "5")], revisions: [
    { asOf: "2026-07", source: "A1", note: "price from the model page (A3); a planned rise to $3/$15 was called off", set: { minCacheTokens: 1024, price: price(2, 10) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4.8", patterns: [claude("opus", "4.8")], revisions: [
    { asOf: "2026-07", source: "A1", note: "OpenRouter [R1] lists a 4096 minimum; price from A3", set: { minCacheTokens: 1024, price: price(5, 25) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4.7", patterns: [claude("opus", "4.7")], revisions: [
    { asOf: "2026-07", source: "A1", note: "the Bedrock table and LiteLLM say 4096; price from A3", set: { minCacheTokens: 2048, price: price(5, 25) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4.6", patterns: [claude("opus", "4.6")], revisions: [
    { asOf: "2026-02", source: "A3", set: { minCacheTokens: 4096, price: price(5, 25) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 4.6", patterns: [claude("sonnet", "4.6")], revisions: [
    { asOf: "2026-02", source: "X4", note: "earlier docs; price from A3", set: { minCacheTokens: 2048, price: price(3, 15) } },
    { asOf: "2026-07", source: "A1", note: "a user measured no caching until ~2048 [A7]", set: { minCacheTokens: 1024 } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4.5", patterns: [claude("opus", "4.5")], revisions: [
    { asOf: "2025-11", source: "A3", set: { minCacheTokens: 4096, price: price(5, 25) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 4.5", patterns: [claude("sonnet", "4.5")], revisions: [
    { asOf: "2025-09", source: "A3", note: "long-context rates for prompts over 200k (1M-context beta)", set: { minCacheTokens: 1024, price: price(3, 15, { thresholdTokens: 200_000, inputPerMTok: 6, outputPerMTok: 22.5 }) } }
  ] },
  { provider: "anthropic", family: "Claude Haiku 4.5", patterns: [claude("haiku", "4.5")], revisions: [
    { asOf: "2025-10", source: "A3", set: { minCacheTokens: 4096, price: price(1, 5) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4.1", patterns: [claude("opus", "4.1")], revisions: [
    { asOf: "2025-08", source: "A3", set: { minCacheTokens: 1024, price: price(15, 75) } }
  ] },
  { provider: "anthropic", family: "Claude Opus 4", patterns: [claude("opus", "4")], revisions: [
    { asOf: "2025-05", source: "A3", set: { minCacheTokens: 1024, price: price(15, 75) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 4", patterns: [claude("sonnet", "4")], revisions: [
    { asOf: "2025-05", source: "A3", note: "long-context rates for prompts over 200k (1M-context beta)", set: { minCacheTokens: 1024, price: price(3, 15, { thresholdTokens: 200_000, inputPerMTok: 6, outputPerMTok: 22.5 }) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 3.7", patterns: [claude3("3.7", "sonnet")], revisions: [
    { asOf: "2025-02", source: "A3", set: { minCacheTokens: 1024, price: price(3, 15) } }
  ] },
  { provider: "anthropic", family: "Claude Sonnet 3.5", patterns: [claude3("3.5", "sonnet")], revisions: [
    { asOf: "2024-10", source: "A2", set: { minCacheTokens: 1024, price: price(3, 15) } }
  ] },
  { provider: "anthropic", family: "Claude Haiku 3.5", patterns: [claude3("3.5", "haiku")], revisions: [
    { asOf: "2024-11", source: "A3", set: { minCacheTokens: 2048, price: price(0.8, 4) } }
  ] },
  { provider: "anthropic", family: "Claude Haiku 3", patterns: [claude3("3", "haiku")], revisions: [
    // A3 lists $0.30 / $0.50 writes and $0.03 hits on $0.25 input: 1.2x / 2x / 0.12x.
    { asOf: "2024-03", source: "A3", set: { minCacheTokens: 2048, price: price(0.25, 1.25), ttls: [{ ...anthropic5m(0.12), write: 1.2 }, anthropic1h(0.12)] } }
  ] }
]

// ---------------------------------------------------------------------------------
// Bedrock. Minimums and 1 h availability from the AWS table [B1, 2026]; the earlier
// table [X7] is kept as the older revision. Claude prices follow Anthropic's [X9].

const bedrockClaude = (family: string, pattern: RegExp, revisions: ReadonlyArray<Revision>): ModelEntry => {
  const anthropicRow = ANTHROPIC.find((e) => e.family === family)
  const priced = anthropicRow?.revisions.filter((r) => r.set.price !== undefined) ?? []
  return {
    provider: "bedrock",
    family,
    patterns: [pattern],
    revisions: [
      ...priced.map((r): Revision => ({ asOf: r.asOf, source: "X9", note: `Bedrock follows Anthropic's rates (${r.source})`, set: { price: r.set.price! } })),
      ...revisions
    ].sort((a, b) => a.asOf.localeCompare(b.asOf))
  }
}

const BEDROCK: ReadonlyArray<ModelEntry> = [
  bedrockClaude("Claude Fable 5.1", claude("fable", "5.1"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 512 } }]),
  bedrockClaude("Claude Fable 5", claude("fable", "5"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 512, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Mythos 5.1", claude("mythos", "5.1"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 512 } }]),
  bedrockClaude("Claude Mythos 5", claude("mythos", "5"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 512 } }]),
  bedrockClaude("Claude Mythos Preview", /^claude-mythos-preview/, [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 4096 } }]),
  bedrockClaude("Claude Opus 5", claude("opus", "5"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 512, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Sonnet 5", claude("sonnet", "5"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 1024, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Opus 4.8", claude("opus", "4.8"), [{ asOf: "2026-07", source: "B1", set: { minCacheTokens: 1024, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Opus 4.7", claude("opus", "4.7"), [{ asOf: "2026-07", source: "B1", note: "Anthropic's own table says 2048", set: { minCacheTokens: 4096, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Opus 4.6", claude("opus", "4.6"), [
    { asOf: "2026-02", source: "X7", note: "earlier AWS table: 4.6 models 5 min only", set: { minCacheTokens: 4096, ttls: [anthropic5m()] } },
    { asOf: "2026-07", source: "B1", set: { ttls: anthropicTtls() } }
  ]),
  bedrockClaude("Claude Sonnet 4.6", claude("sonnet", "4.6"), [
    { asOf: "2026-02", source: "X7", note: "earlier AWS table: 4.6 models 5 min only", set: { minCacheTokens: 1024, ttls: [anthropic5m()] } },
    { asOf: "2026-07", source: "B1", set: { ttls: anthropicTtls() } }
  ]),
  bedrockClaude("Claude Opus 4.5", claude("opus", "4.5"), [{ asOf: "2025-11", source: "B1", set: { minCacheTokens: 4096, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Sonnet 4.5", claude("sonnet", "4.5"), [
    { asOf: "2025-10", source: "X7", note: "earlier AWS table", set: { minCacheTokens: 4096, ttls: anthropicTtls() } },
    { asOf: "2026-07", source: "B1", set: { minCacheTokens: 1024 } }
  ]),
  bedrockClaude("Claude Haiku 4.5", claude("haiku", "4.5"), [{ asOf: "2025-10", source: "B1", set: { minCacheTokens: 4096, ttls: anthropicTtls() } }]),
  bedrockClaude("Claude Sonnet 3.7", claude3("3.7", "sonnet"), [{ asOf: "2025-04", source: "B1", set: { minCacheTokens: 1024, ttls: [anthropic5m()] } }]),
  bedrockClaude("Claude Sonnet 3.5", claude3("3.5", "sonnet"), [{ asOf: "2025-04", source: "B1", note: "3.5 Sonnet v2", set: { minCacheTokens: 1024, ttls: [anthropic5m()] } }]),
  {
    provider: "bedrock",
    family: "Amazon Nova",
    patterns: [/^nova-/],
    revisions: [{ asOf: "2025-04", source: "X8", note: "no tool checkpoints", set: { minCacheTokens: 1000, toolBreakpoints: false, ttls: [anthropic5m()] } }]
  }
]

// ---------------------------------------------------------------------------------
// OpenAI. Read multipliers from the cookbook [O2] and pricing; GPT-5.6+ from [O1 2026][O3].

const gpt56Fields: Partial<ModelFields> = {
  minCacheTokens: 1024,
  maxBreakpoints: 4,
  automatic: true,
  toolBreakpoints: false,
  ttls: [{ name: "30m", seconds: 1800, sliding: true, write: 1.25, read: 0.1 }],
  lookback: { unit: "breakpoints", count: 80 }
}

const OPENAI: ReadonlyArray<ModelEntry> = [
  { provider: "openai", family: "GPT-5.6 and later", patterns: [/^gpt-5\.(?:[6-9]|\d\d)/, /^gpt-[6-9]/], revisions: [
    { asOf: "2026-09", source: "O1", note: "explicit prompt_cache_breakpoint; implicit mode uses one of the 4 writes; lookup window conflicts (80 breakpoints vs 2+50) [X10]", set: { ...gpt56Fields } }
  ] },
  { provider: "openai", family: "GPT-5.5", patterns: [/^gpt-5\.5/], revisions: [
    { asOf: "2026-06", source: "O1", note: "only 24h retention", set: { ttls: [openai24h(0.1)] } }
  ] },
  { provider: "openai", family: "GPT-5.4 mini", patterns: [/^gpt-5\.4-mini/], revisions: [
    { asOf: "2026-03", source: "X17", note: "third-party price table (adk-model, March 2026)", set: { ttls: openaiAutomatic(0.1), price: price(0.75, 4.5) } }
  ] },
  { provider: "openai", family: "GPT-5.4", patterns: [exact("gpt-5.4")], revisions: [
    { asOf: "2026-03", source: "X17", note: "third-party price table (adk-model, March 2026)", set: { ttls: openaiAutomatic(0.1), price: price(2.5, 15) } }
  ] },
  { provider: "openai", family: "GPT-5.2", patterns: [/^gpt-5\.2(?!\d)/], revisions: [
    { asOf: "2025-12", source: "O2", note: "price from third-party tables (two agree on $1.75/$14; one says $1.50/$10)", set: { ttls: openaiAutomatic(0.1), price: price(1.75, 14) } }
  ] },
  { provider: "openai", family: "GPT-5.1", patterns: [exact("gpt-5.1")], revisions: [
    { asOf: "2025-11", source: "O2", set: { ttls: openaiAutomatic(0.1), price: price(1.25, 10) } }
  ] },
  { provider: "openai", family: "GPT-5 nano", patterns: [/^gpt-5-nano/], revisions: [
    { asOf: "2025-08", source: "O2", set: { ttls: openaiAutomatic(0.1), price: price(0.05, 0.4) } }
  ] },
  { provider: "openai", family: "GPT-5 mini", patterns: [/^gpt-5-mini/], revisions: [
    { asOf: "2025-08", source: "O2", set: { ttls: openaiAutomatic(0.1), price: price(0.25, 2) } }
  ] },
  { provider: "openai", family: "GPT-5", patterns: [exact("gpt-5")], revisions: [
    { asOf: "2025-08", source: "O2", set: { ttls: openaiAutomatic(0.1), price: price(1.25, 10) } }
  ] },
  { provider: "openai", family: "GPT-4.1 nano", patterns: [/^gpt-4\.1-nano/], revisions: [
    { asOf: "2025-04", source: "O2", set: { ttls: openaiAutomatic(0.25), price: price(0.1, 0.4) } }
  ] },
  { provider: "openai", family: "GPT-4.1 mini", patterns: [/^gpt-4\.1-mini/], revisions: [
    { asOf: "2025-04", source: "O2", set: { ttls: openaiAutomatic(0.25), price: price(0.4, 1.6) } }
  ] },
  { provider: "openai", family: "GPT-4.1", patterns: [exact("gpt-4.1")], revisions: [
    { asOf: "2025-04", source: "O2", set: { ttls: openaiAutomatic(0.25), price: price(2, 8) } }
  ] },
  { provider: "openai", family: "GPT-4o mini", patterns: [/^gpt-4o-mini/], revisions: [
    { asOf: "2024-10", source: "O2", set: { ttls: openaiAutomatic(0.5), price: price(0.15, 0.6) } }
  ] },
  { provider: "openai", family: "GPT-4o", patterns: [/^gpt-4o/, /^chatgpt-4o/], revisions: [
    { asOf: "2024-10", source: "O2", set: { ttls: openaiAutomatic(0.5), price: price(2.5, 10) } }
  ] },
  { provider: "openai", family: "o4-mini", patterns: [/^o4-mini/], revisions: [
    { asOf: "2025-04", source: "O2", set: { ttls: openaiAutomatic(0.25), price: price(1.1, 4.4) } }
  ] },
  { provider: "openai", family: "o3", patterns: [exact("o3")], revisions: [
    { asOf: "2025-06", source: "O2", set: { ttls: openaiAutomatic(0.25), price: price(2, 8) } }
  ] }
]

// ---------------------------------------------------------------------------------
// Gemini. Minimums by doc revision [G1]; read discount 0.25 in 2025 pricing [G5], 0.1
// now [G2][G4]; explicit storage per token-hour [G4].

const GEMINI: ReadonlyArray<ModelEntry> = [
  { provider: "gemini", family: "Gemini 2.5 Pro", patterns: [/^gemini-2\.5-pro/], revisions: [
    { asOf: "2025-05", source: "G1", set: { minCacheTokens: 2048, ttls: [geminiImplicit(0.25), geminiExplicit(0.25, 4.5)], price: price(1.25, 10, { thresholdTokens: 200_000, inputPerMTok: 2.5, outputPerMTok: 15 }) } },
    { asOf: "2025-09", source: "G1", set: { minCacheTokens: 4096 } },
    { asOf: "2026-07", source: "G1", note: "cached read $0.125/MTok vs $1.25 input [G4]", set: { minCacheTokens: 2048, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 4.5)] } }
  ] },
  { provider: "gemini", family: "Gemini 2.5 Flash-Lite", patterns: [/^gemini-2\.5-flash-lite/], revisions: [
    { asOf: "2025-07", source: "G1", set: { minCacheTokens: 1024, ttls: [geminiImplicit(0.25)], price: price(0.1, 0.4) } },
    { asOf: "2026-07", source: "G2", set: { ttls: [geminiImplicit(0.1)] } }
  ] },
  { provider: "gemini", family: "Gemini 2.5 Flash", patterns: [/^gemini-2\.5-flash/], revisions: [
    { asOf: "2025-05", source: "G1", set: { minCacheTokens: 1024, ttls: [geminiImplicit(0.25), geminiExplicit(0.25, 1)], price: price(0.3, 2.5) } },
    { asOf: "2026-07", source: "G1", set: { minCacheTokens: 2048, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 1)] } }
  ] },
  { provider: "gemini", family: "Gemini 3 Pro Preview", patterns: [/^gemini-3-pro/], revisions: [
    { asOf: "2025-11", source: "G1", set: { minCacheTokens: 4096, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 4.5)], price: price(2, 12, { thresholdTokens: 200_000, inputPerMTok: 4, outputPerMTok: 18 }) } }
  ] },
  { provider: "gemini", family: "Gemini 3 Flash Preview", patterns: [/^gemini-3-flash/], revisions: [
    { asOf: "2025-12", source: "G1", set: { minCacheTokens: 1024, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 1)], price: price(0.5, 3) } }
  ] },
  { provider: "gemini", family: "Gemini 3.1 Pro Preview", patterns: [/^gemini-3\.1-pro/], revisions: [
    { asOf: "2026-07", source: "G1", set: { minCacheTokens: 4096, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 4.5)] } }
  ] },
  { provider: "gemini", family: "Gemini 3.5-3.8 Flash", patterns: [/^gemini-3\.[5-8]-flash/], revisions: [
    { asOf: "2026-07", source: "G1", set: { minCacheTokens: 4096, ttls: [geminiImplicit(0.1), geminiExplicit(0.1, 1)] } }
  ] },
  { provider: "gemini", family: "Gemini 4 Argon", patterns: [/^gemini-4/], revisions: [
    { asOf: "2026-10", source: "G1", note: "explicit caches not supported on Gemini 4 Argon+", set: { minCacheTokens: 4096, ttls: [geminiImplicit(0.1)] } }
  ] }
]

/** The built-in table, every provider, most specific rows first within a provider. */
export const MODEL_TABLE: ReadonlyArray<ModelEntry> = [...ANTHROPIC, ...BEDROCK, ...OPENAI, ...GEMINI]

// ---------------------------------------------------------------------------------

/** Options for `lookupModel`. */
export interface LookupOptions {
  /** Resolve values as the sources stood on this date (`YYYY-MM[-DD]`); default: newest. */
  readonly asOf?: string
  /** Rows to search before the built-in table (overrides for new models or negotiated prices). */
  readonly table?: ReadonlyArray<ModelEntry>
}

const findRow = (provider: ProviderId, id: string, table: ReadonlyArray<ModelEntry>): ModelEntry | undefined =>
  table.find((e) => e.provider === provider && e.patterns.some((p) => p.test(id)))

/** The table row for a provider and model id, or undefined. */
export const findModel = (
  provider: ProviderId,
  model: string,
  table: ReadonlyArray<ModelEntry> = MODEL_TABLE
): ModelEntry | undefined => findRow(provider, normalizeModelId(model), table)

const applyRevision = (
  fields: Partial<Record<ModelField, unknown>>,
  provenance: Partial<Record<ModelField, Provenance>>,
  revision: Revision
): void => {
  const origin: Provenance = revision.note === undefined
    ? { asOf: revision.asOf, source: revision.source }
    : { asOf: revision.asOf, source: revision.source, note: revision.note }
  for (const key of Object.keys(revision.set) as Array<ModelField>) {
    fields[key] = revision.set[key]
    provenance[key] = origin
  }
}

/** Rows of the built-in table already resolved, the oldest dropped past `MAX_RESOLVED`. */
const MAX_RESOLVED = 512
const resolved = new Map<string, ModelLimits>()

/**
 * Resolve a model's caching limits and prices: the provider defaults, then the row's
 * revisions up to `asOf` in date order. Unknown models get the provider defaults with
 * `known: false`.
 *
 * @example
 * ```ts
 * import { lookupModel } from "@strata/providers"
 * lookupModel("anthropic", "claude-sonnet-4-6").minCacheTokens // 1024
 * lookupModel("anthropic", "claude-sonnet-4-6", { asOf: "2026-03" }).minCacheTokens // 2048
 * lookupModel("bedrock", "us.anthropic.claude-opus-4-7").minCacheTokens // 4096
 * ```
 */
export const lookupModel = (provider: ProviderId, model: string, options: LookupOptions = {}): ModelLimits => {
  // The built-in table never changes: its rows are built once per model and date and shared
  // (frozen). A caller's own table is resolved afresh.
  if (options.table !== undefined) return resolveModel(provider, model, options)
  const key = `${provider}\u0000${model}\u0000${options.asOf ?? ""}`
  const known = resolved.get(key)
  if (known !== undefined) return known
  const row = Object.freeze(resolveModel(provider, model, options))
  if (resolved.size >= MAX_RESOLVED) resolved.delete(resolved.keys().next().value ?? "")
  resolved.set(key, row)
  return row
}

const resolveModel = (provider: ProviderId, model: string, options: LookupOptions): ModelLimits => {
  const facts = modelFacts(model)
  const entry = (options.table === undefined ? undefined : findRow(provider, facts.id, options.table)) ??
    findRow(provider, facts.id, MODEL_TABLE)
  const fields: Partial<Record<ModelField, unknown>> = {}
  const provenance: Partial<Record<ModelField, Provenance>> = {}
  applyRevision(fields, provenance, PROVIDER_DEFAULTS[provider])
  const revisions = [...(entry?.revisions ?? [])]
    .filter((r) => options.asOf === undefined || r.asOf <= options.asOf)
    .sort((a, b) => a.asOf.localeCompare(b.asOf))
  for (const r of revisions) applyRevision(fields, provenance, r)
  return {
    ...(fields as unknown as ModelFields),
    provider,
    model,
    family: entry?.family ?? `unknown ${provider} model`,
    known: entry !== undefined,
    provenance,
    facts
  }
}

/**
 * The TTL spec for a requested TTL name, or the model's default when the model does
 * not offer it.
 */
export const ttlSpec = (limits: ModelFields, name?: string): TtlSpec => {
  const found = name === undefined ? undefined : limits.ttls.find((t) => t.name === name)
  // ttls is never empty: every provider default sets at least one.
  return found ?? limits.ttls[0]!
}
