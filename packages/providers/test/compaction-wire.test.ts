// History compaction over the wire: core's HistoryCompactor (and the Promise facade
// around it) asks the detection model through compactionModelLayer and
// the real LlmClient (official Anthropic and OpenAI SDKs) against a scripted 127.0.0.1
// server speaking the Messages and Chat Completions APIs, streamed and not. Each path
// (boundary, summary, malformed JSON, missing fields, 429 with retry-after, 500s,
// timeouts, broken streams, cut answers) is checked by the exact history it leaves.
import {
  CompactionModel,
  createContextEngine,
  formatDetectionTranscript,
  HistoryCompactor,
  type HistoryCompactorOptions,
  makeCustomCounter,
  type Message,
  messageText,
  Prompts,
  summaryPair,
  Tokenizer,
  Tracker,
  type TrackedItem,
  type TrackerSnapshot,
  verbatimStart
} from "@strata/core/effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect } from "vitest"
import { compactionModelLayer, LlmClient } from "../src/index.ts"
import { type LlmClientOptions } from "../src/clients/LlmClient.ts"
import { it } from "@strata/test-support"
import { json, sse, startServer, type Recorded, type Reply, type TestServer } from "./wire-server.ts"

type Provider = "anthropic" | "openai"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// ---------------------------------------------------------------------------------------
// The scripted provider: each request takes the next step of the script (the last one
// repeats). It answers in the API the request was sent to, as a stream when the body
// asks for one and as one JSON completion otherwise.

type Step =
  | { readonly answer: string; readonly chunks?: number; readonly stop?: "end" | "max_tokens" }
  | { readonly status: number; readonly message: string; readonly headers?: Record<string, string> }
  | { readonly hang: true }
  /** Start the stream, then stop writing (the idle timeout must fire). */
  | { readonly stall: true }
  /** Start the stream, then send the API's error event. */
  | { readonly streamError: string }
  /** Answer a streaming request with one JSON completion, as some gateways do. */
  | { readonly ignoreStream: string }

const providerOf = (request: Recorded): Provider => (request.path.endsWith("/v1/messages") ? "anthropic" : "openai")

const split = (text: string, parts: number): Array<string> => {
  const size = Math.max(1, Math.ceil(text.length / parts))
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const anthropicEvents = (text: ReadonlyArray<string>, stop: string) => [
  { event: "message_start", data: { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 900, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } } },
  { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
  ...text.map((t) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } } })),
  { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
  { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 60 } } },
  { event: "message_stop", data: { type: "message_stop" } }
]

const openaiChunk = (delta: Record<string, unknown>, finish: string | null) => ({
  id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_760_000_000, model: "gpt-4o-mini",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
})
const openaiEvents = (text: ReadonlyArray<string>, stop: string) => [
  { data: openaiChunk({ role: "assistant", content: "" }, null) },
  ...text.map((t) => ({ data: openaiChunk({ content: t }, null) })),
  { data: openaiChunk({}, stop) },
  { data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_760_000_000, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 } } },
  { data: "[DONE]" }
]

const completionJson = (provider: Provider, text: string) =>
  provider === "anthropic"
    ? { id: "msg_1", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 900, output_tokens: 60 } }
    : { id: "chatcmpl-1", object: "chat.completion", created: 1_760_000_000, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 } }

const errorJson = (provider: Provider, status: number, message: string) =>
  provider === "anthropic"
    ? { type: "error", error: { type: status === 429 ? "rate_limit_error" : "api_error", message } }
    : { error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error", code: null } }

const play = (step: Step, request: Recorded, res: Reply): void | Promise<void> => {
  const provider = providerOf(request)
  const streaming = (request.json as { stream?: boolean } | undefined)?.stream === true
  if ("hang" in step) return
  if ("status" in step) return json(res, step.status, errorJson(provider, step.status, step.message), step.headers)
  if ("ignoreStream" in step) return json(res, 200, completionJson(provider, step.ignoreStream))
  if ("stall" in step) {
    return sse(res, provider === "anthropic" ? anthropicEvents(["{\"boundary"], "end_turn") : openaiEvents(["{\"boundary"], "stop"), { stallAfter: 3 })
  }
  if ("streamError" in step) {
    const partial = provider === "anthropic" ? anthropicEvents(["{"], "end_turn").slice(0, 3) : openaiEvents(["{"], "stop").slice(0, 2)
    const error = provider === "anthropic"
      ? { event: "error", data: { type: "error", error: { type: "overloaded_error", message: step.streamError } } }
      : { data: { error: { message: step.streamError, code: 502 } } }
    return sse(res, [...partial, error])
  }
  const stop = step.stop === "max_tokens" ? (provider === "anthropic" ? "max_tokens" : "length") : provider === "anthropic" ? "end_turn" : "stop"
  if (!streaming) return json(res, 200, { ...completionJson(provider, step.answer) })
  const parts = split(step.answer, step.chunks ?? 4)
  return sse(res, provider === "anthropic" ? anthropicEvents(parts, stop) : openaiEvents(parts, stop))
}

const scripted = (steps: ReadonlyArray<Step>) =>
  Effect.promise(async () => {
    server = await startServer((request, n, res) => play(steps[Math.min(n, steps.length - 1)]!, request, res))
    return server
  })

// ---------------------------------------------------------------------------------------
// The session under compaction: two topics, one token per character (exact arithmetic).

const counter = makeCustomCounter("chars", (t) => t.length)
const ciTopic: ReadonlyArray<Message> = Array.from({ length: 6 }, (_, i) => [
  { role: "user" as const, content: `CI question ${i}: why does the lint job fail on the ${i}th step? ` + "ci ".repeat(20) },
  { role: "assistant" as const, content: `CI answer ${i}: the cache key is stale; rerun with a fresh key. ` + "yaml ".repeat(12) }
]).flat()
const parserTopic: ReadonlyArray<Message> = Array.from({ length: 4 }, (_, i) => [
  { role: "user" as const, content: `Parser question ${i}: how should parseExpr handle precedence level ${i}? ` + "expr ".repeat(12) },
  { role: "assistant" as const, content: `Parser answer ${i}: climb precedence in parseBinary and keep the AST immutable. ` + "node ".repeat(10) }
]).flat()
const history: ReadonlyArray<Message> = [...ciTopic, ...parserTopic]
// 20 messages of 123-131 tokens (2,539 in all), over the 1,000-token trigger. A 300-token
// window keeps the last two exchanges (messages 16-19); an 1,100-token window reaches back
// to message 12, where the parser topic starts.
const WINDOW_START = 16
const PARSER_START = 12
const WIDE_WINDOW = 1100
const config = { triggerTokens: 1000, verbatimWindowTokens: 300, minVerbatimExchanges: 2, summaryBudgetTokens: 200 }
const PROMPT = "Find the topic boundary; summarize in {summary_budget} tokens; answer with JSON."

const detection = (boundary: number | null, confidence: number, summary: string, reason = "the user moved to the parser") =>
  JSON.stringify({ boundary_index: boundary, boundary_reason: reason, confidence, summary })

const MODEL: Record<Provider, string> = { anthropic: "claude-haiku-4-5", openai: "gpt-4o-mini" }

const clientLayer = (provider: Provider, url: string, options: LlmClientOptions) =>
  provider === "anthropic"
    ? LlmClient.layerAnthropic({ baseUrl: url, apiKey: "sk-ant-test", ...options })
    : LlmClient.layerOpenAI({ baseUrl: `${url}/v1`, apiKey: "sk-openai-test", ...options })

/** The real chain: HistoryCompactor -> compactionModelLayer -> LlmClient -> SDK -> server. */
const compactorLayer = (provider: Provider, url: string, options: { client?: LlmClientOptions; compactor?: HistoryCompactorOptions } = {}) =>
  HistoryCompactor.layer({ prompt: PROMPT, ...options.compactor, config: { ...config, ...options.compactor?.config } }).pipe(
    Layer.provide(Layer.mergeAll(
      Tokenizer.layerFrom(counter),
      compactionModelLayer(MODEL[provider]).pipe(Layer.provide(clientLayer(provider, url, { retry: { maxRetries: 2, baseDelayMs: 10 }, ...options.client })))
    )),
    Layer.orDie
  )

const compact = (provider: Provider, url: string, options: Parameters<typeof compactorLayer>[2] = {}) =>
  HistoryCompactor.use((c) => c.compactHistoryIfNeeded(history)).pipe(Effect.provide(compactorLayer(provider, url, options)))

/** The detector request as the server saw it, in the provider's own shape. */
const sentPrompt = (request: Recorded) => {
  const body = request.json as Record<string, unknown>
  if (providerOf(request) === "anthropic") {
    const messages = body["messages"] as ReadonlyArray<{ content: string }>
    return { model: body["model"], system: body["system"], user: messages[0]!.content, maxTokens: body["max_tokens"], stream: body["stream"] }
  }
  const messages = body["messages"] as ReadonlyArray<{ role: string; content: string }>
  return { model: body["model"], system: messages[0]!.content, user: messages[1]!.content, maxTokens: body["max_tokens"], stream: body["stream"] }
}

const summarized = (summary: string) => [...summaryPair(summary), ...history.slice(WINDOW_START)]
// Checked once here so every expectation below rests on it.
if (verbatimStart(history, counter, config) !== WINDOW_START) throw new Error("the test history no longer has its window at message 16")
const dropped = history.slice(WINDOW_START)

// ---------------------------------------------------------------------------------------

describe.each(["anthropic", "openai"] as const)("compaction through the %s client", (provider) => {
  it.effect("summary: the detector's summary replaces everything before the window", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: detection(null, 0.1, "Fixed the CI cache key; lint passes. Parser work started."), chunks: 7 }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(summarized("Fixed the CI cache key; lint passes. Parser work started."))
      expect(result).toMatchObject({ compacted: true, kind: "summarized", warnings: [], cacheTokensInvalidated: 0, cacheTokensRewritten: 0 })
      expect(result.tokensSaved).toBe(counter.countMessages(history) - counter.countMessages(result.history))
      expect(s.requests).toHaveLength(1)
      expect(s.requests[0]!.path).toBe(provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions")
      expect(sentPrompt(s.requests[0]!)).toEqual({
        model: MODEL[provider],
        system: "Find the topic boundary; summarize in 200 tokens; answer with JSON.",
        user: formatDetectionTranscript(history),
        maxTokens: 400,
        stream: true
      })
    }))

  it.effect("boundary: a confident boundary inside the window truncates there (fenced JSON, many chunks)", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: "Here is my analysis.\n```json\n" + detection(PARSER_START, 0.9, "CI fixed.") + "\n```", chunks: 13 }])
      expect(verbatimStart(history, counter, { ...config, verbatimWindowTokens: WIDE_WINDOW })).toBe(PARSER_START)
      const result = yield* compact(provider, s.url, { compactor: { config: { verbatimWindowTokens: WIDE_WINDOW } } })
      expect(result.history).toEqual(history.slice(PARSER_START))
      expect(result).toMatchObject({ kind: "truncated", reason: "topic boundary at message 12: the user moved to the parser", warnings: [] })
    }))

  it.effect("a boundary before the window, or an unsure one, is summarized instead", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: detection(PARSER_START, 0.95, "CI fixed.") }, { answer: detection(WINDOW_START, 0.3, "Unsure.") }])
      expect((yield* compact(provider, s.url)).history).toEqual(summarized("CI fixed."))
      expect((yield* compact(provider, s.url)).history).toEqual(summarized("Unsure."))
    }))

  it.effect("malformed JSON: older messages are dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: "{\"boundary_index\": 12, \"boundary_reason\": parser, \"confidence\": 0.9, \"summary\": \"s\"}" }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(result.kind).toBe("truncated")
      expect(result.warnings).toHaveLength(1)
      expect(result.warnings[0]).toMatch(/^the reply is not valid JSON \(/)
    }))

  it.effect("missing fields: dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: "{\"boundary_index\": 12, \"confidence\": 0.9}" }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(result.warnings[0]).toContain("does not match the expected shape")
    }))

  it.effect("429 with retry-after: waits as asked, retries, and uses the answer", () =>
    Effect.gen(function* () {
      const s = yield* scripted([
        { status: 429, message: "Rate limited", headers: { "retry-after": "0.3" } },
        { answer: detection(null, 0, "After the rate limit.") }
      ])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(summarized("After the rate limit."))
      expect(s.requests).toHaveLength(2)
      expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(280)
    }))

  it.effect("429 with a retry-after longer than the client will wait: dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ status: 429, message: "Rate limited", headers: { "retry-after": "120" } }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(s.requests).toHaveLength(1)
      expect(result.warnings).toEqual([
        `The compaction model failed: ${provider} returned HTTP 429: Rate limited. Hint: rate limited; wait and retry, or lower the request rate. The server asked to wait 120 s.`
      ])
    }))

  it.effect("500s: retried with backoff until an answer comes", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ status: 500, message: "boom" }, { status: 500, message: "boom" }, { answer: detection(null, 0, "Third time.") }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(summarized("Third time."))
      expect(s.requests).toHaveLength(3)
    }))

  it.effect("500s that persist: dropped without a summary after the retries", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ status: 500, message: "boom" }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(s.requests).toHaveLength(3)
      expect(result.warnings[0]).toContain(`${provider} returned HTTP 500 after 3 attempts: boom`)
    }))

  it.effect("the client's timeout: a server that never answers, retried, then dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ hang: true }])
      // 600 ms: long enough for each attempt to reach the server on a loaded machine.
      const result = yield* compact(provider, s.url, { client: { timeoutMs: 600, retry: { maxRetries: 1, baseDelayMs: 5 } } })
      expect(result.history).toEqual(dropped)
      expect(s.requests).toHaveLength(2)
      expect(result.warnings[0]).toContain("no response within 600 ms (2 attempts)")
    }))

  it.effect("the compactor's own timeout bounds the whole call, retries included", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ hang: true }])
      const started = performance.now()
      const result = yield* compact(provider, s.url, { client: { timeoutMs: 10_000 }, compactor: { config: { timeoutMs: 250 } } })
      expect(result.history).toEqual(dropped)
      expect(result.warnings).toEqual(["The compaction model failed: no answer within 250 ms"])
      expect(performance.now() - started).toBeLessThan(2000)
    }))

  it.effect("a stream that stalls midway: dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ stall: true }])
      const result = yield* compact(provider, s.url, { client: { idleTimeoutMs: 150 } })
      expect(result.history).toEqual(dropped)
      expect(result.warnings[0]).toContain("the stream stalled")
    }))

  it.effect("an error inside the stream: dropped without a summary, not retried", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ streamError: "Overloaded" }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(s.requests).toHaveLength(1)
      expect(result.warnings[0]).toContain("stream failed midway: Overloaded")
    }))

  it.effect("an answer cut at the token limit is not parsed: dropped without a summary", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: detection(null, 0, "A summary that ran long"), stop: "max_tokens" }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(dropped)
      expect(result.warnings).toEqual([`The compaction model failed: ${MODEL[provider]} stopped at the 400-token limit before finishing its answer`])
    }))

  it.effect("a gateway that ignores stream and answers with one JSON completion: the completion is decoded and used", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ ignoreStream: detection(null, 0, "Arrived whole.") }])
      const result = yield* compact(provider, s.url)
      expect(result.history).toEqual(summarized("Arrived whole."))
      expect(result.warnings).toEqual([])
    }))

  it.effect("the server answers non-streaming requests with one JSON completion (the scripted API itself)", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: "plain" }])
      const path = provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions"
      const reply = yield* Effect.promise(() =>
        fetch(s.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", stream: false, messages: [] }) }).then((r) => r.json() as Promise<unknown>))
      expect(reply).toEqual(completionJson(provider, "plain"))
    }))

  it.effect("detectionModel in the compaction config picks the model the request names", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: detection(null, 0, "S.") }])
      yield* compact(provider, s.url, { compactor: { config: { detectionModel: "cheap-detector-1" } } })
      expect(sentPrompt(s.requests[0]!).model).toBe("cheap-detector-1")
    }))
})

// ---------------------------------------------------------------------------------------
// The same chain under the Promise facade (history in the session's store), with a tracker.

/** A tracker stand-in (providers may not import @strata/tiers): fixed items, purges recorded. */
const stubTracker = (items: ReadonlyArray<TrackedItem>) => {
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
    purgeHistory: Effect.sync(() => {
      state.purges++
      state.items = state.items.filter((i) => !i.key.startsWith("history:"))
      return []
    })
  })
  return { layer, state }
}

const cachedItems: ReadonlyArray<TrackedItem> = [
  { key: "system", tier: "L0", n: 12, hash: "s", tokens: 1200 },
  { key: "symbol:src/parse.ts", tier: "L3", n: 3, hash: "p", tokens: 500 },
  ...Array.from({ length: 6 }, (_, i): TrackedItem => ({ key: `history:${i}`, tier: "L3", n: 3, hash: `h${i}`, tokens: 100 }))
]

describe("compaction under the Promise facade", () => {
  it("engine over its store (anthropic): history replaced, tracker purged, cached tokens reported", async () => {
    const s = await Effect.runPromise(scripted([{ answer: detection(null, 0, "CI fixed.") }]))
    const tracker = stubTracker(cachedItems)
    const root = mkdtempSync(join(tmpdir(), "strata-compaction-wire-"))
    const prompts = mkdtempSync(join(tmpdir(), "strata-prompts-"))
    writeFileSync(join(prompts, "compaction.md"), PROMPT)
    await using engine = createContextEngine({
      model: "gpt-4o",
      repoRoot: root,
      promptsDir: prompts,
      tokenCounter: counter,
      compaction: config,
      tracker: tracker.layer,
      layers: [compactionModelLayer(MODEL.anthropic).pipe(Layer.provide(clientLayer("anthropic", s.url, {})), Layer.orDie)]
    })
    await engine.setHistory(history)
    expect(await engine.getCompactionStatus()).toEqual({ enabled: true, tokens: counter.countMessages(history), threshold: 1000, percent: Math.round(counter.countMessages(history) / 10) })
    const result = await engine.compactHistoryIfNeeded()
    expect(await engine.getHistory()).toEqual(summarized("CI fixed."))
    // L3 held history: all of L3 (symbols and history, 500 + 600) is invalid; L0 stays.
    expect(result.cacheTokensInvalidated).toBe(1100)
    // The symbol entry is written again; the history is gone.
    expect(result.cacheTokensRewritten).toBe(500)
    expect(tracker.state.purges).toBe(1)
    expect(await engine.shouldCompact()).toBe(false)
  })

  it("Promise facade (openai): a prompts folder's compaction.md, a 429 then the answer", async () => {
    const s = await startServer((request, n, res) =>
      play(n === 0 ? { status: 429, message: "slow", headers: { "retry-after": "0.1" } } : { answer: detection(PARSER_START, 0.8, "x") }, request, res))
    server = s
    const root = mkdtempSync(join(tmpdir(), "strata-compaction-wire-"))
    const prompts = mkdtempSync(join(tmpdir(), "strata-prompts-"))
    writeFileSync(join(prompts, "compaction.md"), "Project rules for compaction: {summary_budget} tokens.\n")
    const tracker = stubTracker(cachedItems)
    await using engine = createContextEngine({
      model: "gpt-4o",
      repoRoot: root,
      promptsDir: prompts,
      tokenCounter: counter,
      compaction: { ...config, verbatimWindowTokens: WIDE_WINDOW },
      layers: [
        tracker.layer,
        compactionModelLayer(MODEL.openai).pipe(Layer.provide(clientLayer("openai", s.url, { retry: { baseDelayMs: 5 } })), Layer.orDie)
      ]
    })
    for (let i = 0; i < history.length; i += 2) await engine.addExchange(messageText(history[i]!), messageText(history[i + 1]!))
    expect(await engine.shouldCompact()).toBe(true)
    const result = await engine.compactHistoryIfNeeded()
    expect(await engine.getHistory()).toEqual(history.slice(PARSER_START))
    expect(result).toMatchObject({ compacted: true, kind: "truncated", cacheTokensInvalidated: 1100, cacheTokensRewritten: 500, warnings: [] })
    expect(s.requests).toHaveLength(2)
    expect(sentPrompt(s.requests[1]!).system).toBe("Project rules for compaction: 200 tokens.")
    expect(await engine.getCompactionStatus()).toMatchObject({ percent: Math.round(counter.countMessages(history.slice(PARSER_START)) / 10) })
  })

  it.effect("the Prompts service is what the compactor reads (checked through the layer, not the facade)", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: detection(null, 0, "S.") }])
      const prompts = mkdtempSync(join(tmpdir(), "strata-prompts-"))
      const layer = HistoryCompactor.layer({ config }).pipe(
        Layer.provide(Layer.mergeAll(
          Tokenizer.layerFrom(counter),
          Prompts.layer({ dir: prompts }),
          compactionModelLayer(MODEL.anthropic).pipe(Layer.provide(clientLayer("anthropic", s.url, {})), Layer.orDie)
        ))
      )
      const result = yield* HistoryCompactor.use((c) => c.compactHistoryIfNeeded(history)).pipe(Effect.provide(layer))
      expect(result.history).toEqual(summarized("S."))
      expect(result.warnings).toEqual([`Prompt compaction.md is missing from ${prompts}; using the bundled default pack's.`])
      expect(String(sentPrompt(s.requests[0]!).system)).toContain("[History Summary]")
    }))

  it.effect("compactionModelLayer alone: one request with the plain chat body", () =>
    Effect.gen(function* () {
      const s = yield* scripted([{ answer: "ok" }])
      const text = yield* CompactionModel.use((model) => model.complete({ system: "sys", user: "usr", maxTokens: 300 })).pipe(
        Effect.provide(compactionModelLayer(MODEL.openai).pipe(Layer.provide(clientLayer("openai", s.url, {})), Layer.orDie))
      )
      expect(text).toBe("ok")
      expect(sentPrompt(s.requests[0]!)).toEqual({ model: MODEL.openai, system: "sys", user: "usr", maxTokens: 300, stream: true })
    }))
})
