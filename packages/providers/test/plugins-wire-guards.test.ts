// A fifth breakpoint, a below-minimum breakpoint and an empty text block never reach
// the wire: each official SDK sends Strata's body to a local server that records it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createH2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from "node:http2"
import type { AddressInfo } from "node:net"
import Anthropic from "@anthropic-ai/sdk"
import { BedrockRuntimeClient, ConverseCommand, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime"
import { GoogleGenAI } from "@google/genai"
import OpenAI from "openai"
import type { NeutralRequest } from "@strata/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  decodeAnthropicUsage,
  decodeBedrockUsage,
  decodeGeminiUsage,
  decodeOpenAIChatUsage,
  invokeModelInput,
  placeAnthropic,
  placeBedrockConverse,
  placeBedrockInvoke,
  placeGemini,
  placeOpenAIChat,
  placeOpenAICompatible,
  type ToolDefinition
} from "../src/index.ts"
import { seedRequest, textOf } from "./plugins-fixtures.ts"

interface Recorded {
  readonly path: string
  readonly body: string
}

const recorded: Array<Recorded> = []
let server: Server
let base = ""
// The Bedrock runtime client speaks HTTP/2 (cleartext with prior knowledge on http://).
let h2: Http2Server
let h2Base = ""

const REPLIES: ReadonlyArray<{ match: RegExp; reply: unknown }> = [
  { match: /\/v1\/messages$/, reply: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, cache_creation_input_tokens: 3000, cache_read_input_tokens: 9000, output_tokens: 5 } } },
  { match: /\/chat\/completions$/, reply: { id: "c1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "ok", refusal: null } }], usage: { prompt_tokens: 12_000, completion_tokens: 5, total_tokens: 12_005, prompt_tokens_details: { cached_tokens: 9000 } } } },
  { match: /\/converse$/, reply: { output: { message: { role: "assistant", content: [{ text: "ok" }] } }, stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 5, totalTokens: 12_017, cacheReadInputTokens: 9000, cacheWriteInputTokens: 3000 }, metrics: { latencyMs: 1 } } },
  { match: /\/invoke$/, reply: { id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text: "ok" }], usage: { input_tokens: 1, output_tokens: 1 } } },
  { match: /:generateContent$/, reply: { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 12_000, cachedContentTokenCount: 9000, candidatesTokenCount: 5 } } }
]

const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const path = decodeURIComponent((req.url ?? "").split("?")[0]!)
    recorded.push({ path, body: Buffer.concat(chunks).toString("utf8") })
    const reply = REPLIES.find((r) => r.match.test(path))
    res.writeHead(reply === undefined ? 404 : 200, { "content-type": "application/json" })
    res.end(JSON.stringify(reply?.reply ?? { error: `no route ${path}` }))
  })
}

beforeAll(async () => {
  server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  h2 = createH2Server(handle)
  await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve))
  h2Base = `http://127.0.0.1:${(h2.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await new Promise<void>((resolve) => h2.close(() => resolve()))
})

const lastBody = (path: RegExp): string => {
  const hit = [...recorded].reverse().find((r) => path.test(r.path))
  if (hit === undefined) throw new Error(`nothing recorded for ${path}`)
  return hit.body
}

const count = (json: string, needle: string): number => json.split(needle).length - 1
const BLANK_TEXT = /"text":\s*"(?:\s|\\n|\\t|\\r)*"/

/**
 * Tools worth a marker, four tiers (so five markers are asked for), L1 too small to
 * reach the minimum on its own, and empty text in several shapes.
 */
const hostile = (model: string): NeutralRequest => {
  const r = seedRequest(model, { L0: { tokens: 5000 }, L1: { tokens: 5000 }, L2: { tokens: 5000 }, L3: { tokens: 5000 } })
  const messages = r.messages.map((m, i) => {
    if (i === 1) return { role: "user" as const, content: [{ type: "text" as const, text: "" }, { type: "text" as const, text: textOf("L1", 4999) }, { type: "text" as const, text: "  " }] }
    if (i === 8) return { role: "assistant" as const, content: "" }
    return m
  })
  return { ...r, messages }
}

const tools: ReadonlyArray<ToolDefinition> = [{ name: "search", description: textOf("search tool", 8000), inputSchema: { type: "object", properties: { q: { type: "string" } } } }]

/** A request whose first tier is below every Claude minimum. */
const belowMinimum = (model: string): NeutralRequest => seedRequest(model, { L0: { tokens: 300 }, L1: { tokens: 6000 } })

describe("nothing the rules forbid reaches the wire", () => {
  it("anthropic SDK: at most 4 cache_control, none below the minimum, no empty text", async () => {
    const client = new Anthropic({ apiKey: "test-key", baseURL: base, maxRetries: 0 })
    const placed = placeAnthropic(hostile("claude-sonnet-4-6"), { tools, cacheTools: true })
    expect(placed.dropped).toHaveLength(1)
    const response = await client.messages.create({ ...placed.body, stream: false })
    const wire = lastBody(/\/v1\/messages$/)
    expect(count(wire, '"cache_control"')).toBe(4)
    expect(wire).not.toMatch(BLANK_TEXT)
    expect(decodeAnthropicUsage(response.usage)).toEqual({ input: 12, cacheRead: 9000, cacheWrite: 3000, output: 5 })

    const low = placeAnthropic(belowMinimum("claude-sonnet-4-6"))
    await client.messages.create({ ...low.body, stream: false })
    const lowWire = JSON.parse(lastBody(/\/v1\/messages$/)) as { system: Array<{ cache_control?: unknown }> }
    expect(lowWire.system[0]!.cache_control).toBeUndefined()
    expect(low.dropped.map((d) => d.tier)).toEqual(["L0"])
  })

  it("bedrock SDK (Converse and InvokeModel): at most 4 checkpoints, none below k x minimum, no empty text", async () => {
    const client = new BedrockRuntimeClient({ region: "us-east-1", endpoint: h2Base, credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" }, maxAttempts: 1 })
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    const placed = placeBedrockConverse(hostile(model), { tools, cacheTools: true })
    const response = await client.send(new ConverseCommand(placed.body))
    const wire = lastBody(/\/converse$/)
    expect(count(wire, '"cachePoint"')).toBe(4)
    expect(wire).not.toMatch(BLANK_TEXT)
    expect(decodeBedrockUsage(response.usage)).toEqual({ input: 12, cacheRead: 9000, cacheWrite: 3000, output: 5 })

    await client.send(new ConverseCommand(placeBedrockConverse(belowMinimum(model)).body))
    const lowWire = JSON.parse(lastBody(/\/converse$/)) as { system: Array<unknown> }
    expect(lowWire.system).toHaveLength(1)

    const invoke = placeBedrockInvoke(hostile(model), { tools, cacheTools: true, automatic: true })
    await client.send(new InvokeModelCommand(invokeModelInput(invoke, model)))
    const invokeWire = lastBody(/\/invoke$/)
    expect(count(invokeWire, '"cache_control"')).toBe(4)
    expect(invokeWire).not.toMatch(BLANK_TEXT)
    client.destroy()
  })

  it("openai SDK: seeds-format gateway body and GPT-5.6 breakpoints within their limits", async () => {
    const client = new OpenAI({ apiKey: "test-key", baseURL: base, maxRetries: 0 })
    const compat = placeOpenAICompatible(hostile("anthropic/claude-sonnet-4.5"), { tools })
    const response = await client.chat.completions.create({ ...compat.body, stream: false })
    const wire = lastBody(/\/chat\/completions$/)
    expect(count(wire, '"cache_control"')).toBeLessThanOrEqual(4)
    expect(wire).not.toMatch(BLANK_TEXT)
    expect(decodeOpenAIChatUsage(response.usage)).toEqual({ input: 3000, cacheRead: 9000, cacheWrite: 0, output: 5 })

    await client.chat.completions.create({ ...placeOpenAICompatible(belowMinimum("anthropic/claude-sonnet-4.5")).body, stream: false })
    const lowWire = JSON.parse(lastBody(/\/chat\/completions$/)) as { messages: Array<{ content: unknown }> }
    expect(typeof lowWire.messages[0]!.content).toBe("string")

    await client.chat.completions.create({ ...placeOpenAIChat(hostile("gpt-5.6")).body, stream: false })
    const gpt = lastBody(/\/chat\/completions$/)
    expect(count(gpt, '"prompt_cache_breakpoint"')).toBe(3)
    expect(gpt).not.toMatch(BLANK_TEXT)
  })

  it("google genai SDK: one cache reference, no empty text", async () => {
    const ai = new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: base } })
    const placed = placeGemini(hostile("gemini-2.5-pro"), { explicitCache: { name: "cachedContents/abc" } })
    const response = await ai.models.generateContent(placed.body)
    const wire = lastBody(/:generateContent$/)
    expect(count(wire, '"cachedContent"')).toBe(1)
    expect(wire).not.toMatch(BLANK_TEXT)
    expect(wire).not.toContain("systemInstruction")
    expect(decodeGeminiUsage(response.usageMetadata)).toEqual({ input: 3000, cacheRead: 9000, cacheWrite: 0, output: 5 })
  })
})
