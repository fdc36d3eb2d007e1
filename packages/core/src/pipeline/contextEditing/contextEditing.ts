/**
 * Stage 5, `contextEditing`: old tool results replaced by short placeholders when that
 * pays in cache terms (see `contextEdits.ts` for the plan). It runs on the history items
 * before any layout orders them, so every layout shows the same edits; a result cleared
 * once stays cleared, byte for byte, in every later request.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { TIERS } from "../../domain/Tier.ts"
import { DEFAULT_CONTEXT_EDITING, editedEntry, planContextEdits, type ContextEditingSettings } from "./contextEdits.ts"
import { CacheExpiryMillis, CachePrices, LONG_TTL_MILLIS } from "../base/providerCache.ts"
import type { Stage } from "../base/state.ts"
import { systemItem } from "../stages/track.ts"

/**
 * The context-editing settings of the requests assembled in this context (default
 * `DEFAULT_CONTEXT_EDITING`: clear past 40,000 history tokens, keep the last 3 tool uses).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ContextEditing, DEFAULT_CONTEXT_EDITING } from "@strata/core/effect"
 * const settings = Layer.succeed(ContextEditing, { ...DEFAULT_CONTEXT_EDITING, keepToolUses: 5, neverClear: ["run_tests"] })
 * ```
 */
export const ContextEditing = Context.Reference<ContextEditingSettings>("@strata/core/pipeline/ContextEditingSettings", {
  defaultValue: () => DEFAULT_CONTEXT_EDITING
})

/** Replace this stage with `Layer.succeed(ContextEditingStage, myStage)`; a no-op stage turns editing off. */
export class ContextEditingStage extends Context.Service<ContextEditingStage, Stage>()("@strata/core/pipeline/ContextEditing") {
  static readonly layer: Layer.Layer<ContextEditingStage> = Layer.sync(ContextEditingStage, () => contextEditing)
}

export const contextEditing: Stage = {
  name: "contextEditing",
  run: (state) =>
    Effect.gen(function* () {
      const entries = TIERS.flatMap((t) => state.historyTiers[t]).sort((a, b) => a.index - b.index)
      const plan = planContextEdits({
        entries,
        counter: state.counter,
        settings: yield* ContextEditing,
        prices: (yield* CachePrices)(state.input.model),
        memory: state.editMemory,
        now: yield* Clock.currentTimeMillis,
        head: systemItem(state).hash,
        expiryMillis: yield* CacheExpiryMillis,
        longTtlMillis: LONG_TTL_MILLIS
      })
      const cleared = plan.memory.cleared
      const h = state.historyTiers
      const edit = cleared.size === 0 ? undefined : (tier: ReadonlyArray<(typeof entries)[number]>) => tier.map((e) => editedEntry(e, cleared, state.counter))
      return {
        ...state,
        contextEdits: plan,
        historyTiers: edit === undefined ? h : { L0: edit(h.L0), L1: edit(h.L1), L2: edit(h.L2), L3: edit(h.L3), active: edit(h.active) }
      }
    })
}
