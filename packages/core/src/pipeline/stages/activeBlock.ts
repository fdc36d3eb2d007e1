/**
 * Stage 9, `activeBlock`: the layout's uncached tail. The tiered layout's: file tree, active
 * history, URL context, Working Files (active files only) and the prompt with the
 * system reminder appended (images as parts), the sections after the history riding in
 * the final user message; the journal layout's has no tree or
 * history (they sit in L2 and the journal). Extra stages insert their sections between
 * these parts by name.
 */
import { Context, Effect, Layer } from "effect"
import { withLayoutBlocks, type Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(ActiveBlockStage, myStage)`. */
export class ActiveBlockStage extends Context.Service<ActiveBlockStage, Stage>()("@strata/core/pipeline/ActiveBlock") {
  static readonly layer: Layer.Layer<ActiveBlockStage> = Layer.sync(ActiveBlockStage, () => activeBlock)
}

/** Part names of the active block, in order; extra stages insert before one of them. */
export const ACTIVE_PARTS = ["tree", "history", "urls", "workingFiles", "prompt"] as const

export const activeBlock: Stage = {
  name: "activeBlock",
  run: (state) => Effect.sync(() => withLayoutBlocks(state, ["active"]))
}
