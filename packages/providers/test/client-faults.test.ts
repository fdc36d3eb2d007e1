// A reply counts only when the provider said it finished. The official SDKs, driven by
// LlmClient, talk to a scripted server on 127.0.0.1 that breaks the reply in every way a
// network or a gateway can: streams that end early or are cut mid-event, OpenAI streams
// without finish_reason, 200s with non-JSON, empty or error bodies, resets. Each fails
// with a typed error that says what arrived; a whole JSON completion is decoded and used.
import { ConfigProvider, Effect, Layer } from "effect"
import { afterEach, describe, expect } from "vitest"
import { LlmClient, simpleBody, type LlmError, type LlmProvider } from "../src/index.ts"
import { type LlmClientOptions } from "../src/clients/LlmClient.ts"
import { it } from "@strata/test-support"
import { eventStream, json, sse, startServer, type Reply, type TestServer } from "./wire-server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

type Keyed = Exclude<LlmProvider, "bedrock">
const MODEL: Record<Keyed, string> = { anthropic: "claude-sonnet-5", openai: "gpt-4o" }
const VARS: Record<Keyed, Record<string, string>> = { anthropic: { ANTHROPIC_API_KEY: "sk-ant-test" }, openai: { OPENAI_API_KEY: "sk-test" } }

const clientOf = (provider: Keyed, options: LlmClientOptions) =>
  Effect.gen(function* () {
    return yield* LlmClient
  }).pipe(Effect.provide((provider === "anthropic" ? LlmClient.layerAnthropic(options) : LlmClient.layerOpenAI(options)).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(VARS[provider]))))))

const body = (provider: Keyed) => simpleBody(provider, { model: MODEL[provider], messages: [{ role: "user", content: "hi" }], maxTokens: 64 })

/** A whole, well-formed stream for `provider`, as a list of SSE events. */
const events = (provider: Keyed, text: ReadonlyArray<string>): Array<{ readonly event?: string; readonly data: unknown }> =>
  provider === "anthropic"
    ? [
        { event: "message_start", data: { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: MODEL.anthropic, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } } },
        { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
        ...text.map((t) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } } })),
        { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
        { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } } },
        { event: "message_stop", data: { type: "message_stop" } }
      ]
    : [
        ...text.map((t) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] } })),
        { data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } },
        { data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } } },
        { data: "[DONE]" }
      ]

const TEXT = ["The parser ", "walks the tree ", "and stops."]
const FINISH: Record<Keyed, string> = { anthropic: "message_stop", openai: "a finish_reason" }

/** Raw bytes with a status and headers, then end (or destroy the socket). */
const raw = (res: Reply, status: number, headers: Record<string, string>, text: string) => {
  res.writeHead(status, headers)
  res.end(text)
}

const failure = (provider: Keyed, handler: (res: Reply) => void | Promise<void>) =>
  Effect.gen(function* () {
    server = yield* Effect.promise(() => startServer((_req, _n, res) => handler(res)))
    const llm = yield* clientOf(provider, { baseUrl: provider === "openai" ? `${server.url}/v1` : server.url, idleTimeoutMs: 2000 })
    return yield* Effect.flip(llm.complete({ body: body(provider) })) as Effect.Effect<LlmError>
  })

describe.each(["anthropic", "openai"] as const)("%s: a reply counts only when the provider said it finished", (provider) => {
  it.effect("a whole stream is a reply", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startServer((_req, _n, res) => sse(res, events(provider, TEXT))))
      const llm = yield* clientOf(provider, { baseUrl: provider === "openai" ? `${server.url}/v1` : server.url })
      const reply = yield* llm.complete({ body: body(provider) })
      expect(reply.text).toBe(TEXT.join(""))
      expect(reply.usage?.output).toBe(7)
    }))

  it.effect("a stream that ends before the finish event fails with LlmIncompleteReply saying what arrived", () =>
    Effect.gen(function* () {
      const all = events(provider, TEXT)
      // Anthropic: everything up to message_delta, without message_stop; OpenAI: the text chunks only.
      const cut = provider === "anthropic" ? all.slice(0, 2 + TEXT.length) : all.slice(0, TEXT.length)
      const error = yield* failure(provider, (res) => sse(res, cut))
      expect(error._tag).toBe("LlmIncompleteReply")
      expect(error).toMatchObject({ events: cut.length, characters: TEXT.join("").length })
      expect(error.message).toBe(
        `The ${provider} reply is incomplete: the stream ended after ${cut.length} events without ${FINISH[provider]}; ${TEXT.join("").length} characters of text arrived. The partial reply was discarded; send the request again.`
      )
    }))

  it.effect("a stream cut in the middle of an event fails and says how much had arrived", () =>
    Effect.gen(function* () {
      const all = events(provider, TEXT)
      const error = yield* failure(provider, (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        for (const e of all.slice(0, 3)) res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${JSON.stringify(e.data)}\n\n`)
        res.end(provider === "anthropic" ? 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de' : 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"and st')
      })
      expect(["LlmIncompleteReply", "LlmStreamError"]).toContain(error._tag)
      expect(error.message).toMatch(/(after|ended after) \d+ events?/)
    }))

  it.effect("a connection reset midway fails with LlmStreamError", () =>
    Effect.gen(function* () {
      const all = events(provider, TEXT)
      const error = yield* failure(provider, (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        for (const e of all.slice(0, 3)) res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${JSON.stringify(e.data)}\n\n`)
        setTimeout(() => (res as unknown as { destroy: () => void }).destroy(), 50)
      })
      expect(error._tag).toBe("LlmStreamError")
      expect(error.message).toMatch(/characters? of text had arrived/)
    }))

  it.effect("a 200 whose body is not JSON fails with LlmIncompleteReply quoting it", () =>
    Effect.gen(function* () {
      const error = yield* failure(provider, (res) => raw(res, 200, { "content-type": "application/json" }, "<html>Bad gateway</html>"))
      expect(error._tag).toBe("LlmIncompleteReply")
      expect(error.message).toContain('are not JSON: "<html>Bad gateway</html>"')
    }))

  it.effect("a 200 with an HTML page instead of a stream fails, naming the content type", () =>
    Effect.gen(function* () {
      const error = yield* failure(provider, (res) => raw(res, 200, { "content-type": "text/html" }, "<html>Bad gateway</html>"))
      expect(error._tag).toBe("LlmIncompleteReply")
      expect(error.message).toContain(`the stream ended after 0 events without ${FINISH[provider]} (content-type text/html)`)
    }))

  it.effect("an empty 200 fails, with or without a content type", () =>
    Effect.gen(function* () {
      const json200 = yield* failure(provider, (res) => raw(res, 200, { "content-type": "application/json" }, ""))
      expect(json200._tag).toBe("LlmIncompleteReply")
      expect(json200.message).toContain("has an empty body")
      yield* Effect.promise(() => server!.close())
      const bare = yield* failure(provider, (res) => raw(res, 200, {}, ""))
      expect(bare._tag).toBe("LlmIncompleteReply")
      const stream = yield* Effect.promise(() => server!.close()).pipe(Effect.andThen(failure(provider, (res) => raw(res, 200, { "content-type": "text/event-stream" }, ""))))
      expect(stream.message).toContain("the stream ended after 0 events")
    }))

  it.effect("a 200 whose JSON is not a finished reply fails; an error body in a 200 is a stream error", () =>
    Effect.gen(function* () {
      const half = provider === "anthropic" ? { type: "message", content: [{ type: "text", text: "half" }], stop_reason: null, usage: {} } : { choices: [{ message: { content: "half" }, finish_reason: null }] }
      const unfinished = yield* failure(provider, (res) => json(res, 200, half))
      expect(unfinished._tag).toBe("LlmIncompleteReply")
      expect(unfinished.message).toContain(`its JSON is not a finished ${provider} reply`)
      yield* Effect.promise(() => server!.close())
      const errorBody = provider === "anthropic" ? { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } : { error: { message: "upstream failed" } }
      const error = yield* failure(provider, (res) => json(res, 200, errorBody))
      expect(error._tag).toBe("LlmStreamError")
      expect(error.message).toContain(provider === "anthropic" ? "Overloaded" : "upstream failed")
    }))

  it.effect("a gateway that ignores stream and answers 200 with a whole JSON completion: decoded and used", () =>
    Effect.gen(function* () {
      const completion = provider === "anthropic"
        ? { id: "msg_1", type: "message", role: "assistant", model: MODEL.anthropic, content: [{ type: "text", text: "Whole " }, { type: "text", text: "answer." }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 900, cache_read_input_tokens: 800, output_tokens: 60 } }
        : { id: "c1", object: "chat.completion", created: 1, model: MODEL.openai, choices: [{ index: 0, message: { role: "assistant", content: "Whole answer." }, finish_reason: "stop" }], usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960, prompt_tokens_details: { cached_tokens: 800 } } }
      server = yield* Effect.promise(() => startServer((_req, _n, res) => json(res, 200, completion)))
      const llm = yield* clientOf(provider, { baseUrl: provider === "openai" ? `${server.url}/v1` : server.url })
      const reply = yield* llm.complete({ body: body(provider) })
      expect(reply).toMatchObject({ text: "Whole answer.", stopReason: provider === "anthropic" ? "end_turn" : "stop" })
      expect(reply.usage).toMatchObject({ cacheRead: 800, output: 60 })
    }))
})

describe("bedrock: a reply counts only after messageStop", () => {
  const MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
  it.effect("a stream that ends without messageStop fails with LlmIncompleteReply", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startServer((_req, _n, res) =>
          eventStream(res, [
            ["messageStart", { role: "assistant" }],
            ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Half an ans" } }]
          ]), { http2: true })
      )
      const llm = yield* Effect.gen(function* () {
        return yield* LlmClient
      }).pipe(Effect.provide(LlmClient.layerBedrock({ baseUrl: server.url }).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ AWS_BEARER_TOKEN_BEDROCK: "k", AWS_REGION: "us-west-2" }))))))
      const error = yield* Effect.flip(llm.complete({ body: simpleBody("bedrock", { model: MODEL_ID, messages: [{ role: "user", content: "hi" }], maxTokens: 16 }) }))
      expect(error._tag).toBe("LlmIncompleteReply")
      expect(error.message).toBe("The bedrock reply is incomplete: the stream ended after 2 events without messageStop; 11 characters of text arrived. The partial reply was discarded; send the request again.")
    }))
})
