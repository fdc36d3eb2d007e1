// Requests within the model's input limit (issue 17 item 3): the map budget derived from
// the model, the `inputLimit` stage's shedding (files largest first, then the least
// referenced map blocks), the runner's refusal (`RequestTooLarge`), and what this does to
// the journal layout's frozen tiers (nothing, while the map budget is the model's).
import { Cause, Effect, Exit, Layer, Ref } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { assemble, cutMap, defaultMapTokens, getContextBreakdown, LayoutMode, requestLimits, REPO_MAP_HEADER, RequestTooLarge, resolveRequestLimits, Tracker, type AssemblyInput, type SymbolIndex, type Message } from "../src/effect.ts"
import { renderLeftOut } from "../src/hud/index.ts"
import { journalTestLayer, stubSymbolIndex, stubTracker, stubTrackerLayer, testLayer, type StubRepo } from "./pipeline-stubs.ts"
import { it } from "@strata/test-support"

// gpt-4o with a 20,000-token window (one token per character with the test counter):
// 2,500 tokens kept for the reply (an eighth of the window), shedding under 18,000, and
// a map budget of (18,000 - 2,500) / 10 = 1,550. The journal tests set a map of half the
// room, 7,750 tokens (`BIG_MAP`), so a large frozen map rides in every request.
const MODEL = "gpt-4o"
const MAX_IN = 20_000
const LIMITS = resolveRequestLimits(MODEL, { maxInputTokens: MAX_IN })
const ALLOWED = LIMITS.shedLimitTokens - LIMITS.outputReserveTokens
const BIG_MAP = 7_750

/** A repository of `n` files whose block sizes and reference counts are given per index. */
const repoOf = (blocks: ReadonlyArray<{ readonly size: number; readonly refs: number }>): StubRepo => {
  const path = (i: number) => `src/m${String(i).padStart(3, "0")}.ts`
  return {
    files: blocks.map((_, i) => path(i)),
    blocks: Object.fromEntries(blocks.map((b, i) => [path(i), `${path(i)}:\n${"x".repeat(b.size)}\n`])),
    refCounts: Object.fromEntries(blocks.map((b, i) => [path(i), b.refs])),
    legend: "# legend"
  }
}

const BIG_REPO = repoOf(Array.from({ length: 120 }, (_, i) => ({ size: 150 + (i % 7) * 20, refs: (i * 37) % 50 })))

const input = (over: Partial<AssemblyInput> = {}): AssemblyInput => ({
  model: MODEL,
  prompt: "What changed?",
  systemPrompt: "You are a careful coding assistant.",
  ...over
})

const limited = (...layers: ReadonlyArray<Layer.Layer<Tracker> | Layer.Layer<SymbolIndex>>) =>
  Layer.mergeAll(testLayer(...layers), requestLimits({ maxInputTokens: MAX_IN }))

const requestText = (messages: ReadonlyArray<Message>): string => JSON.stringify(messages)

describe("the map budget's defaults", () => {
  it("a tenth of what a request may hold under the 90% line after the output reserve, at most 16,384 tokens", () => {
    expect(defaultMapTokens(200_000, 8_192)).toBe(16_384)
    expect(defaultMapTokens(128_000, 8_192)).toBe(10_700)
    // Never more than a tenth of the input limit: the rest is left for files, history and the prompt.
    for (const limit of [8_192, 32_000, 128_000, 200_000, 1_000_000]) expect(defaultMapTokens(limit, Math.min(8_192, limit / 8))).toBeLessThanOrEqual(limit / 10)
    expect(resolveRequestLimits("claude-sonnet-4-5")).toMatchObject({ maxInputTokens: 200_000, outputReserveTokens: 8_192, shedLimitTokens: 180_000, mapTokens: 16_384, mapBudget: "model" })
    // A small window keeps most of itself for the request: the reserve is at most an eighth.
    expect(resolveRequestLimits("gpt-4")).toMatchObject({ maxInputTokens: 8_192, outputReserveTokens: 1_024, mapTokens: 634 })
    expect(resolveRequestLimits("gpt-4o", { mapTokens: 500 })).toMatchObject({ mapTokens: 500, mapBudget: "configured" })
  })

  it("cutMap leaves a map that fits alone and never asks for a ranking then", () => {
    const blocks = new Map([["a.ts", 50], ["b.ts", 40]])
    const cut = cutMap({ blocks, ranked: () => {
      throw new Error("a map that fits is not ranked")
    }, legendTokens: 10, treeTokens: 20, budgetTokens: 120 })
    expect(cut).toEqual({ files: undefined, treeLeftOut: false, mapTokens: 120, leftOutFiles: 0, leftOutTokens: 0 })
  })

  it("cutMap keeps the most referenced blocks that fit, and leaves out a tree larger than half the budget", () => {
    const blocks = new Map([["a.ts", 50], ["b.ts", 40], ["c.ts", 30]])
    const ranked = () => ["b.ts", "a.ts", "c.ts"]
    expect(cutMap({ blocks, ranked, legendTokens: 10, treeTokens: 20, budgetTokens: 110 })).toEqual({
      files: new Set(["b.ts", "c.ts"]), treeLeftOut: false, mapTokens: 150, leftOutFiles: 1, leftOutTokens: 50
    })
    expect(cutMap({ blocks, ranked, legendTokens: 10, treeTokens: 60, budgetTokens: 110 })).toEqual({
      files: new Set(["b.ts", "a.ts"]), treeLeftOut: true, mapTokens: 190, leftOutFiles: 1, leftOutTokens: 30
    })
  })
})

describe("the symbolData stage cuts the map to the model's budget", () => {
  it.effect("a map over the budget keeps its most referenced blocks; the report, breakdown and warning say what was left out", () =>
    Effect.gen(function* () {
      const result = yield* assemble(input())
      const text = requestText(result.request.messages)
      const cut = result.report.leftOut?.map
      expect(cut).toMatchObject({ budgetTokens: LIMITS.mapTokens, budget: "model" })
      expect(cut!.files).toBeGreaterThan(0)
      // What is in: the legend and blocks within the budget, the most referenced ones.
      const mapTokens = result.report.categories.legend + result.report.categories.symbols + result.report.categories.tree
      expect(mapTokens).toBeLessThanOrEqual(LIMITS.mapTokens)
      const shown = BIG_REPO.files.filter((p) => text.includes(`${p}:`))
      const leftOut = BIG_REPO.files.filter((p) => !shown.includes(p))
      const refs = (p: string) => BIG_REPO.refCounts![p]!
      expect(Math.min(...shown.map(refs))).toBeGreaterThanOrEqual(Math.max(...leftOut.map(refs)) - 1)
      expect(shown.length + cut!.files).toBe(BIG_REPO.files.length)
      expect(result.warnings.some((w) => w.includes(`${LIMITS.mapTokens.toLocaleString("en-US")}-token budget`) && w.includes("least referenced"))).toBe(true)
      expect(result.breakdown.left_out?.map).toMatchObject({ budget_tokens: LIMITS.mapTokens, budget: "model", files: cut!.files })
      expect(renderLeftOut(result.report.leftOut!)[0]).toMatch(/^Map budget: +1,550 \(from the model's limit\); left out: file tree [\d,]+, blocks of \d+ files/)
      expect(result.report.totalTokens + LIMITS.outputReserveTokens).toBeLessThanOrEqual(MAX_IN)
    }).pipe(Effect.provide(limited(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)))))

  it.effect("a map that fits is byte-identical to the whole map, and nothing is reported", () =>
    Effect.gen(function* () {
      const small = repoOf(Array.from({ length: 10 }, (_, i) => ({ size: 100, refs: i })))
      const run = (layer: Layer.Layer<never>) =>
        assemble(input()).pipe(Effect.provide(Layer.mergeAll(limited(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => small)), layer)))
      const derived = yield* run(Layer.empty)
      const whole = yield* run(requestLimits({ maxInputTokens: MAX_IN, mapTokens: 1e9 }))
      expect(JSON.stringify(derived.placed.body)).toBe(JSON.stringify(whole.placed.body))
      expect(derived.report.leftOut).toBeUndefined()
      expect(derived.breakdown.left_out).toBeUndefined()
      expect(derived.warnings).toEqual([])
    }))

  it.effect("a configured budget is used as it is, without a warning", () =>
    Effect.gen(function* () {
      const result = yield* assemble(input()).pipe(
        Effect.provide(Layer.mergeAll(limited(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)), requestLimits({ maxInputTokens: MAX_IN, mapTokens: 1_000 })))
      )
      expect(result.report.leftOut?.map).toMatchObject({ budgetTokens: 1_000, budget: "configured" })
      expect(result.report.categories.legend + result.report.categories.symbols).toBeLessThanOrEqual(1_000)
      expect(result.warnings).toEqual([])
    }))

  it.effect("flat assembly (no tracker) cuts the map the same way", () =>
    Effect.gen(function* () {
      const result = yield* assemble(input())
      expect(result.mode).toBe("flat")
      expect(result.report.leftOut?.map?.files).toBeGreaterThan(0)
      expect(result.report.totalTokens).toBeLessThan(LIMITS.mapTokens + 500)
    }).pipe(Effect.provide(limited(stubSymbolIndex(() => BIG_REPO)))))
})

describe("the inputLimit stage sheds files, then the least referenced blocks", () => {
  const files = [
    { path: "src/big.ts", content: "b".repeat(12_000) },
    { path: "src/mid.ts", content: "m".repeat(5_000) },
    { path: "src/small.ts", content: "s".repeat(300) }
  ]

  it.effect("files leave the request largest first, just enough of them, with a warning", () =>
    Effect.gen(function* () {
      const result = yield* assemble(input({ files, useRepoMap: false }))
      const text = requestText(result.request.messages)
      expect(text.includes("bbbbbbbbbb")).toBe(false)
      expect(text.includes("mmmmmmmmmm")).toBe(true)
      expect(text.includes("ssssssssss")).toBe(true)
      expect(result.report.leftOut?.files.map((f) => f.path)).toEqual(["src/big.ts"])
      expect(result.report.totalTokens + LIMITS.outputReserveTokens).toBeLessThanOrEqual(LIMITS.shedLimitTokens)
      expect(result.warnings.find((w) => w.includes("src/big.ts"))).toMatch(/over 90% of gpt-4o's 20,000-token input limit; left out of this request: the files src\/big\.ts/)
      expect(result.breakdown.left_out?.files.map((f) => f.path)).toEqual(["src/big.ts"])
    }).pipe(Effect.provide(limited(stubTrackerLayer({ initialized: true })))))

  it.effect("with a map budget as large as the window, the least referenced blocks go after the files", () =>
    Effect.gen(function* () {
      const result = yield* assemble(input({ files }))
      const shed = result.report.leftOut!
      expect(shed.files.length).toBe(3)
      expect(shed.symbols.length).toBeGreaterThan(0)
      const refs = (p: string) => BIG_REPO.refCounts![p]!
      const text = requestText(result.request.messages)
      const shown = BIG_REPO.files.filter((p) => text.includes(`${p}:`))
      expect(shown.length + shed.symbols.length).toBe(BIG_REPO.files.length)
      expect(Math.max(...shed.symbols.map((s) => refs(s.path)))).toBeLessThanOrEqual(Math.min(...shown.map(refs)))
      expect(result.report.totalTokens + LIMITS.outputReserveTokens).toBeLessThanOrEqual(LIMITS.shedLimitTokens)
    }).pipe(Effect.provide(Layer.mergeAll(
      limited(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)),
      requestLimits({ maxInputTokens: MAX_IN, mapTokens: 1e9 })
    ))))

  it.effect("history is never shed: a tool call keeps its result while files go", () =>
    Effect.gen(function* () {
      const history: ReadonlyArray<Message> = [
        { role: "user", content: "Read a.ts" },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "src/a.ts" } }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "r".repeat(6_000) } }] },
        { role: "assistant", content: "It exports a." }
      ]
      const result = yield* assemble(input({ files, history, useRepoMap: false }))
      const text = requestText(result.request.messages)
      expect(result.report.leftOut?.files.length).toBeGreaterThan(0)
      expect(result.report.tiers.L0.history + result.report.tiers.L1.history + result.report.tiers.L2.history + result.report.tiers.L3.history + result.report.tiers.active.history).toBe(4)
      expect(text.includes("\"toolCallId\":\"c1\",\"toolName\":\"read_file\",\"input\"")).toBe(true)
      expect(text.includes("r".repeat(6_000))).toBe(true)
    }).pipe(Effect.provide(limited(stubTrackerLayer({ initialized: true })))))
})

describe("a request that cannot fit is refused", () => {
  it.effect("history alone over the limit: RequestTooLarge names the limit, the size and what to do; nothing is committed", () =>
    Effect.gen(function* () {
      const tracker = yield* stubTracker({ initialized: true })
      const history: ReadonlyArray<Message> = [{ role: "user", content: "h".repeat(21_000) }, { role: "assistant", content: "Ok." }]
      const exit = yield* assemble(input({ history, files: [{ path: "src/a.ts", content: "a".repeat(3_000) }] })).pipe(
        Effect.provide(Layer.mergeAll(limited(stubSymbolIndex(() => BIG_REPO)), Layer.succeed(Tracker, tracker.service))),
        Effect.exit
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(error).toBeInstanceOf(RequestTooLarge)
      const refused = error as RequestTooLarge
      expect(refused).toMatchObject({ _tag: "RequestTooLarge", model: MODEL, maxInputTokens: MAX_IN, outputReserveTokens: LIMITS.outputReserveTokens, fileTokens: 0 })
      expect(refused.historyTokens).toBeGreaterThan(21_000)
      // Everything sheddable went first: files and every block; the legend (under its header) stays.
      expect(refused.mapTokens).toBe(REPO_MAP_HEADER.length + "# legend".length)
      expect(refused.message).toMatch(/^The request for gpt-4o is 21,\d{3} tokens \(history 21,\d{3}, files 0, .*over the model's 20,000-token input limit, so it was not sent\. Compact or clear the history, drop files, shorten the prompt, or raise maxInputTokens/)
      expect(yield* Ref.get(tracker.commits)).toBe(0)
      expect((yield* Ref.get(tracker.ref)).version).toBe(0)
    }))

  it.effect("the breakdown of such a request still works, and shows what was shed and the total", () =>
    Effect.gen(function* () {
      const history: ReadonlyArray<Message> = [{ role: "user", content: "h".repeat(21_000) }, { role: "assistant", content: "Ok." }]
      const breakdown = yield* getContextBreakdown(input({ history }))
      expect(breakdown.total_tokens).toBeGreaterThan(MAX_IN)
      expect(breakdown.left_out?.symbols.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(limited(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)))))
})

describe("the journal layout keeps its frozen tiers while the map is cut", () => {
  it.effect("requests of different sizes (prompt, history, a selected file) leave L0-L2 byte-identical", () =>
    Effect.gen(function* () {
      const frozen = (r: { readonly request: { readonly blocks: ReadonlyArray<{ readonly tier: string; readonly messages: ReadonlyArray<Message> }> } }) =>
        r.request.blocks.filter((b) => b.tier === "L0" || b.tier === "L1" || b.tier === "L2").map((b) => JSON.stringify(b.messages))
      const first = yield* assemble(input({ prompt: "First." }))
      yield* first.commit
      expect(first.report.leftOut?.map?.files).toBeGreaterThan(0)
      const history: ReadonlyArray<Message> = [{ role: "user", content: "First." }, { role: "assistant", content: "y".repeat(3_000) }]
      const second = yield* assemble(input({ prompt: "A longer second prompt.", history, files: [{ path: "src/m003.ts", content: "f".repeat(2_000) }] }))
      yield* second.commit
      const third = yield* assemble(input({ prompt: "Third.", history: [...history, { role: "user", content: "z".repeat(4_000) }, { role: "assistant", content: "Ok." }] }))
      expect(second.journal?.rebuild).toBeUndefined()
      expect(third.journal?.rebuild).toBeUndefined()
      expect(frozen(second)).toEqual(frozen(first))
      expect(frozen(third)).toEqual(frozen(first))
      expect(frozen(first).join("").length).toBeGreaterThan(5_000)
    }).pipe(Effect.provide(Layer.mergeAll(journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)), requestLimits({ maxInputTokens: MAX_IN, mapTokens: BIG_MAP })))))
})

describe("the journal layout over the limit", () => {
  it.effect("frozen blocks cannot be shed in place: the request is rebuilt (\"over the input limit\") and shed from there", () =>
    Effect.gen(function* () {
      const first = yield* assemble(input({ prompt: "First." }))
      yield* first.commit
      const history: ReadonlyArray<Message> = [{ role: "user", content: "First." }, { role: "assistant", content: "y".repeat(12_000) }]
      const second = yield* assemble(input({ history }))
      expect(second.journal?.rebuild).toBe("over the input limit")
      expect(second.report.leftOut?.symbols.length).toBeGreaterThan(0)
      expect(second.report.totalTokens + LIMITS.outputReserveTokens).toBeLessThanOrEqual(LIMITS.shedLimitTokens)
    }).pipe(Effect.provide(Layer.mergeAll(journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)), requestLimits({ maxInputTokens: MAX_IN, mapTokens: BIG_MAP })))))

  it.effect("a selected file over the line is shed from the Working Files without a rebuild", () =>
    Effect.gen(function* () {
      const first = yield* assemble(input({ prompt: "First." }))
      yield* first.commit
      const second = yield* assemble(input({ files: [{ path: "src/huge.ts", content: "u".repeat(9_000) }] }))
      expect(second.journal?.rebuild).toBeUndefined()
      expect(second.report.leftOut?.files.map((f) => f.path)).toEqual(["src/huge.ts"])
      expect(second.report.leftOut?.symbols).toEqual([])
    }).pipe(Effect.provide(Layer.mergeAll(journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)), requestLimits({ maxInputTokens: MAX_IN, mapTokens: BIG_MAP })))))

  it.effect("in an agent's loop a file over the line is shed from the journal's update without a rebuild, and never journaled", () =>
    Effect.gen(function* () {
      const tools = [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" as const } }]
      const first = yield* assemble(input({ prompt: "First.", tools }))
      yield* first.commit
      const files = [{ path: "src/huge.ts", content: "u".repeat(9_000) }, { path: "src/small.ts", content: "export const s = 1\n" }]
      const second = yield* assemble(input({ files, tools }))
      expect(second.journal?.rebuild).toBeUndefined()
      expect(second.report.leftOut?.files.map((f) => f.path)).toEqual(["src/huge.ts"])
      // The file that fits entered the journal (cached); the shed one is nowhere.
      const journal = requestText(second.request.blocks.find((b) => b.tier === "L3")?.messages ?? [])
      expect(journal).toContain("src/small.ts")
      expect(requestText(second.request.messages)).not.toContain("u".repeat(100))
    }).pipe(Effect.provide(Layer.mergeAll(journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => BIG_REPO)), requestLimits({ maxInputTokens: MAX_IN, mapTokens: BIG_MAP })))))
})

describe("property: no request over the model's input limit leaves the pipeline", () => {
  const message = (i: number, size: number): Message => ({ role: i % 2 === 0 ? "user" : "assistant", content: `${i}:${"h".repeat(size)}` })

  it("for random files, maps and histories, in both layouts, the request fits or RequestTooLarge is raised after shedding everything", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 9_000 }), { maxLength: 5 }),
        fc.array(fc.record({ size: fc.integer({ min: 5, max: 600 }), refs: fc.integer({ min: 0, max: 30 }) }), { maxLength: 80 }),
        fc.array(fc.integer({ min: 1, max: 6_000 }), { maxLength: 8 }),
        fc.constantFrom("seed" as const, "journal" as const),
        fc.option(fc.integer({ min: 100, max: 40_000 }), { nil: undefined }),
        async (fileSizes, blocks, historySizes, layout, mapTokens) => {
          const repo = repoOf(blocks)
          const files = fileSizes.map((size, i) => ({ path: `src/f${i}.ts`, content: "c".repeat(size) }))
          const history = historySizes.map((size, i) => message(i, size))
          const layer = Layer.mergeAll(
            journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => repo)),
            Layer.succeed(LayoutMode, layout),
            requestLimits({ maxInputTokens: MAX_IN, ...(mapTokens === undefined ? {} : { mapTokens }) })
          )
          const program = Effect.gen(function* () {
            // An earlier, smaller turn first, so the journal layout plans from memory.
            const before = yield* Effect.exit(assemble(input({ history: history.slice(0, history.length - 2 < 0 ? 0 : history.length - 2) })))
            if (Exit.isSuccess(before)) yield* before.value.commit
            return yield* Effect.exit(assemble(input({ files, history })))
          })
          const exit = await Effect.runPromise(program.pipe(Effect.provide(layer)))
          if (Exit.isSuccess(exit)) {
            const r = exit.value
            expect(r.report.totalTokens + LIMITS.outputReserveTokens).toBeLessThanOrEqual(MAX_IN)
            const tiers = r.report.tiers
            expect(tiers.L0.history + tiers.L1.history + tiers.L2.history + tiers.L3.history + tiers.active.history).toBe(history.length)
            return
          }
          const error = Cause.squash(exit.cause)
          expect(error).toBeInstanceOf(RequestTooLarge)
          const refused = error as RequestTooLarge
          expect(refused.requestTokens + refused.outputReserveTokens).toBeGreaterThan(MAX_IN)
          // Refused only once every file and block was shed.
          expect(refused.fileTokens).toBe(0)
          expect(refused.mapTokens).toBeLessThanOrEqual(REPO_MAP_HEADER.length + "# legend".length)
          expect(refused.historyTokens).toBeGreaterThan(ALLOWED / 2)
        }
      ),
      { numRuns: 80 }
    )
  }, 60_000)
})
