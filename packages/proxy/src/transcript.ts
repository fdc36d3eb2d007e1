/**
 * A recorded session through the proxy's transform, offline: every line's body as the agent
 * sent it and as the proxy would forward it (the same `transformRequest`, driven with the
 * session state the proxy keeps: the gaps seen and the previous request's blocks), both
 * priced by the provider's prompt-cache simulator. This is what the `proxy` strategy of
 * `strata replay --transcript` measures; nothing else is added.
 */
import { makeAnthropicSimulator, makeOpenAISimulator } from "@strata/providers"
import { anthropicBlockCount, transformRequest, type Protocol, type ProxyMode, type SessionLedger } from "./transform.ts"

/** One recorded request: its body and its send time in seconds. */
export interface TranscriptLine {
  readonly t: number
  readonly request: unknown
}

export interface TranscriptPrice {
  readonly requests: number
  /** Input priced in base-input tokens (uncached x1, writes x their multiplier, reads x theirs). */
  readonly asSent: number
  readonly forwarded: number
  /** `forwarded / asSent`. */
  readonly ratio: number
  /** Requests the transform changed. */
  readonly changed: number
}

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const protocolOf = (body: Json): Protocol => (Array.isArray(body["messages"]) ? (body["system"] !== undefined || body["max_tokens"] !== undefined ? "anthropic" : "openai-chat") : "openai-responses")

/**
 * Price a recorded session as sent and as the proxy would forward it.
 *
 * @example
 * ```ts
 * import { priceTranscript } from "@strata/proxy"
 * const body = (n: number) => ({
 *   model: "claude-sonnet-4-6", max_tokens: 100, system: [{ type: "text", text: "Be terse. ".repeat(600) }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "step ".repeat(n + 1) }] }]
 * })
 * const price = priceTranscript([{ t: 0, request: body(0) }, { t: 5, request: body(1) }], { mode: "cache" })
 * price.requests // 2
 * ```
 */
export const priceTranscript = (
  lines: ReadonlyArray<TranscriptLine>,
  options: {
    readonly mode: ProxyMode
    readonly model?: string
    /** Per request (by index), force a marker lifetime instead of the rent-or-buy choice (benchmarks: a perfect or a predicted choice). */
    readonly lifetime?: (index: number) => "5m" | "1h" | undefined
  }
): TranscriptPrice => {
  const first = lines.find((l) => isRecord(l.request))?.request
  const model = options.model ?? (isRecord(first) && typeof first["model"] === "string" ? first["model"] : "claude-sonnet-4-6")
  const protocol = isRecord(first) ? protocolOf(first) : "anthropic"
  const make = () => (protocol === "anthropic" ? makeAnthropicSimulator({ model }) : makeOpenAISimulator({ model }))
  const asSentSim = make()
  const forwardedSim = make()
  const gaps: Array<number> = []
  let lastBlocks = 0
  let ledger: SessionLedger | undefined
  let lastT: number | undefined
  let asSent = 0
  let forwarded = 0
  let changed = 0
  let requests = 0
  for (const line of lines) {
    if (!isRecord(line.request)) continue
    if (lastT !== undefined) gaps.push(Math.max(0, line.t - lastT))
    const out = transformRequest({ protocol, mode: options.mode, body: line.request, lifetime: options.lifetime?.(requests), session: { id: "transcript", gaps: gaps.slice(-64), lastBlocks, ledger } })
    ledger = out.ledger
    if (out.changed.length > 0) changed++
    asSent += asSentSim.send(line.request, line.t).cost.inputEquivalentTokens
    forwarded += forwardedSim.send(out.body, line.t).cost.inputEquivalentTokens
    lastBlocks = protocol === "anthropic" ? anthropicBlockCount(line.request) : 0
    lastT = line.t
    requests++
  }
  return { requests, asSent, forwarded, ratio: asSent === 0 ? 1 : forwarded / asSent, changed }
}
