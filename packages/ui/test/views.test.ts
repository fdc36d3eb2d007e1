// The session view's server-side parts on their own (pure, no store or browser): the chart
// bars summarize every request (means per bucket, running totals at bucket ends) within the
// bar limit, and row pages slice by request index.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { requestRowPage, sessionCharts, type RequestRow } from "../src/views.ts"

const row = (index: number, read: number, write: number, cost: number, running: number): RequestRow => ({
  index,
  at: 1_767_225_600_000 + index * 1000,
  model: "claude-sonnet-4-5",
  provider: "anthropic",
  usageSource: "provider",
  promptTokens: read + write + 10,
  tokens: { read, write5m: write, write1h: 0, uncached: 10, output: 5 },
  content: { system: 100, tools: 50, map: read, files: write, history: 0, prompt: 10, other: 0, cleared: 0 },
  cost,
  uncachedCost: cost * 3,
  cumulativeCost: running,
  cumulativeUncachedCost: running * 3,
  asSentCost: null,
  cumulativeAsSentCost: null,
  blocks: [],
  miss: null,
  newlyCleared: 0,
  newlyClearedTokens: 0
})

const rowsOf = (first: number, draws: ReadonlyArray<readonly [number, number, number]>): ReadonlyArray<RequestRow> => {
  let running = 0
  return draws.map(([read, write, cost], i) => {
    running += cost
    return row(first + i, read, write, cost, running)
  })
}

const draw = fc.tuple(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 20_000 }), fc.double({ min: 0, max: 2, noNaN: true }))

describe("session charts", () => {
  it("draw at most `bars` bars that sum to every request and end at the last one", () => {
    fc.assert(
      fc.property(fc.array(draw, { maxLength: 1200 }), fc.integer({ min: 1, max: 300 }), fc.nat(50), (draws, bars, first) => {
        const rows = rowsOf(first, draws)
        const c = sessionCharts(rows, bars)
        expect(c.bucket).toBe(Math.max(1, Math.ceil(rows.length / bars)))
        expect(c.x.length).toBe(Math.ceil(rows.length / c.bucket))
        expect(c.x.length).toBeLessThanOrEqual(bars)
        expect(c.x.at(-1)).toBe(rows.at(-1)?.index)
        c.x.forEach((x, b) => expect(x).toBe(rows[Math.min(rows.length, (b + 1) * c.bucket) - 1]?.index))
        // A bar is its requests' mean (rounded): times its size, the bars give back the total.
        const size = (b: number) => Math.min(c.bucket, rows.length - b * c.bucket)
        const total = c.billing.read.reduce((t, v, b) => t + v * size(b), 0)
        expect(Math.abs(total - rows.reduce((t, r) => t + r.tokens.read, 0))).toBeLessThanOrEqual(0.5 * c.bucket * c.x.length)
        expect(c.content.map).toEqual(c.billing.read)
        // Running totals: the bucket's last request's, to a millionth of a dollar.
        c.cost.cost.forEach((v, b) => expect(v).toBeCloseTo(rows[Math.min(rows.length, (b + 1) * c.bucket) - 1]?.cumulativeCost ?? 0, 5))
        expect(c.cost.asSent).toBeNull()
      })
    )
  })

  it("page rows by request index", () => {
    const rows = rowsOf(3, Array.from({ length: 120 }, () => [1000, 10, 0.01] as const))
    expect(requestRowPage(rows, 3, 10, 5).requests.map((r) => r.index)).toEqual([10, 11, 12, 13, 14])
    expect(requestRowPage(rows, 3, 0, 2).requests.map((r) => r.index)).toEqual([3, 4])
    expect(requestRowPage(rows, 3, 120, 100).requests.map((r) => r.index)).toEqual([120, 121, 122])
    expect(requestRowPage(rows, 3).requests).toHaveLength(120)
    expect(requestRowPage(rows, 3)).toMatchObject({ total: 120, omitted: 3 })
  })
})
