/**
 * Stage 7, `l0Block`: the layout's L0 block. In both layouts it opens with the system
 * message (system prompt, `# Repository Structure` with the legend and L0 symbols,
 * `# Reference Files (Stable)`); the seed layout's adds L0 history. Its breakpoint sits on its
 * last message.
 */
import { Context, Effect, Layer } from "effect"
import { withLayoutBlocks, type Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(L0BlockStage, myStage)`. */
export class L0BlockStage extends Context.Service<L0BlockStage, Stage>()("@strata/core/pipeline/L0Block") {
  static readonly layer: Layer.Layer<L0BlockStage> = Layer.sync(L0BlockStage, () => l0Block)
}

export const l0Block: Stage = {
  name: "l0Block",
  run: (state) => Effect.sync(() => withLayoutBlocks(state, ["L0"]))
}
