import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it as vitestIt } from "vitest"
import {
  type ContextEngineOptions,
  ContextManager,
  createContextEngine,
  InvalidInput,
  makeEstimatingCounter,
  type Message,
  RepoFiles,
  Tokenizer,
  Tracker,
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
 * map and records purges, which is all the engine's history edits and the compactor touch.
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

/** An engine over a memory store with the estimating counter (the history lives in the store, not the manager). */
const engineWith = (options: Omit<ContextEngineOptions, "model"> = {}) =>
  createContextEngine({ model: "gpt-4o", repoRoot: root, tokenCounter: makeEstimatingCounter(), ...options, provider: undefined })

describe("the engine's history (in the session's store)", () => {
  vitestIt("addMessage appends one message; addExchange a user/assistant pair", async () => {
    await using e = engineWith()
    await e.addMessage("user", "hello")
    await e.addMessage("assistant", [{ type: "text", text: "hi" }])
    await e.addExchange("question", "answer")
    expect(await e.getHistory()).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
      { role: "user", content: "question" },
      { role: "assistant", content: "answer" }
    ])
  })

  vitestIt("getHistory returns a copy: mutating it does not change the engine", async () => {
    await using e = engineWith()
    await e.addExchange("q", [{ type: "text", text: "a" }])
    const copy = (await e.getHistory()) as Array<{ role: string; content: unknown }>
    copy.push({ role: "user", content: "injected" })
    copy[0]!.content = "changed"
    ;(copy[1]!.content as Array<{ text: string }>)[0]!.text = "changed"
    expect(await e.getHistory()).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "text", text: "a" }] }
    ])
  })

  const malformed: ReadonlyArray<readonly [string, unknown, string]> = [
    ["a bad role", [{ role: "user", content: "ok" }, { role: "robot", content: "x" }], `role is "system", "user", "assistant" or "tool"\n  at [1]`],
    ["a missing content", [{ role: "user" }], `[0]["content"]`],
    ["a bad content part", [{ role: "user", content: [{ type: "text", text: 3 }] }], `[0]["content"][0]["text"]`],
    ["not an array", { role: "user", content: "x" }, "Expected"]
  ]
  for (const [name, input, field] of malformed) vitestIt(`setHistory with ${name} fails naming ${field} and leaves history unchanged`, async () => {
    await using e = engineWith()
    await e.addExchange("keep", "me")
    const error = await e.setHistory(input).catch((x: unknown) => x)
    expect(error).toBeInstanceOf(InvalidInput)
    expect(String((error as InvalidInput).message)).toContain(field)
    expect(await e.getHistory()).toEqual([
      { role: "user", content: "keep" },
      { role: "assistant", content: "me" }
    ])
    await e.setHistory([{ role: "user", content: "new" }])
    expect(await e.getHistory()).toEqual([{ role: "user", content: "new" }])
  })

  vitestIt("addMessage rejects malformed input with InvalidInput", async () => {
    await using e = engineWith()
    await expect(e.addMessage("bot" as "user", "x")).rejects.toBeInstanceOf(InvalidInput)
    expect(await e.getHistory()).toEqual([])
  })

  vitestIt("clearHistory empties the history and purges tracker history entries; reregisterHistoryItems only purges", async () => {
    const tracker = stubTracker([
      { key: "history:0", tier: "L3", n: 3, hash: "h0", tokens: 10 },
      { key: "file:a.ts", tier: "L2", n: 6, hash: "f", tokens: 20 }
    ])
    await using e = engineWith({ tracker: tracker.layer })
    await e.addExchange("q", "a")
    await e.reregisterHistoryItems()
    expect(await e.getHistory()).toHaveLength(2)
    expect([...tracker.items.keys()]).toEqual(["file:a.ts"])
    await e.clearHistory()
    expect(await e.getHistory()).toEqual([])
    expect(tracker.log.purges).toBe(2)
  })

  vitestIt("historyTokenCount is 0 when empty and the counter's count of the history otherwise", async () => {
    await using e = engineWith()
    expect(await e.historyTokenCount()).toBe(0)
    await e.addExchange("hello there", "general kenobi")
    expect(await e.historyTokenCount()).toBe((await e.getTokenCounter()).countMessages(await e.getHistory()))
    expect(await e.historyTokenCount()).toBeGreaterThan(0)
  })
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

describe("the engine's budget", () => {
  vitestIt("the token budget's keys, maxHistoryTokens = maxInputTokens / 16, remaining > 0", async () => {
    await using e = engineWith({ maxInputTokens: 160_000 })
    await e.addExchange("hello", "world")
    const budget = await e.getTokenBudget()
    expect(Object.keys(budget).sort()).toEqual(["historyTokens", "maxHistoryTokens", "maxInputTokens", "needsSummary", "remaining"])
    expect(budget.maxInputTokens).toBe(160_000)
    expect(budget.maxHistoryTokens).toBe(10_000)
    expect(budget.remaining).toBe(10_000 - budget.historyTokens)
    expect(budget.remaining).toBeGreaterThan(0)
    expect(budget.needsSummary).toBe(false)
  })

  vitestIt("shouldCompact is false when compaction is disabled, even over the trigger", async () => {
    await using e = engineWith({ compaction: { enabled: false, triggerTokens: 10 } })
    await e.setHistory(exchanges(10))
    expect(await e.shouldCompact()).toBe(false)
    expect((await e.getTokenBudget()).needsSummary).toBe(false)
  })

  vitestIt("shouldCompact is false below the trigger and true at or above it", async () => {
    await using e = engineWith({ compaction: { triggerTokens: 500 } })
    await e.setHistory(exchanges(2))
    expect(await e.shouldCompact()).toBe(false)
    await e.setHistory(exchanges(20))
    expect(await e.shouldCompact()).toBe(true)
    expect((await e.getTokenBudget()).needsSummary).toBe(true)
  })

  vitestIt("compaction status reports enabled, trigger and percent", async () => {
    await using e = engineWith({ compaction: { triggerTokens: 200 } })
    await e.setHistory([{ role: "user", content: "x".repeat(396) }])
    expect(await e.getCompactionStatus()).toEqual({ enabled: true, tokens: 106, threshold: 200, percent: 53 })
  })
})

describe("the engine's enforcement", () => {
  vitestIt("emergency truncation reduces the message count and preserves user/assistant pairs", async () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L3", n: 3, hash: "h", tokens: 10 }])
    await using e = engineWith({ compaction: { triggerTokens: 150 }, tracker: tracker.layer })
    const history = exchanges(10)
    await e.setHistory(history)
    expect(await e.historyTokenCount()).toBeGreaterThan(2 * 150)
    const result = await e.emergencyTruncate()
    const after = await e.getHistory()
    expect(result.dropped).toBeGreaterThan(0)
    expect(after.length).toBe(history.length - result.dropped)
    expect(isPaired(after)).toBe(true)
    expect(after).toEqual(history.slice(result.dropped))
    expect(result.tokensAfter).toBeLessThanOrEqual(150)
    expect(tracker.log.purges).toBe(1)
  })

  vitestIt("emergency truncation does nothing at or under twice the trigger", async () => {
    await using e = engineWith({ compaction: { triggerTokens: 150 } })
    await e.setHistory(exchanges(2))
    expect((await e.emergencyTruncate()).dropped).toBe(0)
    expect(await e.getHistory()).toHaveLength(4)
  })

  vitestIt("without a model, compactHistoryIfNeeded drops old messages, keeping pairs", async () => {
    await using e = engineWith({ compaction: { triggerTokens: 150 } })
    await e.setHistory(exchanges(3))
    expect((await e.compactHistoryIfNeeded()).compacted).toBe(false)
    await e.setHistory(exchanges(10))
    const result = await e.compactHistoryIfNeeded()
    expect(result.compacted).toBe(true)
    expect(isPaired(await e.getHistory())).toBe(true)
    expect(result.history).toEqual(await e.getHistory())
    expect(result.tokensSaved).toBe(result.tokensBefore - result.tokensAfter)
  })

  vitestIt("with a compaction model, compaction replaces the history and keeps messages added meanwhile", async () => {
    const tracker = stubTracker([{ key: "history:1", tier: "L2", n: 6, hash: "h", tokens: 40 }])
    let during: () => Promise<void> = async () => {}
    await using e = engineWith({
      compaction: { triggerTokens: 300, verbatimWindowTokens: 100, minVerbatimExchanges: 1 },
      compactionModel: async () => {
        await during()
        return JSON.stringify({ boundary_index: null, boundary_reason: "", confidence: 0, summary: "We built a parser." })
      },
      tracker: tracker.layer
    })
    await e.setHistory(exchanges(8))
    during = async () => {
      during = async () => {}
      await e.addExchange("late question", "late answer")
    }
    const result = await e.compactHistoryIfNeeded()
    expect(result).toMatchObject({ compacted: true, kind: "summarized" })
    const history = await e.getHistory()
    expect(history[0]).toEqual({ role: "user", content: "[History Summary]\nWe built a parser." })
    expect(history.slice(-2)).toEqual([
      { role: "user", content: "late question" },
      { role: "assistant", content: "late answer" }
    ])
    expect(result.history).toEqual(history)
    expect(tracker.items.size).toBe(0)
    expect(tracker.log.purges).toBe(1)
  })
})

describe("ContextManager shedding", () => {
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

  it.effect("shedFilesIfNeeded counts the other tokens it is given and is a no-op under budget", () =>
    run((m) =>
      Effect.gen(function* () {
        yield* m.addFile("mid.txt", "m".repeat(2400))
        const report = yield* m.shedFilesIfNeeded(100)
        expect(report.dropped).toEqual([])
        expect(report.warning).toBeUndefined()
        expect(yield* m.getFiles).toEqual(["mid.txt"])
        const over = yield* m.shedFilesIfNeeded(100 + m.counter.countMessages(exchanges(10, 400)))
        expect(over.dropped.map((f) => f.path)).toEqual(["mid.txt"])
        expect(over.warning).toContain("still")
      }), managerLayer({ maxInputTokens: 2000 })))
})

describe("the engine's session lifecycle", () => {
  vitestIt("resetSession clears history and purges tracker history, keeping files", async () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L1", n: 9, hash: "h", tokens: 10 }])
    await using e = engineWith({ tracker: tracker.layer })
    await e.addFile("a.ts")
    await e.addExchange("q", "a")
    await e.resetSession()
    expect(await e.getHistory()).toEqual([])
    expect(await e.getFiles()).toEqual(["a.ts"])
    expect(tracker.items.size).toBe(0)
  })

  vitestIt("loadSession replaces the history with the stored messages after validating them", async () => {
    const tracker = stubTracker([{ key: "history:0", tier: "L1", n: 9, hash: "h", tokens: 10 }])
    await using e = engineWith({ tracker: tracker.layer })
    await e.addExchange("current", "session")
    const stored = exchanges(2, 10)
    expect(await e.loadSession(stored)).toBe(4)
    expect(await e.getHistory()).toEqual(stored)
    expect(tracker.log.purges).toBe(1)
    await expect(e.loadSession([{ role: "user", content: null }])).rejects.toBeInstanceOf(InvalidInput)
    expect(await e.getHistory()).toEqual(stored)
    expect(tracker.log.purges).toBe(1)
  })
})
