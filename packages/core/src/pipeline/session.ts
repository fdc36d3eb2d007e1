/**
 * Session bookkeeping of the pipeline: empty tiers skipped so far and the changes of the
 * last committed tracker update (which the breakdown shows). Advanced only on commit.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { TierChange } from "../domain/Item.ts"

export class AssemblySession extends Context.Service<AssemblySession, {
  readonly emptyTiers: Ref.Ref<number>
  readonly lastChanges: Ref.Ref<ReadonlyArray<TierChange>>
}>()("@strata/core/pipeline/AssemblySession") {
  static readonly layer: Layer.Layer<AssemblySession> = Layer.effect(
    AssemblySession,
    Effect.gen(function* () {
      return { emptyTiers: yield* Ref.make(0), lastChanges: yield* Ref.make<ReadonlyArray<TierChange>>([]) }
    })
  )
}
