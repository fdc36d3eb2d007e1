/**
 * History piggyback, shared by `gated` and `flux`: history never graduates on its own
 * (that would rewrite L3 every turn); it joins L3 only when L3 is rewritten anyway for
 * another reason, and the newest `historyWindowTokens` stay active verbatim. A message
 * new or changed in this request (N=0) never graduates in the same request.
 */
import { historyIndex, rankOf } from "../../model/order.ts"
import type { UpdateWork } from "../../model/work.ts"

/** Graduate history older than the verbatim window into L3 if L3 is rewritten for a non-history reason. */
export const piggybackHistory = (work: UpdateWork, entryN: number): void => {
  const window = work.config.historyWindowTokens
  if (window <= 0 || work.rewrittenFrom(true) > rankOf("L3")) return
  const active: Array<{ key: string; index: number; tokens: number; n: number }> = []
  for (const key of work.historyKeys) {
    const item = work.items.get(key)
    if (item !== undefined && item.tier === "active") active.push({ key, index: historyIndex(key), tokens: item.tokens, n: item.n })
  }
  active.sort((a, b) => b.index - a.index)
  let kept = 0
  let cut = active.length
  for (let i = 0; i < active.length; i++) {
    const tokens = active[i]?.tokens ?? 0
    if (kept + tokens > window) {
      cut = i
      break
    }
    kept += tokens
  }
  for (let i = cut; i < active.length; i++) {
    const entry = active[i]
    // New or just-changed messages (N=0) stay active for this request: they count toward
    // the window but are not yet known to be stable.
    if (entry !== undefined && entry.n > 0) work.move(entry.key, "L3", entryN, "graduated")
  }
}
