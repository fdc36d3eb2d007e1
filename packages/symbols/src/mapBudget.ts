/**
 * The token-budgeted map for large repositories: blocks chosen by rank until the
 * budget is met, sticky across turns (files already in the map stay while they
 * fit), and rendered in path order so a change in selection inserts or removes
 * whole blocks instead of reshuffling the text. The choice itself is core's
 * `selectMapFiles`, the one the assembly pipeline's map budget uses.
 */
import { selectMapFiles } from "@strata/core"

export { selectMapFiles }

/** @deprecated The old name of `selectMapFiles` (core's XML chunk builder has its own `selectBlocksWithinBudget`). */
export const selectBlocksWithinBudget = selectMapFiles

/**
 * The map text: the legend, then each block, separated by blank lines (each part
 * already ends with a newline).
 */
export const renderMap = (legend: string, blocks: ReadonlyArray<string>): string => [legend, ...blocks].join("\n")
