/**
 * Token usage of a request as every provider's usage decodes to it: four counts that
 * never overlap, so the prompt is `input + cacheRead + cacheWrite`. The session record
 * sums it; the HUD shows it. `@strata/providers` decodes each provider's own shape to it.
 */
import { Schema } from "effect"

const Count = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Usage of one request (or summed over a session):
 *
 * - `input`: input tokens billed at the full price, neither read from nor written to the cache;
 * - `cacheRead`: input tokens served from the cache;
 * - `cacheWrite`: input tokens written to the cache (0 where a provider reports none);
 * - `output`: generated tokens, reasoning included;
 * - `cacheWriteByTtl`: `cacheWrite` split by TTL name (`5m`, `1h`) where the provider says.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Usage } from "@strata/core"
 * Schema.decodeUnknownSync(Usage)({ input: 12, cacheRead: 4096, cacheWrite: 0, output: 300 })
 * ```
 */
export const Usage = Schema.Struct({
  input: Count,
  cacheRead: Count,
  cacheWrite: Count,
  output: Count,
  cacheWriteByTtl: Schema.optionalKey(Schema.Record(Schema.String, Count))
})
export type Usage = typeof Usage.Type

/** Usage with every count zero. */
export const ZERO_USAGE: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }

/**
 * The sum of two usages (per-TTL writes summed by name). Pure.
 *
 * @example
 * ```ts
 * import { sumUsage } from "@strata/core"
 * sumUsage({ input: 1, cacheRead: 2, cacheWrite: 3, output: 4 }, { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 })
 * // { input: 2, cacheRead: 2, cacheWrite: 3, output: 5 }
 * ```
 */
export const sumUsage = (a: Usage, b: Usage): Usage => {
  const byTtl: Record<string, number> = { ...a.cacheWriteByTtl }
  for (const [ttl, n] of Object.entries(b.cacheWriteByTtl ?? {})) byTtl[ttl] = (byTtl[ttl] ?? 0) + n
  const base: Usage = {
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output
  }
  return Object.keys(byTtl).length === 0 ? base : { ...base, cacheWriteByTtl: byTtl }
}

/** The prompt tokens of a usage: uncached input, cache reads and cache writes (output excluded). */
export const promptTokensOf = (usage: Usage): number => usage.input + usage.cacheRead + usage.cacheWrite

/**
 * A usage counted by another counter (a cache simulator's), expressed in `promptTokens`,
 * the request's own count: the same split (where reads and writes end), scaled so that
 * `input + cacheRead + cacheWrite === promptTokens`. Where the provider caches at
 * breakpoints, pass their prefix tokens (in the request's count) as `boundaries`: a read
 * or write end that lands within the two counts' difference of one is snapped to it, so
 * "write" equals the breakpoint's prefix. Uncached input takes the remainder; per-TTL
 * writes are scaled with the writes; output is unchanged. Pure.
 *
 * @example
 * ```ts
 * import { usageInPromptTokens } from "@strata/core"
 * usageInPromptTokens({ input: 2, cacheRead: 0, cacheWrite: 2567, output: 0 }, 2850)
 * // { input: 2, cacheRead: 0, cacheWrite: 2848, output: 0 }
 * usageInPromptTokens({ input: 2, cacheRead: 0, cacheWrite: 2567, output: 0 }, 2850, [1760, 2842])
 * // { input: 8, cacheRead: 0, cacheWrite: 2842, output: 0 }
 * ```
 */
export const usageInPromptTokens = (usage: Usage, promptTokens: number, boundaries: ReadonlyArray<number> = []): Usage => {
  const counted = promptTokensOf(usage)
  const target = Math.max(0, Math.round(promptTokens))
  if (counted === target) return usage
  if (counted === 0) return { ...usage, input: target }
  const tolerance = Math.abs(target - counted)
  const place = (n: number): number => {
    if (n === 0) return 0
    if (n === counted) return target
    const scaled = Math.round((n * target) / counted)
    let best = scaled
    let distance = Number.POSITIVE_INFINITY
    for (const b of boundaries) {
      const d = Math.abs(b - scaled)
      if (b <= target && d <= tolerance && d < distance) {
        best = b
        distance = d
      }
    }
    return best
  }
  const readEnd = place(usage.cacheRead)
  const writeEnd = Math.max(readEnd, usage.cacheWrite === 0 ? readEnd : place(usage.cacheRead + usage.cacheWrite))
  const cacheRead = readEnd
  const cacheWrite = writeEnd - readEnd
  const base: Usage = { input: target - writeEnd, cacheRead, cacheWrite, output: usage.output }
  const byTtl = usage.cacheWriteByTtl
  if (byTtl === undefined) return base
  const names = Object.keys(byTtl)
  const scaled: Record<string, number> = {}
  let left = cacheWrite
  names.forEach((name, i) => {
    const n = i === names.length - 1 ? left : Math.min(left, usage.cacheWrite === 0 ? 0 : Math.round((byTtl[name]! * cacheWrite) / usage.cacheWrite))
    scaled[name] = n
    left -= n
  })
  return { ...base, cacheWriteByTtl: scaled }
}
