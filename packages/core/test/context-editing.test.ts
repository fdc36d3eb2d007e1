// The context-editing stage: old tool results replaced by placeholders when that pays,
// in batches; remembered byte for byte; never the last N results or a protected tool's;
// the journal rewritten from the first cleared exchange only. Examples, then property
// tests over random growing agent sessions in both layouts.
import { Clock, Effect, Layer, Ref } from "effect"
import fc from "fast-check"
import { describe, expect, it as vitestIt } from "vitest"
import { assemble, AssemblySession, clearedPlaceholder, ContextEditing, DEFAULT_CONTEXT_EDITING, encodeJournalMemory, fileAccess, getContextBreakdown, LAYOUT_MODES, LayoutMode, toolOutputText, type AssemblyInput, type AssemblyResult, type ContextEditingSettings, type LayoutMode as Mode, type Message, type ToolCallPart, type ToolMessage } from "../src/effect.ts"
import { renderTokenBreakdown } from "../src/hud/index.ts"
import { decodeJournalMemory } from "../src/pipeline/journal/journalCodec.ts"
import { charCounter, journalTestLayer, stubTrackerLayer, testLayer } from "./pipeline-stubs.ts"
import { historyOf, pairingProblems, stepsArb, TOOL_NAMES, type Step } from "./tool-sessions.ts"

const clockAt = (ms: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => ms,
  currentTimeMillis: Effect.succeed(ms),
  currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  monotonicTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  sleep: () => Effect.void
})

const layerFor = (mode: Mode, settings: Partial<ContextEditingSettings> = {}) =>
  Layer.mergeAll(
    mode === "seed" ? testLayer(stubTrackerLayer()) : journalTestLayer(stubTrackerLayer()),
    Layer.succeed(LayoutMode, mode),
    Layer.succeed(ContextEditing, { ...DEFAULT_CONTEXT_EDITING, ...settings })
  )

const inputOf = (history: ReadonlyArray<Message>): AssemblyInput => ({ model: "gpt-4o", prompt: "continue", systemPrompt: "SYS", history, useRepoMap: false })

/** Every tool result of a request, by call id: its output text. */
const resultsOf = (r: AssemblyResult): ReadonlyMap<string, string> =>
  new Map(r.request.messages.flatMap((m) => (m.role === "tool" ? m.content.map((p) => [p.toolCallId, toolOutputText(p.output)] as const) : [])))

/** Run requests over growing histories, committing each; one fixed clock step apart. */
const session = (mode: Mode, histories: ReadonlyArray<ReadonlyArray<Message>>, settings: Partial<ContextEditingSettings> = {}, stepMs = 10_000) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const out: Array<AssemblyResult> = []
      for (const [i, history] of histories.entries()) {
        const result = yield* assemble(inputOf(history)).pipe(Effect.provideService(Clock.Clock, clockAt(1_000_000 + i * stepMs)))
        yield* result.commit
        out.push(result)
      }
      return out
    }).pipe(Effect.provide(layerFor(mode, settings)))
  )

const read = (id: string, path: string, size: number): ReadonlyArray<Message> => [
  { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path } }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: `${id} ${"x".repeat(size)}` } }] }
]

describe("context editing: pieces", () => {
  vitestIt("placeholders name the tool, the call and how to get the content back", () => {
    expect(clearedPlaceholder("search", "c9")).toBe("[Result of search (call c9) cleared to save context. Call the tool again if you need it.]")
    expect(clearedPlaceholder("read_file", "c1", "src/a.ts")).toContain("a later call on src/a.ts supersedes it")
  })

  vitestIt("fileAccess reads the path argument and the verb (tool name or `command`)", () => {
    const call = (toolName: string, input: ToolCallPart["input"]): ToolCallPart => ({ type: "tool-call", toolCallId: "c", toolName, input })
    expect(fileAccess(call("read_file", { path: "./src/a.ts" }))).toEqual({ kind: "read", path: "src/a.ts" })
    expect(fileAccess(call("edit_file", { file_path: "src/a.ts" }))).toEqual({ kind: "edit", path: "src/a.ts" })
    expect(fileAccess(call("str_replace_based_edit_tool", { command: "view", path: "a.ts" }))).toEqual({ kind: "read", path: "a.ts" })
    expect(fileAccess(call("str_replace_based_edit_tool", { command: "str_replace", path: "a.ts" }))).toEqual({ kind: "edit", path: "a.ts" })
    expect(fileAccess(call("search", { query: "x" }))).toBeUndefined()
  })
})

describe("context editing: examples", () => {
  const reads = (n: number, size = 400) => [{ role: "user" as const, content: "Read them all" }, ...Array.from({ length: n }, (_, i) => read(`c${i}`, `f${i}.ts`, size)).flat()]

  for (const mode of LAYOUT_MODES) {
    vitestIt(`${mode}: under the trigger nothing is cleared; the first request past it clears all but the last N (the prefix is written anyway)`, async () => {
      const [small] = await session(mode, [reads(3, 100)], { triggerTokens: 10_000 })
      expect(small!.report.contextEditing).toMatchObject({ toolResults: 3, clearedResults: 0, clearedTokens: 0 })
      const [big] = await session(mode, [reads(8)], { triggerTokens: 2_000, keepToolUses: 3, clearAtLeastTokens: 0 })
      const results = resultsOf(big!)
      for (let i = 0; i < 5; i++) expect(results.get(`c${i}`)).toBe(clearedPlaceholder("read_file", `c${i}`))
      for (let i = 5; i < 8; i++) expect(results.get(`c${i}`)).toMatch(/^c\d x+$/)
      expect(big!.report.contextEditing).toMatchObject({ toolResults: 8, clearedResults: 5, newlyClearedResults: 5 })
      expect(big!.report.contextEditing?.clearedTokens).toBeGreaterThan(5 * 250)
      expect(pairingProblems(big!.request.messages)).toEqual([])
      // The report's total is the request's: cleared tokens are gone from it.
      expect(big!.report.totalTokens).toBe(charCounter().countMessages(big!.request.messages))
    })
  }

  vitestIt("tools never cleared keep their results; a batch smaller than clearAtLeastTokens waits", async () => {
    const history = [...reads(6), ...read("s1", "x.ts", 10)]
    const [r] = await session("journal", [history], { triggerTokens: 100, keepToolUses: 1, neverClear: ["read_file"] })
    expect(r!.report.contextEditing?.clearedResults).toBe(0)
    const [small] = await session("journal", [reads(4, 50)], { triggerTokens: 100, keepToolUses: 1, clearAtLeastTokens: 10_000 })
    expect(small!.report.contextEditing?.clearedResults).toBe(0)
  })

  vitestIt("between rebuilds a batch waits until its reads pay for the rewrite (rent or buy), then clears at once; the journal before it keeps its bytes", async () => {
    // Past the trigger from the second request on, with the prefix warm: no free rewrite.
    const start = reads(2, 50)
    const histories = Array.from({ length: 40 }, (_, k) => [...start, ...Array.from({ length: k }, (_, i) => read(`n${i}`, `g${i}.ts`, 600)).flat()])
    const results = await session("journal", histories, { triggerTokens: 3_000, keepToolUses: 2, clearAtLeastTokens: 0 })
    const firstClear = results.findIndex((r) => (r.report.contextEditing?.newlyClearedResults ?? 0) > 0)
    expect(firstClear).toBeGreaterThan(2)
    const before = results[firstClear - 1]!
    const cleared = results[firstClear]!
    // Several results went in one batch, not one at a time.
    expect(cleared.report.contextEditing?.newlyClearedResults).toBeGreaterThan(1)
    expect(cleared.journal?.rebuild).toBeUndefined()
    // Frozen tiers and the journal up to the first cleared exchange are byte-identical.
    const firstId = [...resultsOf(cleared).entries()].find(([, text]) => text.startsWith("[Result"))?.[0]
    const at = cleared.request.messages.findIndex((m) => m.role === "tool" && m.content.some((p) => p.toolCallId === firstId))
    expect(JSON.stringify(cleared.request.messages.slice(0, at - 1))).toBe(JSON.stringify(before.request.messages.slice(0, at - 1)))
    // Once cleared, always cleared, with the same bytes.
    for (const later of results.slice(firstClear + 1)) {
      for (const [id, text] of resultsOf(cleared)) if (text.startsWith("[Result")) expect(resultsOf(later).get(id)).toBe(text)
    }
  })

  vitestIt("superseded reads go first: a read of a file read again later is cleared under the trigger", async () => {
    const history = [{ role: "user" as const, content: "go" }, ...read("old", "a.ts", 900), ...read("other", "b.ts", 900), ...read("new", "a.ts", 900), ...read("x", "c.ts", 10), ...read("y", "d.ts", 10)]
    const [r] = await session("journal", [history], { triggerTokens: 1_000_000, keepToolUses: 2, clearAtLeastTokens: 0 })
    const results = resultsOf(r!)
    expect(results.get("old")).toBe(clearedPlaceholder("read_file", "old", "a.ts"))
    expect(results.get("other")).toMatch(/^other x+$/)
  })

  vitestIt("reasoning of a cleared exchange is dropped only before the current assistant turn", async () => {
    const exchange = (id: string, thinking: string): ReadonlyArray<Message> => [
      { role: "assistant", content: [{ type: "reasoning", text: thinking, provider: "anthropic", signature: "sig" }, { type: "tool-call", toolCallId: id, toolName: "search", input: { q: id } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "search", output: { type: "text", value: "y".repeat(800) } }] }
    ]
    const history = [{ role: "user" as const, content: "one" }, ...exchange("a", "OLD-TURN"), { role: "user" as const, content: "two" }, ...exchange("b", "CURRENT-TURN"), ...exchange("c", "LAST")]
    const [r] = await session("journal", [history], { triggerTokens: 0, keepToolUses: 1, clearAtLeastTokens: 0 })
    const body = JSON.stringify(r!.request.messages)
    expect(body).not.toContain("OLD-TURN")
    expect(body).toContain("CURRENT-TURN")
    expect(resultsOf(r!).get("b")).toBe(clearedPlaceholder("search", "b"))
    expect(r!.report.contextEditing?.clearedResults).toBe(2)
  })

  vitestIt("the breakdown, the report and the HUD show the cleared tokens", async () => {
    const history = reads(6)
    await Effect.runPromise(
      Effect.gen(function* () {
        const result = yield* assemble(inputOf(history))
        const breakdown = yield* getContextBreakdown(inputOf(history))
        expect(breakdown.context_editing?.cleared_tokens).toBe(result.report.contextEditing?.clearedTokens)
        expect(breakdown.context_editing?.cleared_results).toBe(3)
        expect(renderTokenBreakdown({ report: result.report }).join("\n")).toMatch(/Cleared: +[\d,]+ \(3 tool results of 6 shown as placeholders/)
      }).pipe(Effect.provide(layerFor("journal", { triggerTokens: 0, clearAtLeastTokens: 0 })))
    )
  })

  vitestIt("the memory travels in the saved journal: a restored session reproduces the same bytes", async () => {
    const histories = [reads(6), [...reads(6), ...read("z", "z.ts", 10)]]
    const settings = { triggerTokens: 0, clearAtLeastTokens: 0 }
    const layer = layerFor("journal", settings)
    await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* assemble(inputOf(histories[0]!)).pipe(Effect.provideService(Clock.Clock, clockAt(1_000)))
        yield* first.commit
        const memory = yield* Ref.get((yield* AssemblySession).journal)
        const json = JSON.parse(JSON.stringify(encodeJournalMemory(memory!, "chars")))
        const restored = decodeJournalMemory(json, "chars")
        expect(restored?.edits?.cleared.size).toBe(3)
        const next = yield* assemble(inputOf(histories[1]!)).pipe(Effect.provideService(Clock.Clock, clockAt(2_000)))
        const fresh = yield* Effect.gen(function* () {
          yield* Ref.set((yield* AssemblySession).journal, restored)
          return yield* assemble(inputOf(histories[1]!)).pipe(Effect.provideService(Clock.Clock, clockAt(2_000)))
        }).pipe(Effect.provide(layer))
        expect(JSON.stringify(fresh.placed.body)).toBe(JSON.stringify(next.placed.body))
        expect(fresh.journal?.rebuild).toBeUndefined()
      }).pipe(Effect.provide(layer))
    )
  })
})

// ---------------------------------------------------------------------------------------
// Random growing sessions: each request appends a few steps to the history.

const settingsArb: fc.Arbitrary<Partial<ContextEditingSettings>> = fc.record({
  triggerTokens: fc.integer({ min: 0, max: 3_000 }),
  keepToolUses: fc.integer({ min: 0, max: 4 }),
  neverClear: fc.subarray([...TOOL_NAMES], { maxLength: 2 }),
  clearAtLeastTokens: fc.integer({ min: 0, max: 500 }),
  clearReasoning: fc.boolean()
})

const growingArb = fc.record({
  mode: fc.constantFrom<Mode>(...LAYOUT_MODES),
  settings: settingsArb,
  turns: fc.array(stepsArb(5), { minLength: 1, maxLength: 10 }),
  gapMs: fc.constantFrom(10_000, 10 * 60_000)
})

const growing = (turns: ReadonlyArray<ReadonlyArray<Step>>): ReadonlyArray<ReadonlyArray<Message>> => {
  const out: Array<ReadonlyArray<Message>> = []
  let history: ReadonlyArray<Message> = []
  turns.forEach((steps, t) => {
    history = [...history, ...historyOf(steps, { message: 100 * t, call: 100 * t })]
    out.push(history)
  })
  return out
}

describe("context editing: random agent sessions (property tests)", () => {
  vitestIt("nothing the next request needs is cleared: the last N results and never-cleared tools' results are as given; placeholders are stable; pairs stay whole", async () => {
    const batches = { first: 0, later: 0 }
    await fc.assert(
      fc.asyncProperty(growingArb, async ({ mode, settings, turns, gapMs }) => {
        const histories = growing(turns)
        const results = await session(mode, histories, settings, gapMs)
        const shown = new Map<string, string>()
        results.forEach((r, i) => {
          const history = histories[i]!
          const original = new Map(history.flatMap((m) => (m.role === "tool" ? (m as ToolMessage).content.map((p) => [p.toolCallId, p] as const) : [])))
          const calls = history.flatMap((m) => (m.role === "assistant" && typeof m.content !== "string" ? m.content.flatMap((p) => (p.type === "tool-call" ? [p] : [])) : []))
          const keep = new Set(calls.slice(Math.max(0, calls.length - (settings.keepToolUses ?? 3))).map((c) => c.toolCallId))
          const now = resultsOf(r)
          expect(pairingProblems(r.request.messages)).toEqual([])
          for (const [id, part] of original) {
            const text = now.get(id)
            const given = toolOutputText(part.output)
            if (keep.has(id) || (settings.neverClear ?? []).includes(part.toolName)) expect(text, `request ${i}: ${id} is protected`).toBe(given)
            else if (text !== given) expect(text).toBe(clearedPlaceholder(part.toolName, id, text?.includes("supersedes") === true ? /on (.*) supersedes/.exec(text)![1] : undefined))
            // Once a placeholder, always the same placeholder.
            if (shown.has(id)) expect(text, `request ${i}: ${id} stays cleared`).toBe(shown.get(id))
            else if (text !== given) shown.set(id, text!)
          }
          const report = r.report.contextEditing
          if (original.size > 0) expect(report?.clearedResults).toBe([...original.keys()].filter((id) => now.get(id) !== toolOutputText(original.get(id)!.output)).length)
          expect(r.report.totalTokens).toBe(charCounter().countMessages(r.request.messages))
          if ((report?.newlyClearedResults ?? 0) > 0) batches[i === 0 ? "first" : "later"]++
        })
        // Determinism: the same session again gives the same bytes.
        const again = await session(mode, histories, settings, gapMs)
        expect(again.map((r) => JSON.stringify(r.placed.body))).toEqual(results.map((r) => JSON.stringify(r.placed.body)))
      }),
      { numRuns: 80 }
    )
    // The sessions do clear, on first requests and on later ones.
    expect(batches.first).toBeGreaterThan(0)
    expect(batches.later).toBeGreaterThan(0)
  }, 120_000)

  vitestIt("journal layout: between rebuilds the prefix only grows, or is rewritten from the first newly cleared exchange on", async () => {
    await fc.assert(
      fc.asyncProperty(settingsArb, fc.array(stepsArb(4), { minLength: 2, maxLength: 10 }), async (settings, turns) => {
        const results = await session("journal", growing(turns), settings)
        for (let i = 1; i < results.length; i++) {
          const r = results[i]!
          if (r.journal?.rebuild !== undefined) continue
          // The previous request without its uncached tail (the prompt: no files or URLs here).
          const prev = results[i - 1]!.request.messages.slice(0, -1)
          const cur = r.request.messages
          let d = 0
          while (d < prev.length && JSON.stringify(prev[d]) === JSON.stringify(cur[d])) d++
          if (d === prev.length) continue
          // A rewrite starts at an exchange this request cleared (its call message, or its results).
          const newly = new Set([...resultsOf(r)].filter(([id, text]) => text.startsWith("[Result") && resultsOf(results[i - 1]!).get(id)?.startsWith("[Result") !== true).map(([id]) => id))
          expect(r.report.contextEditing?.newlyClearedResults ?? 0, `request ${i} rewrote message ${d} without clearing`).toBeGreaterThan(0)
          const at = cur[d]!
          const ids = at.role === "tool" ? at.content.map((p) => p.toolCallId) : at.role === "assistant" && typeof at.content !== "string" ? at.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : [])) : []
          expect(ids.some((id) => newly.has(id)), `request ${i}: message ${d} holds no newly cleared result`).toBe(true)
        }
      }),
      { numRuns: 60 }
    )
  }, 120_000)
})
