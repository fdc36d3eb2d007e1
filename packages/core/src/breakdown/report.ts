/**
 * The `TierReport` that comes with every assembly: the tier-info fields (docs/tiers.md) per
 * tier, token totals per category, the tracker changes this request makes (promotions,
 * demotions) and the session's empty-tier count. Pure, computed from the layout.
 */
import { Schema } from "effect"
import { blockTokens, emptyCachedTiers, type Content, type LayoutBlock } from "../assembly/parts.ts"
import { TierChange } from "../domain/Item.ts"
import { CACHED_TIERS, TIERS, tierRank, type CachedTier, type Tier } from "../domain/Tier.ts"

const tierInfoFields = {
  tokens: Schema.Number,
  symbols: Schema.Number,
  files: Schema.Number,
  history: Schema.Number,
  hasTree: Schema.Boolean
}
/** One cached tier: its tokens and how many symbol blocks, files and history messages it renders. */
export const TierInfo = Schema.Struct(tierInfoFields)
export type TierInfo = typeof TierInfo.Type
export const L0TierInfo = Schema.Struct({ ...tierInfoFields, hasSystem: Schema.Boolean, hasLegend: Schema.Boolean })
export type L0TierInfo = typeof L0TierInfo.Type
export const ActiveTierInfo = Schema.Struct({ ...tierInfoFields, hasUrls: Schema.Boolean, hasHistory: Schema.Boolean })
export type ActiveTierInfo = typeof ActiveTierInfo.Type

/** Tokens by kind of content, over the whole request; `framing` is message overhead, separators and acknowledgements. */
export const TokenCategories = Schema.Struct({
  /** The tool definitions (rendered before the system prompt). */
  tools: Schema.Number,
  system: Schema.Number,
  legend: Schema.Number,
  symbols: Schema.Number,
  files: Schema.Number,
  tree: Schema.Number,
  urls: Schema.Number,
  review: Schema.Number,
  history: Schema.Number,
  prompt: Schema.Number,
  other: Schema.Number,
  framing: Schema.Number
})
export type TokenCategories = typeof TokenCategories.Type

/** One item left out of a request, with its tokens. */
export const LeftOutItem = Schema.Struct({ path: Schema.String, tokens: Schema.Number })
export type LeftOutItem = typeof LeftOutItem.Type

/** What the repository map's budget left out of a request (the `symbolData` stage). */
export const MapLeftOut = Schema.Struct({
  budgetTokens: Schema.Number,
  /** `configured` (you set `mapTokens`) or `model` (derived from the model's input limit). */
  budget: Schema.Literals(["configured", "model"]),
  /** The whole map: legend, file tree and every block (with separators). */
  mapTokens: Schema.Number,
  /** Files whose symbol blocks did not fit, and the tokens of those blocks. */
  files: Schema.Number,
  fileTokens: Schema.Number,
  /** The file tree's tokens when it did not fit (0 when it is in the request). */
  treeTokens: Schema.Number
})
export type MapLeftOut = typeof MapLeftOut.Type

/**
 * What a request left out to stay within its budgets: the map budget's cut and what the
 * `inputLimit` stage shed. In `report.leftOut`, the breakdown's `left_out` and the HUD
 * when anything was left out.
 */
export const LeftOut = Schema.Struct({
  map: Schema.UndefinedOr(MapLeftOut),
  /** Selected files shed from this request, largest first. */
  files: Schema.Array(LeftOutItem),
  /** Symbol blocks shed from this request, least referenced first. */
  symbols: Schema.Array(LeftOutItem),
  /** The file tree's tokens when shedding removed it (0 when it did not). */
  treeTokens: Schema.Number
})
export type LeftOut = typeof LeftOut.Type

/**
 * What context editing did in one request: the tool results shown as placeholders and
 * the tokens that saves (all cleared so far that are still in the history), and those
 * this request cleared.
 */
export const ContextEditReport = Schema.Struct({
  toolResults: Schema.Number,
  clearedResults: Schema.Number,
  clearedTokens: Schema.Number,
  newlyClearedResults: Schema.Number,
  newlyClearedTokens: Schema.Number
})
export type ContextEditReport = typeof ContextEditReport.Type

/**
 * What one assembly put where.
 *
 * @example
 * ```ts
 * // result.report.tiers.L1.tokens, result.report.promotions, result.report.emptyTiers
 * ```
 */
export const TierReport = Schema.Struct({
  model: Schema.String,
  /** `flat` when no tracker was available and the request fell back to flat assembly. */
  mode: Schema.Literals(["tiered", "flat"]),
  tiers: Schema.Struct({ L0: L0TierInfo, L1: TierInfo, L2: TierInfo, L3: TierInfo, active: ActiveTierInfo }),
  thresholds: Schema.Struct({ L0: Schema.Number, L1: Schema.Number, L2: Schema.Number, L3: Schema.Number }),
  totalTokens: Schema.Number,
  cachedTokens: Schema.Number,
  categories: TokenCategories,
  /** Cached tiers skipped because empty, this request. */
  emptyTiers: Schema.Number,
  /** Empty tiers skipped over the session, this request included. */
  emptyTiersSession: Schema.Number,
  /** Items this request's tracker update moves to a more stable tier. */
  promotions: Schema.Array(TierChange),
  /** Items it moves to a less stable tier (a changed hash sends an item to active). */
  demotions: Schema.Array(TierChange),
  /** Every change, initial placement and removals included. */
  changes: Schema.Array(TierChange),
  /** What the map budget and shedding left out of the request; absent when nothing was. */
  leftOut: Schema.optionalKey(LeftOut),
  /** Context editing, when the history holds tool results. */
  contextEditing: Schema.optionalKey(ContextEditReport),
  /**
   * The synthetic assistant messages the request carries (the acknowledgements, "Ok.",
   * of context sections before the conversation) and their tokens (part of `framing`).
   * None follows the first history message. Absent in reports made before it was counted.
   */
  synthetic: Schema.optionalKey(Schema.Struct({ messages: Schema.Number, tokens: Schema.Number }))
})
export type TierReport = typeof TierReport.Type

/** The layout and bookkeeping a report or breakdown is computed from. */
export interface LayoutSummary {
  readonly model: string
  readonly mode: "tiered" | "flat"
  readonly blocks: ReadonlyArray<LayoutBlock>
  readonly thresholds: Readonly<Record<CachedTier, number>>
  readonly changes: ReadonlyArray<TierChange>
  /** Empty tiers over the session before this request. */
  readonly emptyTiersBefore: number
  /** What the request left out, when anything was. */
  readonly leftOut?: LeftOut | undefined
  /** What the contextEditing stage did, if it ran (its plan has these figures). */
  readonly contextEdits?: ContextEditReport | undefined
  /** The synthetic assistant messages of the layout and their tokens (`syntheticMessages`). */
  readonly synthetic?: { readonly messages: number; readonly tokens: number } | undefined
}

/** The context-editing figures of a summary, when the history holds tool results. */
export const contextEditReport = (s: LayoutSummary): ContextEditReport | undefined => {
  const e = s.contextEdits
  if (e === undefined || e.toolResults === 0) return undefined
  return {
    toolResults: e.toolResults,
    clearedResults: e.clearedResults,
    clearedTokens: e.clearedTokens,
    newlyClearedResults: e.newlyClearedResults,
    newlyClearedTokens: e.newlyClearedTokens
  }
}

/** A change that moves an existing item to a more stable tier. */
export const isPromotion = (c: TierChange): boolean =>
  c.from !== null && c.to !== null && tierRank(c.to) < tierRank(c.from)

/** A change that moves an existing item to a less stable tier. */
export const isDemotion = (c: TierChange): boolean =>
  c.from !== null && c.to !== null && tierRank(c.to) > tierRank(c.from)

const sumContents = (contents: ReadonlyArray<Content>, type: string, field: "count" | "tokens"): number => {
  let n = 0
  for (const c of contents) if (c.type === type) n += field === "count" ? (c.count ?? 0) : c.tokens
  return n
}

/** Contents of a tier's block, flattened over its parts. */
export const contentsOf = (blocks: ReadonlyArray<LayoutBlock>, tier: Tier): ReadonlyArray<Content> =>
  blocks.filter((b) => b.tier === tier).flatMap((b) => b.parts.flatMap((p) => p.contents))

/** Tokens each tier's block sends (0 for an empty tier). */
export const tierTokens = (blocks: ReadonlyArray<LayoutBlock>, tier: Tier): number =>
  blocks.filter((b) => b.tier === tier).reduce((n, b) => n + blockTokens(b), 0)

const KNOWN = ["tools", "system", "legend", "symbols", "files", "tree", "urls", "review", "history", "prompt"] as const

/** Build the report of one assembly. */
export const tierReport = (s: LayoutSummary): TierReport => {
  const info = (tier: Tier) => {
    const contents = contentsOf(s.blocks, tier)
    const has = (type: string) => contents.some((c) => c.type === type && c.tokens > 0)
    return {
      contents,
      has,
      base: {
        tokens: tierTokens(s.blocks, tier),
        symbols: sumContents(contents, "symbols", "count"),
        files: sumContents(contents, "files", "count"),
        history: sumContents(contents, "history", "count"),
        hasTree: has("tree")
      }
    }
  }
  const l0 = info("L0")
  const active = info("active")
  const all = TIERS.flatMap((t) => contentsOf(s.blocks, t))
  const total = TIERS.reduce((n, t) => n + tierTokens(s.blocks, t), 0)
  const cached = CACHED_TIERS.reduce((n, t) => n + tierTokens(s.blocks, t), 0)
  const known = Object.fromEntries(KNOWN.map((k) => [k, sumContents(all, k, "tokens")])) as Record<(typeof KNOWN)[number], number>
  const other = all.filter((c) => !(KNOWN as ReadonlyArray<string>).includes(c.type)).reduce((n, c) => n + c.tokens, 0)
  const content = Object.values(known).reduce((a, b) => a + b, 0) + other
  const empty = s.mode === "flat" ? 0 : emptyCachedTiers(s.blocks).length
  return {
    model: s.model,
    mode: s.mode,
    tiers: {
      L0: { ...l0.base, hasSystem: l0.has("system"), hasLegend: l0.has("legend") },
      L1: info("L1").base,
      L2: info("L2").base,
      L3: info("L3").base,
      active: { ...active.base, hasUrls: active.has("urls"), hasHistory: active.base.history > 0 }
    },
    thresholds: { ...s.thresholds },
    totalTokens: total,
    cachedTokens: cached,
    categories: { ...known, other, framing: total - content },
    emptyTiers: empty,
    emptyTiersSession: s.emptyTiersBefore + empty,
    promotions: s.changes.filter(isPromotion),
    demotions: s.changes.filter(isDemotion),
    changes: s.changes,
    ...(s.leftOut === undefined ? {} : { leftOut: s.leftOut }),
    ...withContextEdits(s),
    ...(s.synthetic === undefined ? {} : { synthetic: s.synthetic })
  }
}

const withContextEdits = (s: LayoutSummary): { readonly contextEditing?: ContextEditReport } => {
  const report = contextEditReport(s)
  return report === undefined ? {} : { contextEditing: report }
}
