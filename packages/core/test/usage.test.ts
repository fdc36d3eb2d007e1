// One count per request: a simulator's usage, counted by its own counter, is expressed in
// the request's tokens, so read + write + uncached is the number every command shows.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { usageInPromptTokens } from "../src/index.ts"
import { promptTokensOf } from "../src/domain/Usage.ts"

describe("usageInPromptTokens", () => {
  it("keeps the split and adds up to the request's tokens", () => {
    expect(usageInPromptTokens({ input: 2, cacheRead: 0, cacheWrite: 2567, output: 0 }, 2850)).toEqual({ input: 2, cacheRead: 0, cacheWrite: 2848, output: 0 })
    // A write that ends at a breakpoint ends at its prefix, in the request's count.
    expect(usageInPromptTokens({ input: 2, cacheRead: 0, cacheWrite: 2567, output: 0 }, 2850, [1760, 2842])).toEqual({ input: 8, cacheRead: 0, cacheWrite: 2842, output: 0 })
    expect(usageInPromptTokens({ input: 0, cacheRead: 0, cacheWrite: 0, output: 5 }, 120)).toEqual({ input: 120, cacheRead: 0, cacheWrite: 0, output: 5 })
    const same = { input: 10, cacheRead: 90, cacheWrite: 0, output: 1 }
    expect(usageInPromptTokens(same, 100)).toBe(same)
  })

  it("property: read + write + uncached = the request's tokens; reads and writes stay ordered; per-TTL writes add up", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 50_000 }),
        fc.nat({ max: 50_000 }),
        fc.nat({ max: 50_000 }),
        fc.nat({ max: 120_000 }),
        fc.array(fc.nat({ max: 120_000 }), { maxLength: 4 }),
        fc.boolean(),
        (input, cacheRead, cacheWrite, target, boundaries, split) => {
          const usage = {
            input,
            cacheRead,
            cacheWrite,
            output: 7,
            ...(split ? { cacheWriteByTtl: { "1h": Math.floor(cacheWrite / 3), "5m": cacheWrite - Math.floor(cacheWrite / 3) } } : {})
          }
          const out = usageInPromptTokens(usage, target, boundaries)
          expect(promptTokensOf(out)).toBe(target)
          expect(out.output).toBe(7)
          for (const n of [out.input, out.cacheRead, out.cacheWrite]) expect(n).toBeGreaterThanOrEqual(0)
          if (cacheRead === 0) expect(out.cacheRead).toBe(0)
          if (cacheWrite === 0) expect(out.cacheWrite).toBe(0)
          if (out.cacheWriteByTtl !== undefined) expect(Object.values(out.cacheWriteByTtl).reduce((a, b) => a + b, 0)).toBe(out.cacheWrite)
        }
      ),
      { seed: 29, numRuns: 500 }
    )
  })
})
