/**
 * Type and expression text as the map shows it: whitespace and comments collapsed, so
 * reformatting a signature never changes the rendered map.
 */

const MAX_TYPE_CHARS = 60

/**
 * Collapse whitespace in a type or expression, dropping spaces that touch
 * punctuation, so reformatting never changes the rendered text.
 *
 * @example
 * ```ts
 * import { normalizeType } from "@strata/symbols"
 * normalizeType("Promise< Map<string,\n  number> >") // "Promise<Map<string,number>>"
 * ```
 */
export const normalizeType = (text: string, max = MAX_TYPE_CHARS): string => {
  const collapsed = text
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, " ")
    .replace(/\s+/g, " ")
    .replace(/ ?([^\w\s$]) ?/g, "$1")
    .trim()
  return collapsed.length > max ? `${collapsed.slice(0, max - 1)}…` : collapsed
}
