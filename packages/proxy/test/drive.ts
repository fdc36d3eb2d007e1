// Drive an Anthropic session through the transform as the proxy does: the gaps it observed,
// the previous request's block count and the ledger the previous request returned.
import { startProxy, transformRequest, type ProxyOptions, type SessionLedger } from "@strata/proxy"

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

/** A request the proxy read, decoded: as the agent sent it, as forwarded, and the proxy's clock then. */
export interface Forwarded {
  readonly sent: unknown
  readonly forwarded: unknown
  /** What `now` returned for this request (undefined without a `now`). */
  readonly at: number | undefined
}

/**
 * The front the real-agent runners take: a proxy on the memory store in front of
 * `upstream`, every request it reads pushed to `into` (decoded), its log lines (as JSON)
 * to `logs` when given.
 */
export const proxyFront =
  (into: Array<Forwarded>, options: Omit<ProxyOptions, "port" | "upstream" | "store" | "log" | "onForward"> & { readonly logs?: Array<string> } = {}) =>
  async (upstream: string): Promise<{ url: string; close: () => Promise<void> }> => {
    const { logs, now, ...rest } = options
    let at: number | undefined
    const proxy = await startProxy({
      ...rest,
      port: 0,
      upstream,
      store: "memory",
      ...(now === undefined ? {} : { now: () => (at = now()) }),
      ...(logs === undefined ? {} : { log: (line) => logs.push(JSON.stringify(line)) }),
      onForward: (e) => into.push({ sent: JSON.parse(e.sent.toString("utf8")), forwarded: JSON.parse(e.forwarded.toString("utf8")), at })
    })
    return { url: proxy.url, close: proxy.close }
  }
