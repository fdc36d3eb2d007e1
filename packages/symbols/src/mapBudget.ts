/**
 * The token-budgeted map for large repositories: blocks chosen by rank until the
 * budget is met, sticky across turns (files already in the map stay while they
 * fit), and rendered in path order so a change in selection inserts or removes
 * whole blocks instead of reshuffling the text.
 */

/**
 * Choose files for a budget. Files in `previous` that still exist are kept first
 * (dropping the lowest-ranked while over budget); then the remaining files are
 * added in rank order whenever they fit. The result is sorted by path.
 *
 * @example
 * ```ts
 * import { selectMapFiles } from "@strata/symbols"
 * const cost = (p: string) => ({ "a.ts": 50, "b.ts": 40, "c.ts": 30 })[p] ?? 0
 * selectMapFiles(["a.ts", "b.ts", "c.ts"], cost, 80) // ["a.ts", "c.ts"]
 * ```
 */
export const selectMapFiles = (
  ranked: ReadonlyArray<string>,
  cost: (path: string) => number,
  budget: number,
  previous: ReadonlySet<string> = new Set()
): Array<string> => {
  const kept = ranked.filter((p) => previous.has(p))
  let total = kept.reduce((sum, p) => sum + cost(p), 0)
  while (total > budget && kept.length > 0) total -= cost(kept.pop()!)
  const chosen = new Set(kept)
  for (const path of ranked) {
    if (chosen.has(path)) continue
    const c = cost(path)
    if (total + c > budget) continue
    chosen.add(path)
    total += c
  }
  return [...chosen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** @deprecated The old name of `selectMapFiles` (core's XML chunk builder has its own `selectWithinBudget`). */
export const selectWithinBudget = selectMapFiles

/**
 * The map text: the legend, then each block, separated by blank lines (each part
 * already ends with a newline).
 */
export const renderMap = (legend: string, blocks: ReadonlyArray<string>): string => [legend, ...blocks].join("\n")
