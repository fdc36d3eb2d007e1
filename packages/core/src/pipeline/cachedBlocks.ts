/**
 * Stage 6, `cachedBlocks`: L1, L2 and L3, each a user message (`# Repository Structure
 * (continued)` symbols, then the tier's file header and files) with an `Ok.` reply, then
 * the tier's history as native messages. An empty tier emits nothing.
 */
import { Context, Effect, Layer } from "effect"
import { buildCachedBlock, sectionOf } from "../assembly/tiered.ts"
import { withBlock, type AssemblyState, type Stage } from "./state.ts"

/** Replace this stage with `Layer.succeed(CachedBlocksStage, myStage)`. */
export class CachedBlocksStage extends Context.Service<CachedBlocksStage, Stage>()("@strata/core/pipeline/CachedBlocks") {
  static readonly layer: Layer.Layer<CachedBlocksStage> = Layer.sync(CachedBlocksStage, () => cachedBlocks)
}

export const cachedBlocks: Stage = {
  name: "cachedBlocks",
  run: (state) =>
    Effect.sync(() =>
      (["L1", "L2", "L3"] as const).reduce<AssemblyState>((s, tier) =>
        withBlock(s, buildCachedBlock(tier, {
          symbols: sectionOf(s.symbols.tiers[tier], s.counter),
          files: sectionOf(s.fileTiers[tier], s.counter),
          history: s.historyTiers[tier]
        }, s.counter)), state)
    )
}
