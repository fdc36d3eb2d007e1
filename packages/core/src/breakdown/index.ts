/**
 * The context breakdown (docs/tiers.md, docs/pipeline.md): the blocks a request is made of, with their
 * tier, tokens, cache status, promotion threshold and contents, as JSON for UIs. Keys are
 * spelled as in the seed. Pure: computed from the same layout the request is built from.
 */
import { Schema } from "effect"
import { blockTokens, emptyCachedTiers } from "../assembly/parts.ts"
import { TierChange } from "../domain/Item.ts"
import { isCachedTier, Tier, TIER_NAMES, TIERS } from "../domain/Tier.ts"
import { contextEditReport, isDemotion, isPromotion, LeftOutItem, type LayoutSummary, type LeftOut } from "./report.ts"

export const BreakdownContent = Schema.Struct({
  type: Schema.String,
  tokens: Schema.Number,
  count: Schema.optionalKey(Schema.Number),
  files: Schema.optionalKey(Schema.Array(Schema.String))
})
export type BreakdownContent = typeof BreakdownContent.Type

export const BreakdownBlock = Schema.Struct({
  tier: Tier,
  name: Schema.String,
  tokens: Schema.Number,
  cached: Schema.Boolean,
  /** Consecutive unchanged appearances that earn this tier (0 for active). */
  threshold: Schema.Number,
  contents: Schema.Array(BreakdownContent)
})
export type BreakdownBlock = typeof BreakdownBlock.Type

/** What the request left out to stay within its budgets (`report.leftOut`, in the breakdown's spelling). */
export const BreakdownLeftOut = Schema.Struct({
  /** The map budget's cut: its budget and where it came from, the whole map's tokens, the files and tree it left out. */
  map: Schema.NullOr(Schema.Struct({
    budget_tokens: Schema.Number,
    budget: Schema.Literals(["configured", "model"]),
    map_tokens: Schema.Number,
    files: Schema.Number,
    file_tokens: Schema.Number,
    tree_tokens: Schema.Number
  })),
  /** Files, symbol blocks and the file tree shed to stay under the input limit. */
  files: Schema.Array(LeftOutItem),
  symbols: Schema.Array(LeftOutItem),
  tree_tokens: Schema.Number
})
export type BreakdownLeftOut = typeof BreakdownLeftOut.Type

const breakdownLeftOut = (l: LeftOut): BreakdownLeftOut => ({
  map: l.map === undefined
    ? null
    : { budget_tokens: l.map.budgetTokens, budget: l.map.budget, map_tokens: l.map.mapTokens, files: l.map.files, file_tokens: l.map.fileTokens, tree_tokens: l.map.treeTokens },
  files: l.files,
  symbols: l.symbols,
  tree_tokens: l.treeTokens
})

/**
 * The context breakdown. `promotions` and `demotions` are the item keys the last
 * committed update moved; `changes` has the details.
 *
 * @example
 * ```ts
 * // { blocks: [{ tier: "L0", name: "Most Stable", tokens: 8421, cached: true, threshold: 12,
 * //              contents: [{ type: "system", tokens: 1800 }, ...] }, ...],
 * //   total_tokens: 26217, cached_tokens: 23090, cached_share: 0.88, ... }
 * ```
 */
export const ContextBreakdown = Schema.Struct({
  model: Schema.String,
  mode: Schema.Literals(["tiered", "flat"]),
  blocks: Schema.Array(BreakdownBlock),
  total_tokens: Schema.Number,
  cached_tokens: Schema.Number,
  /** Share of the request's tokens in cached blocks (what a warm cache would read): `cached_tokens / total_tokens`. */
  cached_share: Schema.Number,
  /**
   * @deprecated The same figure as `cached_share`, under its former name; kept so existing
   * readers work. It is not a provider's cache hit rate (the HUD's "cache hit rate" is the
   * share of the prompt the provider billed as cache reads). Will be removed in 1.0.
   */
  cache_hit_rate: Schema.Number,
  promotions: Schema.Array(Schema.String),
  demotions: Schema.Array(Schema.String),
  empty_tiers_this_request: Schema.Number,
  empty_tiers_session_total: Schema.Number,
  changes: Schema.Array(TierChange),
  /** Present only when the map budget or shedding left something out of the request. */
  left_out: Schema.optionalKey(BreakdownLeftOut),
  /**
   * Synthetic assistant messages (the "Ok." acknowledgements of context sections before
   * the conversation) and their tokens, counted in `framing`. Never after the first history message.
   */
  synthetic_messages: Schema.optionalKey(Schema.Number),
  synthetic_tokens: Schema.optionalKey(Schema.Number),
  /** Context editing, when the history holds tool results: results shown as placeholders and the tokens that saves. */
  context_editing: Schema.optionalKey(Schema.Struct({
    tool_results: Schema.Number,
    cleared_results: Schema.Number,
    cleared_tokens: Schema.Number,
    newly_cleared_results: Schema.Number,
    newly_cleared_tokens: Schema.Number
  }))
})
export type ContextBreakdown = typeof ContextBreakdown.Type

/**
 * Build the breakdown of a layout. Each block lists its contents, then one `framing`
 * entry (message overhead, separators, acknowledgements) so contents add up to the
 * block's tokens, and blocks add up to `total_tokens`. In tiered mode every tier is
 * listed, an empty one with zero tokens and no contents; a flat request is one block.
 */
export const contextBreakdown = (s: LayoutSummary): ContextBreakdown => {
  const blocks: Array<BreakdownBlock> = []
  // The breakdown lists every tier, empty ones with zero tokens, so a UI can draw all five;
  // a tier the layout left empty is inserted where its rank puts it.
  const listed = new Set<Tier>()
  const listUpTo = (tier: Tier | undefined) => {
    if (s.mode === "flat") return
    for (const t of TIERS) {
      if (t === tier) return
      if (listed.has(t)) continue
      listed.add(t)
      blocks.push({ tier: t, name: TIER_NAMES[t], tokens: 0, cached: isCachedTier(t), threshold: isCachedTier(t) ? s.thresholds[t] : 0, contents: [] })
    }
  }
  for (const block of s.blocks) {
    if (!block.parts.some((p) => p.messages.length > 0)) continue
    listUpTo(block.tier)
    listed.add(block.tier)
    const tokens = blockTokens(block)
    const contents: Array<BreakdownContent> = block.parts.flatMap((p) => p.contents).map((c) => ({ ...c }))
    const framing = tokens - contents.reduce((n, c) => n + c.tokens, 0)
    if (framing !== 0) contents.push({ type: "framing", tokens: framing })
    blocks.push({
      tier: block.tier,
      name: TIER_NAMES[block.tier],
      tokens,
      cached: isCachedTier(block.tier),
      threshold: isCachedTier(block.tier) ? s.thresholds[block.tier] : 0,
      contents
    })
  }
  listUpTo(undefined)
  const total = blocks.reduce((n, b) => n + b.tokens, 0)
  const cached = blocks.filter((b) => b.cached).reduce((n, b) => n + b.tokens, 0)
  const empty = s.mode === "flat" ? 0 : emptyCachedTiers(s.blocks).length
  return {
    model: s.model,
    mode: s.mode,
    blocks,
    total_tokens: total,
    cached_tokens: cached,
    cached_share: total === 0 ? 0 : cached / total,
    cache_hit_rate: total === 0 ? 0 : cached / total,
    promotions: s.changes.filter(isPromotion).map((c) => c.key),
    demotions: s.changes.filter(isDemotion).map((c) => c.key),
    empty_tiers_this_request: empty,
    empty_tiers_session_total: s.emptyTiersBefore + empty,
    changes: s.changes,
    ...(s.leftOut === undefined ? {} : { left_out: breakdownLeftOut(s.leftOut) }),
    ...(s.synthetic === undefined ? {} : { synthetic_messages: s.synthetic.messages, synthetic_tokens: s.synthetic.tokens }),
    ...contextEditing(s)
  }
}

const contextEditing = (s: LayoutSummary) => {
  const e = contextEditReport(s)
  return e === undefined
    ? {}
    : {
      context_editing: {
        tool_results: e.toolResults,
        cleared_results: e.clearedResults,
        cleared_tokens: e.clearedTokens,
        newly_cleared_results: e.newlyClearedResults,
        newly_cleared_tokens: e.newlyClearedTokens
      }
    }
}
