/**
 * Stage 4, `historyTiers`: each history item's tier from the tracker. An item is a
 * message, or a whole tool exchange (an assistant message with tool calls and the tool
 * message answering it), key `history:N` after its first message, hashed as
 * `role:content`. Untracked items are active; each tier keeps conversation order.
 */
import { Context, Effect, Layer } from "effect"
import { ItemKeys } from "../../domain/Item.ts"
import { historyProblems, toolCalls, type Message } from "../../domain/Message.ts"
import { TIERS } from "../../domain/Tier.ts"
import { sha256, type TokenCounter } from "../../tokens/TokenCounter.ts"
import { groupByTier, renderTier, type HistoryEntry } from "../base/entries.ts"
import { StageError, type Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(HistoryTiersStage, myStage)`. */
export class HistoryTiersStage extends Context.Service<HistoryTiersStage, Stage>()("@strata/core/pipeline/HistoryTiers") {
  static readonly layer: Layer.Layer<HistoryTiersStage> = Layer.sync(HistoryTiersStage, () => historyTiers)
}

/** What a history message's hash covers: `role:content` (parts as JSON). */
export const historyText = (message: Message): string =>
  `${message.role}:${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`

interface Measure {
  readonly counter: TokenCounter
  readonly hash: string
  readonly text: string
  readonly tokens: number
}

// Messages are immutable values a session hands again on every request: hash and count
// each once. An exchange is measured under its assistant message, for its tool message.
const measures = new WeakMap<Message, Measure>()
const exchangeMeasures = new WeakMap<Message, Measure & { readonly result: Message }>()

const measured = (message: Message, counter: TokenCounter): Measure => {
  const known = measures.get(message)
  if (known !== undefined && known.counter === counter) return known
  const text = historyText(message)
  const fresh = { counter, hash: sha256(text), text, tokens: counter.countMessage(message) }
  measures.set(message, fresh)
  return fresh
}

// The two texts joined by a NUL, which no `role:` text of one message starts a line with.
const measuredExchange = (call: Message, result: Message, counter: TokenCounter): Measure => {
  const known = exchangeMeasures.get(call)
  if (known !== undefined && known.counter === counter && known.result === result) return known
  const text = `${historyText(call)}\u0000${historyText(result)}`
  const fresh = { counter, result, hash: sha256(text), text, tokens: counter.countMessage(call) + counter.countMessage(result) }
  exchangeMeasures.set(call, fresh)
  return fresh
}

/**
 * The history as items: each message is one, except that an assistant message with tool
 * calls and the tool message after it are one together (`history:<index of the call>`).
 * Pure; measures each message once.
 *
 * @example
 * ```ts
 * import { historyEntries, makeEstimatingCounter } from "@strata/core/effect"
 * const entries = historyEntries([
 *   { role: "user", content: "What is in src?" },
 *   { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: {} }] },
 *   { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "text", value: "a.ts" } }] }
 * ], makeEstimatingCounter())
 * entries.map((e) => e.key) // ["history:0", "history:1"]
 * ```
 */
export const historyEntries = (history: ReadonlyArray<Message>, counter: TokenCounter): ReadonlyArray<HistoryEntry> => {
  const entries: Array<HistoryEntry> = []
  for (let index = 0; index < history.length; index++) {
    const message = history[index]!
    const next = history[index + 1]
    if (next?.role === "tool" && toolCalls(message).length > 0) {
      const known = exchangeEntries.get(message)
      if (known !== undefined && known.counter === counter && known.entry.index === index && known.entry.messages[1] === next) entries.push(known.entry)
      else {
        const { hash, text, tokens } = measuredExchange(message, next, counter)
        const entry: HistoryEntry = { index, messages: [message, next], key: ItemKeys.history(index), hash, text, tokens }
        exchangeEntries.set(message, { counter, entry })
        entries.push(entry)
      }
      index++
      continue
    }
    const known = messageEntries.get(message)
    if (known !== undefined && known.counter === counter && known.entry.index === index) entries.push(known.entry)
    else {
      const { hash, text, tokens } = measured(message, counter)
      const entry: HistoryEntry = { index, messages: [message], key: ItemKeys.history(index), hash, text, tokens }
      messageEntries.set(message, { counter, entry })
      entries.push(entry)
    }
  }
  return entries
}

// The entries themselves, for a message at the same index measured by the same counter:
// the same object every request, so what later stages memoize per entry (context
// editing's edits) carries over from request to request.
const messageEntries = new WeakMap<Message, { readonly counter: TokenCounter; readonly entry: HistoryEntry }>()
const exchangeEntries = new WeakMap<Message, { readonly counter: TokenCounter; readonly entry: HistoryEntry }>()

export const historyTiers: Stage = {
  name: "historyTiers",
  run: (state) =>
    Effect.suspend(() => {
      const history = state.input.history ?? []
      // A typed input skips decoding: a call without its result cannot be sent to any provider.
      const problem = historyProblems(history)[0]
      if (problem !== undefined) return Effect.fail(new StageError({ stage: "historyTiers", reason: problem.issue }))
      const entries = historyEntries(history, state.counter)
      return Effect.succeed({ ...state, historyTiers: groupByTier(entries, (e) => renderTier(state.tracker, e) ?? "active", TIERS) })
    })
}
