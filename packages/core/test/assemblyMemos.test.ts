// The per-request and per-session memos that keep warm assembly cheap must never hand
// back stale data: whatever a memoized function is asked, it answers what the plain
// computation answers now, and the same question twice gets the very same value.
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { assemble, extraStages, makeCustomCounter, type AssemblyInput, type AssemblyState, type Message, type Stage } from "../src/effect.ts"
import type { ClearedResult } from "../src/pipeline/base/contextEditMemory.ts"
import { editedEntry } from "../src/pipeline/contextEditing/contextEdits.ts"
import { activeFiles } from "../src/pipeline/stages/activeFiles.ts"
import { historyEntries } from "../src/pipeline/stages/historyTiers.ts"
import { sha256 } from "../src/tokens/TokenCounter.ts"
import { formatCount } from "../src/internal/formatCount.ts"
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

describe("formatCount", () => {
  it("groups as toLocaleString(\"en-US\") does", () => {
    fc.assert(fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.double()), (n) => formatCount(n) === n.toLocaleString("en-US")))
    for (const n of [0, -0, 7, 999, 1000, -1000, 123456, 1234567, -98765432, Number.MAX_SAFE_INTEGER, 2 ** 60, 1.5, NaN, Infinity]) expect(formatCount(n)).toBe(n.toLocaleString("en-US"))
  })
})

describe("history entries and their edits", () => {
  const call = (id: string, path: string): Message => ({
    role: "assistant",
    content: [{ type: "text", text: `reading ${path}` }, { type: "tool-call", toolCallId: id, toolName: "read_file", input: { path } }]
  })
  const result = (id: string, text: string): Message => ({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: text } }] })
  const counter = makeCustomCounter("chars", (text) => text.length)
  const other = makeCustomCounter("twice", (text) => 2 * text.length)
  const fresh = (entry: { readonly index: number; readonly messages: ReadonlyArray<Message>; readonly hash: string; readonly tokens: number }) =>
    ({ index: entry.index, messages: entry.messages, hash: entry.hash, tokens: entry.tokens })

  it("the same messages at the same places give the same entries; anything else is measured again", () => {
    const user: Message = { role: "user", content: "Read a.ts" }
    const history = [user, call("c1", "a.ts"), result("c1", "export const a = 1")]
    const first = historyEntries(history, counter)
    const again = historyEntries([...history], counter)
    expect(again[0]).toBe(first[0])
    expect(again[1]).toBe(first[1])
    // Another counter: other tokens, never the first counter's entries.
    const twice = historyEntries(history, other)
    expect(twice.map((e) => e.tokens)).toEqual(first.map((e) => 2 * e.tokens - 4 * e.messages.length))
    expect(historyEntries(history, counter).map(fresh)).toEqual(first.map(fresh))
    // The same call answered by another result, and the same message at another index.
    const answered = historyEntries([user, history[1]!, result("c1", "export const a = 2")], counter)
    expect(answered[1]).not.toBe(first[1])
    expect(answered[1]!.messages[1]).not.toBe(first[1]!.messages[1])
    expect(answered[1]!.hash).not.toBe(first[1]!.hash)
    const moved = historyEntries([{ role: "user", content: "First" }, { role: "assistant", content: "Ok." }, ...history], counter)
    expect(moved.map((e) => e.index)).toEqual([0, 1, 2, 3])
    expect(moved.map((e) => e.key)).toEqual(["history:0", "history:1", "history:2", "history:3"])
  })

  it("an edit is applied again whenever a cleared mark is not the very same value", () => {
    const history = [call("c1", "a.ts"), result("c1", "x".repeat(500))]
    const [entry] = historyEntries(history, counter)
    const none = new Map<string, ClearedResult>()
    expect(editedEntry(entry!, none, counter)).toBe(entry)
    const mark: ClearedResult = { placeholder: "[cleared]", reasoning: false }
    const cleared = editedEntry(entry!, new Map([["c1", mark]]), counter)
    expect(JSON.stringify(cleared.messages)).toContain("[cleared]")
    expect(cleared.tokens).toBeLessThan(entry!.tokens)
    // The same mark in another map: the same edited entry.
    expect(editedEntry(entry!, new Map([["c1", mark]]), counter)).toBe(cleared)
    // Another mark with another placeholder: that placeholder, not the remembered one.
    const another: ClearedResult = { placeholder: "[gone: ask again]", reasoning: false }
    const reedited = editedEntry(entry!, new Map([["c1", another]]), counter)
    expect(JSON.stringify(reedited.messages)).toContain("[gone: ask again]")
    expect(JSON.stringify(reedited.messages)).not.toContain("[cleared]")
    // No mark any more: the entry as given.
    expect(editedEntry(entry!, none, counter)).toBe(entry)
    // Another counter: counted by it.
    const [twiceEntry] = historyEntries(history, other)
    const twice = editedEntry(twiceEntry!, new Map([["c1", mark]]), other)
    expect(twice.tokens).toBe(2 * cleared.tokens - 8)
  })
})

describe("activeFiles", () => {
  it.effect("an unchanged file is last request's entry; a changed one, another counter or another path is built again", () =>
    Effect.gen(function* () {
      const state = yield* plannedState
      const filesOf = (files: ReadonlyArray<{ readonly path: string; readonly content: string }>, counter = state.counter) =>
        Effect.map(activeFiles.run({ ...state, counter, input: { ...state.input, files } }), (s) => s.files)
      const a = "export const a = 1\n"
      const first = yield* filesOf([{ path: "src/a.ts", content: a }, { path: "src/b.ts", content: "b" }])
      // The same text as a new string (files are read afresh): the same entries.
      const again = yield* filesOf([{ path: "src/b.ts", content: "b" }, { path: "./src/a.ts", content: Buffer.from(a).toString() }])
      expect(again[0]).toBe(first[0])
      expect(again[1]).toBe(first[1])
      const changed = yield* filesOf([{ path: "src/a.ts", content: "export const a = 2\n" }])
      expect(changed[0]!.hash).toBe(sha256("export const a = 2\n"))
      expect(changed[0]!.text).toContain("export const a = 2")
      const twice = makeCustomCounter("twice", (text) => 2 * text.length)
      const counted = yield* filesOf([{ path: "src/a.ts", content: "export const a = 2\n" }], twice)
      expect(counted[0]!.tokens).toBe(2 * changed[0]!.tokens)
      const moved = yield* filesOf([{ path: "src/c.ts", content: "export const a = 2\n" }], twice)
      expect(moved[0]!.key).toBe("file:src/c.ts")
      expect(moved[0]!.text).toContain("src/c.ts")
    }))
})
