import { Effect, Layer, Result } from "effect"
import { describe, expect } from "vitest"
import {
  applyDetection,
  CompactionModel,
  CompactionModelError,
  compactionStatus,
  DEFAULT_COMPACTION_CONFIG,
  emergencyTruncate,
  formatDetectionTranscript,
  HistoryCompactor,
  makeCustomCounter,
  type Message,
  parseDetection,
  shouldCompact,
  SUMMARY_ACK,
  SUMMARY_PREFIX,
  Tokenizer,
  verbatimStart
} from "../src/index.ts"
import { it } from "./support.ts"

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
