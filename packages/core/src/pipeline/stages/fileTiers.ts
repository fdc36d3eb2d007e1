/**
 * Stage 2, `fileTiers`: each selected file's tier from the tracker. Untracked and changed
 * files are active; a file in a cached tier has graduated and renders there, not in
 * Working Files.
 */
import { Context, Effect, Layer } from "effect"
import { TIERS } from "../../domain/Tier.ts"
import { groupByTier, renderTier } from "../base/entries.ts"
import type { Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(FileTiersStage, myStage)`. */
export class FileTiersStage extends Context.Service<FileTiersStage, Stage>()("@strata/core/pipeline/FileTiers") {
  static readonly layer: Layer.Layer<FileTiersStage> = Layer.sync(FileTiersStage, () => fileTiers)
}

export const fileTiers: Stage = {
  name: "fileTiers",
  run: (state) =>
    Effect.sync(() => ({
      ...state,
      fileTiers: groupByTier(state.files, (f) => renderTier(state.tracker, f) ?? "active", TIERS)
    }))
}
