/**
 * The token-budgeted map for large repositories: blocks chosen by rank until the
 * budget is met, sticky across turns (files already in the map stay while they
 * fit), and rendered in path order so a change in selection inserts or removes
 * whole blocks instead of reshuffling the text. The choice itself is core's
 * `selectMapFiles`, the one the assembly pipeline's map budget uses.
 */
import { selectMapFiles } from "@strata/core"
import type { PathAlias } from "@strata/core"

export { selectMapFiles }

/** @deprecated The old name of `selectMapFiles` (core's XML chunk builder has its own `selectBlocksWithinBudget`). */
export const selectBlocksWithinBudget = selectMapFiles

/**
 * The map text: the legend, then each block, separated by blank lines (each part
 * already ends with a newline).
 */
export const renderMap = (legend: string, blocks: ReadonlyArray<string>): string => [legend, ...blocks].join("\n")

/** What `budgetedMap` needs of a map. */
export interface BudgetedMapInput {
  /** Candidate files, most important first. */
  readonly ranked: ReadonlyArray<string>
  /** Every path alias, in legend order. */
  readonly aliases: ReadonlyArray<PathAlias>
  /** A file's block text and the alias tokens its paths use. */
  readonly block: (path: string) => { readonly text: string; readonly aliases: ReadonlyArray<string> }
  /** The legend for some aliases (the abbreviation key first, then one line per alias). */
  readonly legend: (aliases: ReadonlyArray<PathAlias>) => string
  readonly count: (text: string) => number
  readonly budgetTokens: number
  /** Files chosen by an earlier cut: kept first while they fit, so the map does not churn. */
  readonly previous?: ReadonlySet<string>
}

/**
 * A map of at most `budgetTokens` tokens: the legend's key, the aliases the chosen blocks
 * use (and no other), and blocks taken sticky-first then in rank order whenever they fit
 * with the alias lines they add. The whole text is counted at the end and the least
 * important block dropped while it is over (token counts of joined texts can differ from
 * the sum of their parts). A budget below the key alone gets no map (`fits: false`) and
 * `minimumTokens` says the smallest that does. Pure.
 */
export const budgetedMap = (input: BudgetedMapInput) => {
  const { count, budgetTokens } = input
  const minimumTokens = count(input.legend([]))
  if (budgetTokens < minimumTokens) return { text: "", legend: "", files: [] as ReadonlyArray<string>, tokens: 0, minimumTokens, fits: false }
  const aliasCost = new Map(input.aliases.map((a) => [a.token, count(input.legend([a])) - minimumTokens] as const))
  const separator = count("\n")
  const rank = new Map(input.ranked.map((p, i) => [p, i] as const))
  const order = [...input.ranked.filter((p) => input.previous?.has(p) === true), ...input.ranked.filter((p) => input.previous?.has(p) !== true)]
  const chosen: Array<string> = []
  const used = new Set<string>()
  let total = minimumTokens
  for (const path of order) {
    const b = input.block(path)
    const fresh = b.aliases.filter((t) => !used.has(t))
    const cost = count(b.text) + separator + fresh.reduce((n, t) => n + (aliasCost.get(t) ?? 0), 0)
    if (total + cost > budgetTokens) continue
    chosen.push(path)
    for (const t of fresh) used.add(t)
    total += cost
  }
  const render = (files: ReadonlyArray<string>) => {
    const sorted = [...files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const tokens = new Set(sorted.flatMap((p) => input.block(p).aliases))
    const legend = input.legend(input.aliases.filter((a) => tokens.has(a.token)))
    return { files: sorted, legend, text: renderMap(legend, sorted.map((p) => input.block(p).text)) }
  }
  let out = render(chosen)
  let tokens = count(out.text)
  while (tokens > budgetTokens && chosen.length > 0) {
    // Drop the least important block.
    chosen.sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0))
    chosen.pop()
    out = render(chosen)
    tokens = count(out.text)
  }
  return { text: out.text, legend: out.legend, files: out.files, tokens, minimumTokens, fits: true }
}
