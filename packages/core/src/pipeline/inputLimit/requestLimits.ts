/**
 * How large a request may be: the model's input limit (core's model table, or one you
 * set), the tokens kept for the reply, the 90% line that shedding aims under (docs/configuration.md), and
 * the repository map's default budget derived from them. The `inputLimit` stage sheds to
 * these limits and the runner refuses a request still over them with `RequestTooLarge`.
 */
import { Context, Layer } from "effect"
import type { LeftOut, MapLeftOut } from "../../breakdown/report.ts"
import { modelInfo } from "../../models/modelTable.ts"
import { formatCount as fmt } from "../../internal/formatCount.ts"

/** Shedding aims to keep the request and its output reserve under this share of the input limit (90%). */
export const SHED_SHARE = 0.9

/**
 * The most tokens kept free for the reply by default. Less when the model's output limit
 * is smaller, and never more than an eighth of the input limit (a small window keeps
 * room for the request).
 */
export const DEFAULT_OUTPUT_RESERVE_TOKENS = 8_192

/** The default output reserve for an input and output limit. */
export const defaultOutputReserve = (maxInputTokens: number, maxOutputTokens: number): number =>
  Math.min(maxOutputTokens, DEFAULT_OUTPUT_RESERVE_TOKENS, Math.floor(maxInputTokens / 8))

/**
 * The default map budget's share of what a request may hold after the output reserve; the
 * rest is for files, history and the prompt. A tenth: the map rides in every request, so a
 * large one costs its cache reads every time and crowds out the files the user works on.
 */
export const MAP_SHARE = 0.1

/**
 * The most tokens the default map budget takes, whatever the window: about 400 files'
 * blocks, enough for the core of most repositories (a larger map keeps its most
 * referenced files). 8% of a 200,000-token window. Set `mapTokens` for more.
 */
export const MAX_DEFAULT_MAP_TOKENS = 16_384

/**
 * What you set about a request's size. Every field is optional: an absent one comes from
 * the model (`modelInfo(model)`).
 */
export interface RequestLimitSettings {
  /** The model's input limit, when the model table does not know it (or a gateway caps it lower). */
  readonly maxInputTokens?: number | undefined
  /** Tokens kept free for the reply. Default: `defaultOutputReserve` (8,192, or less for a small model). */
  readonly outputReserveTokens?: number | undefined
  /**
   * Token budget of the repository map (legend, file tree and symbol blocks). Default:
   * `defaultMapTokens`, a tenth of what a request may hold after the output reserve, at
   * most `MAX_DEFAULT_MAP_TOKENS`.
   */
  readonly mapTokens?: number | undefined
  /**
   * Which blocks a map over its budget keeps: `"references"` (default) the most referenced
   * files, an order that stays put between requests; `"focus"` the files ranked around the
   * files in context (Aider's personalised ranking, `SymbolMapSnapshot.rankFor`), which
   * favours a session's working files but moves when the selection changes. An index
   * without `rankFor` falls back to `"references"`.
   */
  readonly mapRanking?: "references" | "focus" | undefined
}

/**
 * The request-size settings of the requests assembled in this context (default: all from
 * the model). Provide it with `requestLimits(...)`.
 */
export const RequestLimits = Context.Reference<RequestLimitSettings>("@strata/core/pipeline/RequestLimits", {
  defaultValue: () => ({})
})

/**
 * A layer setting the request-size settings.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Pipeline, requestLimits } from "@strata/core/effect"
 * // A model the table does not know, with a 32,000-token window; the map gets 4,000 tokens.
 * const layer = Layer.mergeAll(Pipeline.layer, requestLimits({ maxInputTokens: 32_000, mapTokens: 4_000 }))
 * ```
 */
export const requestLimits = (settings: RequestLimitSettings): Layer.Layer<never> => Layer.succeed(RequestLimits, settings)

/** The limits one request is assembled under, every value resolved. */
export interface ResolvedLimits {
  readonly model: string
  readonly maxInputTokens: number
  readonly outputReserveTokens: number
  /** `SHED_SHARE` of the input limit: shedding aims to keep the request plus the reserve under it. */
  readonly shedLimitTokens: number
  /** The repository map's budget. */
  readonly mapTokens: number
  /** Whether the map budget was set (`configured`) or derived from the model's limits (`model`). */
  readonly mapBudget: "configured" | "model"
}

/**
 * The default budget of the repository map: `MAP_SHARE` (a tenth) of what a request may
 * hold under the 90% shedding line once the output reserve is set aside, at most
 * `MAX_DEFAULT_MAP_TOKENS`. It depends on the model only, never on the request, so the map
 * it cuts stays the same from request to request.
 *
 * @example
 * ```ts
 * import { defaultMapTokens } from "@strata/core"
 * defaultMapTokens(200_000, 8_192) // 16384
 * defaultMapTokens(32_000, 4_000) // 2480
 * ```
 */
export const defaultMapTokens = (maxInputTokens: number, outputReserveTokens: number): number =>
  Math.max(0, Math.min(MAX_DEFAULT_MAP_TOKENS, Math.floor((Math.floor(SHED_SHARE * maxInputTokens) - outputReserveTokens) * MAP_SHARE)))

/**
 * The limits of a request to `model`: the settings where given, the model table's
 * limits otherwise. Pure.
 *
 * @example
 * ```ts
 * import { resolveRequestLimits } from "@strata/core"
 * resolveRequestLimits("claude-sonnet-4-6")
 * // { model: "claude-sonnet-4-6", maxInputTokens: 200000, outputReserveTokens: 8192,
 * //   shedLimitTokens: 180000, mapTokens: 16384, mapBudget: "model" }
 * ```
 */
export const resolveRequestLimits = (model: string, settings: RequestLimitSettings = {}): ResolvedLimits => {
  const info = modelInfo(model)
  const maxInputTokens = settings.maxInputTokens ?? info.maxInputTokens
  const outputReserveTokens = settings.outputReserveTokens ?? defaultOutputReserve(maxInputTokens, info.maxOutputTokens)
  return {
    model,
    maxInputTokens,
    outputReserveTokens,
    shedLimitTokens: Math.floor(SHED_SHARE * maxInputTokens),
    mapTokens: settings.mapTokens ?? defaultMapTokens(maxInputTokens, outputReserveTokens),
    mapBudget: settings.mapTokens === undefined ? "model" : "configured"
  }
}

/** Whether a request left anything out (a map budget that cut nothing does not count). */
export const leftOutAnything = (leftOut: LeftOut): boolean =>
  leftOut.files.length > 0 || leftOut.symbols.length > 0 || leftOut.treeTokens > 0 ||
  (leftOut.map !== undefined && (leftOut.map.files > 0 || leftOut.map.treeTokens > 0))

/**
 * The warning for a map the model-derived budget cut, or undefined when it cut nothing or
 * the budget was configured (a budget you set cuts silently, as asked; the report still
 * says what it left out).
 */
export const mapCutWarning = (cut: MapLeftOut, limits: ResolvedLimits): string | undefined => {
  if (cut.budget === "configured" || (cut.files === 0 && cut.treeTokens === 0)) return undefined
  const what = [
    ...(cut.treeTokens > 0 ? [`the file tree (${fmt(cut.treeTokens)} tokens)`] : []),
    ...(cut.files > 0 ? [`the symbol blocks of the ${fmt(cut.files)} least referenced files (${fmt(cut.fileTokens)} tokens)`] : [])
  ].join(" and ")
  return `The repository map (${fmt(cut.mapTokens)} tokens) is larger than its ${fmt(cut.budgetTokens)}-token budget, derived from ${limits.model}'s ` +
    `${fmt(limits.maxInputTokens)}-token input limit; ${what} ${cut.files > 0 ? "are" : "is"} left out of the request. Set mapTokens to choose the budget.`
}
