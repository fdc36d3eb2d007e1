/**
 * Session bookkeeping of the pipeline: empty tiers skipped so far, the changes of the
 * last committed tracker update (which the breakdown shows) and the journal layout's
 * memory. Advanced only on commit.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { TierChange } from "../domain/Item.ts"
import type { JournalMemory } from "./journalMemory.ts"

export class AssemblySession extends Context.Service<AssemblySession, {
  readonly emptyTiers: Ref.Ref<number>
  readonly lastChanges: Ref.Ref<ReadonlyArray<TierChange>>
  /** The journal layout's memory of the last committed request (see `layouts/journal.ts`). */
  readonly journal: Ref.Ref<JournalMemory | undefined>
}>()("@strata/core/pipeline/AssemblySession") {
  static readonly layer: Layer.Layer<AssemblySession> = Layer.effect(
    AssemblySession,
    Effect.gen(function* () {
      return {
        emptyTiers: yield* Ref.make(0),
        lastChanges: yield* Ref.make<ReadonlyArray<TierChange>>([]),
        journal: yield* Ref.make<JournalMemory | undefined>(undefined)
      }
    })
  )
}
