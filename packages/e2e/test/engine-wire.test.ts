// The composed engine on the wire: createContextEngine({ tracker, symbols, provider })
// assembles a tiered request, the official SDK sends `turn.request` as it is to a scripted
// server on 127.0.0.1 (which checks the body as the real API would: roles, tool pairing,
// markers), and `turn.commit({ reply })` stores what came back. Two turns per SDK: the
// first reply is a tool call, the second request carries its result and gets text.
import Anthropic from "@anthropic-ai/sdk"
import { createAnthropic } from "@ai-sdk/anthropic"
import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime"
import { GoogleGenAI } from "@google/genai"
import { createContextEngine, type ContextEngine, type Message, type ToolCallPart, type ToolDefinition } from "@strata/core"
import {
  AiSdkPlacement,
  AnthropicPlacement,
  BedrockPlacement,
  GeminiPlacement,
  OpenAIPlacement,
  OpenAIResponsesPlacement
} from "@strata/providers"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import { generateText, jsonSchema, tool } from "ai"
import OpenAI from "openai"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, startServer, type Recorded, type Reply, type TestServer } from "@strata/test-support/http"
import { validateAnthropic, validateChat, validateConverse, validateGemini, validateResponses } from "../../providers/test/wire-validators.ts"

let repo: string
beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "strata-e2e-wire-"))
  mkdirSync(join(repo, "src"))
  writeFileSync(join(repo, "src/a.ts"), "import { b } from \"./b\"\nexport const a = () => b() + 1\n")
  writeFileSync(join(repo, "src/b.ts"), "export function b(): number {\n  return 1\n}\n")
})
afterAll(() => rmSync(repo, { recursive: true, force: true }))

const READ_FILE: ToolDefinition = {
  name: "read_file",
  description: "Read a file of the repository.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
}

/** The engine every SDK test composes: memory tracker, the real symbol index, one plugin. */
const engineFor = <Body>(model: string, provider: Parameters<typeof createContextEngine<Body>>[0]["provider"]): ContextEngine<Body> =>
  createContextEngine({
    repoRoot: repo,
    model,
    tracker: TrackerLayer.memory(),
    symbols: symbolIndexLayer(repo, { cache: false, git: false }),
    provider
  })

const toolCallOf = (history: ReadonlyArray<Message>): ToolCallPart => {
  const last = history.at(-1)
  const call = last?.role === "assistant" && typeof last.content !== "string" ? last.content.find((p) => p.type === "tool-call") : undefined
  if (call?.type !== "tool-call") throw new Error(`the history does not end with a tool call: ${JSON.stringify(last)}`)
  return call
}

/**
 * Turn 1 asks, the reply calls read_file; turn 2 sends the result and the reply answers.
 * Returns what the session holds afterwards.
 */
const twoTurns = async <Body>(engine: ContextEngine<Body>, send: (body: Body) => Promise<unknown>) => {
  await engine.addFile("src/a.ts")
  const first = await engine.assemble({ prompt: "What does src/b.ts return? Read it." })
  expect(first.mode).toBe("tiered")
  const firstCommit = await first.commit({ reply: await send(first.request) })
  const call = toolCallOf(await engine.getHistory())
  expect(call).toMatchObject({ toolName: "read_file", input: { path: "src/b.ts" } })
  const second = await engine.assemble({ toolResults: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: { type: "text", value: "export function b(): number {\n  return 1\n}\n" } }] })
  expect(second.version).toBe(1)
  const secondCommit = await second.commit({ reply: await send(second.request) })
  const history = await engine.getHistory()
  const record = await engine.getSessionRecord()
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
  expect(history.at(-1)).toEqual({ role: "assistant", content: "b returns 1." })
  expect(secondCommit.version).toBe(2)
  expect(record.turns).toBe(2)
  expect(record.last?.usageSource).toBe("provider")
  expect(record.totals).toEqual({ input: 2 * 20, cacheRead: 2 * 1000, cacheWrite: 2 * 500, output: 2 * 10 })
  expect(firstCommit.record.totals.output).toBe(10)
  expect(await engine.hud({ ascii: true })).toContainEqual(expect.stringMatching(/Session/))
  return { first, second, history, record }
}

/** A scripted API: each body validated, then a tool call while no result came back, else text. */
const scripted = async (
  match: RegExp,
  validate: (body: unknown) => ReadonlyArray<string>,
  hasResult: (body: unknown) => boolean,
  replies: { readonly call: unknown; readonly text: unknown },
  options: { readonly http2?: boolean } = {}
): Promise<TestServer & { readonly bodies: () => ReadonlyArray<unknown> }> => {
  const server = await startServer((req: Recorded, _n: number, res: Reply) => {
    if (!match.test(req.path.split("?")[0] ?? "")) return json(res, 404, { error: `no route ${req.path}` })
    const problems = validate(req.json)
    if (problems.length > 0) return json(res, 400, { error: { type: "invalid_request_error", message: problems.join("; ") } })
    return json(res, 200, hasResult(req.json) ? replies.text : replies.call)
  }, options)
  return Object.assign(server, { bodies: () => server.requests.filter((r) => match.test(r.path.split("?")[0] ?? "")).map((r) => r.json) })
}

const has = (body: unknown, needle: string): boolean => JSON.stringify(body).includes(needle)

describe("assemble -> SDK -> commit, two turns with a tool call", () => {
  it("@anthropic-ai/sdk messages.create", async () => {
    const usage = { input_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 500, output_tokens: 10 }
    const message = { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", stop_sequence: null }
    const server = await scripted(/\/v1\/messages$/, validateAnthropic, (b) => has(b, "tool_result"), {
      call: { ...message, content: [{ type: "text", text: "Reading it." }, { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "src/b.ts" } }], stop_reason: "tool_use", usage },
      text: { ...message, content: [{ type: "text", text: "b returns 1." }], stop_reason: "end_turn", usage }
    })
    try {
      const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0 })
      await using engine = engineFor("claude-sonnet-4-6", AnthropicPlacement({ tools: [READ_FILE], maxTokens: 512 }))
      const { history } = await twoTurns(engine, (body) => client.messages.create(body))
      expect(history[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Reading it." }, { type: "tool-call", toolCallId: "toolu_01", toolName: "read_file", input: { path: "src/b.ts" } }] })
      // The second request carries the first exchange natively, with cache markers.
      const second = server.bodies()[1]
      expect(has(second, "\"tool_use\"")).toBe(true)
      expect(has(second, "cache_control")).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("openai chat.completions.create", async () => {
    const usage = { prompt_tokens: 1520, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 500 } }
    const completion = { id: "c1", object: "chat.completion", created: 1, model: "gpt-4.1" }
    const server = await scripted(/\/chat\/completions$/, validateChat, (b) => has(b, "\"role\":\"tool\""), {
      call: { ...completion, choices: [{ index: 0, finish_reason: "tool_calls", logprobs: null, message: { role: "assistant", content: null, refusal: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: "{\"path\":\"src/b.ts\"}" } }] } }], usage },
      text: { ...completion, choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "b returns 1.", refusal: null } }], usage }
    })
    try {
      const client = new OpenAI({ apiKey: "sk-test", baseURL: server.url, maxRetries: 0 })
      await using engine = engineFor("gpt-4.1", OpenAIPlacement({ tools: [READ_FILE], promptCacheKey: "e2e" }))
      await twoTurns(engine, (body) => client.chat.completions.create(body))
    } finally {
      await server.close()
    }
  })

  it("openai responses.create", async () => {
    const usage = { input_tokens: 1520, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 500 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1530 }
    const response = { id: "resp_1", object: "response", created_at: 1, status: "completed", model: "gpt-5.6", incomplete_details: null }
    const server = await scripted(/\/responses$/, validateResponses, (b) => has(b, "function_call_output"), {
      call: { ...response, output: [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need b." }], encrypted_content: "gAAAA" },
        { type: "function_call", id: "fc_1", call_id: "call_7", name: "read_file", arguments: "{\"path\":\"src/b.ts\"}", status: "completed" }
      ], usage },
      text: { ...response, output: [{ type: "message", id: "m1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "b returns 1.", annotations: [] }] }], usage }
    })
    try {
      const client = new OpenAI({ apiKey: "sk-test", baseURL: server.url, maxRetries: 0 })
      await using engine = engineFor("gpt-5.6", OpenAIResponsesPlacement({ tools: [READ_FILE] }))
      await twoTurns(engine, (body) => client.responses.create(body))
      // The reasoning item went back with its encrypted content.
      expect(has(server.bodies()[1], "\"encrypted_content\":\"gAAAA\"")).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("@aws-sdk/client-bedrock-runtime ConverseCommand", async () => {
    const usage = { inputTokens: 20, outputTokens: 10, cacheReadInputTokens: 1000, cacheWriteInputTokens: 500, totalTokens: 1530 }
    const server = await scripted(/\/converse$/, validateConverse, (b) => has(b, "toolResult"), {
      call: { output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "tu_1", name: "read_file", input: { path: "src/b.ts" } } }] } }, stopReason: "tool_use", usage, metrics: { latencyMs: 1 } },
      text: { output: { message: { role: "assistant", content: [{ text: "b returns 1." }] } }, stopReason: "end_turn", usage, metrics: { latencyMs: 1 } }
    }, { http2: true })
    const client = new BedrockRuntimeClient({ endpoint: server.url, region: "us-west-2", credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" } })
    try {
      await using engine = engineFor("us.anthropic.claude-sonnet-4-5-20250929-v1:0", BedrockPlacement({ tools: [READ_FILE] }))
      await twoTurns(engine, (body) => client.send(new ConverseCommand(body)))
      expect(has(server.bodies()[1], "cachePoint")).toBe(true)
    } finally {
      client.destroy()
      await server.close()
    }
  })

  it("@google/genai models.generateContent", async () => {
    const usageMetadata = { promptTokenCount: 1020, cachedContentTokenCount: 1000, candidatesTokenCount: 10 }
    const server = await scripted(/:generateContent$/, validateGemini, (b) => has(b, "functionResponse"), {
      call: { responseId: "r1", candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "read_file", args: { path: "src/b.ts" } }, thoughtSignature: "c2ln" }] }, finishReason: "STOP" }], usageMetadata },
      text: { responseId: "r2", candidates: [{ content: { role: "model", parts: [{ text: "b returns 1." }] }, finishReason: "STOP" }], usageMetadata }
    })
    try {
      const ai = new GoogleGenAI({ apiKey: "gemini-test", httpOptions: { baseUrl: server.url } })
      const engine = engineFor("gemini-2.5-flash", GeminiPlacement({ tools: [READ_FILE] }))
      try {
        await engine.addFile("src/a.ts")
        const first = await engine.assemble({ prompt: "What does src/b.ts return? Read it." })
        await first.commit({ reply: await ai.models.generateContent(first.request) })
        const call = toolCallOf(await engine.getHistory())
        const second = await engine.assemble({ toolResults: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: "read_file", output: { type: "json", value: { text: "return 1" } } }] })
        await second.commit({ reply: await ai.models.generateContent(second.request) })
        const record = await engine.getSessionRecord()
        // Gemini reports reads but no writes: the prompt is input + reads.
        expect(record.totals).toEqual({ input: 40, cacheRead: 2000, cacheWrite: 0, output: 20 })
        expect((await engine.getHistory()).at(-1)).toEqual({ role: "assistant", content: "b returns 1." })
        // The thought signature went back on the function call it came with.
        expect(has(server.bodies()[1], "\"thoughtSignature\":\"c2ln\"")).toBe(true)
      } finally {
        await engine.dispose()
      }
    } finally {
      await server.close()
    }
  })

  it("ai generateText (ai 7, @ai-sdk/anthropic): spread the request, commit the result", async () => {
    const usage = { input_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 500, output_tokens: 10 }
    const message = { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_sequence: null }
    const server = await scripted(/\/v1\/messages$/, validateAnthropic, (b) => has(b, "tool_result"), {
      call: { ...message, content: [{ type: "tool_use", id: "toolu_09", name: "read_file", input: { path: "src/b.ts" } }], stop_reason: "tool_use", usage },
      text: { ...message, content: [{ type: "text", text: "b returns 1." }], stop_reason: "end_turn", usage }
    })
    try {
      const model = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: "sk-ant-test" })("claude-sonnet-4-5")
      await using engine = engineFor("claude-sonnet-4-5", AiSdkPlacement({ target: "anthropic", tools: [READ_FILE] }))
      await twoTurns(engine, (body) =>
        generateText({
          model,
          ...body,
          tools: { read_file: tool({ description: "Read a file of the repository.", inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }) }) },
          maxOutputTokens: 256,
          maxRetries: 0
        }))
    } finally {
      await server.close()
    }
  })
})
