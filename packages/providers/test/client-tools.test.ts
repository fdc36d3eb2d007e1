// Tool calls in streamed replies: the official SDKs, driven by LlmClient, read replies
// from a scripted server on 127.0.0.1 whose tool calls arrive the way each API streams
// them (ids and names first, the JSON arguments in fragments, parallel calls interleaved),
// as whole JSON bodies (a gateway that ignored `stream: true`), or cut midway. A call is
// reported only once the provider said the reply finished.
import { ConfigProvider, Effect, Layer, Stream } from "effect"
import fc from "fast-check"
import { afterEach, describe, expect, it as vit } from "vitest"
import { collectToolCalls, LlmClient, simpleBody, type LlmClientShape, type LlmProvider, type ToolCallDelta } from "../src/index.ts"
import { it } from "@strata/test-support"
import { eventStream, json, sse, startServer, type Reply, type TestServer } from "./wire-server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const MODEL: Record<LlmProvider, string> = { anthropic: "claude-sonnet-5", openai: "gpt-4o", bedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" }
const VARS: Record<LlmProvider, Record<string, string>> = {
  anthropic: { ANTHROPIC_API_KEY: "sk-ant-test" },
  openai: { OPENAI_API_KEY: "sk-test" },
  bedrock: { AWS_BEARER_TOKEN_BEDROCK: "k", AWS_REGION: "us-west-2" }
}

const clientOf = (provider: LlmProvider, url: string) =>
  Effect.gen(function* () {
    return yield* LlmClient
  }).pipe(
    Effect.provide(
      LlmClient.layer(provider, { baseUrl: provider === "openai" ? `${url}/v1` : url, idleTimeoutMs: 2000 }).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(VARS[provider])))
      )
    )
  )

const body = (provider: LlmProvider) => simpleBody(provider, { model: MODEL[provider], messages: [{ role: "user", content: "Where is pricing?" }], maxTokens: 64 })

const READ = { type: "tool-call", toolCallId: "call_read", toolName: "read_file", input: { path: "src/pricing.ts", startLine: 1, endLine: 40 } } as const
const SEARCH = { type: "tool-call", toolCallId: "call_search", toolName: "search", input: { pattern: "quote\\(", regex: true } } as const

/** `text` cut into pieces of at most `size` characters. */
const pieces = (text: string, size: number): Array<string> => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

/** Two parallel calls after some text, streamed as `provider` streams them; `cut` stops before the finish. */
const streamToolCalls = (provider: LlmProvider, res: Reply, cut = false): Promise<void> => {
  const read = pieces(JSON.stringify(READ.input), 7)
  const search = pieces(JSON.stringify(SEARCH.input), 5)
  if (provider === "anthropic") {
    const events = [
      { event: "message_start", data: { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: MODEL.anthropic, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me look." } } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      { event: "content_block_start", data: { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: READ.toolCallId, name: READ.toolName, input: {} } } },
      ...read.map((partial_json) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } } })),
      { event: "content_block_stop", data: { type: "content_block_stop", index: 1 } },
      { event: "content_block_start", data: { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: SEARCH.toolCallId, name: SEARCH.toolName, input: {} } } },
      ...search.map((partial_json) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json } } })),
      { event: "content_block_stop", data: { type: "content_block_stop", index: 2 } },
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 30 } } },
      { event: "message_stop", data: { type: "message_stop" } }
    ]
    return sse(res, cut ? events.slice(0, 8) : events)
  }
  if (provider === "openai") {
    const chunk = (delta: unknown, finish: string | null = null) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [{ index: 0, delta, finish_reason: finish }] } })
    // OpenAI interleaves parallel calls' fragments by index.
    const events = [
      chunk({ role: "assistant", content: "Let me look." }),
      chunk({ tool_calls: [{ index: 0, id: READ.toolCallId, type: "function", function: { name: READ.toolName, arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 1, id: SEARCH.toolCallId, type: "function", function: { name: SEARCH.toolName, arguments: "" } }] }),
      ...Array.from({ length: Math.max(read.length, search.length) }, (_, i) =>
        chunk({ tool_calls: [...(i < read.length ? [{ index: 0, function: { arguments: read[i] } }] : []), ...(i < search.length ? [{ index: 1, function: { arguments: search[i] } }] : [])] })),
      chunk({}, "tool_calls"),
      { data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [], usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } } },
      { data: "[DONE]" }
    ]
    return sse(res, cut ? events.slice(0, 6) : events)
  }
  const frames: Array<readonly [string, unknown]> = [
    ["messageStart", { role: "assistant" }],
    ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Let me look." } }],
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: READ.toolCallId, name: READ.toolName } } }],
    ...read.map((input) => ["contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input } } }] as const),
    ["contentBlockStop", { contentBlockIndex: 1 }],
    ["contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: SEARCH.toolCallId, name: SEARCH.toolName } } }],
    ...search.map((input) => ["contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input } } }] as const),
    ["contentBlockStop", { contentBlockIndex: 2 }],
    ["messageStop", { stopReason: "tool_use" }],
    ["metadata", { usage: { inputTokens: 10, outputTokens: 30, totalTokens: 40 }, metrics: { latencyMs: 5 } }]
  ]
  return eventStream(res, cut ? frames.slice(0, 7) : frames)
}

const start = (provider: LlmProvider, handler: (res: Reply) => void | Promise<void>) =>
  Effect.promise(() => startServer((_req, _n, res) => handler(res), provider === "bedrock" ? { http2: true } : {}))

const PROVIDERS: ReadonlyArray<LlmProvider> = ["anthropic", "openai", "bedrock"]

describe("LlmClient: streamed tool calls", () => {
  for (const provider of PROVIDERS) {
    it.effect(`${provider}: parallel calls, arguments in fragments, come out whole after the text`, () =>
      Effect.gen(function* () {
        server = yield* start(provider, (res) => streamToolCalls(provider, res))
        const llm: LlmClientShape = yield* clientOf(provider, server.url)
        const events = yield* Stream.runCollect(llm.stream({ body: body(provider) }))
        const tags = events.map((e) => e._tag)
        expect(tags.filter((t) => t === "ToolCall")).toHaveLength(2)
        // Calls come after all text, before the usage and the end.
        expect(tags.lastIndexOf("TextDelta")).toBeLessThan(tags.indexOf("ToolCall"))
        expect(tags.slice(-2)).toEqual(["Usage", "Finish"])
        const reply = yield* llm.complete({ body: body(provider) })
        expect(reply.text).toBe("Let me look.")
        expect(reply.toolCalls).toEqual([READ, SEARCH])
        expect(reply.stopReason).toBe(provider === "openai" ? "tool_calls" : "tool_use")
      }))

    it.effect(`${provider}: a reply cut in the middle of a call yields no call and fails`, () =>
      Effect.gen(function* () {
        server = yield* start(provider, (res) => streamToolCalls(provider, res, true))
        const llm = yield* clientOf(provider, server.url)
        const seen: Array<string> = []
        const error = yield* Effect.flip(Stream.runForEach(llm.stream({ body: body(provider) }), (e) => Effect.sync(() => seen.push(e._tag))))
        expect(error._tag).toBe("LlmIncompleteReply")
        expect(seen).not.toContain("ToolCall")
      }))
  }

  it.effect("anthropic: a whole JSON message (stream ignored) keeps its tool_use blocks", () =>
    Effect.gen(function* () {
      server = yield* start("anthropic", (res) =>
        json(res, 200, {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: MODEL.anthropic,
          content: [{ type: "text", text: "Reading." }, { type: "tool_use", id: READ.toolCallId, name: READ.toolName, input: READ.input }],
          stop_reason: "tool_use",
          usage: { input_tokens: 10, output_tokens: 5 }
        }))
      const llm = yield* clientOf("anthropic", server.url)
      const reply = yield* llm.complete({ body: body("anthropic") })
      expect(reply).toMatchObject({ text: "Reading.", toolCalls: [READ], stopReason: "tool_use" })
    }))

  it.effect("openai: a whole JSON completion (stream ignored) keeps its tool_calls", () =>
    Effect.gen(function* () {
      server = yield* start("openai", (res) =>
        json(res, 200, {
          id: "c1",
          object: "chat.completion",
          created: 1,
          model: MODEL.openai,
          choices: [{
            index: 0,
            message: { role: "assistant", content: null, tool_calls: [READ, SEARCH].map((c) => ({ id: c.toolCallId, type: "function", function: { name: c.toolName, arguments: JSON.stringify(c.input) } })) },
            finish_reason: "tool_calls"
          }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
        }))
      const llm = yield* clientOf("openai", server.url)
      const reply = yield* llm.complete({ body: body("openai") })
      expect(reply).toMatchObject({ text: "", toolCalls: [READ, SEARCH], stopReason: "tool_calls" })
    }))

  it.effect("openai: arguments that are not a JSON object are kept as text under `arguments`", () =>
    Effect.gen(function* () {
      const chunk = (delta: unknown, finish: string | null = null) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL.openai, choices: [{ index: 0, delta, finish_reason: finish }] } })
      server = yield* start("openai", (res) =>
        sse(res, [
          chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_file", arguments: "{\"path\": src/a" } }] }),
          chunk({}, "tool_calls"),
          { data: "[DONE]" }
        ]))
      const llm = yield* clientOf("openai", server.url)
      const reply = yield* llm.complete({ body: body("openai") })
      expect(reply.toolCalls).toEqual([{ type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { arguments: "{\"path\": src/a" } }])
    }))
})

describe("collectToolCalls", () => {
  vit("joins any split of each call's JSON, interleaved across calls, into the calls in first-seen order", () => {
    const input = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
    const calls = fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 8 }), name: fc.string({ minLength: 1, maxLength: 8 }), input }), { selector: (c) => c.id, maxLength: 4 })
    fc.assert(
      fc.property(calls, fc.array(fc.nat(), { maxLength: 60 }), (cs, cuts) => {
        // Each call opens with its id and name, then its JSON text in pieces; pieces of
        // different calls are interleaved (by the drawn cuts), each call's in order.
        const queues = cs.map((c, index) => {
          const text = JSON.stringify(c.input)
          const points = [...new Set(cuts.map((n) => n % (text.length + 1)))].sort((a, b) => a - b)
          const bounds = [0, ...points, text.length]
          const parts = bounds.slice(1).map((end, i) => text.slice(bounds[i], end)).filter((p) => p !== "")
          return [{ index, id: c.id, name: c.name, input: {} }, ...parts.map((p) => ({ index, arguments: p }))] as Array<ToolCallDelta>
        })
        const deltas: Array<ToolCallDelta> = []
        let k = 0
        while (queues.some((q) => q.length > 0)) {
          const live = queues.filter((q) => q.length > 0)
          // Openers go out in call order so first-seen order is the calls' order.
          const q = live.find((q) => q[0]!.id !== undefined) ?? live[(cuts[k++ % Math.max(1, cuts.length)] ?? 0) % live.length]!
          deltas.push(q.shift()!)
        }
        const parsed = JSON.parse(JSON.stringify(cs.map((c) => c.input))) as Array<unknown>
        expect(collectToolCalls(deltas)).toEqual(cs.map((c, i) => ({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: parsed[i] })))
      })
    )
  })

  vit("a call without argument text keeps the input it opened with; one with no id keeps an empty id", () => {
    expect(collectToolCalls([{ index: 3, name: "list_files", input: { path: "src" } }])).toEqual([{ type: "tool-call", toolCallId: "", toolName: "list_files", input: { path: "src" } }])
    expect(collectToolCalls([{ index: 0, id: "a", name: "search", arguments: "[1,2]" }])[0]!.input).toEqual({ arguments: "[1,2]" })
  })
})
