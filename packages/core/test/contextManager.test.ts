import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import {
  CompactionModel,
  ContextManager,
  HistoryCompactor,
  InvalidInput,
  type Message,
  RepoFiles,
  Tokenizer,
  Tracker,
  TrackerPersistError,
  type TrackedItem,
  type TrackerSnapshot
} from "../src/effect.ts"
import { it } from "@strata/test-support"

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "strata-manager-"))
  writeFileSync(join(root, "a.ts"), "export const a = 1\n")
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/**
 * A stand-in for `@strata/tiers`' tracker (core may not import it): holds items in a
 * map and records purges, which is all the manager and the compactor touch.
 */
const stubTracker = (initial: ReadonlyArray<TrackedItem> = []) => {
  const items = new Map(initial.map((i) => [i.key as string, i]))
  const log = { purges: 0 }
  const snapshot = (): TrackerSnapshot => {
    const self: TrackerSnapshot = {
      version: 0,
      baseVersion: 0,
      initialized: true,
      thresholds: { L0: 12, L1: 9, L2: 6, L3: 3 },
      get: (key) => items.get(key),
      tierOf: (key) => items.get(key)?.tier,
      itemsIn: (tier) => [...items.values()].filter((i) => i.tier === tier).sort((a, b) => (a.key < b.key ? -1 : 1)),
      initialize: () => ({ snapshot: self, changes: [] }),
      update: () => ({ snapshot: self, changes: [] })
    }
    return self
  }
  const layer = Layer.succeed(Tracker, {
    current: Effect.sync(snapshot),
    commit: () => Effect.void,
    remove: () => Effect.succeed([]),
    purgeHistory: Effect.sync(() => {
      log.purges++
      const removed = [...items.values()].filter((i) => i.key.startsWith("history:"))
      for (const item of removed) items.delete(item.key)
      return removed.map((i) => ({ key: i.key, from: i.tier, to: null, reason: "purged" as const }))
    })
  })
  return { layer, log, items }
}

const managerLayer = (
  options: Parameters<typeof ContextManager.layer>[0] = {},
  extra: Layer.Layer<never> = Layer.empty
) =>
  ContextManager.layer(options).pipe(
    Layer.provide(Layer.mergeAll(Tokenizer.layerEstimate, RepoFiles.layer({ root }), extra))
  )

const run = <A, E>(
  body: (manager: ContextManager["Service"]) => Effect.Effect<A, E>,
  layer: Layer.Layer<ContextManager> = managerLayer()
) => ContextManager.use(body).pipe(Effect.provide(layer))

/** `count` exchanges whose user and assistant texts have `chars` characters each. */
const exchanges = (count: number, chars = 100): Array<Message> =>
  Array.from({ length: count }, (_, i) => [
    { role: "user" as const, content: `q${i} `.padEnd(chars, "q") },
    { role: "assistant" as const, content: `a${i} `.padEnd(chars, "a") }
  ]).flat()

const isPaired = (history: ReadonlyArray<Message>): boolean =>
  history.length % 2 === 0 && history.every((m, i) => m.role === (i % 2 === 0 ? "user" : "assistant"))

describe("ContextManager history", () => {
  it.effect("addMessage appends one message", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addMessage("user", "hello")
        yield* m.addMessage("assistant", [{ type: "text", text: "hi" }])
        expect(yield* m.getHistory).toEqual([
          { role: "user", content: "hello" },
          { role: "assistant", content: [{ type: "text", text: "hi" }] }
        ])
      })))

  it.effect("addExchange appends a user/assistant pair", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("question", "answer")
        expect(yield* m.getHistory).toEqual([
          { role: "user", content: "question" },
          { role: "assistant", content: "answer" }
        ])
      })))

  it.effect("getHistory returns a copy: mutating it does not change the manager", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("q", [{ type: "text", text: "a" }])
        const copy = (yield* m.getHistory) as Array<{ role: string; content: unknown }>
        copy.push({ role: "user", content: "injected" })
        copy[0]!.content = "changed"
        ;(copy[1]!.content as Array<{ text: string }>)[0]!.text = "changed"
        expect(yield* m.getHistory).toEqual([
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "text", text: "a" }] }
        ])
      })))

  it.effect("setHistory replaces the history", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("old", "old")
        yield* m.setHistory([{ role: "user", content: "new" }])
        expect(yield* m.getHistory).toEqual([{ role: "user", content: "new" }])
      })))

  const malformed: ReadonlyArray<readonly [string, unknown, string]> = [
    ["a bad role", [{ role: "user", content: "ok" }, { role: "robot", content: "x" }], `role is "system", "user", "assistant" or "tool"\n  at [1]`],
    ["a missing content", [{ role: "user" }], `[0]["content"]`],
    ["a bad content part", [{ role: "user", content: [{ type: "text", text: 3 }] }], `[0]["content"][0]["text"]`],
    ["not an array", { role: "user", content: "x" }, "Expected"]
  ]
  for (const [name, input, field] of malformed) it.effect(`setHistory with ${name} fails naming ${field} and leaves history unchanged`, () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("keep", "me")
        const error = yield* Effect.flip(m.setHistory(input))
        expect(error).toBeInstanceOf(InvalidInput)
        expect(error.message).toContain(field)
        expect(yield* m.getHistory).toEqual([
          { role: "user", content: "keep" },
          { role: "assistant", content: "me" }
        ])
      })))

  it.effect("addMessage rejects malformed input with InvalidInput", () =>
    run((m) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(m.addMessage("bot" as "user", "x"))
        expect(error).toBeInstanceOf(InvalidInput)
        expect(yield* m.getHistory).toEqual([])
      })))

  it.effect("clearHistory empties the history and purges tracker history entries", () => {
    const tracker = stubTracker([
      { key: "history:0", tier: "L3", n: 3, hash: "h0", tokens: 10 },
      { key: "file:a.ts", tier: "L2", n: 6, hash: "f", tokens: 20 }
    ])
    return run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("q", "a")
        yield* m.clearHistory
        expect(yield* m.getHistory).toEqual([])
        expect(tracker.log.purges).toBe(1)
        expect([...tracker.items.keys()]).toEqual(["file:a.ts"])
      }), managerLayer({}, tracker.layer))
  })

  it.effect("clearHistory keeps the history when the tracker cannot be saved", () => {
    const failing = Layer.succeed(Tracker, {
      current: Effect.die("unused"),
      commit: () => Effect.void,
      remove: () => Effect.succeed([]),
      purgeHistory: Effect.fail(new TrackerPersistError({ path: ".strata/tracker.json", reason: "disk full" }))
    })
    return run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("q", "a")
        const error = yield* Effect.flip(m.clearHistory)
        expect(error._tag).toBe("TrackerPersistError")
        expect(yield* m.getHistory).toHaveLength(2)
      }), managerLayer({}, failing))
  })

  it.effect("reregisterHistoryItems purges tracker history entries but keeps the history", () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L3", n: 3, hash: "h0", tokens: 10 }])
    return run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("q", "a")
        yield* m.reregisterHistoryItems
        expect(yield* m.getHistory).toHaveLength(2)
        expect(tracker.items.size).toBe(0)
      }), managerLayer({}, tracker.layer))
  })

  it.effect("historyTokenCount is 0 when empty and > 0 for non-empty history", () =>
    run((m) =>
      Effect.gen(function* () {
        expect(yield* m.historyTokenCount).toBe(0)
        yield* m.addExchange("hello there", "general kenobi")
        expect(yield* m.historyTokenCount).toBeGreaterThan(0)
        expect(yield* m.historyTokenCount).toBe(m.counter.countMessages(yield* m.getHistory))
      })))
})

describe("ContextManager files", () => {
  it.effect("adds with explicit content or from disk, with normalized paths", () =>
    run((m) =>
      Effect.gen(function* () {
        expect(yield* m.addFile("./lib\\b.ts", "b")).toBe("lib/b.ts")
        expect(yield* m.addFile("a.ts")).toBe("a.ts")
        expect(yield* m.getFiles).toEqual(["a.ts", "lib/b.ts"])
        expect(yield* m.getFileContent("a.ts")).toBe("export const a = 1\n")
        expect(yield* m.hasFile("./lib/b.ts")).toBe(true)
        expect(yield* m.formatFilesForPrompt).toBe(
          "# Working Files\n\nHere are the files:\n\na.ts\n```\nexport const a = 1\n\n```\n\nlib/b.ts\n```\nb\n```"
        )
        const byFile = yield* m.getTokensByFile
        expect(Object.keys(byFile)).toEqual(["a.ts", "lib/b.ts"])
        expect(yield* m.countFileTokens).toBe(byFile["a.ts"]! + byFile["lib/b.ts"]!)
        expect(yield* m.removeFile("lib/b.ts")).toBe(true)
        expect(yield* m.removeFile("lib/b.ts")).toBe(false)
        yield* m.clearFiles
        expect(yield* m.getFiles).toEqual([])
      })))

  it.effect("refuses paths outside the repository even with explicit content", () =>
    run((m) =>
      Effect.gen(function* () {
        expect((yield* Effect.flip(m.addFile("../x.ts", "x")))._tag).toBe("PathOutsideRepo")
        expect((yield* Effect.flip(m.addFile("missing.ts")))._tag).toBe("FileNotFound")
        expect(yield* m.getFiles).toEqual([])
      })))
})

describe("ContextManager budget", () => {
  it.effect("the token budget has the seed's keys, maxHistoryTokens = maxInputTokens / 16, remaining > 0", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("hello", "world")
        const budget = yield* m.getTokenBudget
        expect(Object.keys(budget).sort()).toEqual(["historyTokens", "maxHistoryTokens", "maxInputTokens", "needsSummary", "remaining"])
        expect(budget.maxInputTokens).toBe(160_000)
        expect(budget.maxHistoryTokens).toBe(10_000)
        expect(budget.remaining).toBe(10_000 - budget.historyTokens)
        expect(budget.remaining).toBeGreaterThan(0)
        expect(budget.needsSummary).toBe(false)
      }), managerLayer({ maxInputTokens: 160_000 })))

  it.effect("shouldCompact is false when compaction is disabled, even over the trigger", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.setHistory(exchanges(10))
        expect(yield* m.shouldCompact).toBe(false)
        expect((yield* m.getTokenBudget).needsSummary).toBe(false)
      }), managerLayer({ compaction: { enabled: false, triggerTokens: 10 } })))

  it.effect("shouldCompact is false below the trigger and true at or above it", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.setHistory(exchanges(2))
        expect(yield* m.shouldCompact).toBe(false)
        yield* m.setHistory(exchanges(20))
        expect(yield* m.shouldCompact).toBe(true)
        expect((yield* m.getTokenBudget).needsSummary).toBe(true)
      }), managerLayer({ compaction: { triggerTokens: 500 } })))

  it.effect("compaction status reports enabled, trigger and percent", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.setHistory([{ role: "user", content: "x".repeat(396) }])
        const status = yield* m.getCompactionStatus
        expect(status).toEqual({ enabled: true, tokens: 106, threshold: 200, percent: 53 })
      }), managerLayer({ compaction: { triggerTokens: 200 } })))
})

describe("ContextManager enforcement", () => {
  it.effect("emergency truncation reduces the message count and preserves user/assistant pairs", () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L3", n: 3, hash: "h", tokens: 10 }])
    return run((m) =>
      Effect.gen(function* () {
        const history = exchanges(10)
        yield* m.setHistory(history)
        const before = yield* m.historyTokenCount
        expect(before).toBeGreaterThan(2 * 150)
        const result = yield* m.emergencyTruncate
        const after = yield* m.getHistory
        expect(result.dropped).toBeGreaterThan(0)
        expect(after.length).toBe(history.length - result.dropped)
        expect(isPaired(after)).toBe(true)
        expect(after).toEqual(history.slice(result.dropped))
        expect(result.tokensAfter).toBeLessThanOrEqual(150)
        expect(tracker.log.purges).toBe(1)
      }), managerLayer({ compaction: { triggerTokens: 150 } }, tracker.layer))
  })

  it.effect("emergency truncation does nothing at or under twice the trigger", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.setHistory(exchanges(2))
        const result = yield* m.emergencyTruncate
        expect(result.dropped).toBe(0)
        expect(yield* m.getHistory).toHaveLength(4)
      }), managerLayer({ compaction: { triggerTokens: 150 } })))

  it.effect("without a compactor, compactHistoryIfNeeded falls back to emergency truncation", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.setHistory(exchanges(3))
        const below = yield* m.compactHistoryIfNeeded
        expect(below.compacted).toBe(false)
        yield* m.setHistory(exchanges(10))
        const result = yield* m.compactHistoryIfNeeded
        expect(result).toMatchObject({ compacted: true, kind: "emergency" })
        expect(isPaired(yield* m.getHistory)).toBe(true)
        expect(result.history).toEqual(yield* m.getHistory)
        expect(result.tokensSaved).toBe(result.tokensBefore - result.tokensAfter)
      }), managerLayer({ compaction: { triggerTokens: 150 } })))

  it.effect("with a HistoryCompactor, compaction replaces the history and keeps messages added meanwhile", () => {
    let during: Effect.Effect<void> = Effect.void
    const model = Layer.succeed(CompactionModel, {
      complete: () =>
        Effect.suspend(() => during).pipe(
          Effect.as(JSON.stringify({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "We built a parser." }))
        )
    })
    const tracker = stubTracker([{ key: "history:1", tier: "L2", n: 6, hash: "h", tokens: 40 }])
    const deps = Layer.mergeAll(Tokenizer.layerEstimate, RepoFiles.layer({ root }), model, tracker.layer)
    const compactor = HistoryCompactor.layer({
      config: { triggerTokens: 300, verbatimWindowTokens: 100, minVerbatimExchanges: 1 },
      prompt: "Find a boundary."
    }).pipe(Layer.provideMerge(deps))
    const layer = ContextManager.layer().pipe(Layer.provide(compactor))
    return run((m) =>
      Effect.gen(function* () {
        expect(m.compactionConfig.triggerTokens).toBe(300)
        yield* m.setHistory(exchanges(8))
        during = Effect.orDie(m.addExchange("late question", "late answer"))
        const result = yield* m.compactHistoryIfNeeded
        expect(result).toMatchObject({ compacted: true, kind: "summarized" })
        const history = yield* m.getHistory
        expect(history[0]).toEqual({ role: "user", content: "[History Summary]\nWe built a parser." })
        expect(history.slice(-2)).toEqual([
          { role: "user", content: "late question" },
          { role: "assistant", content: "late answer" }
        ])
        expect(result.history).toEqual(history)
        expect(tracker.log.purges).toBe(1)
      }), layer)
  })

  it.effect("shedFilesIfNeeded removes the largest files when over budget, with a warning", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addFile("big.txt", "b".repeat(4000))
        yield* m.addFile("mid.txt", "m".repeat(2400))
        yield* m.addFile("small.txt", "s".repeat(40))
        const report = yield* m.shedFilesIfNeeded(0)
        expect(report.dropped.map((f) => f.path)).toEqual(["big.txt"])
        expect(report.finalTokens).toBeLessThanOrEqual(report.limitTokens)
        expect(report.limitTokens).toBe(1800)
        expect(report.warning).toContain("big.txt")
        expect(yield* m.getFiles).toEqual(["mid.txt", "small.txt"])
      }), managerLayer({ maxInputTokens: 2000 })))

  it.effect("shedFilesIfNeeded counts history and is a no-op under budget", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addFile("mid.txt", "m".repeat(2400))
        const report = yield* m.shedFilesIfNeeded(100)
        expect(report.dropped).toEqual([])
        expect(report.warning).toBeUndefined()
        expect(yield* m.getFiles).toEqual(["mid.txt"])
        yield* m.setHistory(exchanges(10, 400))
        const over = yield* m.shedFilesIfNeeded(100)
        expect(over.dropped.map((f) => f.path)).toEqual(["mid.txt"])
        expect(over.warning).toContain("still")
      }), managerLayer({ maxInputTokens: 2000 })))
})

describe("ContextManager lifecycle", () => {
  it.effect("resetSession clears history and purges tracker history, keeping files", () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L1", n: 9, hash: "h", tokens: 10 }])
    return run((m) =>
      Effect.gen(function* () {
        yield* m.addFile("a.ts")
        yield* m.addExchange("q", "a")
        yield* m.resetSession
        expect(yield* m.getHistory).toEqual([])
        expect(yield* m.getFiles).toEqual(["a.ts"])
        expect(tracker.items.size).toBe(0)
      }), managerLayer({}, tracker.layer))
  })

  it.effect("loadSession replaces the history with the stored messages after validating them", () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L1", n: 9, hash: "h", tokens: 10 }])
    return run((m) =>
      Effect.gen(function* () {
        yield* m.addExchange("current", "session")
        const stored = exchanges(2, 10)
        expect(yield* m.loadSession(stored)).toBe(4)
        expect(yield* m.getHistory).toEqual(stored)
        expect(tracker.log.purges).toBe(1)
        const error = yield* Effect.flip(m.loadSession([{ role: "user", content: null }]))
        expect(error._tag).toBe("InvalidInput")
        expect(yield* m.getHistory).toEqual(stored)
        expect(tracker.log.purges).toBe(1)
      }), managerLayer({}, tracker.layer))
  })
})
