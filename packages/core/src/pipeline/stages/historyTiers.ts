/**
 * Stage 4, `historyTiers`: each history message's tier from the tracker (item
 * `history:N`, hashed as `role:content`). Untracked messages are active; each tier keeps
 * conversation order.
 */
import { Context, Effect, Layer } from "effect"
import { ItemKeys } from "../../domain/Item.ts"
import type { Message } from "../../domain/Message.ts"
import { TIERS } from "../../domain/Tier.ts"
import { sha256, type TokenCounter } from "../../tokens/TokenCounter.ts"
import { groupByTier, renderTier, type HistoryEntry } from "../entries.ts"
import type { Stage } from "../state.ts"

/** Replace this stage with `Layer.succeed(HistoryTiersStage, myStage)`. */
export class HistoryTiersStage extends Context.Service<HistoryTiersStage, Stage>()("@strata/core/pipeline/HistoryTiers") {
  static readonly layer: Layer.Layer<HistoryTiersStage> = Layer.sync(HistoryTiersStage, () => historyTiers)
}

/** What a history item's hash covers: `role:content` (parts as JSON). */
export const historyText = (message: Message): string =>
  `${message.role}:${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`

// Messages are immutable values a session hands again on every request: hash and count each once.
const measures = new WeakMap<Message, { readonly counter: TokenCounter; readonly hash: string; readonly text: string; readonly tokens: number }>()
const measured = (message: Message, counter: TokenCounter) => {
  const known = measures.get(message)
  if (known !== undefined && known.counter === counter) return known
  const text = historyText(message)
  const fresh = { counter, hash: sha256(text), text, tokens: counter.countMessage(message) }
  measures.set(message, fresh)
  return fresh
}

export const historyTiers: Stage = {
  name: "historyTiers",
  run: (state) =>
    Effect.sync(() => {
      const entries = (state.input.history ?? []).map((message, index): HistoryEntry => {
        const { hash, text, tokens } = measured(message, state.counter)
        return { index, message, key: ItemKeys.history(index), hash, text, tokens }
      })
      return { ...state, historyTiers: groupByTier(entries, (e) => renderTier(state.tracker, e) ?? "active", TIERS) }
    })
}
