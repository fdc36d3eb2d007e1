// The stream stall timer runs between stream events of any kind: a tool call whose input
// arrives as input_json_delta events every 100 ms outlasts a 400 ms stall timeout as long
// as the events keep coming, while a real pause of 900 ms still fails as a stall.
import { ConfigProvider, Effect, Exit, Layer, Stream } from "effect"
import { afterEach, describe, expect } from "vitest"
import { LlmClient, simpleBody, type LlmEvent } from "../src/index.ts"
import { it } from "@strata/test-support"
import { sse, startServer, type Reply, type TestServer } from "./wire-server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const INPUT = JSON.stringify({ path: "src/pricing.ts", startLine: 1, endLine: 40 })

/** A reply that is one tool call, its input in 10 fragments, one event every `gapMs`. */
const slowToolCall = (res: Reply, gapMs: number) =>
  sse(
    res,
    [
      { event: "message_start", data: { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "call_1", name: "read_file", input: {} } } },
      ...Array.from({ length: 10 }, (_, i) => ({
        event: "content_block_delta",
        data: { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: INPUT.slice(Math.floor((i * INPUT.length) / 10), Math.floor(((i + 1) * INPUT.length) / 10)) } }
      })),
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 12 } } },
      { event: "message_stop", data: { type: "message_stop" } }
    ],
    { gapMs }
  )

const run = (url: string) =>
  Effect.gen(function* () {
    const llm = yield* LlmClient
    return yield* llm.stream({ body: simpleBody("anthropic", { model: "claude-sonnet-5", messages: [{ role: "user", content: "Read it" }], maxTokens: 64 }) }).pipe(
      Stream.runCollect
    )
  }).pipe(
    Effect.provide(
      LlmClient.layer("anthropic", { baseUrl: url, idleTimeoutMs: 400 }).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ ANTHROPIC_API_KEY: "sk-ant-test" })))
      )
    )
  )

describe("LlmClient: the stall timer", () => {
  it.effect("input_json_delta events every 100 ms keep a 400 ms stall timer from firing (1.4 s in all)", () =>
    Effect.gen(function* () {
      const s = yield* Effect.promise(() => startServer((_req, _n, res) => slowToolCall(res, 100)))
      server = s
      const events: ReadonlyArray<LlmEvent> = yield* run(s.url)
      const calls = events.filter((e) => e._tag === "ToolCall")
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({ call: { toolName: "read_file", input: JSON.parse(INPUT) } })
      expect(events.map((e) => e._tag)).toEqual(["ToolCall", "Usage", "Finish"])
    })
  )

  it.effect("a pause of 900 ms between events still fails as a stall", () =>
    Effect.gen(function* () {
      const s = yield* Effect.promise(() => startServer((_req, _n, res) => slowToolCall(res, 900)))
      server = s
      const exit = yield* Effect.exit(run(s.url))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error.message : "")).join("") : "")).toMatch(
        /stream stalled: no event within 400 ms/
      )
    })
  )
})
