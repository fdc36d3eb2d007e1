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
