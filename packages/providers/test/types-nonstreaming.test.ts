// A plugin's body goes straight into each official SDK's non-streaming create, with no
// cast and no narrowing: the bodies declare no `stream`, so the SDK's overloads pick the
// non-streaming one and the result has `.content` / `.choices` / `.output_text` (the SDKs
// add `_request_id`, hence `toExtend`). `tsc` over test/ checks the types; the calls run
// against a local server.
import Anthropic from "@anthropic-ai/sdk"
import type { Message } from "@anthropic-ai/sdk/resources/messages"
import { BedrockRuntimeClient, ConverseCommand, type ConverseCommandOutput } from "@aws-sdk/client-bedrock-runtime"
import { GoogleGenAI, type GenerateContentResponse } from "@google/genai"
import OpenAI from "openai"
import type { ChatCompletion } from "openai/resources/chat/completions"
import type { Response } from "openai/resources/responses/responses"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { placeAnthropic, placeBedrockConverse, placeGemini, placeOpenAIChat, placeOpenAICompatible, placeOpenAIResponses } from "../src/index.ts"
import { neutralRequest } from "./sim-helpers.ts"
import { json, startServer, type Recorded, type Reply, type TestServer } from "./wire-server.ts"

const REPLIES: ReadonlyArray<readonly [RegExp, unknown]> = [
  [/\/v1\/messages$/, { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, output_tokens: 5 } }],
  [/\/chat\/completions$/, { id: "c1", object: "chat.completion", created: 1, model: "gpt-4.1", choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "ok", refusal: null } }], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }],
  [/\/responses$/, { id: "resp_1", object: "response", created_at: 1, status: "completed", model: "gpt-4.1", output: [{ type: "message", id: "m1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "ok", annotations: [] }] }], usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17 } }],
  [/\/converse$/, { output: { message: { role: "assistant", content: [{ text: "ok" }] } }, stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 }, metrics: { latencyMs: 1 } }],
  [/:generateContent$/, { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 5 } }]
]

const answer = (req: Recorded, _n: number, res: Reply) => {
  const path = decodeURIComponent(req.path.split("?")[0]!)
  const reply = REPLIES.find(([match]) => match.test(path))
  return json(res, reply === undefined ? 404 : 200, reply?.[1] ?? { error: `no route ${path}` })
}

let http1: TestServer
let http2: TestServer // the Bedrock runtime client speaks HTTP/2
beforeAll(async () => {
  http1 = await startServer(answer)
  http2 = await startServer(answer, { http2: true })
})
afterAll(async () => {
  await http1.close()
  await http2.close()
})

/** The last request body sent to a path, parsed. */
const sent = (server: TestServer, path: RegExp): Record<string, unknown> =>
  server.requests.filter((r) => path.test(r.path)).at(-1)!.json as Record<string, unknown>

describe("bodies go into the SDKs' non-streaming create as they are", () => {
  it("anthropic: messages.create(body) is a Message", async () => {
    const client = new Anthropic({ apiKey: "test-key", baseURL: http1.url, maxRetries: 0 })
    const { body } = placeAnthropic(neutralRequest("claude-sonnet-4-6", 1), { maxTokens: 256 })
    const message = await client.messages.create(body)
    expectTypeOf(message).toExtend<Message>()
    expect(message.content).toEqual([{ type: "text", text: "ok" }])
    expect(sent(http1, /\/v1\/messages$/)["stream"]).toBeUndefined()
  })

  it("openai chat (and the OpenAI-compatible body): chat.completions.create(body) is a ChatCompletion", async () => {
    const client = new OpenAI({ apiKey: "test-key", baseURL: http1.url, maxRetries: 0 })
    const chat = await client.chat.completions.create(placeOpenAIChat(neutralRequest("gpt-4.1", 1), { promptCacheKey: "s1" }).body)
    expectTypeOf(chat).toExtend<ChatCompletion>()
    expect(chat.choices[0]?.message.content).toBe("ok")
    const compat = await client.chat.completions.create(placeOpenAICompatible(neutralRequest("anthropic/claude-sonnet-4.5", 1)).body)
    expectTypeOf(compat).toExtend<ChatCompletion>()
    expect(compat.choices[0]?.message.content).toBe("ok")
    expect(sent(http1, /\/chat\/completions$/)).not.toHaveProperty("stream_options")
  })

  it("openai responses: responses.create(body) is a Response", async () => {
    const client = new OpenAI({ apiKey: "test-key", baseURL: http1.url, maxRetries: 0 })
    const response = await client.responses.create(placeOpenAIResponses(neutralRequest("gpt-5.6", 1), { cacheMode: "explicit" }).body)
    expectTypeOf(response).toExtend<Response>()
    expect(response.output_text).toBe("ok")
  })

  it("bedrock: new ConverseCommand(body) sends and returns ConverseCommandOutput", async () => {
    const client = new BedrockRuntimeClient({ endpoint: http2.url, region: "us-west-2", credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" } })
    const output = await client.send(new ConverseCommand(placeBedrockConverse(neutralRequest("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 1)).body))
    expectTypeOf(output).toExtend<ConverseCommandOutput>()
    expect(output.output?.message?.content).toEqual([{ text: "ok" }])
    client.destroy()
  })

  it("gemini: models.generateContent(body) is a GenerateContentResponse", async () => {
    const ai = new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: http1.url } })
    const response = await ai.models.generateContent(placeGemini(neutralRequest("gemini-2.5-flash", 1)).body)
    expectTypeOf(response).toExtend<GenerateContentResponse>()
    expect(response.text).toBe("ok")
  })
})
