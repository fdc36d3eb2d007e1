/**
 * Stage 8, `activeBlock`: the uncached tail. File tree, URL context, Working Files
 * (active files only; graduated files render in their tier), active history, and the
 * prompt with the system reminder appended (images as parts). Extra stages insert
 * their sections between these parts by name. In journal mode the tree sits in L2 and
 * history in the journal, so the block holds URLs, Working Files and the prompt.
 */
import { Context, Effect, Layer } from "effect"
import { counted, historyPart, promptPart, sectionOf, treePart, urlsPart, workingFilesPart } from "../../assembly/tiered.ts"
import { withReminder } from "../../assembly/headers.ts"
import { withBlock, type Stage } from "../state.ts"

/** Replace this stage with `Layer.succeed(ActiveBlockStage, myStage)`. */
export class ActiveBlockStage extends Context.Service<ActiveBlockStage, Stage>()("@strata/core/pipeline/ActiveBlock") {
  static readonly layer: Layer.Layer<ActiveBlockStage> = Layer.sync(ActiveBlockStage, () => activeBlock)
}

/** Part names of the active block, in order; extra stages insert before one of them. */
export const ACTIVE_PARTS = ["tree", "urls", "workingFiles", "history", "prompt"] as const

export const activeBlock: Stage = {
  name: "activeBlock",
  run: (state) =>
    Effect.sync(() => {
      const c = state.counter
      const plan = state.journal
      const tree = plan === undefined ? state.symbols.tree : undefined
      return withBlock(state, {
        tier: "active",
        parts: [
          ...(tree === undefined ? [] : treePart(tree, c, [tree.key])),
          ...urlsPart(state.urls, c),
          ...workingFilesPart(sectionOf(plan?.workingFiles ?? state.fileTiers.active, c), c),
          ...historyPart(plan === undefined ? state.historyTiers.active : []),
          promptPart(counted(withReminder(state.input.prompt, state.input.systemReminder ?? ""), c), state.images)
        ]
      })
    })
}
