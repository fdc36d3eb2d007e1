// The official OpenAI SDK, driven by LlmClient, sends Strata's Chat Completions bodies (OpenAI
// and OpenAI-compatible gateways) to a recording server on 127.0.0.1, which streams chunks
// in the recorded shape with a final usage chunk computed by the OpenAI simulator.
import { ConfigProvider, Effect, Layer, Stream } from "effect"
import { afterEach, describe, expect } from "vitest"
import { LlmClient, makeSimulator, placeOpenAIChat, placeOpenAICompatible, simpleBody, type OpenAIChatNativeUsage } from "../src/index.ts"
import { type LlmClientOptions } from "../src/clients/LlmClient.ts"
import { neutralRequest } from "./sim-helpers.ts"
import { it } from "@strata/test-support"
import { json, sse, startServer, type Reply, type TestServer } from "./wire-server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const client = (options: LlmClientOptions, vars: Record<string, string> = { OPENAI_API_KEY: "sk-openai-test" }) =>
  LlmClient.layerOpenAI(options).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(vars))))
const clientOf = <E>(layer: Layer.Layer<LlmClient, E>) => Effect.gen(function* () {
  return yield* LlmClient
}).pipe(Effect.provide(layer))

const chunk = (model: string, delta: Record<string, unknown>, finish: string | null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_760_000_000,
  model,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  usage: null
})

/** A streamed Chat Completion: role chunk, text chunks, finish chunk, usage chunk (empty choices), [DONE]. */
const chatStream = (res: Reply, model: string, text: ReadonlyArray<string>, usage: OpenAIChatNativeUsage | undefined, options: { readonly errorAfter?: number } = {}) => {
  const events: Array<{ data: unknown }> = [
    { data: chunk(model, { role: "assistant", content: "" }, null) },
    ...text.map((t) => ({ data: chunk(model, { content: t }, null) })),
    { data: chunk(model, {}, "stop") }
  ]
  if (options.errorAfter !== undefined) {
    events.splice(options.errorAfter, events.length, { data: { error: { message: "Upstream provider returned 502", code: 502 } } })
  }
  if (usage !== undefined && options.errorAfter === undefined) {
    events.push({ data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_760_000_000, model, choices: [], usage } })
  }
  events.push({ data: "[DONE]" })
  return sse(res, events)
}

const hello = simpleBody("openai", { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], maxTokens: 16 })

describe("OpenAI client on the wire", () => {
  it.effect("sends the plugin's body with stream and include_usage, and decodes the final usage chunk", () =>
    Effect.gen(function* () {
      const sim = makeSimulator("openai", { model: "gpt-4o" })
      const expected: Array<unknown> = []
      server = yield* Effect.promise(() =>
        startServer((req, n, res) => {
          const { stream: _s, stream_options: _o, ...native } = req.json as Record<string, unknown>
          const r = sim.send(native, n * 30, { outputTokens: 12 })
          expected.push(r.usage)
          return chatStream(res, "gpt-4o", ["It ", "parses."], r.native as OpenAIChatNativeUsage)
        })
      )
      const llm = yield* clientOf(client({ baseUrl: `${server.url}/v1` }))
      for (const turn of [1, 2]) {
        const placed = placeOpenAIChat(neutralRequest("gpt-4o", turn), { promptCacheKey: "session-1", maxTokens: 256 })
        const response = yield* llm.complete({ body: placed.body })
        const recorded = server.requests[turn - 1]!
        expect(recorded.path).toBe("/v1/chat/completions")
        expect(recorded.headers["authorization"]).toBe("Bearer sk-openai-test")
        expect(recorded.body).toBe(JSON.stringify({ ...placed.body, stream: true, stream_options: { include_usage: true } }))
        expect(response).toMatchObject({ provider: "openai", text: "It parses.", stopReason: "stop" })
        expect(response.usage).toEqual(expected[turn - 1])
      }
      expect((expected[1] as { cacheRead: number }).cacheRead).toBeGreaterThan(12_000)
    })
  )

  it.effect("an OpenAI-compatible gateway: its own key variable and base URL, cache writes decoded", () =>
    Effect.gen(function* () {
      const usage = { prompt_tokens: 14_000, completion_tokens: 30, total_tokens: 14_030, prompt_tokens_details: { cached_tokens: 12_000, cache_write_tokens: 1_500 } }
      server = yield* Effect.promise(() => startServer((_req, _n, res) => chatStream(res, "anthropic/claude-sonnet-4.5", ["ok"], usage)))
      const layer = client({ baseUrl: `${server.url}/api/v1`, apiKeyEnv: "OPENROUTER_API_KEY", headers: { "x-session-id": "s-1" } }, { OPENROUTER_API_KEY: "sk-or-test" })
      const llm = yield* clientOf(layer)
      const placed = placeOpenAICompatible(neutralRequest("openrouter/anthropic/claude-sonnet-4.5", 1))
      const response = yield* llm.complete({ body: placed.body })
      const recorded = server.requests[0]!
      expect(recorded.path).toBe("/api/v1/chat/completions")
      expect(recorded.headers["authorization"]).toBe("Bearer sk-or-test")
      expect(recorded.headers["x-session-id"]).toBe("s-1")
      // The cache_control parts reach the gateway untouched.
      expect(recorded.body).toContain(`"cache_control":{"type":"ephemeral"}`)
      expect(response.usage).toEqual({ input: 500, cacheRead: 12_000, cacheWrite: 1_500, output: 30 })
    })
  )

  it.effect("a stream without a usage chunk ends with no usage", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => chatStream(res, "gpt-4o", ["a", "b"], undefined)))
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const events = yield* Stream.runCollect(llm.stream({ body: hello }))
      expect(events).toEqual([
        { _tag: "TextDelta", text: "a" },
        { _tag: "TextDelta", text: "b" },
        { _tag: "Finish", stopReason: "stop" }
      ])
    })
  )

  it.effect("honours retry-after-ms on a 429", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, n, res) =>
          n === 0
            ? json(res, 429, { error: { message: "Rate limit reached for gpt-4o", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after-ms": "300" })
            : chatStream(res, "gpt-4o", ["ok"], { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } })
        )
      )
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { baseDelayMs: 1 } }))
      const response = yield* llm.complete({ body: hello })
      expect(response.usage).toEqual({ input: 9, cacheRead: 0, cacheWrite: 0, output: 1 })
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(290)
    })
  )

  it.effect("gives up on a persistent 503 with the API's message", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => json(res, 503, { error: { message: "The engine is currently overloaded", type: "server_error" } })))
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { maxRetries: 2, baseDelayMs: 5 } }))
      const error = yield* Effect.flip(llm.complete({ body: hello }))
      expect(error).toMatchObject({ _tag: "LlmHttpError", status: 503, attempts: 3 })
      expect(error.message).toContain("The engine is currently overloaded")
      expect(server.requests).toHaveLength(3)
    })
  )

  it.effect("a gateway error chunk midway fails the stream", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => chatStream(res, "gpt-4o", ["par", "tial"], undefined, { errorAfter: 2 })))
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* Effect.flip(llm.complete({ body: hello }))
      expect(error._tag).toBe("LlmStreamError")
      expect(error.message).toContain("Upstream provider returned 502")
    })
  )

  it.effect("times out and names the key variable when it is missing", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer(() => undefined))
      const llm = yield* clientOf(client({ baseUrl: server.url, timeoutMs: 120, retry: { maxRetries: 0 } }))
      const error = yield* Effect.flip(llm.complete({ body: hello }))
      expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "response", attempts: 1 })
      const missing = yield* Effect.flip(clientOf(client({}, {})))
      expect(missing.message).toContain("set OPENAI_API_KEY")
    })
  )

  it.effect("refuses a body that is not an object before sending anything", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => json(res, 200, {})))
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* Effect.flip(llm.complete({ body: "hello" }))
      expect(error._tag).toBe("LlmInvalidRequest")
      expect(server.requests).toHaveLength(0)
    })
  )
})
