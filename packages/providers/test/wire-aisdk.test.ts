// The AI SDK body on the wire: `generateText` and `streamText` of ai 7 and ai 6 (with the
// provider packages each major pairs with) send Strata's `placeAiSdk` body through
// @ai-sdk/anthropic, @ai-sdk/openai, @ai-sdk/amazon-bedrock and @ai-sdk/google to a
// scripted server on 127.0.0.1. The server runs Strata's simulator of that provider on
// what arrived, so a request the real API would refuse (a system role among the messages,
// too many markers, a marker on nothing) gets the provider's 400, and a well-placed one
// gets cache reads on the second turn. The test checks the reply and usage came back.
// The same calls with the application's own messages through `strataCache()`
// (`wrapLanguageModel` of each major) check the middleware's markers and its report.
import { createAmazonBedrock as bedrock7 } from "@ai-sdk/amazon-bedrock"
import { createAmazonBedrock as bedrock6 } from "@ai-sdk/amazon-bedrock-v4"
import { createAnthropic as anthropic7 } from "@ai-sdk/anthropic"
import { createAnthropic as anthropic6 } from "@ai-sdk/anthropic-v3"
import { createGoogleGenerativeAI as google7 } from "@ai-sdk/google"
import { createGoogleGenerativeAI as google6 } from "@ai-sdk/google-v3"
import { createOpenAI as openai7 } from "@ai-sdk/openai"
import { createOpenAI as openai6 } from "@ai-sdk/openai-v3"
import * as ai7 from "ai"
import * as ai6 from "ai6"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { makeSimulator, placeAiSdk, strataCache, type AiSdkBody, type AiSdkTarget, type AnthropicNativeUsage, type BedrockNativeUsage, type GeminiNativeUsage, type OpenAIResponsesNativeUsage, type SimProvider } from "../src/index.ts"
import type { Usage } from "@strata/core"
import { SimulatedRejection } from "../src/simulation.ts"
import { neutralRequest } from "./sim-helpers.ts"
import { eventStream, json, sse, startServer, type Recorded, type Reply, type TestServer } from "./wire-server.ts"

const MODELS: { readonly [T in AiSdkTarget]: string } = {
  anthropic: "claude-sonnet-4-5",
  bedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
  openai: "gpt-4.1",
  google: "gemini-2.5-flash"
}
const SIM: { readonly [T in AiSdkTarget]: SimProvider } = { anthropic: "anthropic", bedrock: "bedrock", openai: "openai", google: "gemini" }
const WORDS = ["The parser ", "walks the tree."]
const OUTPUT = 7

// ---------------------------------------------------------------------------------------
// The scripted server: the provider's request check (the simulator), then its reply shape.

/** What the server saw and answered for one request. */
interface Exchange {
  readonly request: Recorded
  readonly streamed: boolean
  readonly usage: Usage
}

const anthropicReply = (res: Reply, streamed: boolean, usage: AnthropicNativeUsage) => {
  const message = { id: "msg_01", type: "message", role: "assistant", model: MODELS.anthropic, stop_sequence: null }
  const counts = { input_tokens: usage.input_tokens, cache_creation_input_tokens: usage.cache_creation_input_tokens, cache_read_input_tokens: usage.cache_read_input_tokens }
  if (!streamed) return json(res, 200, { ...message, content: [{ type: "text", text: WORDS.join("") }], stop_reason: "end_turn", usage: { ...usage, output_tokens: OUTPUT } })
  return sse(res, [
    { event: "message_start", data: { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
    ...WORDS.map((text) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } } })),
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { ...counts, output_tokens: OUTPUT } } },
    { event: "message_stop", data: { type: "message_stop" } }
  ])
}

const openaiReply = (res: Reply, streamed: boolean, usage: OpenAIResponsesNativeUsage) => {
  const item = { type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: WORDS.join(""), annotations: [] }] }
  const response = {
    id: "resp_1",
    object: "response",
    created_at: 1_760_000_000,
    status: "completed",
    model: MODELS.openai,
    output: [item],
    incomplete_details: null,
    usage: { ...usage, output_tokens: OUTPUT, total_tokens: usage.input_tokens + OUTPUT, output_tokens_details: { reasoning_tokens: 0 } }
  }
  if (!streamed) return json(res, 200, response)
  return sse(res, [
    { data: { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [], usage: null } } },
    { data: { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { ...item, status: "in_progress", content: [] } } },
    ...WORDS.map((delta, i) => ({ data: { type: "response.output_text.delta", sequence_number: 2 + i, item_id: "msg_1", output_index: 0, content_index: 0, delta, logprobs: [] } })),
    { data: { type: "response.output_item.done", sequence_number: 4, output_index: 0, item } },
    { data: { type: "response.completed", sequence_number: 5, response } }
  ])
}

const bedrockReply = (res: Reply, streamed: boolean, usage: BedrockNativeUsage) => {
  const final = { ...usage, outputTokens: OUTPUT, totalTokens: usage.inputTokens + OUTPUT }
  if (!streamed) {
    return json(res, 200, { output: { message: { role: "assistant", content: [{ text: WORDS.join("") }] } }, stopReason: "end_turn", usage: final, metrics: { latencyMs: 321 } })
  }
  return eventStream(res, [
    ["messageStart", { role: "assistant" }],
    ["contentBlockStart", { contentBlockIndex: 0, start: {} }],
    ...WORDS.map((text) => ["contentBlockDelta", { contentBlockIndex: 0, delta: { text } }] as const),
    ["contentBlockStop", { contentBlockIndex: 0 }],
    ["messageStop", { stopReason: "end_turn" }],
    ["metadata", { usage: final, metrics: { latencyMs: 321 } }]
  ])
}

const googleReply = (res: Reply, streamed: boolean, usage: GeminiNativeUsage) => {
  const usageMetadata = { ...usage, candidatesTokenCount: OUTPUT, totalTokenCount: usage.promptTokenCount + OUTPUT }
  const chunk = (text: string, last: boolean) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last ? { usageMetadata } : {}),
    modelVersion: MODELS.google
  })
  if (!streamed) return json(res, 200, chunk(WORDS.join(""), true))
  return sse(res, WORDS.map((text, i) => ({ data: chunk(text, i === WORDS.length - 1) })))
}

/** The provider's error body for a request its API refuses. */
const refuse = (res: Reply, target: AiSdkTarget, reason: string) => {
  switch (target) {
    case "anthropic": return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: reason } })
    case "openai": return json(res, 400, { error: { message: reason, type: "invalid_request_error", param: null, code: null } })
    case "bedrock": return json(res, 400, { message: reason }, { "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" })
    case "google": return json(res, 400, { error: { code: 400, message: reason, status: "INVALID_ARGUMENT" } })
  }
}

/** The request path each provider package calls, and whether it asked for a stream. */
const route = (target: AiSdkTarget, request: Recorded): { readonly ok: boolean; readonly streamed: boolean } => {
  const body = request.json as Record<string, unknown>
  switch (target) {
    case "anthropic": return { ok: request.path === "/v1/messages", streamed: body["stream"] === true }
    case "openai": return { ok: request.path === "/v1/responses", streamed: body["stream"] === true }
    case "bedrock": {
      const base = `/model/${encodeURIComponent(MODELS.bedrock)}/`
      return { ok: request.path === `${base}converse` || request.path === `${base}converse-stream`, streamed: request.path.endsWith("-stream") }
    }
    case "google": {
      const base = `/v1beta/models/${MODELS.google}:`
      return { ok: request.path === `${base}generateContent` || request.path === `${base}streamGenerateContent?alt=sse`, streamed: request.path.includes("stream") }
    }
  }
}

/** A server that answers as `target`'s API would, 30 simulated seconds apart per request. */
const providerServer = (target: AiSdkTarget, exchanges: Array<Exchange>) => {
  const sim = makeSimulator(SIM[target], { model: MODELS[target] })
  return startServer((request, n, res) => {
    const { ok, streamed } = route(target, request)
    if (!ok) return json(res, 404, { error: `no route ${request.path}` })
    let result
    try {
      result = sim.send(request.json, n * 30, { outputTokens: OUTPUT })
    } catch (e) {
      if (e instanceof SimulatedRejection) return refuse(res, target, e.reason)
      throw e
    }
    exchanges.push({ request, streamed, usage: result.usage })
    switch (target) {
      case "anthropic": return anthropicReply(res, streamed, result.native as AnthropicNativeUsage)
      case "openai": return openaiReply(res, streamed, result.native as OpenAIResponsesNativeUsage)
      case "bedrock": return bedrockReply(res, streamed, result.native as BedrockNativeUsage)
      case "google": return googleReply(res, streamed, result.native as GeminiNativeUsage)
    }
  })
}

// ---------------------------------------------------------------------------------------
// The two AI SDK majors, each with the provider packages it pairs with.

interface Outcome {
  readonly text: string
  readonly usage: { readonly inputTokens: number | undefined; readonly outputTokens: number | undefined; readonly inputTokenDetails: { readonly cacheReadTokens: number | undefined; readonly cacheWriteTokens: number | undefined } }
}

/** What `generateText` and `streamText` take here: Strata's body, or an application's own system prompt and messages. */
type CallBody = AiSdkBody | OwnMessages

/** Plain text messages, which either major's `ModelMessage` takes. */
interface OwnMessages {
  readonly system: string
  readonly messages: Array<{ readonly role: "user" | "assistant"; readonly content: string }>
}

interface Major {
  readonly name: string
  readonly call: (mode: "generateText" | "streamText", target: AiSdkTarget, url: string, body: CallBody, middleware?: ReturnType<typeof strataCache>) => Promise<Outcome>
}

const AWS = { region: "us-west-2", accessKeyId: "AKIDTEST", secretAccessKey: "secret-test" }

const v7: Major = {
  name: "ai 7",
  call: async (mode, target, url, body, middleware) => {
    const base = target === "anthropic"
      ? anthropic7({ baseURL: `${url}/v1`, apiKey: "sk-ant-test" })(MODELS.anthropic)
      : target === "openai"
      ? openai7({ baseURL: `${url}/v1`, apiKey: "sk-openai-test" })(MODELS.openai)
      : target === "bedrock"
      ? bedrock7({ baseURL: url, ...AWS })(MODELS.bedrock)
      : google7({ baseURL: `${url}/v1beta`, apiKey: "gemini-test" })(MODELS.google)
    const model = middleware === undefined ? base : ai7.wrapLanguageModel({ model: base, middleware })
    if (mode === "generateText") {
      const r = await ai7.generateText({ model, ...body, maxOutputTokens: 64, maxRetries: 0 })
      return { text: r.text, usage: r.usage }
    }
    const r = ai7.streamText({ model, ...body, maxOutputTokens: 64, maxRetries: 0, onError: () => undefined })
    let text = ""
    for await (const delta of r.textStream) text += delta
    return { text, usage: await r.usage }
  }
}

const v6: Major = {
  name: "ai 6",
  call: async (mode, target, url, body, middleware) => {
    const base = target === "anthropic"
      ? anthropic6({ baseURL: `${url}/v1`, apiKey: "sk-ant-test" })(MODELS.anthropic)
      : target === "openai"
      ? openai6({ baseURL: `${url}/v1`, apiKey: "sk-openai-test" })(MODELS.openai)
      : target === "bedrock"
      ? bedrock6({ baseURL: url, ...AWS })(MODELS.bedrock)
      : google6({ baseURL: `${url}/v1beta`, apiKey: "gemini-test" })(MODELS.google)
    const model = middleware === undefined ? base : ai6.wrapLanguageModel({ model: base, middleware })
    if (mode === "generateText") {
      const r = await ai6.generateText({ model, ...body, maxOutputTokens: 64, maxRetries: 0 })
      return { text: r.text, usage: r.usage }
    }
    const r = ai6.streamText({ model, ...body, maxOutputTokens: 64, maxRetries: 0, onError: () => undefined })
    let text = ""
    for await (const delta of r.textStream) text += delta
    return { text, usage: await r.usage }
  }
}

// ---------------------------------------------------------------------------------------
// What each provider's request must look like where Strata asked for a cache marker.

type Json = Record<string, unknown>
const records = (v: unknown): Array<Json> => (Array.isArray(v) ? v.filter((x): x is Json => typeof x === "object" && x !== null) : [])

/** The system prompt went where the API takes it, and each marker sits where the plan put it. */
const checkPlacement = (target: AiSdkTarget, sent: Json, body: AiSdkBody) => {
  const systemTexts = (body.system ?? []).map((m) => m.content)
  expect(systemTexts.length).toBeGreaterThan(0)
  const markedSystem = (body.system ?? []).map((m) => m.providerOptions !== undefined)
  const markedMessages = body.messages.map((m) => m.providerOptions !== undefined)
  switch (target) {
    case "anthropic": {
      const system = records(sent["system"])
      expect(system.map((b) => b["text"])).toEqual(systemTexts)
      expect(system.map((b) => b["cache_control"] !== undefined)).toEqual(markedSystem)
      const messages = records(sent["messages"])
      expect(messages.map((m) => m["role"])).toEqual(body.messages.map((m) => m.role))
      // A message-level marker lands on the message's last content block.
      expect(messages.map((m) => records(m["content"]).at(-1)?.["cache_control"] !== undefined)).toEqual(markedMessages)
      expect(JSON.stringify(sent).split("cache_control").length - 1).toBe(markedSystem.concat(markedMessages).filter(Boolean).length)
      break
    }
    case "bedrock": {
      const system = records(sent["system"])
      expect(system.filter((b) => "text" in b).map((b) => b["text"])).toEqual(systemTexts)
      expect(system.filter((b) => "cachePoint" in b)).toHaveLength(markedSystem.filter(Boolean).length)
      const messages = records(sent["messages"])
      expect(messages.map((m) => m["role"])).toEqual(body.messages.map((m) => m.role))
      expect(messages.map((m) => records(m["content"]).at(-1)?.["cachePoint"] !== undefined)).toEqual(markedMessages)
      break
    }
    case "openai": {
      const input = records(sent["input"])
      expect(input.slice(0, systemTexts.length)).toEqual(systemTexts.map((content) => ({ role: "system", content })))
      expect(input.slice(systemTexts.length).some((m) => m["role"] === "system")).toBe(false)
      expect(sent["prompt_cache_key"]).toBe("session-1")
      break
    }
    case "google": {
      const instruction = sent["systemInstruction"] as Json
      expect(records(instruction["parts"]).map((p) => p["text"])).toEqual(systemTexts)
      expect(records(sent["contents"]).map((c) => c["role"])).toEqual(body.messages.map((m) => (m.role === "assistant" ? "model" : "user")))
      break
    }
  }
}

// ---------------------------------------------------------------------------------------

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// Any AI SDK warning (ai 6's "system messages in messages", a deprecated field) fails the test.
const warnings: Array<unknown> = []
const globals = globalThis as { AI_SDK_LOG_WARNINGS?: unknown }
beforeAll(() => {
  globals.AI_SDK_LOG_WARNINGS = (w: unknown) => warnings.push(w)
  vi.spyOn(console, "warn").mockImplementation((...args: Array<unknown>) => warnings.push(args))
})
afterAll(() => {
  delete globals.AI_SDK_LOG_WARNINGS
  vi.restoreAllMocks()
})

const TARGETS: ReadonlyArray<AiSdkTarget> = ["anthropic", "openai", "bedrock", "google"]

describe.each([v7, v6])("placeAiSdk through $name", (major) => {
  describe.each(TARGETS)("%s", (target) => {
    it.each(["generateText", "streamText"] as const)("%s: system through `system`, markers where planned, reply and cached usage back", async (mode) => {
      warnings.length = 0
      const exchanges: Array<Exchange> = []
      server = await providerServer(target, exchanges)
      for (const turn of [1, 2]) {
        const { body } = placeAiSdk(neutralRequest(MODELS[target], turn), { target, promptCacheKey: "session-1" })
        const outcome = await major.call(mode, target, server.url, body)
        const exchange = exchanges[turn - 1]!
        expect(exchange.streamed).toBe(mode === "streamText")
        checkPlacement(target, exchange.request.json as Json, body)
        expect(outcome.text).toBe(WORDS.join(""))
        expect(outcome.usage.outputTokens).toBe(OUTPUT)
        expect(outcome.usage.inputTokens).toBe(exchange.usage.input + exchange.usage.cacheRead + exchange.usage.cacheWrite)
        expect(outcome.usage.inputTokenDetails.cacheReadTokens ?? 0).toBe(exchange.usage.cacheRead)
        if (target === "anthropic" || target === "bedrock") expect(outcome.usage.inputTokenDetails.cacheWriteTokens).toBe(exchange.usage.cacheWrite)
      }
      expect(server.requests).toHaveLength(2)
      // The second turn reads the stable prefix (L0-L3, about 12,500 tokens) from the cache.
      expect(exchanges[0]!.usage.cacheRead).toBe(0)
      expect(exchanges[1]!.usage.cacheRead).toBeGreaterThan(12_000)
      expect(warnings).toEqual([])
    })
  })

  it("a system message among `messages` is what the old body did: ai 7 refuses it, ai 6 warns", async () => {
    warnings.length = 0
    server = await providerServer("anthropic", [])
    const { body } = placeAiSdk(neutralRequest(MODELS.anthropic, 1), { target: "anthropic" })
    const old = { messages: [...(body.system ?? []), ...body.messages] } as unknown as AiSdkBody
    const sent = major.call("generateText", "anthropic", server.url, old)
    if (major === v7) {
      await expect(sent).rejects.toThrow(/System messages are not allowed/)
    } else {
      await sent
      expect(JSON.stringify(warnings)).toMatch(/System messages in the prompt or messages fields/)
    }
  })
})

/** An application's own conversation (no markers): a long system prompt, then `turn` questions. */
const ownMessages = (turn: number): OwnMessages => {
  const messages: Array<OwnMessages["messages"][number]> = []
  for (let t = 1; t <= turn; t++) {
    if (t > 1) messages.push({ role: "assistant", content: WORDS.join("") })
    messages.push({ role: "user", content: `Question ${t}: what does the parser do with node ${t}? `.repeat(120) })
  }
  return { system: "You review the parser of a TypeScript compiler. ".repeat(300), messages }
}

/** How many cache markers the request carries, in the provider's spelling. */
const markersSent = (target: "anthropic" | "bedrock", sent: Json): number =>
  JSON.stringify(sent).split(target === "anthropic" ? "cache_control" : "cachePoint").length - 1

describe.each([v7, v6])("strataCache through $name", (major) => {
  describe.each(TARGETS)("%s", (target) => {
    it.each(["generateText", "streamText"] as const)("%s: markers (or the cache key) on the application's messages, usage in the report", async (mode) => {
      warnings.length = 0
      const exchanges: Array<Exchange> = []
      server = await providerServer(target, exchanges)
      const cache = strataCache({ now: () => exchanges.length * 30_000, promptCacheKey: "session-1" })
      for (const turn of [1, 2]) {
        const outcome = await major.call(mode, target, server.url, ownMessages(turn), cache)
        expect(outcome.text).toBe(WORDS.join(""))
        const sent = exchanges[turn - 1]!.request.json as Json
        if (target === "anthropic" || target === "bedrock") expect(markersSent(target, sent)).toBeGreaterThan(0)
        if (target === "openai") expect(sent["prompt_cache_key"]).toBe("session-1")
      }
      const report = cache.report()
      expect(report.requests).toBe(2)
      expect(report.usage.cacheRead).toBe(exchanges.reduce((n, e) => n + e.usage.cacheRead, 0))
      // Anthropic and Bedrock read the first turn's prefix on the second; OpenAI and Gemini cache it themselves.
      if (target === "anthropic" || target === "bedrock") expect(exchanges[1]!.usage.cacheRead).toBeGreaterThan(1024)
      expect(warnings).toEqual([])
    })
  })
})
