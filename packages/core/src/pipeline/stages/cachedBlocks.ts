/**
 * Stage 7, `cachedBlocks`: L1, L2 and L3, each a user message (`# Repository Structure
 * (continued)` symbols, then the tier's file header and files) with an `Ok.` reply, then
 * the tier's history as native messages. An empty tier emits nothing. In journal mode
 * L1 and L2 are the frozen tiers (L2 ends with the file tree) and L3 is the journal.
 */
import { Context, Effect, Layer } from "effect"
import { buildCachedBlock, sectionOf, treePart, type LayoutBlock } from "../../assembly/tiered.ts"
import type { JournalPlan } from "../journal.ts"
import { withBlock, type AssemblyState, type Stage } from "../state.ts"

/** Replace this stage with `Layer.succeed(CachedBlocksStage, myStage)`. */
export class CachedBlocksStage extends Context.Service<CachedBlocksStage, Stage>()("@strata/core/pipeline/CachedBlocks") {
  static readonly layer: Layer.Layer<CachedBlocksStage> = Layer.sync(CachedBlocksStage, () => cachedBlocks)
}

const journalBlocks = (state: AssemblyState, plan: JournalPlan): ReadonlyArray<LayoutBlock> => {
  const c = state.counter
  const l2 = buildCachedBlock("L2", { symbols: plan.frozen.L2.symbols, files: plan.frozen.L2.files, history: [] }, c)
  return [
    buildCachedBlock("L1", { symbols: plan.frozen.L1.symbols, files: plan.frozen.L1.files, history: [] }, c),
    { tier: "L2", parts: [...l2.parts, ...(plan.tree === undefined ? [] : treePart(plan.tree, c, [plan.tree.key]))] },
    { tier: "L3", parts: plan.journal }
  ]
}

export const cachedBlocks: Stage = {
  name: "cachedBlocks",
  run: (state) =>
    Effect.sync(() => {
      const plan = state.journal
      if (plan !== undefined) return journalBlocks(state, plan).reduce(withBlock, state)
      return (["L1", "L2", "L3"] as const).reduce<AssemblyState>((s, tier) =>
        withBlock(s, buildCachedBlock(tier, {
          symbols: sectionOf(s.symbols.tiers[tier], s.counter),
          files: sectionOf(s.fileTiers[tier], s.counter),
          history: s.historyTiers[tier]
        }, s.counter)), state)
    })
}
