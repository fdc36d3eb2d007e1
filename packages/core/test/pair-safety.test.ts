// Pair safety (issue 15): over random agent sessions, nothing that shortens a history
// separates a tool call from its result: compaction at a topic boundary or with a
// summary, emergency truncation (the function and the engine's), file shedding
// and history budgets, and the XML chunk builder's token limit. Each property is checked on the
// resulting history with `historyProblems`, which names any orphan.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  applyDetection,
  CompactionModel,
  createContextEngine,
  createContextBuilder,
  emergencyTruncate,
  HistoryCompactor,
  isTurnStart,
  makeCustomCounter,
  shedFiles,
  FileContext,
  Tokenizer,
  tokenBudget,
  verbatimStart,
  type Detection,
  type Message,
  type MemoryChunkInput
} from "../src/effect.ts"
import { historyOf, pairingProblems, stepsArb } from "./tool-sessions.ts"

const counter = makeCustomCounter("chars", (t) => t.length)

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "strata-pairs-"))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const historyArb = stepsArb(30).map((steps) => historyOf(steps))

const detectionArb = (length: number): fc.Arbitrary<Detection | undefined> =>
  fc.option(
    fc.record({
      boundary_index: fc.option(fc.integer({ min: -1, max: length + 1 }), { nil: null }),
      boundary_reason: fc.constant("new task"),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
      summary: fc.constantFrom("", "We read the files.")
    }),
    { nil: undefined }
  )

/** The kept part of `after` is a suffix of `before` that starts at a turn start, and it pairs. */
const checkKept = (before: ReadonlyArray<Message>, after: ReadonlyArray<Message>, keptFrom: number): void => {
  expect(pairingProblems(after)).toEqual([])
  expect(keptFrom === 0 || keptFrom === before.length || isTurnStart(before, keptFrom), `kept from ${keptFrom}`).toBe(true)
  expect(after.slice(after.length - (before.length - keptFrom))).toEqual(before.slice(keptFrom))
}

describe("pair safety: compaction (property tests)", () => {
  it("a topic boundary, a summary or a failed detector never keeps a call without its result", () => {
    fc.assert(
      fc.property(
        historyArb.chain((history) => fc.record({
          history: fc.constant(history),
          detection: detectionArb(history.length),
          window: fc.integer({ min: 0, max: 2000 }),
          turns: fc.integer({ min: 0, max: 4 })
        })),
        ({ history, detection, window, turns }) => {
          const config = { verbatimWindowTokens: window, minVerbatimExchanges: turns, minConfidence: 0.5 }
          const start = verbatimStart(history, counter, config)
          const outcome = applyDetection(history, detection, start, config)
          checkKept(history, outcome.history, outcome.keptFrom)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("emergency truncation drops whole turns: the rest starts at a turn start and pairs", () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 0, max: 3000 }), (history, trigger) => {
        const after = emergencyTruncate(history, trigger, counter)
        checkKept(history, after, history.length - after.length)
      }),
      { numRuns: 300 }
    )
  })

  it("the HistoryCompactor's result pairs, whatever the model answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb.chain((history) => fc.record({ history: fc.constant(history), detection: detectionArb(history.length), trigger: fc.integer({ min: 1, max: 3000 }) })),
        async ({ history, detection, trigger }) => {
          const model = Layer.succeed(CompactionModel, {
            complete: () => (detection === undefined ? Effect.succeed("not json") : Effect.succeed(JSON.stringify(detection)))
          })
          const layer = HistoryCompactor.layer({ config: { triggerTokens: trigger, verbatimWindowTokens: trigger / 4, minStepTokens: 0 }, prompt: "detect" }).pipe(
            Layer.provide(Layer.mergeAll(model, Tokenizer.layerFrom(counter)))
          )
          const result = await Effect.runPromise(Effect.flatMap(HistoryCompactor, (c) => c.compactHistoryIfNeeded(history)).pipe(Effect.provide(layer)))
          expect(pairingProblems(result.history)).toEqual([])
        }
      ),
      { numRuns: 100 }
    )
  })
})

describe("pair safety: the engine's budgets (property tests)", () => {
  it("emergency truncation, compaction without a model, file shedding and budgets keep every call with its result", async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1000, max: 20_000 }), async (history, trigger, limit) => {
        await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, tokenCounter: counter, maxInputTokens: limit, compaction: { triggerTokens: trigger } })
        await engine.setHistory(history)
        await engine.addFile("big.txt", "x".repeat(limit))
        // Shedding drops files only: the history is untouched.
        await engine.shedFilesIfNeeded(100)
        expect(await engine.getHistory()).toEqual(history)
        const budget = await engine.getTokenBudget()
        expect(budget).toEqual(tokenBudget(counter.countMessages(history), limit, budget.needsSummary))
        const truncated = await engine.emergencyTruncate()
        checkKept(history, truncated.history, history.length - truncated.history.length)
        await engine.setHistory(history)
        const compacted = await engine.compactHistoryIfNeeded()
        checkKept(history, compacted.history, history.length - compacted.history.length)
        expect(pairingProblems(await engine.getHistory())).toEqual([])
      }),
      { numRuns: 60 }
    )
  })

  it("shedFiles never sees the history: it only removes files", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 6 }), fc.integer({ min: 0, max: 20_000 }), (sizes, other) => {
        const files = FileContext.of(sizes.map((n, i) => ({ path: `f${i}.txt`, content: "y".repeat(n) })))
        const result = shedFiles({ files, otherTokens: other, maxInputTokens: 10_000, counter })
        for (const f of result.dropped) expect(files.hasFile(f.path)).toBe(true)
        expect(result.files.getFiles().length + result.dropped.length).toBe(files.getFiles().length)
      })
    )
  })
})

// ---------------------------------------------------------------------------------------
// The XML chunk builder: a token limit over a memory of tool calls and results

const memoryArb = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant("user" as const), size: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ kind: fc.constant("tool" as const), size: fc.integer({ min: 1, max: 400 }), pending: fc.boolean(), gap: fc.boolean() })
  ),
  { maxLength: 20 }
)

const memoryChunks = (items: ReadonlyArray<{ readonly kind: "user"; readonly size: number } | { readonly kind: "tool"; readonly size: number; readonly pending: boolean; readonly gap: boolean }>): Array<MemoryChunkInput> => {
  const chunks: Array<MemoryChunkInput> = [{ id: "sys", type: "SYSTEM", content: "Be careful." }]
  items.forEach((item, i) => {
    if (item.kind === "user") {
      chunks.push({ id: `u${i}`, type: "AGENT", role: "user", content: "q".repeat(item.size) })
      return
    }
    chunks.push({ id: `c${i}`, type: "WORKFLOW", action: "tool_call", tool: "read_file", callId: `call${i}`, content: { path: `f${i}` } })
    if (item.gap) chunks.push({ id: `t${i}`, type: "WORKING_FLOW", subtype: "THINKING", content: "hmm" })
    if (!item.pending) chunks.push({ id: `r${i}`, type: "ENVIRONMENT", action: "tool_result", tool: "read_file", callId: `call${i}`, content: "r".repeat(item.size) })
  })
  return chunks
}

describe("pair safety: the XML chunk builder's token limit (property tests)", () => {
  it("a call and its result are included together or excluded together, under either keep strategy", () => {
    const builder = createContextBuilder()
    fc.assert(
      fc.property(memoryArb, fc.integer({ min: 0, max: 3000 }), fc.constantFrom("oldest" as const, "newest" as const), (items, maxTokens, keep) => {
        const chunks = memoryChunks(items)
        const result = builder.build({ chunks }, { maxTokens, keep, tokenizer: { countTokens: (t: string) => t.length } })
        const included = new Set(result.includedChunkIds)
        items.forEach((item, i) => {
          if (item.kind !== "tool" || item.pending) return
          expect(included.has(`c${i}`), `call ${i} and its result`).toBe(included.has(`r${i}`))
        })
      }),
      { numRuns: 300 }
    )
  })
})
