/**
 * `strata proxy` as one function: start the proxy, print where it listens and one line per
 * request (or one JSON object a line), and on SIGINT/SIGTERM let the streams in flight
 * finish, commit, and return.
 */
import { tuneHeapForProxy } from "./heap.ts"
import type { ExchangeRecord } from "./record.ts"
import { startProxy, type ProxyLogLine, type ProxyOptions } from "./server.ts"

export interface RunProxyOptions extends Omit<ProxyOptions, "log"> {
  /** No line per request (notices still go to stderr). */
  readonly quiet?: boolean | undefined
  /** One JSON object a line instead of text (the first line, where it listens, stays text). */
  readonly json?: boolean | undefined
  /** Fields every JSON line starts with (the CLI's `schemaVersion`). */
  readonly jsonHead?: Readonly<Record<string, unknown>> | undefined
  /** Where lines go. Default: process.stdout / process.stderr. */
  readonly stdout?: ((line: string) => void) | undefined
  readonly stderr?: ((line: string) => void) | undefined
  /** Resolves when the proxy should stop. Default: SIGINT or SIGTERM. */
  readonly until?: Promise<unknown> | undefined
  /**
   * Size this process's heap for the proxy (`tuneHeapForProxy`: rarer full collections,
   * so fewer requests wait for one). Default true: the process is the proxy's.
   */
  readonly tuneHeap?: boolean | undefined
}

const n = (x: number): string => x.toLocaleString("en-US")

/** One exchange as a line of text: session, request, status, tokens, hit rate, cost, what changed. */
export const formatExchange = (session: string, e: ExchangeRecord, hitRate: number | undefined): string => {
  const u = e.usage
  const tokens = u === undefined ? "no usage" : `read ${n(u.cacheRead)} w5m ${n(u.write5m)} w1h ${n(u.write1h)} in ${n(u.input)} out ${n(u.output)}`
  const hit = hitRate === undefined ? "" : ` hit ${Math.round(hitRate * 100)}%`
  const cost = e.costUsd === undefined ? "" : ` $${e.costUsd.toFixed(4)}`
  const changed = e.changed.length === 0 ? "unchanged" : `changed: ${e.changed.join("; ")}`
  const miss = e.miss === undefined ? "" : ` | miss: ${e.miss}`
  return `${session} #${e.n} ${e.path} ${e.status} ${e.model} ${tokens}${hit}${cost} | ${changed}${miss}`
}

const signals = (): Promise<string> =>
  new Promise((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off("SIGINT", on)
      process.off("SIGTERM", on)
      resolve(s)
    }
    process.on("SIGINT", on)
    process.on("SIGTERM", on)
  })

/**
 * Run the proxy until a signal (or `until`): what `strata proxy` does. The process is taken
 * to be the proxy's: its heap is sized for it (`tuneHeap`).
 *
 * @example
 * ```ts no-run
 * import { runProxy } from "@strata/proxy"
 * await runProxy({ port: 8787, mode: "cache" }) // until Ctrl-C
 * ```
 */
export const runProxy = async (options: RunProxyOptions = {}): Promise<void> => {
  const out = options.stdout ?? ((line: string) => void process.stdout.write(line + "\n"))
  const err = options.stderr ?? ((line: string) => void process.stderr.write(line + "\n"))
  const log = (line: ProxyLogLine) => {
    if (line.kind === "notice") {
      if (options.json === true) out(JSON.stringify({ ...options.jsonHead, notice: line.message }))
      else err(`strata proxy: ${line.message}`)
      return
    }
    if (options.quiet === true) return
    out(options.json === true ? JSON.stringify({ ...options.jsonHead, session: line.session, ...line.exchange, hitRate: line.hitRate ?? null }) : formatExchange(line.session, line.exchange, line.hitRate))
  }
  if (options.tuneHeap !== false) tuneHeapForProxy()
  const until = options.until ?? signals()
  const proxy = await startProxy({ ...options, log })
  out(`strata proxy listening on ${proxy.url}`)
  await until
  await proxy.close()
}
