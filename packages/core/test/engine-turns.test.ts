// The Promise engine's turns and history over its state store (memory here; the file
// store and PostgreSQL are exercised in packages/e2e): tool parts in the history methods,
// a turn's commit decoding its reply, nothing changed by a turn never committed, two
// turns of one engine racing, and compaction as one history rewrite.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect, Schema } from "effect"
import { extraStages, type Stage } from "../src/effect.ts"
import { createContextEngine, makeEstimatingCounter, InvalidInput, StaleTurn, TurnAlreadyCommitted, type Message, type ProviderPlugin, seedPlugin, type ToolCallPart } from "../src/index.ts"
import { stubSymbolIndex, stubTrackerLayer } from "./pipeline-stubs.ts"

let root: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "strata-engine-turns-"))
  writeFileSync(join(root, "a.ts"), "export const a = 1\n")
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

const callPart: ToolCallPart = { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a.ts" } }
const call: Message = { role: "assistant", content: [callPart] }
const result: Message = { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "export const a = 1" } }] }

describe("the engine's history takes tool parts", () => {
  it("appends calls and results, refuses orphans and reused ids naming them, and changes nothing then", async () => {
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root })
    await engine.addMessage("user", "What is in a.ts?")
    await engine.addMessage("assistant", [callPart])
    const early = await engine.addMessage("user", "hello?").catch((e: unknown) => e)
    expect(early).toBeInstanceOf(InvalidInput)
    expect(early).toMatchObject({ message: expect.stringContaining('"c1"') })
    await engine.addMessages([result, { role: "assistant", content: "It exports a." }])
    const reused = await engine.addMessages([call, result]).catch((e: unknown) => e)
    expect(reused).toMatchObject({ _tag: "InvalidInput", message: expect.stringContaining("already used") })
    const orphan = await engine.addMessage("tool", [{ type: "tool-result", toolCallId: "zz", toolName: "ls", output: { type: "text", value: "" } }]).catch((e: unknown) => e)
    expect(orphan).toBeInstanceOf(InvalidInput)
    expect((await engine.getHistory()).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
  })
})

const decodeText = Schema.decodeUnknownSync(Schema.Struct({ text: Schema.String }))

describe("the engine's turns", () => {
  const engine = () =>
    createContextEngine({
      model: "gpt-4o",
      repoRoot: root,
      tracker: stubTrackerLayer(),
      symbols: stubSymbolIndex(() => ({ files: ["a.ts"], blocks: { "a.ts": "a.ts:\n  v a\n" } }))
    })

  it("commit stores the exchange and the usage; a turn never committed changes nothing", async () => {
    await using e = engine()
    await e.addFile("a.ts")
    const abandoned = await e.assemble({ prompt: "never sent" })
    expect(abandoned.version).toBe(0)
    expect(await e.getHistory()).toEqual([])
    expect((await e.getSessionRecord()).turns).toBe(0)

    const turn = await e.assemble({ prompt: "What is a?" })
    expect(turn.request.messages.at(-1)?.content).toContain("What is a?")
    const committed = await turn.commit({ reply: "A constant.", usage: { input: 5, cacheRead: 50, cacheWrite: 10, output: 2 } })
    expect(committed.appended).toEqual([{ role: "user", content: "What is a?" }, { role: "assistant", content: "A constant." }])
    expect(await e.getSessionRecord()).toMatchObject({ turns: 1, selected: ["a.ts"], totals: { input: 5, cacheRead: 50, cacheWrite: 10, output: 2 }, last: { usageSource: "provider" } })
    expect((await e.hud({ ascii: true })).join("\n")).toMatch(/Session/)
  })

  it("a provider's response needs a provider plugin; the error says so and nothing is stored", async () => {
    await using e = engine()
    const turn = await e.assemble({ prompt: "Hi" })
    const error = await turn.commit({ reply: { choices: [{ message: { content: "hi" } }] } }).catch((x: unknown) => x)
    expect(error).toBeInstanceOf(InvalidInput)
    expect(error).toMatchObject({ message: expect.stringMatching(/provider plugin/) })
    expect(await e.getHistory()).toEqual([])
  })

  it("a plugin's decoder reads the reply and its usage", async () => {
    const plugin: ProviderPlugin<{ readonly n: number }> = {
      provider: "scripted",
      place: (request) => ({ provider: "scripted", body: { n: request.messages.length }, breakpoints: [], dropped: [] }),
      decodeReply: (reply) => ({ messages: [{ role: "assistant", content: decodeText(reply).text }], usage: { input: 1, cacheRead: 2, cacheWrite: 3, output: 4 } }),
      decodeUsage: () => ({ input: 9, cacheRead: 9, cacheWrite: 9, output: 9 })
    }
    await using e = createContextEngine({ model: "gpt-4o", repoRoot: root, provider: plugin })
    const turn = await e.assemble({ prompt: "Hi" })
    expect(turn.request.n).toBeGreaterThan(0)
    await turn.commit({ reply: { text: "Hello" } })
    expect((await e.getHistory()).at(-1)).toEqual({ role: "assistant", content: "Hello" })
    expect((await e.getSessionRecord()).totals).toEqual({ input: 1, cacheRead: 2, cacheWrite: 3, output: 4 })
    // A usage given explicitly wins, through the plugin's usage decoder.
    await (await e.assemble({ prompt: "Again" })).commit({ reply: { text: "Again" }, usage: { raw: true } })
    expect((await e.getSessionRecord()).totals).toEqual({ input: 10, cacheRead: 11, cacheWrite: 12, output: 13 })
  })

  it("two turns begun together: the later commit is refused as stale, or re-assembled when the caller opts in", async () => {
    await using e = engine()
    const first = await e.assemble({ prompt: "one" })
    const second = await e.assemble({ prompt: "two" })
    const third = await e.assemble({ prompt: "three" })
    await first.commit({ reply: "1" })
    const stale = await second.commit({ reply: "2" }).catch((error: unknown) => error)
    expect(stale).toBeInstanceOf(StaleTurn)
    expect(stale).toMatchObject({ _tag: "StaleTurn", assembledAt: 0, current: 1 })
    expect((await e.getHistory()).map((m) => m.content)).toEqual(["one", "1"])
    const retried = await second.commit({ reply: "2" }, { retries: 1 })
    expect(retried.version).toBe(2)
    await expect(second.commit({ reply: "2 again" })).rejects.toBeInstanceOf(TurnAlreadyCommitted)
    await third.commit({ reply: "3" }, { retries: 1 })
    expect((await e.getHistory()).map((m) => m.content)).toEqual(["one", "1", "two", "2", "three", "3"])
    expect((await e.getSessionRecord()).turns).toBe(3)
  })

  it("compaction is one rewrite of the stored history; clearHistory empties it", async () => {
    await using e = createContextEngine({
      model: "gpt-4o",
      repoRoot: root,
      compaction: { triggerTokens: 300, verbatimWindowTokens: 80, minVerbatimExchanges: 1 },
      compactionModel: async () => '{"boundary_index": null, "boundary_reason": "", "confidence": 0, "summary": "We talked about a."}'
    })
    for (let i = 0; i < 10; i++) await e.addExchange(`Question ${i}: ${"why ".repeat(12)}`, `Answer ${i}: ${"because ".repeat(12)}`)
    expect(await e.shouldCompact()).toBe(true)
    const compacted = await e.compactHistoryIfNeeded()
    expect(compacted.kind).toBe("summarized")
    const history = await e.getHistory()
    expect(history).toEqual(compacted.history)
    expect(String(history[0]?.content)).toContain("We talked about a.")
    await e.clearHistory()
    expect(await e.getHistory()).toEqual([])
    expect((await e.getTokenBudget()).historyTokens).toBe(0)
  })
})

describe("one assembly per turn", () => {
  /** An engine whose 4,000-token limit a large file passes. */
  const overLimit = () => ({ model: "test-model", repoRoot: root, maxInputTokens: 4_000, outputReserveTokens: 0, tokenCounter: makeEstimatingCounter("test-model") })

  it("a file the inputLimit stage sheds leaves context, and the request is assembled once", async () => {
    writeFileSync(join(root, "huge.txt"), "word ".repeat(6_000))
    let runs = 0
    const counting: Stage = { name: "countRuns", run: (state) => Effect.sync(() => { runs++; return state }) }
    await using e = createContextEngine({
      ...overLimit(),
      tracker: stubTrackerLayer(),
      layers: [extraStages({ stage: counting, after: "track" })]
    })
    await e.addFile("a.ts")
    await e.addFile("huge.txt")
    const turn = await e.assemble({ prompt: "What is in a.ts?" })
    expect(runs).toBe(1)
    expect(turn.report.leftOut?.files.map((f) => f.path)).toEqual(["huge.txt"])
    expect(JSON.stringify(turn.request)).not.toContain("word word")
    expect(await e.getFiles()).toEqual(["a.ts"])
    expect(turn.warnings.join("\n")).toContain("huge.txt")
  })

  it("a flat request (no tracker) sheds by the same rule: the file leaves context, one assembly, one placement", async () => {
    writeFileSync(join(root, "huge.txt"), "word ".repeat(6_000))
    let placed = 0
    const counting: ProviderPlugin<unknown> = {
      ...seedPlugin,
      place: (request) => {
        placed++
        return seedPlugin.place(request)
      }
    }
    await using e = createContextEngine({
      ...overLimit(),
      provider: counting
    })
    await e.addFile("a.ts")
    await e.addFile("huge.txt")
    const turn = await e.assemble({ prompt: "What is in a.ts?" })
    expect(turn.mode).toBe("flat")
    expect(placed).toBe(1)
    expect(turn.report.leftOut?.files.map((f) => f.path)).toEqual(["huge.txt"])
    expect(JSON.stringify(turn.request)).not.toContain("word word")
    expect(JSON.stringify(turn.request)).toContain("export const a = 1")
    expect(await e.getFiles()).toEqual(["a.ts"])
    expect(turn.warnings.join("\n")).toMatch(/left out of this request: the files huge\.txt/)
  })

  it("assemble and commit decode their input: what commit accepts is what the store keeps", async () => {
    await using e = createContextEngine({ model: "gpt-4o", repoRoot: root })
    const bad: ReadonlyArray<unknown> = [
      { prompt: 12345 },
      { prompt: {} },
      { toolResults: [{ type: "tool-result", toolCallId: "c", toolName: "t", output: "str" }] },
      { toolResults: [{ type: "tool-result", toolCallId: "c", toolName: "t", output: undefined }] }
    ]
    for (const request of bad) {
      // @ts-expect-error: what a JavaScript caller may pass
      const error = await e.assemble(request).catch((x: unknown) => x)
      expect(error).toBeInstanceOf(InvalidInput)
    }
    const turn = await e.assemble({ prompt: "ok" })
    // @ts-expect-error: a usage source that does not exist
    await expect(turn.commit({ reply: "fine", usageSource: "guessed" })).rejects.toBeInstanceOf(InvalidInput)
    await expect(turn.commit({ reply: [{ role: "assistant", content: 42 }] })).rejects.toBeInstanceOf(InvalidInput)
    expect(await e.getHistory()).toEqual([])
    await turn.commit({ reply: "fine" })
    expect((await e.getHistory()).map((m) => m.content)).toEqual(["ok", "fine"])
  })
})
