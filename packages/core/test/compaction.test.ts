import { mkdtemp, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Result } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { applyDetection, BUNDLED_PROMPTS_DIR, CompactionModel, CompactionModelError, type CompactionModelRequest, compactionStatus, DEFAULT_COMPACTION_CONFIG, emergencyTruncate, formatDetectionTranscript, HistoryCompactor, makeCustomCounter, type Message, parseDetection, Prompts, Tokenizer, type TrackedItem, Tracker, TrackerPersistError, type TrackerSnapshot } from "../src/index.ts"
import { type HistoryCompactorOptions } from "../src/compaction/HistoryCompactor.ts"
import { shouldCompact, SUMMARY_ACK, SUMMARY_PREFIX, summaryPair, verbatimStart } from "../src/compaction/algorithm.ts"
import { createContextEngine } from "../src/effect.ts"
import { it } from "@strata/test-support"

// One token per character plus 4 per message: easy to reason about.
const counter = makeCustomCounter("test", (t) => t.length)
const conversation = (turns: number, size = 100): Array<Message> =>
  Array.from({ length: turns }, (_, i) => [
    { role: "user" as const, content: `q${i}:` + "u".repeat(size) },
    { role: "assistant" as const, content: `a${i}:` + "a".repeat(size) }
  ]).flat()

describe("compaction algorithm", () => {
  it("triggers only when enabled and at or over the trigger", () => {
    expect(shouldCompact(100, { ...DEFAULT_COMPACTION_CONFIG, triggerTokens: 100 })).toBe(true)
    expect(shouldCompact(99, { ...DEFAULT_COMPACTION_CONFIG, triggerTokens: 100 })).toBe(false)
    expect(shouldCompact(1000, { ...DEFAULT_COMPACTION_CONFIG, enabled: false })).toBe(false)
    expect(shouldCompact(1000, { ...DEFAULT_COMPACTION_CONFIG, triggerTokens: 0 })).toBe(false)
  })

  it("keeps the token window and at least N user messages verbatim", () => {
    const history = conversation(10) // each message ~107 tokens
    // Window of 250 tokens holds 2 messages; N=2 users reaches back 4 messages: the earlier wins.
    expect(verbatimStart(history, counter, { verbatimWindowTokens: 250, minVerbatimExchanges: 2 })).toBe(16)
    // A large window wins over N.
    expect(verbatimStart(history, counter, { verbatimWindowTokens: 1000, minVerbatimExchanges: 1 })).toBe(11)
    // The newest message is always kept, even if it alone exceeds the window.
    expect(verbatimStart(history, counter, { verbatimWindowTokens: 1, minVerbatimExchanges: 0 })).toBe(19)
  })

  it("formats the newest 50 messages with their original indices, cutting long ones", () => {
    const history = conversation(30, 1200)
    const text = formatDetectionTranscript(history)
    expect(text.startsWith("[10] USER: q5:")).toBe(true)
    expect(text).toContain("[59] ASSISTANT: a29:")
    expect(text).toContain("... (truncated)")
    expect(text.split("\n\n")).toHaveLength(50)
  })

  it("parses JSON, fenced JSON and JSON inside prose", () => {
    const json = '{"boundary_index": 4, "boundary_reason": "new task", "confidence": 0.9, "summary": "s"}'
    for (const reply of [json, "```json\n" + json + "\n```", "Here you go:\n" + json + "\nThanks"]) {
      const parsed = parseDetection(reply)
      expect(Result.isSuccess(parsed) && parsed.success.boundary_index).toBe(4)
    }
  })

  it("rejects malformed JSON and missing fields with a reason", () => {
    const bad = parseDetection('{"boundary_index": 4,')
    expect(Result.isFailure(bad)).toBe(true)
    const missing = parseDetection('{"boundary_index": 4, "confidence": 0.9}')
    expect(Result.isFailure(missing) && missing.failure).toContain("expected shape")
    expect(Result.isFailure(parseDetection("no json here"))).toBe(true)
  })

  it("truncates at a confident boundary inside the kept region", () => {
    const history = conversation(10)
    const outcome = applyDetection(history, { boundary_index: 14, boundary_reason: "new topic", confidence: 0.8, summary: "x" }, 12, DEFAULT_COMPACTION_CONFIG)
    expect(outcome.kind).toBe("truncated")
    expect(outcome.history).toEqual(history.slice(14))
  })

  it("summarizes when the boundary is before the verbatim start, unconfident, or null", () => {
    const history = conversation(10)
    for (const detection of [
      { boundary_index: 4, boundary_reason: "old", confidence: 0.9, summary: "We did X." },
      { boundary_index: 14, boundary_reason: "unsure", confidence: 0.3, summary: "We did X." },
      { boundary_index: null, boundary_reason: "", confidence: 0, summary: "We did X." }
    ]) {
      const outcome = applyDetection(history, detection, 16, DEFAULT_COMPACTION_CONFIG)
      expect(outcome.kind).toBe("summarized")
      expect(outcome.history).toEqual([
        { role: "user", content: SUMMARY_PREFIX + "We did X." },
        { role: "assistant", content: SUMMARY_ACK },
        ...history.slice(16)
      ])
    }
  })

  it("uses a default summary when the detector's summary is empty", () => {
    const outcome = applyDetection(conversation(4), { boundary_index: null, boundary_reason: "", confidence: 0, summary: "  " }, 4, DEFAULT_COMPACTION_CONFIG)
    expect(outcome.history[0]!.content).toBe(SUMMARY_PREFIX + "The prior conversation covered earlier topics that are not directly relevant to the current work.")
  })

  it("drops older messages without a summary when the detector failed", () => {
    const history = conversation(10)
    const outcome = applyDetection(history, undefined, 16, DEFAULT_COMPACTION_CONFIG)
    expect(outcome).toMatchObject({ kind: "truncated", keptFrom: 16 })
    expect(outcome.history).toEqual(history.slice(16))
  })

  it("never starts kept history on an assistant message", () => {
    const history = conversation(10)
    const outcome = applyDetection(history, { boundary_index: 15, boundary_reason: "r", confidence: 1, summary: "" }, 12, DEFAULT_COMPACTION_CONFIG)
    expect(outcome.history[0]!.role).toBe("user")
    expect(outcome.keptFrom).toBe(14)
  })

  it("emergency truncation drops the oldest pairs only above twice the trigger", () => {
    const history = conversation(10) // ~2150 tokens
    expect(emergencyTruncate(history, 2000, counter)).toBe(history)
    const cut = emergencyTruncate(history, 500, counter)
    expect(counter.countMessages(cut)).toBeLessThanOrEqual(500)
    expect(cut[0]!.role).toBe("user")
    expect(cut).toEqual(history.slice(history.length - cut.length))
    expect(emergencyTruncate(history, 0, counter)).toBe(history)
  })

  it("reports status as a capped percentage", () => {
    expect(compactionStatus(12_000, DEFAULT_COMPACTION_CONFIG)).toEqual({ enabled: true, tokens: 12_000, threshold: 24_000, percent: 50 })
    expect(compactionStatus(1e9, DEFAULT_COMPACTION_CONFIG).percent).toBe(999)
    expect(compactionStatus(5, { ...DEFAULT_COMPACTION_CONFIG, triggerTokens: 0 }).percent).toBe(0)
  })
})

describe("HistoryCompactor", () => {
  const scripted = (reply: Effect.Effect<string, CompactionModelError>) =>
    Layer.succeed(CompactionModel, { complete: () => reply })
  const compactor = (model: Layer.Layer<CompactionModel> | undefined, config = {}) =>
    HistoryCompactor.layer({ config: { triggerTokens: 1000, verbatimWindowTokens: 300, ...config }, prompt: "detect" }).pipe(
      Layer.provide(model ? Layer.merge(model, Tokenizer.layerFrom(counter)) : Tokenizer.layerFrom(counter))
    )
  const run = <A>(body: Effect.Effect<A, never, HistoryCompactor>, model?: Layer.Layer<CompactionModel>, config = {}) =>
    body.pipe(Effect.provide(compactor(model, config)))

  it.effect("leaves short history alone", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const result = yield* c.compactHistoryIfNeeded(conversation(2))
      expect(result).toMatchObject({ compacted: false, kind: "none", tokensSaved: 0 })
    })))

  it.effect("summarizes with the model's summary and reports the tokens saved", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const history = conversation(10)
      const result = yield* c.compactHistoryIfNeeded(history)
      expect(result.kind).toBe("summarized")
      expect(result.history[0]!.content).toBe(SUMMARY_PREFIX + "Earlier: set up.")
      expect(result.tokensSaved).toBe(result.tokensBefore - result.tokensAfter)
      expect(result.tokensSaved).toBeGreaterThan(1000)
    }), scripted(Effect.succeed('{"boundary_index":null,"boundary_reason":"","confidence":0,"summary":"Earlier: set up."}'))))

  it.effect("falls back to truncation without a summary on malformed JSON", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const result = yield* c.compactHistoryIfNeeded(conversation(10))
      expect(result.kind).toBe("truncated")
      expect(result.warnings[0]).toContain("not valid JSON")
      expect(result.history.some((m) => String(m.content).startsWith(SUMMARY_PREFIX))).toBe(false)
    }), scripted(Effect.succeed("{not: json}"))))

  it.effect("falls back to truncation when the model fails", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const result = yield* c.compactHistoryIfNeeded(conversation(10))
      expect(result).toMatchObject({ compacted: true, kind: "truncated" })
      expect(result.warnings[0]).toContain("429")
    }), scripted(Effect.fail(new CompactionModelError({ reason: "HTTP 429 after 3 retries" })))))

  it.effect("falls back to truncation when the model times out", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const result = yield* c.compactHistoryIfNeeded(conversation(10))
      expect(result.kind).toBe("truncated")
      expect(result.warnings[0]).toContain("no answer within 20 ms")
    }), scripted(Effect.never), { timeoutMs: 20 }))

  it.effect("works with no model configured", () =>
    run(Effect.gen(function* () {
      const c = yield* HistoryCompactor
      const result = yield* c.compactHistoryIfNeeded(conversation(10))
      expect(result.kind).toBe("truncated")
      expect(result.warnings).toEqual(["no compaction model is configured"])
    })))
})

describe("compaction algorithm: reference parity and edge cases", () => {
  it("a boundary in the kept region still keeps at least N user messages", () => {
    const history = conversation(10)
    // Boundary at the last user message: only one exchange after it, two are required.
    const outcome = applyDetection(history, { boundary_index: 18, boundary_reason: "new topic", confidence: 0.9, summary: "" }, 16, DEFAULT_COMPACTION_CONFIG)
    expect(outcome).toMatchObject({ kind: "truncated", keptFrom: 16 })
    expect(outcome.history).toEqual(history.slice(16))
    const one = applyDetection(history, { boundary_index: 18, boundary_reason: "new topic", confidence: 0.9, summary: "" }, 16, { ...DEFAULT_COMPACTION_CONFIG, minVerbatimExchanges: 1 })
    expect(one.history).toEqual(history.slice(18))
  })

  it("the summary path also widens back to N user messages", () => {
    const history = conversation(10)
    const outcome = applyDetection(history, { boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" }, 19, { ...DEFAULT_COMPACTION_CONFIG, minVerbatimExchanges: 3 })
    expect(outcome.keptFrom).toBe(14)
    expect(outcome.history).toEqual([...summaryPair("S"), ...history.slice(14)])
  })

  it("keeps an earlier summary visible to the detector, uncut, even beyond the newest 50", () => {
    const summary = SUMMARY_PREFIX + "We set up CI. " + "detail ".repeat(300)
    const history: Array<Message> = [{ role: "user", content: summary }, { role: "assistant", content: SUMMARY_ACK }, ...conversation(30)]
    const text = formatDetectionTranscript(history)
    const blocks = text.split("\n\n")
    expect(blocks[0]).toBe(`[0] USER: ${summary}`)
    expect(blocks[1]!.startsWith("[12] USER: q5:")).toBe(true)
    expect(blocks).toHaveLength(51)
    // Not repeated when it is among the newest 50.
    const short = formatDetectionTranscript(history.slice(0, 10))
    expect(short.split("\n\n")[0]).toBe(`[0] USER: ${summary}`)
    expect(short.match(/\[0\] USER/g)).toHaveLength(1)
  })

  it("finds the JSON object after prose that contains braces", () => {
    const reply = 'I looked at {the history}. Answer: {"boundary_index": 6, "boundary_reason": "r", "confidence": 0.7, "summary": "a {b} c"}'
    const parsed = parseDetection(reply)
    expect(Result.isSuccess(parsed) && parsed.success).toEqual({ boundary_index: 6, boundary_reason: "r", confidence: 0.7, summary: "a {b} c" })
  })

  it("names the JSON syntax error of an unterminated reply", () => {
    const parsed = parseDetection('{"boundary_index": null, "boundary_reason": "x", "confidence": 0, "summary": "cut}')
    expect(Result.isFailure(parsed) && parsed.failure).toMatch(/^the reply is not valid JSON \(/)
  })

  it("emergency truncation keeps pairs whole and fits under the trigger (property)", () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 2, maxLength: 60 }), fc.integer({ min: 50, max: 3000 }), (sizes, trigger) => {
      const history: Array<Message> = sizes.map((n, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: "x".repeat(n) }))
      const cut = emergencyTruncate(history, trigger, counter)
      expect(cut).toEqual(history.slice(history.length - cut.length))
      if (counter.countMessages(history) <= 2 * trigger) expect(cut).toBe(history)
      else {
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(2, history.length))
        // It stops early only when dropping the oldest pair would leave less than one exchange.
        expect(counter.countMessages(cut) <= trigger || cut.length <= 3).toBe(true)
        // The kept part starts where a pair starts, so no reply lost its question.
        expect((history.length - cut.length) % 2).toBe(0)
      }
    }))
  })
})

/** A tracker stand-in (core may not import @strata/tiers): a fixed item set, purges recorded. */
const stubTracker = (items: ReadonlyArray<TrackedItem>, purge: Effect.Effect<void, TrackerPersistError> = Effect.void) => {
  const state = { items: [...items], purges: 0 }
  const snapshot = (): TrackerSnapshot => {
    const self: TrackerSnapshot = {
      version: 0,
      baseVersion: 0,
      initialized: true,
      thresholds: { L0: 12, L1: 9, L2: 6, L3: 3 },
      get: (key) => state.items.find((i) => i.key === key),
      tierOf: (key) => state.items.find((i) => i.key === key)?.tier,
      itemsIn: (tier) => state.items.filter((i) => i.tier === tier),
      initialize: () => ({ snapshot: self, changes: [] }),
      update: () => ({ snapshot: self, changes: [] })
    }
    return self
  }
  const layer = Layer.succeed(Tracker, {
    current: Effect.sync(snapshot),
    commit: () => Effect.void,
    remove: () => Effect.succeed([]),
    purgeHistory: Effect.flatMap(purge, () =>
      Effect.sync(() => {
        state.purges++
        const removed = state.items.filter((i) => i.key.startsWith("history:"))
        state.items = state.items.filter((i) => !i.key.startsWith("history:"))
        return removed.map((i) => ({ key: i.key, from: i.tier, to: null, reason: "purged" as const }))
      }))
  })
  return { layer, state }
}

describe("HistoryCompactor: every path, exact history", () => {
  const reply = (detection: object) => JSON.stringify(detection)
  const recording = (answer: (request: CompactionModelRequest) => Effect.Effect<string, CompactionModelError>) => {
    const requests: Array<CompactionModelRequest> = []
    const layer = Layer.succeed(CompactionModel, {
      complete: (request) => Effect.suspend(() => {
        requests.push(request)
        return answer(request)
      })
    })
    return { layer, requests }
  }
  const compact = (history: ReadonlyArray<Message>, deps: Layer.Layer<never>, options: HistoryCompactorOptions = {}) =>
    HistoryCompactor.use((c) => c.compactHistoryIfNeeded(history)).pipe(
      Effect.provide(HistoryCompactor.layer({ prompt: "detect within {summary_budget} tokens", ...options, config: { triggerTokens: 1000, verbatimWindowTokens: 300, ...options.config } }).pipe(
        Layer.provide(Layer.mergeAll(Tokenizer.layerFrom(counter), deps))
      ))
    )

  it.effect("summary: the model sees the transcript and the budget; history is the summary pair plus the window", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "one topic", confidence: 0.2, summary: "Built the lexer." })))
      const history = conversation(10)
      const result = yield* compact(history, model.layer, { config: { detectionModel: "cheap-model", summaryBudgetTokens: 300 } })
      expect(result.history).toEqual([...summaryPair("Built the lexer."), ...history.slice(16)])
      expect(model.requests).toEqual([{ system: "detect within 300 tokens", user: formatDetectionTranscript(history), maxTokens: 600, model: "cheap-model" }])
      expect(result).toMatchObject({ compacted: true, kind: "summarized", warnings: [], cacheTokensInvalidated: 0, cacheTokensRewritten: 0 })
    }))

  it.effect("boundary: a confident boundary inside the window truncates there", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed("```json\n" + reply({ boundary_index: 12, boundary_reason: "switched to the CLI", confidence: 0.85, summary: "ignored" }) + "\n```"))
      const history = conversation(10)
      const result = yield* compact(history, model.layer, { config: { verbatimWindowTokens: 1000 } })
      expect(result.history).toEqual(history.slice(12))
      expect(result.reason).toBe("topic boundary at message 12: switched to the CLI")
    }))

  it.effect("missing fields fall back to dropping older messages without a summary", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed('{"boundary_index": 12, "confidence": 0.9}'))
      const history = conversation(10)
      const result = yield* compact(history, model.layer)
      expect(result.history).toEqual(history.slice(16))
      expect(result.kind).toBe("truncated")
      expect(result.warnings[0]).toContain("does not match the expected shape")
    }))

  it.effect("a model that dies (a defect) does not crash the turn", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.die(new Error("bug in a custom model")))
      const history = conversation(10)
      const result = yield* compact(history, model.layer)
      expect(result.history).toEqual(history.slice(16))
      expect(result.warnings).toEqual(["the compaction model crashed: bug in a custom model"])
    }))

  it.effect("a summary longer than what it replaces is dropped", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "s".repeat(5000) })))
      const history = conversation(10)
      const result = yield* compact(history, model.layer)
      expect(result.history).toEqual(history.slice(16))
      expect(result.warnings).toEqual(["the summary was longer than the messages it replaced; they were dropped without it"])
    }))

  it.effect("waits, without asking the model, when too little lies outside the verbatim window", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" })))
      // 5 exchanges ~1075 tokens: over the 1000 trigger, but the window keeps 4 of 10 messages.
      const history = conversation(5)
      const result = yield* compact(history, model.layer, { config: { minStepTokens: 700 } })
      expect(result).toMatchObject({ compacted: false, kind: "none", history })
      expect(result.reason).toMatch(/^only \d+ tokens lie outside the verbatim window \(minimum step 700\)/)
      expect(model.requests).toHaveLength(0)
      // The default step (a quarter of the trigger) lets the same history compact.
      const again = yield* compact(history, model.layer)
      expect(again.history).toEqual([...summaryPair("S"), ...history.slice(6)])
    }))

  it.effect("emergency truncation when the window alone is over twice the trigger", () =>
    Effect.gen(function* () {
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" })))
      // Three huge exchanges: the two newest users (the minimum) already hold 4 messages of ~1500 tokens.
      const history = conversation(3, 1500)
      const result = yield* compact(history, model.layer, { config: { triggerTokens: 1000, verbatimWindowTokens: 100 } })
      expect(result.kind).toBe("emergency")
      expect(result.history).toEqual(history.slice(4))
      expect(result.reason).toMatch(/^history over twice the trigger/)
    }))

  it.effect("purges the tracker and reports the cached tokens to write again", () =>
    Effect.gen(function* () {
      const tracker = stubTracker([
        { key: "system", tier: "L0", n: 12, hash: "s", tokens: 900 },
        { key: "symbol:a.ts", tier: "L2", n: 6, hash: "a", tokens: 400 },
        { key: "history:0", tier: "L2", n: 6, hash: "h0", tokens: 107 },
        { key: "symbol:b.ts", tier: "L3", n: 3, hash: "b", tokens: 300 },
        { key: "history:1", tier: "L3", n: 3, hash: "h1", tokens: 107 },
        { key: "history:2", tier: "active", n: 2, hash: "h2", tokens: 107 }
      ])
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" })))
      const result = yield* compact(conversation(10), Layer.merge(model.layer, tracker.layer))
      // L2 held history: L2 and L3 are invalid (400 + 107 + 300 + 107); L0 is untouched.
      expect(result.cacheTokensInvalidated).toBe(914)
      // The symbols of L2 and L3 are written again; the purged history is not.
      expect(result.cacheTokensRewritten).toBe(700)
      expect(tracker.state.purges).toBe(1)
      expect(tracker.state.items.map((i) => i.key)).toEqual(["system", "symbol:a.ts", "symbol:b.ts"])
    }))

  it.effect("a tracker that cannot be saved is a warning, not a failure", () =>
    Effect.gen(function* () {
      const tracker = stubTracker([], Effect.fail(new TrackerPersistError({ path: ".strata/tracker.json", reason: "disk full" })))
      const model = recording(() => Effect.succeed(reply({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" })))
      const result = yield* compact(conversation(10), Layer.merge(model.layer, tracker.layer))
      expect(result.compacted).toBe(true)
      expect(result.warnings).toEqual(["the tracker's history entries could not be purged: Could not save tracker state to .strata/tracker.json: disk full"])
    }))
})

describe("HistoryCompactor: the compaction prompt", () => {
  const capture = () => {
    const systems: Array<string> = []
    const layer = Layer.succeed(CompactionModel, {
      complete: (request) => Effect.sync(() => {
        systems.push(request.system)
        return JSON.stringify({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "S" })
      })
    })
    return { layer, systems }
  }
  const run = (deps: Layer.Layer<never>) =>
    HistoryCompactor.use((c) => c.compactHistoryIfNeeded(conversation(10))).pipe(
      Effect.provide(HistoryCompactor.layer({ config: { triggerTokens: 1000, verbatimWindowTokens: 300, summaryBudgetTokens: 123 } }).pipe(
        Layer.provide(Layer.mergeAll(Tokenizer.layerFrom(counter), deps))
      ))
    )

  it.effect("reads compaction.md from the user's prompts folder at every compaction", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "strata-prompts-")))
      yield* Effect.promise(() => writeFile(join(dir, "compaction.md"), "Mine: {summary_budget} tokens.\n"))
      const model = capture()
      const layer = Layer.merge(model.layer, Prompts.layer({ dir }))
      const first = yield* run(layer)
      expect(first.warnings).toEqual([])
      yield* Effect.promise(() => writeFile(join(dir, "compaction.md"), "Edited.\n"))
      yield* run(layer)
      expect(model.systems).toEqual(["Mine: 123 tokens.", "Edited."])
    }))

  it.effect("falls back to the bundled prompt, with a warning, when the folder has none", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "strata-prompts-")))
      const bundled = (yield* Effect.promise(() => readFile(join(BUNDLED_PROMPTS_DIR, "compaction.md"), "utf8"))).trimEnd()
      const model = capture()
      const result = yield* run(Layer.merge(model.layer, Prompts.layer({ dir })))
      expect(model.systems).toEqual([bundled.replaceAll("{summary_budget}", "123")])
      expect(result.warnings).toEqual([`Prompt compaction.md is missing from ${dir}; using the bundled default pack's.`])
      // Without a Prompts service the bundled file is read directly, silently.
      const plain = yield* run(model.layer)
      expect(model.systems[1]).toBe(model.systems[0])
      expect(plain.warnings).toEqual([])
      expect(bundled).toContain("{summary_budget}")
      expect(bundled).toContain("[History Summary]")
    }))
})

describe("the engine's compaction without a model", () => {
  it.effect("emergency truncation reports the cache it invalidates too", () =>
    Effect.gen(function* () {
      const root = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "strata-repo-")))
      const tracker = stubTracker([
        { key: "symbol:a.ts", tier: "L3", n: 3, hash: "a", tokens: 300 },
        { key: "history:0", tier: "L3", n: 3, hash: "h0", tokens: 107 }
      ])
      const history = conversation(10)
      const result = yield* Effect.promise(async () => {
        await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, tokenCounter: counter, compaction: { triggerTokens: 500 }, tracker: tracker.layer })
        await engine.setHistory(history)
        return await engine.compactHistoryIfNeeded()
      })
      expect(result).toMatchObject({ compacted: true, kind: "emergency", cacheTokensInvalidated: 407, cacheTokensRewritten: 300 })
      expect(result.history).toEqual(history.slice(16))
      expect(tracker.state.purges).toBe(1)
    }))
})
