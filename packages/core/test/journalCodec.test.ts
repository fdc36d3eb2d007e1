// The journal memory survives a trip through JSON: a session restored from it sends the
// same bytes as the session that saved it, and unusable data means a rebuild, never an error.
import { Effect, Layer, ManagedRuntime, Ref } from "effect"
import { describe, expect } from "vitest"
import { AssemblySession, assemble, encodeJournalMemory, JOURNAL_MEMORY_VERSION, Tracker, type AssemblyInput, type JournalMemory, type Message } from "../src/effect.ts"
import { decodeJournalMemory } from "../src/pipeline/journal/journalCodec.ts"
import { it } from "@strata/test-support"
import { journalTestLayer, stubSymbolIndex, stubTracker, type StubRepo } from "./pipeline-stubs.ts"

const repoAt = (turn: number): StubRepo => ({
  files: ["src/a.ts", "src/b.ts", "src/c.ts", ...(turn >= 2 ? ["src/new.ts"] : [])],
  blocks: {
    "src/a.ts": `src/a.ts:\n  f a()${turn >= 1 ? "\n  f a2()" : ""}\n`,
    "src/b.ts": "src/b.ts:\n  f b()\n",
    "src/c.ts": "src/c.ts:\n  f c()\n",
    ...(turn >= 2 ? { "src/new.ts": "src/new.ts:\n  f fresh()\n" } : {})
  },
  legend: "# f=function"
})

const input = (history: ReadonlyArray<Message>, turn: number): AssemblyInput => ({
  model: "gpt-4o",
  prompt: `turn ${turn}`,
  systemPrompt: "SYS",
  files: [{ path: "src/b.ts", content: `export const b = ${turn}\n` }],
  history,
  // Tools offered: each turn journals the file (changed every turn), superseding the copy before.
  tools: [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" } }]
})

/** A session over a tracker and repository shared by whoever holds `state`. */
const session = (state: { turn: number }, tracker: Layer.Layer<Tracker>) =>
  ManagedRuntime.make(Layer.mergeAll(journalTestLayer(tracker, stubSymbolIndex(() => repoAt(state.turn)))))

const memoryOf = (runtime: ReturnType<typeof session>) =>
  runtime.runPromise(Effect.gen(function* () {
    return yield* Ref.get((yield* AssemblySession).journal)
  }))

describe("journal memory as JSON", () => {
  it("a session restored from the saved memory sends the same bytes as the one that saved it", async () => {
    const t = await Effect.runPromise(stubTracker({}))
    const tracker = Layer.succeed(Tracker, t.service)
    const state = { turn: 0 }
    const first = session(state, tracker)
    const history: Array<Message> = []
    for (; state.turn < 3; state.turn++) {
      const r = await first.runPromise(assemble(input(history, state.turn)))
      await first.runPromise(r.commit)
      history.push({ role: "user", content: `turn ${state.turn}` }, { role: "assistant", content: `answer ${state.turn}` })
    }
    const saved = await memoryOf(first)
    expect(saved).toBeDefined()
    const json = JSON.parse(JSON.stringify(encodeJournalMemory(saved!, "chars")))
    const restored = decodeJournalMemory(json, "chars")
    expect(restored).toBeDefined()

    // The same next request from the original session and from a new one given the memory.
    const next = input(history, state.turn)
    const fromOriginal = await first.runPromise(assemble(next))
    const second = session(state, tracker)
    await second.runPromise(Effect.gen(function* () {
      yield* Ref.set((yield* AssemblySession).journal, restored)
    }))
    const fromRestored = await second.runPromise(assemble(next))
    expect(fromRestored.journal?.rebuild).toBeUndefined()
    expect(JSON.stringify(fromRestored.placed.body)).toBe(JSON.stringify(fromOriginal.placed.body))
    // The shown file's tokens travel too: the superseded copy is counted the same.
    expect(saved!.shownFiles.get("src/b.ts")?.tokens).toBeGreaterThan(0)
    expect(fromRestored.journal?.staleTokens).toBe(fromOriginal.journal?.staleTokens)
    expect(fromRestored.journal?.staleTokens).toBeGreaterThan(0)
    await first.dispose()
    await second.dispose()
  })

  it("data of another version, another tokenizer or no journal at all is not used", () => {
    const memory: JournalMemory = {
      systemHash: "h",
      toolsHash: "",
      legend: "",
      frozen: { L0: { symbols: [], files: [] }, L1: { symbols: [], files: [] }, L2: { symbols: [], files: [] } },
      tree: undefined,
      frozenTreeFiles: new Set(["a.ts"]),
      treeFiles: new Set(["a.ts", "b.ts"]),
      shownSymbols: new Map([["a.ts", "x"]]),
      journaledSymbols: new Map([["a.ts", { text: "a.ts: ←1\nf x()", tokens: 6 }]]),
      symbolDiffs: new Map([["a.ts", { tokens: 12, excess: 4 }]]),
      diffNoted: true,
      shownFiles: new Map(),
      history: ["h0"],
      historyEdits: [""],
      journal: [],
      staleTokens: 3,
      waste: 0.3,
      requests: 2,
      at: 1_700_000_000_000,
      ttl: "1h"
    }
    const json = encodeJournalMemory(memory, "o200k_base")
    expect(json.version).toBe(JOURNAL_MEMORY_VERSION)
    const back = decodeJournalMemory(JSON.parse(JSON.stringify(json)), "o200k_base")
    expect(back).toMatchObject({ systemHash: "h", staleTokens: 3, waste: 0.3, requests: 2, history: ["h0"], at: 1_700_000_000_000, ttl: "1h" })
    expect([...back!.treeFiles].sort()).toEqual(["a.ts", "b.ts"])
    expect([...back!.shownSymbols]).toEqual([["a.ts", "x"]])
    expect([...back!.journaledSymbols]).toEqual([["a.ts", { text: "a.ts: ←1\nf x()", tokens: 6 }]])
    expect([...back!.symbolDiffs]).toEqual([["a.ts", { tokens: 12, excess: 4 }]])
    expect(back!.diffNoted).toBe(true)
    expect(decodeJournalMemory({ ...json, version: 1 }, "o200k_base")).toBeUndefined()
    expect(decodeJournalMemory(json, "cl100k_base")).toBeUndefined()
    expect(decodeJournalMemory({ ...json, version: JOURNAL_MEMORY_VERSION + 1 }, "o200k_base")).toBeUndefined()
    expect(decodeJournalMemory({ ...json, journal: "nope" }, "o200k_base")).toBeUndefined()
    expect(decodeJournalMemory(null, "o200k_base")).toBeUndefined()
  })
})
