// Drive an Anthropic session through the transform as the proxy does: the gaps it observed,
// the previous request's block count and the ledger the previous request returned.
import { transformRequest, type SessionLedger } from "@strata/proxy"

type Json = Record<string, unknown>

export const driveAnthropic = (mode: "cache" | "edit", bodies: ReadonlyArray<Json>, times: ReadonlyArray<number>) => {
  const gaps: Array<number> = []
  let lastBlocks = 0
  let ledger: SessionLedger | undefined
  return bodies.map((body, i) => {
    if (i > 0) gaps.push(times[i]! - times[i - 1]!)
    const out = transformRequest({ protocol: "anthropic", mode, body, session: { id: "s", gaps: [...gaps], lastBlocks, ledger } })
    ledger = out.ledger
    lastBlocks = (body["messages"] as Array<Json>).reduce((n, m) => n + (m["content"] as Array<unknown>).length, 0)
    return out
  })
}
