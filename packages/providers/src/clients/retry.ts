/**
 * Retry policy of the LLM clients as pure functions: which failures are retried, how
 * long to wait (the server's `retry-after` first, then capped exponential backoff with
 * jitter), and when a server's requested wait is too long to honour.
 */
import type { Failure } from "../driver.ts"

/** Retry settings. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  readonly maxRetries?: number
  /** First backoff delay in ms, doubled per retry. Default 500. */
  readonly baseDelayMs?: number
  /** Longest wait in ms; a `retry-after` above it ends the retries. Default 30,000. */
  readonly maxDelayMs?: number
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 30_000 }

/** 408, 409, 429 and 5xx (incl. Anthropic's 529 overloaded), timeouts and connection errors are worth retrying. */
export const isRetryable = (f: Failure): boolean => {
  if (f.kind === "timeout" || f.kind === "connection") return true
  if (f.kind !== "http" || f.status === undefined) return false
  return f.status === 408 || f.status === 409 || f.status === 429 || f.status >= 500
}

/**
 * The wait a server asked for, in ms: `retry-after-ms` (OpenAI, Anthropic), else
 * `retry-after` as seconds or an HTTP date relative to `nowMs`.
 *
 * @example
 * ```ts
 * import { retryAfterMs } from "@strata/providers"
 * retryAfterMs({ kind: "http", detail: "", retryAfterHeader: "2" }, 0) // 2000
 * ```
 */
export const retryAfterMs = (f: Failure, nowMs: number): number | undefined => {
  const ms = f.retryAfterMsHeader === undefined ? Number.NaN : Number(f.retryAfterMsHeader)
  if (Number.isFinite(ms) && ms >= 0) return ms
  const raw = f.retryAfterHeader?.trim()
  if (raw === undefined || raw.length === 0) return undefined
  const seconds = Number(raw)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/** Exponential backoff for retry `n` (0-based) with 25% jitter from `random` in [0, 1). */
export const backoffMs = (n: number, options: Required<RetryOptions>, random: number): number => {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** n)
  return Math.round(ceiling * (0.75 + 0.25 * random))
}

/**
 * How long to wait before retry `n`, or undefined to stop: not retryable, out of
 * retries, or the server asked for longer than `maxDelayMs`.
 */
export const nextDelayMs = (
  f: Failure,
  n: number,
  options: Required<RetryOptions>,
  nowMs: number,
  random: number
): number | undefined => {
  if (!isRetryable(f) || n >= options.maxRetries) return undefined
  const asked = retryAfterMs(f, nowMs)
  if (asked !== undefined) return asked <= options.maxDelayMs ? asked : undefined
  return backoffMs(n, options, random)
}
