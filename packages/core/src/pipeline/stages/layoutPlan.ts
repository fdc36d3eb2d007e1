/**
 * Stage 6, `layoutPlan`: what the layout mode decides before ordering. The journal layout
 * plans its frozen tiers, journal and Working Files from the memory of the last committed
 * request; the seed layout plans nothing.
 */
import { Context, Layer } from "effect"
import type { Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(LayoutPlanStage, myStage)`. */
export class LayoutPlanStage extends Context.Service<LayoutPlanStage, Stage>()("@strata/core/pipeline/LayoutPlan") {
  static readonly layer: Layer.Layer<LayoutPlanStage> = Layer.sync(LayoutPlanStage, () => layoutPlan)
}

export const layoutPlan: Stage = {
  name: "layoutPlan",
  run: (state) => state.layout.plan(state)
}

/** @deprecated Renamed `LayoutPlanStage`: the stage plans for whichever layout mode is in use. */
export const JournalStage = LayoutPlanStage
/** @deprecated Renamed `LayoutPlanStage`. */
export type JournalStage = LayoutPlanStage

/** @deprecated Renamed `layoutPlan`. */
export const journalStage = layoutPlan
