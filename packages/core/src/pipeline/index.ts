/**
 * The assembly pipeline: the stages in the order they run (the one place that lists
 * them), extra stages slotted in by name, and the layers that provide the defaults.
 * Stages compute, a layout mode orders (`layouts.ts`), a `Placement` renders.
 * Replace a stage by providing another Layer for its service; add one through `ExtraStages`.
 *
 * Folders: `base/` (the state, entries and the memories a request carries), `stages/`
 * (the plain stages), and one folder per feature with its stage and helpers:
 * `symbolMap/`, `inputLimit/`, `contextEditing/`, `journal/` (layout, plan, codec) and
 * `seed/` (layout, flat messages, placement). Features import `base/`, never this folder.
 */
import { Context, Effect, Layer } from "effect"
import { AssemblySession } from "./assemblySession.ts"
import { ActiveBlockStage } from "./stages/activeBlock.ts"
import { ActiveFilesStage } from "./stages/activeFiles.ts"
import { CachedBlocksStage } from "./stages/cachedBlocks.ts"
import { ContextEditingStage } from "./contextEditing/contextEditing.ts"
import { FileTiersStage } from "./stages/fileTiers.ts"
import { HistoryTiersStage } from "./stages/historyTiers.ts"
import { InputLimitStage } from "./inputLimit/inputLimit.ts"
import { L0BlockStage } from "./stages/l0Block.ts"
import { LayoutPlanStage } from "./stages/layoutPlan.ts"
import { PlacementStage } from "./stages/providerPlacement.ts"
import { reviewContext } from "./stages/reviewContext.ts"
import { SymbolDataStage } from "./symbolMap/symbolData.ts"
import { TrackStage } from "./stages/track.ts"
import { StageError, type Stage } from "./base/state.ts"

/** An extra stage and the stage it runs after. */
export interface StageInsertion {
  readonly stage: Stage
  readonly after: string
}

/** Extra stages in the default pipeline: the review-context stage, after `activeBlock`. */
export const DEFAULT_EXTRA_STAGES: ReadonlyArray<StageInsertion> = [{ stage: reviewContext, after: "activeBlock" }]

/**
 * Extra stages, each run after the named stage (several after one stage run in list
 * order). Defaults to the review-context stage; `extraStages(...)` keeps it.
 */
export const ExtraStages = Context.Reference<ReadonlyArray<StageInsertion>>("@strata/core/pipeline/ExtraStages", {
  defaultValue: () => DEFAULT_EXTRA_STAGES
})

/**
 * A layer adding stages to the default ones.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { extraStages, type Stage } from "@strata/core/effect"
 * const audit: Stage = { name: "audit", run: (s) => Effect.as(Effect.log(s.blocks.length), s) }
 * const layer = extraStages({ stage: audit, after: "track" })
 * ```
 */
export const extraStages = (...insertions: ReadonlyArray<StageInsertion>): Layer.Layer<never> =>
  Layer.succeed(ExtraStages, [...DEFAULT_EXTRA_STAGES, ...insertions])

/** The stage services the pipeline reads. */
export type StageServices =
  | ActiveFilesStage
  | FileTiersStage
  | SymbolDataStage
  | HistoryTiersStage
  | ContextEditingStage
  | LayoutPlanStage
  | InputLimitStage
  | L0BlockStage
  | CachedBlocksStage
  | ActiveBlockStage
  | PlacementStage
  | TrackStage

/** The stages of one request, in order: the nine seed stages, `contextEditing`, `layoutPlan` and `inputLimit`, with extra stages slotted in. */
export const pipelineStages: Effect.Effect<ReadonlyArray<Stage>, StageError, StageServices> = Effect.gen(function* () {
  const stages: ReadonlyArray<Stage> = [
    yield* ActiveFilesStage, //   selected files: normalized, hashed, counted
    yield* FileTiersStage, //     each file's tier (untracked: active)
    yield* SymbolDataStage, //    symbol blocks by tier; first request: initial placement
    yield* HistoryTiersStage, //  each history item's tier (a message or a tool exchange)
    yield* ContextEditingStage, // old tool results cleared when that pays (cache-aware)
    yield* LayoutPlanStage, //    the layout's plan (journal: frozen tiers, journal, Working Files)
    yield* InputLimitStage, //    within the model's input limit: sheds files, then map blocks
    yield* L0BlockStage, //       the layout's L0 block: the system message (+ L0 history)
    yield* CachedBlocksStage, //  the layout's L1, L2 and L3 blocks
    yield* ActiveBlockStage, //   the layout's uncached tail, ending with the prompt
    yield* PlacementStage, //     the layout's neutral request -> the provider's request
    yield* TrackStage //          items + pending tracker update
  ]
  return yield* withExtras(stages, yield* ExtraStages)
})

const withExtras = (stages: ReadonlyArray<Stage>, extras: ReadonlyArray<StageInsertion>): Effect.Effect<ReadonlyArray<Stage>, StageError> => {
  const out = [...stages]
  for (const extra of extras) {
    const anchor = out.findIndex((s) => s.name === extra.after)
    if (anchor < 0) {
      return Effect.fail(new StageError({ stage: extra.stage.name, reason: `it runs after "${extra.after}", which is not in the pipeline (stages: ${out.map((s) => s.name).join(", ")})` }))
    }
    // After the anchor and any extras already slotted after it, so list order is kept.
    let at = anchor + 1
    while (at < out.length && extras.some((e) => e.stage === out[at] && e.after === extra.after)) at++
    out.splice(at, 0, extra.stage)
  }
  return Effect.succeed(out)
}

/** Every default stage's layer. */
export const StagesLayer: Layer.Layer<StageServices> = Layer.mergeAll(
  ActiveFilesStage.layer,
  FileTiersStage.layer,
  SymbolDataStage.layer,
  HistoryTiersStage.layer,
  ContextEditingStage.layer,
  LayoutPlanStage.layer,
  InputLimitStage.layer,
  L0BlockStage.layer,
  CachedBlocksStage.layer,
  ActiveBlockStage.layer,
  PlacementStage.layer,
  TrackStage.layer
)

/**
 * The pipeline's layer: every default stage and the session bookkeeping. A request also
 * needs a `Tokenizer`, and uses a `Tracker` (without one it falls back to flat), a
 * `SymbolIndex` and a `Placement` (default: the OpenAI-compatible format with `cache_control`) when
 * the context has them.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FileTiersStage, fileTiers, Pipeline } from "@strata/core/effect"
 * // Later layers win: this pipeline runs a custom fileTiers stage.
 * const layer = Layer.mergeAll(Pipeline.layer, Layer.succeed(FileTiersStage, { ...fileTiers }))
 * ```
 */
export const Pipeline = {
  layer: Layer.mergeAll(StagesLayer, AssemblySession.layer)
} as const

export * from "./assemblySession.ts"
export * from "./base/contextEditMemory.ts"
export * from "./base/entries.ts"
export * from "./base/journalMemory.ts"
export * from "./base/providerCache.ts"
export * from "./base/state.ts"
export * from "./contextEditing/contextEditing.ts"
export * from "./contextEditing/contextEdits.ts"
export * from "./inputLimit/inputLimit.ts"
export * from "./inputLimit/requestLimits.ts"
export * from "./journal/journal.ts"
export * from "./journal/journalCodec.ts"
export * from "./journal/journalPlan.ts"
export * from "./layouts.ts"
export * from "./seed/flat.ts"
export * from "./seed/seed.ts"
export * from "./seed/seedPlacement.ts"
export * from "./stages/activeBlock.ts"
export * from "./stages/activeFiles.ts"
export * from "./stages/cachedBlocks.ts"
export * from "./stages/fileTiers.ts"
export * from "./stages/historyTiers.ts"
export * from "./stages/l0Block.ts"
export * from "./stages/layoutPlan.ts"
export * from "./stages/providerPlacement.ts"
export * from "./stages/reviewContext.ts"
export * from "./stages/track.ts"
export * from "./symbolMap/mapBudget.ts"
export * from "./symbolMap/symbolData.ts"
