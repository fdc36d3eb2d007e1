// Compaction with a plain async function as the detection model (`compactionModel`):
// what it is asked, its signal at the compactor's timeout and at the caller's abort,
// and its failures as the compactor's typed error.
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { CompactionModel, compactionModelFromFunction, CompactionModelError, createContextEngine, type CompactionPrompt } from "../src/index.ts"
import { SUMMARY_PREFIX } from "../src/compaction/algorithm.ts"
import { it } from "@strata/test-support"

const SUMMARY = JSON.stringify({ boundary_index: null, boundary_reason: "one topic", confidence: 0.2, summary: "We set up CI; lint passes." })

/** An engine with enough history to compact, using `complete` as the detection model. */
const engineWith = async (complete: (prompt: CompactionPrompt, options: { readonly signal: AbortSignal }) => Promise<string>, timeoutMs = 2_000) => {
  const engine = createContextEngine({ model: "gpt-4o", compaction: { triggerTokens: 600, verbatimWindowTokens: 150, timeoutMs }, compactionModel: complete })
  for (let i = 0; i < 12; i++) await engine.addExchange(`Question ${i}: ${"why does the lint job fail ".repeat(3)}`, `Answer ${i}: ${"the cache key is stale ".repeat(4)}`)
  return engine
}

describe("createContextEngine({ compactionModel })", () => {
  it("asks the function with the detection prompt and uses its summary", async () => {
    const asked: Array<CompactionPrompt> = []
    await using engine = await engineWith(async (prompt) => {
      asked.push(prompt)
      return SUMMARY
    })
    const result = await engine.compactHistoryIfNeeded()
    expect(result.kind).toBe("summarized")
    expect((await engine.getHistory())[0]).toEqual({ role: "user", content: `${SUMMARY_PREFIX}We set up CI; lint passes.` })
    expect(asked).toHaveLength(1)
    expect(asked[0]!.system).toContain("summary")
    expect(asked[0]!.user).toContain("[0] USER: Question 0")
    expect(asked[0]!.maxTokens).toBeGreaterThanOrEqual(256)
  })

  it("a rejection falls back to truncation with the reason as a warning", async () => {
    await using engine = await engineWith(async () => {
      throw new Error("HTTP 429: rate limited")
    })
    const result = await engine.compactHistoryIfNeeded()
    expect(result).toMatchObject({ compacted: true, kind: "truncated" })
    expect(result.warnings).toEqual(["The compaction model failed: HTTP 429: rate limited"])
  })

  it("a non-string answer is the model's failure, not a crash", async () => {
    // A JavaScript caller can return anything.
    const untyped = (async () => 42) as unknown as (prompt: CompactionPrompt) => Promise<string>
    await using engine = await engineWith(untyped)
    const result = await engine.compactHistoryIfNeeded()
    expect(result.kind).toBe("truncated")
    expect(result.warnings[0]).toMatch(/^The compaction model failed: the compactionModel function must resolve to a string/)
  })

  it("the compactor's timeout aborts the function's signal", async () => {
    let seen: AbortSignal | undefined
    await using engine = await engineWith((_, { signal }) => {
      seen = signal
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    }, 30)
    const result = await engine.compactHistoryIfNeeded()
    expect(result.kind).toBe("truncated")
    expect(result.warnings[0]).toContain("no answer within 30 ms")
    expect(seen?.aborted).toBe(true)
  })

  it("aborting the call aborts the function's signal", async () => {
    let seen: AbortSignal | undefined
    let markStarted = () => {}
    const started = new Promise<void>((resolve) => (markStarted = resolve))
    await using engine = await engineWith((_, { signal }) => {
      seen = signal
      markStarted()
      return new Promise(() => {})
    })
    const controller = new AbortController()
    const call = engine.compactHistoryIfNeeded({ signal: controller.signal })
    await started
    controller.abort(new Error("user left"))
    await expect(call).rejects.toThrow("user left")
    expect(seen?.aborted).toBe(true)
    // Nothing changed: the history is still the full conversation.
    expect(await engine.getHistory()).toHaveLength(24)
  })
})

describe("compactionModelFromFunction", () => {
  it.effect("is the CompactionModel service; failures are CompactionModelError", () =>
    Effect.gen(function* () {
      const model = yield* CompactionModel
      const error = yield* Effect.flip(model.complete({ system: "s", user: "u", maxTokens: 256 }))
      expect(error).toBeInstanceOf(CompactionModelError)
      expect(error._tag).toBe("CompactionModelError")
      expect(error.message).toBe("The compaction model failed: boom")
    }).pipe(Effect.provide(compactionModelFromFunction(() => Promise.reject(new Error("boom"))))))

  it.effect("a function that throws before returning a promise fails the same way", () =>
    Effect.gen(function* () {
      const model = yield* CompactionModel
      const error = yield* Effect.flip(model.complete({ system: "s", user: "u", maxTokens: 256 }))
      expect(error.reason).toBe("sync")
    }).pipe(Effect.provide(compactionModelFromFunction(() => {
      throw new Error("sync")
    }))))
})
