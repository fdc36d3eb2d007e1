/**
 * Stage 8, `cachedBlocks`: the layout's L1, L2 and L3 blocks. The seed layout's: each tier's
 * symbols and files as a user message with an `Ok.` reply, then its history; the
 * journal layout's: frozen L1 and L2 (with the file tree) and the journal in L3. An empty
 * tier emits nothing.
 */
import { Context, Effect, Layer } from "effect"
import { withLayoutBlocks, type Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(CachedBlocksStage, myStage)`. */
export class CachedBlocksStage extends Context.Service<CachedBlocksStage, Stage>()("@strata/core/pipeline/CachedBlocks") {
  static readonly layer: Layer.Layer<CachedBlocksStage> = Layer.sync(CachedBlocksStage, () => cachedBlocks)
}

export const cachedBlocks: Stage = {
  name: "cachedBlocks",
  run: (state) => Effect.sync(() => withLayoutBlocks(state, ["L1", "L2", "L3"]))
}
