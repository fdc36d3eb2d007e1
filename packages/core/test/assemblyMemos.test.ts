// The per-request and per-session memos that keep warm assembly cheap must never hand
// back stale data: whatever a memoized function is asked, it answers what the plain
// computation answers now, and the same question twice gets the very same value.
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { assemble, extraStages, makeCustomCounter, type AssemblyInput, type AssemblyState, type Stage } from "../src/effect.ts"
import { journalBlocks, journalLayout } from "../src/pipeline/journal/journal.ts"
import { it } from "@strata/test-support"
import { journalTestLayer, stubSymbolIndex, stubTrackerLayer } from "./pipeline-stubs.ts"

const REPO = {
  files: ["src/a.ts", "src/b.ts", "src/c.ts"],
  blocks: { "src/a.ts": "src/a.ts:\n  f a()\n", "src/b.ts": "src/b.ts:\n  f b()\n", "src/c.ts": "src/c.ts:\n  f c()\n" },
  legend: "legend: f=function"
}

const INPUT: AssemblyInput = {
  model: "gpt-4o",
  prompt: "What does a do?",
  systemPrompt: "Be brief.",
  systemReminder: "Answer in one line.",
  files: [{ path: "src/b.ts", content: "export const b = 1\n" }],
  urls: [{ url: "https://example.com/doc", content: "A document." }],
  history: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello." }]
}

/** The state after the block stages, as the journal layout planned it. */
const plannedState = Effect.gen(function* () {
  let captured: AssemblyState | undefined
  const capture: Stage = { name: "capture", run: (state) => Effect.sync(() => (captured = state)) }
  yield* assemble(INPUT).pipe(Effect.provide(extraStages({ stage: capture, after: "activeBlock" })))
  if (captured?.journal === undefined) throw new Error("the journal layout planned nothing")
  return captured
}).pipe(Effect.provide(Layer.mergeAll(journalTestLayer(stubTrackerLayer({ initialized: true }), stubSymbolIndex(() => REPO)))))

describe("journal layout blocks", () => {
  it.effect("are built once per state: asked again, the same array", () =>
    Effect.gen(function* () {
      const state = yield* plannedState
      const first = journalLayout.blocks(state)
      expect(journalLayout.blocks(state)).toBe(first)
      // A state that differs only in what the block stages filled in reads the same blocks.
      expect(journalLayout.blocks({ ...state, blocks: [] })).toBe(first)
      expect(first).toEqual(journalBlocks(state, state.journal!))
    }))

  it.effect("follow every value they are built from, with the plan unchanged", () =>
    Effect.gen(function* () {
      const state = yield* plannedState
      const plan = state.journal!
      const before = journalLayout.blocks(state)
      const variants: ReadonlyArray<AssemblyState> = [
        { ...state, input: { ...state.input, prompt: "What does c do?" } },
        { ...state, input: { ...state.input, systemPrompt: "Be thorough." } },
        { ...state, input: { ...state.input, tools: [{ name: "ls", description: "List files", inputSchema: { type: "object" } }] } },
        { ...state, counter: makeCustomCounter("twice", (text) => 2 * text.length) },
        { ...state, symbols: { ...state.symbols, legend: { text: "legend: c=class", tokens: 15 } } },
        { ...state, urls: [] },
        { ...state, images: [{ type: "image", url: "data:image/png;base64,AAAA", mediaType: "image/png" }] }
      ]
      for (const variant of variants) {
        const blocks = journalLayout.blocks(variant)
        expect(blocks).toEqual(journalBlocks(variant, plan))
        expect(blocks).not.toEqual(before)
      }
      // Back to the first state: its blocks again, not the last variant's.
      expect(journalLayout.blocks(state)).toEqual(before)
    }))
})
