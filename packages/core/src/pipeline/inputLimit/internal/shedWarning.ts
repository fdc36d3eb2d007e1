/**
 * What pre-request shedding did, in words for the user: the `inputLimit` stage and the
 * flat request's shedding (pipeline/assemble.ts) say it the same way.
 */
import type { LeftOutItem } from "../../../breakdown/report.ts"
import type { ResolvedLimits } from "../requestLimits.ts"
import { formatCount as fmt } from "../../../internal/formatCount.ts"

/** What shedding did, for the user. */
export const shedWarning = (
  limits: ResolvedLimits,
  before: number,
  after: number,
  leftOut: { readonly files: ReadonlyArray<LeftOutItem>; readonly symbols: ReadonlyArray<LeftOutItem>; readonly treeTokens: number }
): string => {
  const share = Math.round(100 * (limits.shedLimitTokens / limits.maxInputTokens))
  const head = `The request (${fmt(before)} tokens, with ${fmt(limits.outputReserveTokens)} more kept for the reply) is over ${share}% of ${limits.model}'s ${fmt(limits.maxInputTokens)}-token input limit`
  const named = (items: ReadonlyArray<LeftOutItem>, max: number) =>
    items.slice(0, max).map((i) => `${i.path} (${fmt(i.tokens)} tokens)`).join(", ") + (items.length > max ? `, and ${items.length - max} more` : "")
  const sum = (items: ReadonlyArray<LeftOutItem>) => items.reduce((n, i) => n + i.tokens, 0)
  const parts = [
    ...(leftOut.files.length > 0 ? [`the files ${named(leftOut.files, 5)}`] : []),
    ...(leftOut.symbols.length > 0 ? [`the symbol blocks of the ${fmt(leftOut.symbols.length)} least referenced files (${fmt(sum(leftOut.symbols))} tokens)`] : []),
    ...(leftOut.treeTokens > 0 ? [`the file tree (${fmt(leftOut.treeTokens)} tokens)`] : [])
  ]
  const did = parts.length === 0 ? "" : `; left out of this request: ${parts.join(", ")}`
  const still = after + limits.outputReserveTokens > limits.shedLimitTokens
    ? `. It is still ${fmt(after)} tokens: compact or clear the history, or shorten the prompt`
    : `, ${fmt(after)} tokens remain`
  return `${head}${did}${still}.`
}
