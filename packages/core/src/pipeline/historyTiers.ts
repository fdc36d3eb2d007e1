/**
 * Stage 4, `historyTiers`: each history message's tier from the tracker (item
 * `history:N`, hashed as `role:content`). Untracked messages are active; each tier keeps
 * conversation order.
 */
import { Context, Effect, Layer } from "effect"
import { ItemKeys } from "../domain/Item.ts"
import type { Message } from "../domain/Message.ts"
import { TIERS } from "../domain/Tier.ts"
import { sha256 } from "../tokens/TokenCounter.ts"
import { groupByTier, type HistoryEntry, type Stage } from "./state.ts"

/** Replace this stage with `Layer.succeed(HistoryTiersStage, myStage)`. */
export class HistoryTiersStage extends Context.Service<HistoryTiersStage, Stage>()("@strata/core/pipeline/HistoryTiers") {
  static readonly layer: Layer.Layer<HistoryTiersStage> = Layer.sync(HistoryTiersStage, () => historyTiers)
}

/** What a history item's hash covers: `role:content` (parts as JSON). */
export const historyText = (message: Message): string =>
  `${message.role}:${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`

export const historyTiers: Stage = {
  name: "historyTiers",
  run: (state) =>
    Effect.sync(() => {
      const entries = (state.input.history ?? []).map((message, index): HistoryEntry => {
        const text = historyText(message)
        return { index, message, key: ItemKeys.history(index), hash: sha256(text), text, tokens: state.counter.countMessage(message) }
      })
      return { ...state, historyTiers: groupByTier(entries, (e) => state.tracker.tierOf(e.key) ?? "active", TIERS) }
    })
}
