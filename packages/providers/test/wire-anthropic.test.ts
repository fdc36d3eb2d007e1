// The official Anthropic SDK, driven by LlmClient, sends Strata's Messages bodies to a
// recording server on 127.0.0.1. The server runs the Anthropic simulator on what it
// received and streams back recorded-shape SSE with the simulated usage; the decoded
// usage must match. Also: retries on 429/5xx with retry-after, timeouts, typed errors.
import { CompactionModel } from "@strata/core"
import { ConfigProvider, Duration, Effect, Layer, Option, Stream } from "effect"
import { afterEach, describe, expect } from "vitest"
import { compactionModelLayer, LlmClient, makeSimulator, placeAnthropic, simpleBody, type AnthropicNativeUsage, type LlmError } from "../src/index.ts"
import { type LlmClientOptions } from "../src/clients/LlmClient.ts"
import { neutralRequest } from "./sim-helpers.ts"
import { it } from "@strata/test-support"
import { json, sse, startServer, type Reply, type TestServer } from "./wire-server.ts"

const MODEL = "claude-sonnet-4-6"
const KEY = "sk-ant-test-0123"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const env = (vars: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnvRecord(vars))
const client = (options: LlmClientOptions, vars: Record<string, string> = { ANTHROPIC_API_KEY: KEY }) =>
  LlmClient.layerAnthropic(options).pipe(Layer.provide(env(vars)))

/** The SSE a Messages stream sends, with `usage` split as the API does (start, then cumulative delta). */
const messageEvents = (usage: AnthropicNativeUsage, text: ReadonlyArray<string>) => [
  {
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: "msg_01",
        type: "message",
        role: "assistant",
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 }
      }
    }
  },
  { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
  { event: "ping", data: { type: "ping" } },
  ...text.map((t) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } } })),
  { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
  {
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens
      }
    }
  },
  { event: "message_stop", data: { type: "message_stop" } }
]

const reply = (res: Reply, text = ["Hello", ", world"]) =>
  sse(res, messageEvents({ input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 5 }, text))

const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }

const failWith = <A>(effect: Effect.Effect<A, LlmError>) => Effect.flip(effect)

/** The client a layer builds. */
const clientOf = <E>(layer: Layer.Layer<LlmClient, E>) => Effect.gen(function* () {
  return yield* LlmClient
}).pipe(Effect.provide(layer))

describe("Anthropic client on the wire", () => {
  it.effect("sends the plugin's body byte for byte and decodes the simulated usage", () =>
    Effect.gen(function* () {
      const sim = makeSimulator("anthropic", { model: MODEL })
      const expected: Array<unknown> = []
      server = yield* Effect.promise(() =>
        startServer((req, n, res) => {
          const { stream: _stream, ...native } = req.json as Record<string, unknown>
          const r = sim.send(native, n * 30, { outputTokens: 42 })
          expected.push(r.usage)
          return sse(res, messageEvents(r.native, ["The parser ", "walks the tree."]))
        })
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      for (const turn of [1, 2]) {
        const placed = placeAnthropic(neutralRequest(MODEL, turn), { maxTokens: 512 })
        const response = yield* llm.complete({ body: placed.body })
        const recorded = server.requests[turn - 1]!
        expect(recorded.method).toBe("POST")
        expect(recorded.path).toBe("/v1/messages")
        expect(recorded.headers["x-api-key"] ?? recorded.headers["authorization"]).toContain(KEY)
        expect(recorded.headers["anthropic-version"]).toBeDefined()
        expect(recorded.body).toBe(JSON.stringify({ ...placed.body, stream: true }))
        expect(response.text).toBe("The parser walks the tree.")
        expect(response.stopReason).toBe("end_turn")
        expect(response.usage).toEqual(expected[turn - 1])
      }
      expect(expected[0]).toMatchObject({ cacheRead: 0 })
      expect((expected[1] as { cacheRead: number }).cacheRead).toBeGreaterThan(12_000)
    })
  )

  it.effect("streams text deltas, then usage, then the stop reason", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => reply(res, ["a", "b", "c"])))
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const events = yield* Stream.runCollect(llm.stream({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(events.map((e) => e._tag)).toEqual(["TextDelta", "TextDelta", "TextDelta", "Usage", "Finish"])
      expect(events[3]).toEqual({ _tag: "Usage", usage: { input: 10, cacheRead: 0, cacheWrite: 0, output: 5 } })
    })
  )

  it.effect("retries a 429 after the retry-after the server asked for", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, n, res) => (n === 0 ? json(res, 429, { type: "error", error: { type: "rate_limit_error", message: "slow down" } }, { "retry-after": "1" }) : reply(res)))
      )
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { baseDelayMs: 1 } }))
      const response = yield* llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) })
      expect(response.text).toBe("Hello, world")
      expect(server.requests).toHaveLength(2)
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(950)
    })
  , 10_000)

  it.effect("retries 500 and 529 with backoff, then succeeds", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, n, res) => {
          if (n === 0) return json(res, 500, { type: "error", error: { type: "api_error", message: "boom" } })
          if (n === 1) return json(res, 529, overloaded)
          return reply(res)
        })
      )
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { baseDelayMs: 40 } }))
      const response = yield* llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) })
      expect(response.usage).toEqual({ input: 10, cacheRead: 0, cacheWrite: 0, output: 5 })
      expect(server.requests).toHaveLength(3)
      // Backoff: ~40 ms then ~80 ms, each with at most 25% jitter off.
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(29)
      expect(server.requests[2]!.at - server.requests[1]!.at).toBeGreaterThanOrEqual(59)
    })
  )

  it.effect("gives up when 5xx persists, naming the attempts", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => json(res, 529, overloaded)))
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { maxRetries: 2, baseDelayMs: 5 } }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error._tag).toBe("LlmHttpError")
      expect(error).toMatchObject({ status: 529, attempts: 3, detail: "Overloaded" })
      expect(error.message).toBe("anthropic returned HTTP 529 after 3 attempts: Overloaded. Hint: the provider is having trouble; retry later.")
      expect(server.requests).toHaveLength(3)
    })
  )

  it.effect("does not wait for a retry-after longer than maxDelayMs", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, _n, res) => json(res, 429, { type: "error", error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" } }, { "retry-after": "120" }))
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error).toMatchObject({ _tag: "LlmHttpError", status: 429, attempts: 1, retryAfterMs: 120_000 })
      expect(error.message).toContain("The server asked to wait 120 s.")
      expect(server.requests).toHaveLength(1)
    })
  )

  it.effect("does not retry a 400 and reports the API's message", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, _n, res) =>
          json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "A maximum of 4 blocks with cache_control may be provided. Found 5." } }, { "request-id": "req_abc" })
        )
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error).toMatchObject({ _tag: "LlmHttpError", status: 400, attempts: 1, detail: "A maximum of 4 blocks with cache_control may be provided. Found 5." })
      expect(error.message).toContain("check the model id")
      expect(server.requests).toHaveLength(1)
    })
  )

  it.effect("times out a response that never starts, and retries it", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer(() => undefined))
      // 600 ms: long enough for each attempt to reach the server on a loaded machine (the
      // server records a request once its body is read), short for a test.
      const llm = yield* clientOf(client({ baseUrl: server.url, timeoutMs: 600, retry: { maxRetries: 1, baseDelayMs: 5 } }))
      const started = performance.now()
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "response", timeoutMs: 600, attempts: 2 })
      expect(error.message).toContain("no response within 600 ms (2 attempts)")
      expect(server.requests).toHaveLength(2)
      // Two attempts, not the SDK's default of 10 minutes each.
      expect(performance.now() - started).toBeLessThan(10_000)
    })
  )

  it.effect("stops at once when the caller's own timeout fires while the request is opening", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer(() => undefined))
      // The client would wait 10 s per attempt and retry; the caller gives up after 100 ms.
      const llm = yield* clientOf(client({ baseUrl: server.url, timeoutMs: 10_000, retry: { maxRetries: 3, baseDelayMs: 5 } }))
      const started = performance.now()
      const outcome = yield* llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }).pipe(
        Effect.timeoutOption(Duration.millis(100))
      )
      expect(Option.isNone(outcome)).toBe(true)
      expect(performance.now() - started).toBeLessThan(2000)
    })
  )

  it.effect("times out a stream that stalls midway", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, _n, res) =>
          sse(res, messageEvents({ input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 1 }, ["x"]), { stallAfter: 4 })
        )
      )
      const llm = yield* clientOf(client({ baseUrl: server.url, idleTimeoutMs: 150 }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "stream", timeoutMs: 150 })
    })
  )

  it.effect("an error event midway fails the stream without a retry", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, _n, res) => {
          const events = messageEvents({ input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 1 }, ["partial"])
          return sse(res, [...events.slice(0, 4), { event: "error", data: overloaded }])
        })
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error._tag).toBe("LlmStreamError")
      expect(error.message).toContain("Overloaded")
      expect(server.requests).toHaveLength(1)
    })
  )

  it.effect("fails to build without a key, naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(clientOf(client({}, {})))
      expect(error._tag).toBe("LlmMissingCredentials")
      expect(error.message).toBe("No credentials for anthropic: set ANTHROPIC_API_KEY in the environment, or pass apiKey in the client options.")
    })
  )

  it.effect("reports an unreachable endpoint after retrying", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.promise(() => startServer(() => undefined))
      const url = closed.url
      yield* Effect.promise(() => closed.close())
      const llm = yield* clientOf(client({ baseUrl: url, retry: { maxRetries: 1, baseDelayMs: 5 } }))
      const error = yield* failWith(llm.complete({ body: simpleBody("anthropic", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error).toMatchObject({ _tag: "LlmConnectionError", baseUrl: url, attempts: 2 })
    })
  )

  it.effect("backs core's CompactionModel", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => reply(res, ["BOUNDARY: 3\n", "SUMMARY: parser work"])))
      const layer = compactionModelLayer("claude-haiku-4-5").pipe(Layer.provide(client({ baseUrl: server.url })))
      const model = yield* Effect.gen(function* () {
        return yield* CompactionModel
      }).pipe(Effect.provide(layer))
      const text = yield* model.complete({ system: "Find the topic boundary.", user: "[0] user: hi", maxTokens: 256 })
      expect(text).toBe("BOUNDARY: 3\nSUMMARY: parser work")
      expect(server.requests[0]!.json).toEqual({
        model: "claude-haiku-4-5",
        max_tokens: 256,
        system: "Find the topic boundary.",
        messages: [{ role: "user", content: "[0] user: hi" }],
        stream: true
      })
    })
  )
})
