// The official AWS SDK (BedrockRuntimeClient + ConverseStreamCommand), driven by LlmClient,
// sends Strata's Converse bodies to a recording server on 127.0.0.1, which answers with
// AWS binary event-stream frames; the `metadata` event's usage comes from the Bedrock simulator.
import { ConfigProvider, Effect, Layer } from "effect"
import { afterEach, describe, expect } from "vitest"
import { LlmClient, makeSimulator, placeBedrockConverse, simpleBody, type BedrockNativeUsage } from "../src/index.ts"
import { type BedrockClientOptions } from "../src/clients/LlmClient.ts"
import { neutralRequest } from "./sim-helpers.ts"
import { it } from "@strata/test-support"
import { eventStream, json, startServer, type Handler, type Reply, type TestServer } from "./wire-server.ts"

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// The Bedrock runtime client speaks HTTP/2 by default (NodeHttp2Handler).
const startH2 = (handler: Handler) => startServer(handler, { http2: true })

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const client = (options: BedrockClientOptions, vars: Record<string, string> = { AWS_BEARER_TOKEN_BEDROCK: "bedrock-key-test", AWS_REGION: "us-west-2" }) =>
  LlmClient.layerBedrock(options).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(vars))))
const clientOf = <E>(layer: Layer.Layer<LlmClient, E>) => Effect.gen(function* () {
  return yield* LlmClient
}).pipe(Effect.provide(layer))

const converse = (res: Reply, text: ReadonlyArray<string>, usage: BedrockNativeUsage) =>
  eventStream(res, [
    ["messageStart", { role: "assistant" }],
    ["contentBlockStart", { contentBlockIndex: 0, start: {} }],
    ...text.map((t) => ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: t } }] as const),
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["messageStop", { stopReason: "end_turn" }],
    ["metadata", { usage, metrics: { latencyMs: 321 } }]
  ])

const small: BedrockNativeUsage = { inputTokens: 8, outputTokens: 2, totalTokens: 10, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 }
const hello = simpleBody("bedrock", { model: MODEL, messages: [{ role: "user", content: "hi" }], maxTokens: 16 })

/** A Bedrock error response as the REST-JSON protocol sends it. */
const awsError = (res: Reply, status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  json(res, status, { message }, { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "req-err-1", ...headers })

describe("Bedrock client on the wire", () => {
  it.effect("sends the plugin's Converse body with the API key, and decodes the metadata usage", () =>
    Effect.gen(function* () {
      const sim = makeSimulator("bedrock", { model: MODEL })
      const expected: Array<unknown> = []
      server = yield* Effect.promise(() =>
        startH2((req, n, res) => {
          const modelId = decodeURIComponent(req.path.split("/")[2] ?? "")
          const r = sim.send({ ...(req.json as object), modelId }, n * 30, { outputTokens: 20 })
          expected.push(r.usage)
          return converse(res, ["The parser ", "walks."], r.native as BedrockNativeUsage)
        })
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      for (const turn of [1, 2]) {
        const placed = placeBedrockConverse(neutralRequest(MODEL, turn), { maxTokens: 256 })
        const response = yield* llm.complete({ body: placed.body })
        const recorded = server.requests[turn - 1]!
        expect(recorded.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`)
        expect(recorded.headers["authorization"]).toBe("Bearer bedrock-key-test")
        const { modelId: _m, ...rest } = placed.body
        expect(recorded.json).toEqual(rest)
        expect(response).toMatchObject({ provider: "bedrock", text: "The parser walks.", stopReason: "end_turn" })
        expect(response.usage).toEqual(expected[turn - 1])
      }
      expect((expected[1] as { cacheRead: number }).cacheRead).toBeGreaterThan(12_000)
    })
  )

  it.effect("signs with SigV4 when there is no API key", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startH2((_req, _n, res) => converse(res, ["ok"], small)))
      const layer = client({ baseUrl: server.url, region: "eu-west-1", credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" } }, {})
      const llm = yield* clientOf(layer)
      const response = yield* llm.complete({ body: hello })
      expect(response.usage).toEqual({ input: 8, cacheRead: 0, cacheWrite: 0, output: 2 })
      expect(server.requests[0]!.headers["authorization"]).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/bedrock\/aws4_request/)
    })
  )

  it.effect("retries a ThrottlingException (429) with backoff", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startH2((_req, n, res) => (n === 0 ? awsError(res, 429, "ThrottlingException", "Too many requests, please wait before trying again.") : converse(res, ["ok"], small)))
      )
      const llm = yield* clientOf(client({ baseUrl: server.url, retry: { baseDelayMs: 30 } }))
      const response = yield* llm.complete({ body: hello })
      expect(response.text).toBe("ok")
      expect(server.requests).toHaveLength(2)
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(20)
    })
  )

  it.effect("does not retry a ValidationException and reports it", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startH2((_req, _n, res) => awsError(res, 400, "ValidationException", "The text field in the ContentBlock object at messages.0.content.0 is blank."))
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* Effect.flip(llm.complete({ body: hello }))
      expect(error).toMatchObject({ _tag: "LlmHttpError", status: 400, attempts: 1 })
      expect(error.message).toContain("ValidationException: The text field in the ContentBlock object at messages.0.content.0 is blank.")
      expect(server.requests).toHaveLength(1)
    })
  )

  it.effect("an exception frame midway fails the stream", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() =>
        startH2((_req, _n, res) =>
          eventStream(res, [
            ["messageStart", { role: "assistant" }],
            ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "par" } }],
            ["modelStreamErrorException", { message: "Model stream ended unexpectedly", originalStatusCode: 500 }, "exception"]
          ])
        )
      )
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const error = yield* Effect.flip(llm.complete({ body: hello }))
      expect(error._tag).toBe("LlmStreamError")
      expect(error.message).toContain("Model stream ended unexpectedly")
    })
  )

  it.effect("needs a modelId in the body or the options", () =>
    Effect.gen(function* () {
      server = yield* Effect.promise(() => startH2((_req, _n, res) => converse(res, ["ok"], small)))
      const llm = yield* clientOf(client({ baseUrl: server.url }))
      const { modelId: _m, ...noModel } = hello
      const error = yield* Effect.flip(llm.complete({ body: noModel }))
      expect(error._tag).toBe("LlmInvalidRequest")
      expect(error.message).toContain("no modelId")
      const withDefault = yield* clientOf(client({ baseUrl: server.url, model: MODEL }))
      expect((yield* withDefault.complete({ body: noModel })).text).toBe("ok")
      expect(server.requests[0]!.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`)
    })
  )
})
