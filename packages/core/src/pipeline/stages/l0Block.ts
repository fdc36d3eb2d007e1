/**
 * Stage 6, `l0Block`: the system message (system prompt, `# Repository Structure` header
 * with the legend and L0 symbols, `# Reference Files (Stable)`), then L0 history. Its
 * breakpoint sits on the system message, or on the last L0 history message if any. In
 * journal mode it renders the frozen L0 and no history (history is journaled in L3).
 */
import { Context, Effect, Layer } from "effect"
import { buildL0Block, counted, sectionOf } from "../../assembly/tiered.ts"
import { ItemKeys } from "../../domain/Item.ts"
import { withBlock, type Stage } from "../state.ts"

/** Replace this stage with `Layer.succeed(L0BlockStage, myStage)`. */
export class L0BlockStage extends Context.Service<L0BlockStage, Stage>()("@strata/core/pipeline/L0Block") {
  static readonly layer: Layer.Layer<L0BlockStage> = Layer.sync(L0BlockStage, () => l0Block)
}

export const l0Block: Stage = {
  name: "l0Block",
  run: (state) =>
    Effect.sync(() =>
      withBlock(state, buildL0Block({
        system: counted(state.input.systemPrompt, state.counter),
        systemItems: [ItemKeys.system],
        legend: state.symbols.legend,
        symbols: state.journal?.frozen.L0.symbols ?? sectionOf(state.symbols.tiers.L0, state.counter),
        files: state.journal?.frozen.L0.files ?? sectionOf(state.fileTiers.L0, state.counter),
        history: state.journal === undefined ? state.historyTiers.L0 : []
      }, state.counter))
    )
}
