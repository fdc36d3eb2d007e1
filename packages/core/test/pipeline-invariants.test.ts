// Property tests of the layout invariants over random repositories, selections, tier
// assignments and histories: a file never appears twice (docs/pipeline.md#the-tiered-layout), no symbol
// block for files in context, empty tiers emit nothing, the breakdown adds up to the
// request's token count, and the same input gives the same bytes.
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  assemble,
  getContextBreakdown,
  LAYOUT_MODES,
  LayoutMode,
  type AssemblyInput,
  type Message,
  type SeedMessage,
  type Tier
} from "../src/effect.ts"
import { charCounter, stubSymbolIndex, stubTrackerLayer, testLayer, type StubRepo } from "./pipeline-stubs.ts"
import { historyOf, pairingProblems, stepsArb, TOOLS } from "./tool-sessions.ts"

const TIER_OR_NONE = fc.constantFrom<Tier | undefined>("L0", "L1", "L2", "L3", "active", undefined)

const scenario = fc
  .record({
    fileCount: fc.integer({ min: 0, max: 10 }),
    historyLength: fc.integer({ min: 0, max: 10 }),
    urlCount: fc.integer({ min: 0, max: 5 }),
    review: fc.boolean(),
    useRepoMap: fc.boolean(),
    seed: fc.integer()
  })
  .chain((s) =>
    fc.record({
      s: fc.constant(s),
      dirs: fc.array(fc.constantFrom("src", "lib", "src/deep", ""), { minLength: s.fileCount, maxLength: s.fileCount }),
      hasBlock: fc.array(fc.boolean(), { minLength: s.fileCount, maxLength: s.fileCount }),
      selected: fc.array(fc.boolean(), { minLength: s.fileCount, maxLength: s.fileCount }),
      fileTier: fc.array(TIER_OR_NONE, { minLength: s.fileCount, maxLength: s.fileCount }),
      symbolTier: fc.array(TIER_OR_NONE, { minLength: s.fileCount, maxLength: s.fileCount }),
      historyTier: fc.array(TIER_OR_NONE, { minLength: s.historyLength, maxLength: s.historyLength }),
      order: fc.array(fc.nat(), { minLength: s.fileCount, maxLength: s.fileCount })
    })
  )
  .map(({ s, dirs, hasBlock, selected, fileTier, symbolTier, historyTier, order }) => {
    const paths = dirs.map((d, i) => (d === "" ? `f${i}.ts` : `${d}/f${i}.ts`))
    const blocks: Record<string, string> = {}
    const assignments: Record<string, Tier> = {}
    paths.forEach((p, i) => {
      if (hasBlock[i]) blocks[p] = `${p}:\n  f sym${i}() ⟦S${i}⟧\n`
      const ft = fileTier[i]
      const st = symbolTier[i]
      if (ft !== undefined) assignments[`file:${p}`] = ft
      if (st !== undefined) assignments[`symbol:${p}`] = st
    })
    historyTier.forEach((t, j) => {
      if (t !== undefined) assignments[`history:${j}`] = t
    })
    const repo: StubRepo = { files: paths, blocks, legend: "# f=function" }
    const history: Array<Message> = Array.from({ length: s.historyLength }, (_, j) => ({ role: j % 2 === 0 ? "user" : "assistant", content: `message ⟦H${j}⟧` }))
    const files = paths
      .map((path, i) => ({ path, content: `content of ⟦C${i}⟧`, i }))
      .filter((f) => selected[f.i])
      .sort((a, b) => (order[a.i] ?? 0) - (order[b.i] ?? 0))
      .map(({ path, content }) => ({ path, content }))
    const input: AssemblyInput = {
      model: "gpt-4o",
      prompt: "the prompt ⟦P⟧",
      systemPrompt: "system ⟦SYS⟧",
      systemReminder: "reminder",
      files,
      history,
      urls: Array.from({ length: s.urlCount }, (_, k) => ({ url: `https://u/${k}`, content: `url ⟦U${k}⟧` })),
      useRepoMap: s.useRepoMap,
      ...(s.review ? { review: "review ⟦R⟧" } : {})
    }
    return { repo, assignments, input, paths, selectedFlags: selected, hasBlock, fileTier }
  })

const textOf = (m: SeedMessage): string => (typeof m.content === "string" ? m.content : m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""))
const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

const run = (sc: Scenario) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const first = yield* assemble(sc.input)
      const second = yield* assemble(structuredClone(sc.input))
      const breakdown = yield* getContextBreakdown(sc.input)
      return { first, second, breakdown }
    }).pipe(Effect.provide(testLayer(stubTrackerLayer({ assignments: sc.assignments }), stubSymbolIndex(() => sc.repo))))
  )

describe("layout invariants (property tests)", () => {
  it("a file appears once; files in context have no symbol block; empty tiers emit nothing; totals add up; bytes are stable", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (sc) => {
        const { first, second, breakdown } = await run(sc)
        const messages = (first.placed.body as { messages: ReadonlyArray<SeedMessage> }).messages
        const all = messages.map(textOf).join("\n")
        const working = messages.map(textOf).find((t) => t.startsWith("# Working Files")) ?? ""
        const blockText = (tier: Tier) => first.request.blocks.filter((b) => b.tier === tier).flatMap((b) => b.messages).map((m) => (typeof m.content === "string" ? m.content : "")).join("\n")

        sc.paths.forEach((_, i) => {
          const selected = sc.selectedFlags[i] === true
          const tier = sc.fileTier[i] ?? "active"
          if (selected) {
            // Full content exactly once: in its cached tier when graduated, else in Working Files.
            expect(occurrences(all, `⟦C${i}⟧`)).toBe(1)
            expect(occurrences(working, `⟦C${i}⟧`)).toBe(tier === "active" ? 1 : 0)
            expect(occurrences(blockText(tier), `⟦C${i}⟧`)).toBe(1)
            // ...and its symbol block nowhere.
            expect(occurrences(all, `⟦S${i}⟧`)).toBe(0)
          } else {
            expect(occurrences(all, `⟦C${i}⟧`)).toBe(0)
            // Not selected: the symbol block alone, once (when the map is on), never in active.
            const expected = sc.hasBlock[i] === true && sc.input.useRepoMap === true ? 1 : 0
            expect(occurrences(all, `⟦S${i}⟧`)).toBe(expected)
            expect(occurrences(blockText("active"), `⟦S${i}⟧`)).toBe(0)
          }
        })
        ;(sc.input.history ?? []).forEach((_, j) => expect(occurrences(all, `⟦H${j}⟧`)).toBe(1))
        // History keeps conversation order inside every tier.
        for (const block of first.request.blocks) {
          const seen = block.messages.flatMap((m) => /⟦H(\d+)⟧/.exec(typeof m.content === "string" ? m.content : "")?.[1] ?? []).map(Number)
          expect([...seen].sort((a, b) => a - b)).toEqual(seen)
        }

        // Empty tiers emit nothing; one breakpoint per emitted cached block, on its last message.
        expect(first.request.blocks.every((b) => b.messages.length > 0)).toBe(true)
        expect(messages.every((m) => textOf(m).length > 0 || typeof m.content !== "string")).toBe(true)
        const cachedBlocks = first.request.blocks.filter((b) => b.tier !== "active")
        expect(first.request.breakpoints.map((b) => b.tier)).toEqual(cachedBlocks.map((b) => b.tier))
        expect(first.report.emptyTiers).toBe(4 - cachedBlocks.length)

        // Tokens: blocks add up to the request's count (per-char counter: exact), contents to blocks.
        const total = charCounter().countMessages(first.request.messages)
        expect(first.report.totalTokens).toBe(total)
        expect(first.breakdown.total_tokens).toBe(total)
        expect(breakdown.total_tokens).toBe(total)
        expect(breakdown.blocks).toEqual(first.breakdown.blocks)
        for (const b of breakdown.blocks) expect(b.contents.reduce((n, c) => n + c.tokens, 0)).toBe(b.tokens)
        const categories = Object.values(first.report.categories).reduce((a, b) => a + b, 0)
        expect(categories).toBe(total)

        // Determinism.
        expect(JSON.stringify(second.placed.body)).toBe(JSON.stringify(first.placed.body))
      }),
      { numRuns: 150 }
    )
  }, 60_000)
})

// ---------------------------------------------------------------------------------------
// Tool sessions: histories of tool exchanges, each one history item, under random tiers.

const toolScenario = fc
  .record({ steps: stepsArb(16), withTools: fc.boolean(), mode: fc.constantFrom<LayoutMode>(...LAYOUT_MODES) })
  .chain((s) => {
    const history = historyOf(s.steps)
    return fc.record({
      s: fc.constant(s),
      history: fc.constant(history),
      tiers: fc.array(TIER_OR_NONE, { minLength: history.length, maxLength: history.length })
    })
  })

describe("layout invariants with tool exchanges (property tests)", () => {
  it("a call and its result are adjacent and in one block; every message once, in order within a block; totals add up; bytes are stable", async () => {
    await fc.assert(
      fc.asyncProperty(toolScenario, async ({ s, history, tiers }) => {
        const assignments: Record<string, Tier> = {}
        tiers.forEach((t, j) => {
          if (t !== undefined) assignments[`history:${j}`] = t
        })
        const input: AssemblyInput = {
          model: "gpt-4o",
          prompt: "go on ⟦P⟧",
          systemPrompt: "system ⟦SYS⟧",
          history,
          useRepoMap: false,
          ...(s.withTools ? { tools: TOOLS } : {})
        }
        const layer = Layer.mergeAll(testLayer(stubTrackerLayer({ assignments })), Layer.succeed(LayoutMode, s.mode))
        const { first, second, breakdown } = await Effect.runPromise(
          Effect.gen(function* () {
            const first = yield* assemble(input)
            const second = yield* assemble(structuredClone(input))
            const breakdown = yield* getContextBreakdown(input)
            return { first, second, breakdown }
          }).pipe(Effect.provide(layer))
        )
        const messages = first.request.messages
        expect(pairingProblems(messages)).toEqual([])
        // Every history message once, in conversation order, and an exchange inside one block.
        const positions = history.map((m) => messages.findIndex((x) => JSON.stringify(x) === JSON.stringify(m)))
        expect(positions.every((p) => p >= 0)).toBe(true)
        for (const block of first.request.blocks) {
          const own = history.filter((m) => block.messages.some((x) => JSON.stringify(x) === JSON.stringify(m)))
          expect(pairingProblems(own)).toEqual([])
          const at = own.map((m) => block.messages.findIndex((x) => JSON.stringify(x) === JSON.stringify(m)))
          expect(at).toEqual([...at].sort((a, b) => a - b))
        }
        for (const m of history) expect(messages.filter((x) => JSON.stringify(x) === JSON.stringify(m))).toHaveLength(1)
        // Tools travel with the request and count in L0 and the totals.
        const toolTokens = s.withTools ? charCounter().count(JSON.stringify(TOOLS)) : 0
        expect(first.request.tools).toEqual(s.withTools ? TOOLS : undefined)
        expect(first.report.categories.tools).toBe(toolTokens)
        expect(first.report.totalTokens).toBe(charCounter().countMessages(messages) + toolTokens)
        expect(breakdown.total_tokens).toBe(first.report.totalTokens)
        expect(JSON.stringify(second.placed.body)).toBe(JSON.stringify(first.placed.body))
      }),
      { numRuns: 150 }
    )
  }, 60_000)
})
