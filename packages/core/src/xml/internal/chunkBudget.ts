/**
 * Which chunks fit a token limit. Pure arithmetic over per-chunk token counts:
 * `oldest` keeps a prefix of the transcript (the builder's default, docs/xml-chunk-builder.md), `newest` keeps SYSTEM chunks
 * and then a suffix. Chunks that share a unit (a tool call and its result, matched
 * by `call_id`) are kept or dropped together, so no call loses its result.
 */
import type { ContextMessageRole, KeepStrategy } from "../ContextMessage.ts"

/** One rendered chunk as the budget sees it. */
export interface BudgetItem {
  readonly role: ContextMessageRole
  /** Tokens of the chunk's rendered text. */
  readonly tokens: number
  /** Items with the same unit are kept or dropped together. */
  readonly unit: number
  /** Kept before anything else under `newest` (SYSTEM chunks). */
  readonly pinned: boolean
}

/** The costs around chunk texts, in tokens. */
export interface BudgetCosts {
  /** Spent before any chunk: list overhead and the system prompt message. */
  readonly base: number
  /** A chunk that starts a new message pays the per-message overhead. */
  readonly messageOverhead: number
  /** A chunk merged into the previous message pays the separator between them. */
  readonly separator: number
  /** Role of the message before the first chunk (the system prompt's), if any. */
  readonly leadingRole: ContextMessageRole | undefined
}

/**
 * Units for a list of chunks: chunks with the same non-empty `callId` share one;
 * every other chunk is a unit of its own.
 *
 * @example
 * ```ts
 * import { assignUnits } from "./chunkBudget.ts"
 * assignUnits([undefined, "c1", undefined, "c1"]) // [0, 1, 2, 1]
 * ```
 */
export const assignUnits = (callIds: ReadonlyArray<string | undefined>): Array<number> => {
  const byCall = new Map<string, number>()
  return callIds.map((callId, i) => {
    if (callId === undefined || callId === "") return i
    const unit = byCall.get(callId)
    if (unit !== undefined) return unit
    byCall.set(callId, i)
    return i
  })
}

const membersByUnit = (items: ReadonlyArray<BudgetItem>): Map<number, Array<number>> => {
  const members = new Map<number, Array<number>>()
  items.forEach((item, i) => {
    const list = members.get(item.unit)
    if (list) list.push(i)
    else members.set(item.unit, [i])
  })
  return members
}

/**
 * Choose the chunks that fit `maxTokens`. The estimate is additive (chunk texts plus
 * separators and per-message overheads); the caller counts the real messages
 * afterwards and trims with `dropOrder` if the estimate was short.
 */
export const selectWithinBudget = (
  items: ReadonlyArray<BudgetItem>,
  maxTokens: number,
  keep: KeepStrategy,
  costs: BudgetCosts
): Array<boolean> => {
  const selected = items.map(() => false)
  const members = membersByUnit(items)
  let used = costs.base
  const joinCost = (role: ContextMessageRole, neighbour: ContextMessageRole | undefined) =>
    role === neighbour ? costs.separator : costs.messageOverhead

  if (keep === "oldest") {
    let previous = costs.leadingRole
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as BudgetItem
      const cost = item.tokens + joinCost(item.role, previous)
      if (used + cost > maxTokens) break
      used += cost
      selected[i] = true
      previous = item.role
    }
    // A call kept without its (excluded) result goes too: the model would see an orphan.
    for (const list of members.values()) {
      if (list.some((i) => !selected[i])) for (const i of list) selected[i] = false
    }
    return selected
  }

  let previous = costs.leadingRole
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as BudgetItem
    if (!item.pinned) continue
    const cost = item.tokens + joinCost(item.role, previous)
    if (used + cost > maxTokens) break
    used += cost
    selected[i] = true
    previous = item.role
  }
  const decided = new Set<number>()
  let next: ContextMessageRole | undefined
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as BudgetItem
    if (item.pinned) continue
    if (decided.has(item.unit)) {
      if (selected[i]) next = item.role
      continue
    }
    decided.add(item.unit)
    const unit = (members.get(item.unit) ?? [i]).filter((m) => !(items[m] as BudgetItem).pinned)
    // Older members of the unit are usually not adjacent: charge them a full message.
    let cost = 0
    for (const m of unit) cost += (items[m] as BudgetItem).tokens + (m === i ? joinCost(item.role, next) : costs.messageOverhead)
    if (used + cost > maxTokens) break
    used += cost
    for (const m of unit) selected[m] = true
    next = item.role
  }
  return selected
}

/**
 * The order in which to drop selected units if the real count is over the limit:
 * the end `keep` does not protect goes first (newest units under `oldest`, oldest
 * non-pinned units and then pinned ones under `newest`).
 */
export const dropOrder = (
  items: ReadonlyArray<BudgetItem>,
  selected: ReadonlyArray<boolean>,
  keep: KeepStrategy
): Array<Array<number>> => {
  const units = [...membersByUnit(items).values()].filter((list) => list.some((i) => selected[i]))
  const last = (list: ReadonlyArray<number>) => list[list.length - 1] ?? 0
  if (keep === "oldest") return units.sort((a, b) => last(b) - last(a))
  const pinned = (list: ReadonlyArray<number>) => list.every((i) => (items[i] as BudgetItem).pinned)
  return [
    // By each unit's newest chunk, the order `selectWithinBudget` ranks units in: a call
    // whose result came late is newer than the chunks between them.
    ...units.filter((u) => !pinned(u)).sort((a, b) => last(a) - last(b)),
    ...units.filter(pinned).sort((a, b) => last(b) - last(a))
  ]
}
