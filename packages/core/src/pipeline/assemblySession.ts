/**
 * Session bookkeeping of the pipeline: empty tiers skipped so far, the changes of the
 * last committed tracker update (which the breakdown shows), the journal layout's
 * memory and context editing's. Advanced only on commit.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { TierChange } from "../domain/Item.ts"
import type { ContextEditMemory } from "./base/contextEditMemory.ts"
import type { JournalMemory } from "./base/journalMemory.ts"

export class AssemblySession extends Context.Service<AssemblySession, {
  readonly emptyTiers: Ref.Ref<number>
  readonly lastChanges: Ref.Ref<ReadonlyArray<TierChange>>
  /** The journal layout's memory of the last committed request (see `layouts/journal.ts`). */
  readonly journal: Ref.Ref<JournalMemory | undefined>
  /**
   * Context editing's memory of the last committed request (what it cleared). The
   * journal memory carries a copy, so a process that restores the journal restores it too.
   */
  readonly contextEdits: Ref.Ref<ContextEditMemory | undefined>
}>()("@strata/core/pipeline/AssemblySession") {
  static readonly layer: Layer.Layer<AssemblySession> = Layer.effect(
    AssemblySession,
    Effect.gen(function* () {
      return {
        emptyTiers: yield* Ref.make(0),
        lastChanges: yield* Ref.make<ReadonlyArray<TierChange>>([]),
        journal: yield* Ref.make<JournalMemory | undefined>(undefined),
        contextEdits: yield* Ref.make<ContextEditMemory | undefined>(undefined)
      }
    })
  )
}
