// Agent loops over the wire: each official SDK (and the AI SDK's generateText) talks to a
// scripted server on 127.0.0.1 that checks every body the way the real API does (pairing,
// order, roles, ids, results first, no marker on thinking) and answers with tool calls.
// The loop is real: SDK call -> tool calls -> our history grows -> plugin renders -> SDK call.
// Three rounds: two parallel calls with reasoning, then one call that fails, then text.
import { createAnthropic } from "@ai-sdk/anthropic"
import Anthropic from "@anthropic-ai/sdk"
import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime"
import { GoogleGenAI } from "@google/genai"
import { History, toolCalls, type AssistantPart, type Message } from "@strata/core"
import { generateText, jsonSchema, tool } from "ai"
import { Schema } from "effect"
import OpenAI from "openai"
import { afterEach, describe, expect, it } from "vitest"
import {
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeGemini,
  placeOpenAIChat,
  placeOpenAIResponses,
  type JsonSchemaObject
} from "../src/index.ts"
import { runTool, TOOLS, toolRequest } from "./tool-fixtures.ts"
import { validateAnthropic, validateChat, validateConverse, validateGemini, validateResponses } from "./wire-validators.ts"
import {
  json,
  startServer,
  type Recorded,
  type Reply,
  type TestServer
} from "./wire-server.ts"

interface Call {
  readonly id: string
  readonly name: string
  readonly input: Record<string, string>
}
interface Round {
  readonly reasoning?: string
  readonly text?: string
  readonly calls: ReadonlyArray<Call>
}

const SCRIPT: ReadonlyArray<Round> = [
  {
    reasoning: "Both files first, in parallel.",
    calls: [
      { id: "call_a", name: "read_file", input: { path: "src/a.ts" } },
      { id: "call_b", name: "read_file", input: { path: "src/b.ts" } }
    ]
  },
  { reasoning: "Now the third one.", text: "One more file.", calls: [{ id: "call_c", name: "read_file", input: { path: "src/missing.ts" } }] },
  { text: "a is 1, b is 2, and src/missing.ts does not exist.", calls: [] }
]
const PROMPT: Message = { role: "user", content: "What do src/a.ts, src/b.ts and src/missing.ts export?" }

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** How one provider is spoken to: its validator, its scripted answer, and one SDK call. */
interface Adapter {
  readonly http2?: boolean
  readonly validate: (body: unknown) => Array<string>
  readonly error: (problems: string) => unknown
  readonly answer: (round: Round, n: number, request: Recorded) => unknown
  /** Place the history, call the SDK, and return the assistant message it answered with. */
  readonly call: (url: string, history: ReadonlyArray<Message>) => Promise<Message>
}

/** Every object in a JSON value that satisfies `pick`. */
const collect = (value: unknown, pick: (o: Record<string, unknown>) => boolean): Array<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>
      if (pick(o)) out.push(o)
      Object.values(o).forEach(walk)
    }
  }
  walk(value)
  return out
}

/** Run the loop against `adapter`; returns the history and the bodies the server saw. */
const agentLoop = async (adapter: Adapter) => {
  const problems: Array<string> = []
  server = await startServer((request, n, res: Reply) => {
    const found = adapter.validate(request.json)
    if (found.length > 0) {
      problems.push(...found.map((p) => `request ${n}: ${p}`))
      return json(res, 400, adapter.error(found.join("; ")))
    }
    return json(res, 200, adapter.answer(SCRIPT[Math.min(n, SCRIPT.length - 1)]!, n, request))
  }, adapter.http2 === true ? { http2: true } : {})
  const history: Array<Message> = [PROMPT]
  for (let round = 0; round < SCRIPT.length; round++) {
    let assistant: Message
    try {
      assistant = await adapter.call(server.url, history)
    } catch (error) {
      throw new Error(`round ${round} failed: ${problems.join("\n") || String(error)}`)
    }
    history.push(assistant)
    const calls = toolCalls(assistant)
    if (calls.length === 0) break
    history.push({ role: "tool", content: calls.map(runTool) })
  }
  expect(problems).toEqual([])
  // The history the loop built is a valid Strata history (pairs, ids).
  expect(() => Schema.decodeUnknownSync(History)(history)).not.toThrow()
  expect(history.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: SCRIPT[2]!.text }] })
  return { history, bodies: server.requests.map((r) => r.json) }
}

/** Tool inputs from an SDK response (`unknown` there) decoded as the JSON objects they are. */
const jsonObject = Schema.decodeUnknownSync(Schema.JsonObject)

const textPart = (text: string | undefined): Array<AssistantPart> => (text === undefined || text.length === 0 ? [] : [{ type: "text", text }])

// ---------------------------------------------------------------------------------------

const anthropicAnswer = (round: Round, n: number) => ({
  id: `msg_${n}`,
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content: [
    ...(round.reasoning === undefined ? [] : [{ type: "thinking", thinking: round.reasoning, signature: `sig-${n}+/=` }]),
    ...(round.text === undefined ? [] : [{ type: "text", text: round.text }]),
    ...round.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input }))
  ],
  stop_reason: round.calls.length > 0 ? "tool_use" : "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
})
const anthropicError = (message: string) => ({ type: "error", error: { type: "invalid_request_error", message } })

const anthropicAdapter: Adapter = {
  validate: validateAnthropic,
  error: anthropicError,
  answer: anthropicAnswer,
  call: async (url, history) => {
    const client = new Anthropic({ baseURL: url, apiKey: "sk-ant-test", maxRetries: 0 })
    const { body } = placeAnthropic(toolRequest("claude-sonnet-4-6", history), { maxTokens: 1024 })
    const message = await client.messages.create({ ...body, stream: false })
    const content = message.content.flatMap((b): Array<AssistantPart> => {
      if (b.type === "thinking") return [{ type: "reasoning", text: b.thinking, provider: "anthropic", signature: b.signature }]
      if (b.type === "redacted_thinking") return [{ type: "reasoning", text: "", provider: "anthropic", redactedData: b.data }]
      if (b.type === "text") return textPart(b.text)
      if (b.type === "tool_use") return [{ type: "tool-call", toolCallId: b.id, toolName: b.name, input: jsonObject(b.input) }]
      return []
    })
    return { role: "assistant", content }
  }
}

/** What every Anthropic-format loop must show: results [0, 2, 3] with one error, thinking echoed byte-exact. */
const expectAnthropicBodies = (bodies: ReadonlyArray<unknown>) => {
  const results = bodies.map((b) => collect(b, (o) => o["type"] === "tool_result"))
  expect(results.map((r) => r.length)).toEqual([0, 2, 3])
  expect(results[2]!.filter((r) => r["is_error"] === true).map((r) => r["tool_use_id"])).toEqual(["call_c"])
  expect(collect(bodies[2], (o) => o["type"] === "thinking").map((o) => [o["thinking"], o["signature"]])).toEqual([
    [SCRIPT[0]!.reasoning, "sig-0+/="],
    [SCRIPT[1]!.reasoning, "sig-1+/="]
  ])
}

describe("tool loops through the official SDKs", () => {
  it("anthropic: @anthropic-ai/sdk messages.create", async () => {
    const { bodies } = await agentLoop(anthropicAdapter)
    expectAnthropicBodies(bodies)
    // The tool definitions come first; L1 ends on the second assistant turn [thinking, text,
    // tool_use]: its marker goes on the tool_use block, never on thinking.
    expect(bodies[2]).toMatchObject({ tools: [{ name: "read_file" }] })
    expect(collect(bodies[2], (o) => o["cache_control"] !== undefined).map((o) => o["type"])).toEqual(["text", "tool_use"])
  })

  it("openai: chat.completions.create with tool_calls and tool messages", async () => {
    const { bodies } = await agentLoop({
      validate: validateChat,
      error: (message) => ({ error: { message, type: "invalid_request_error", param: null, code: null } }),
      answer: (round, n) => ({
        id: `chatcmpl-${n}`,
        object: "chat.completion",
        created: 0,
        model: "gpt-5.6",
        choices: [{
          index: 0,
          finish_reason: round.calls.length > 0 ? "tool_calls" : "stop",
          logprobs: null,
          message: {
            role: "assistant",
            content: round.text ?? null,
            refusal: null,
            ...(round.calls.length > 0 ? { tool_calls: round.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } })) } : {})
          }
        }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
      }),
      call: async (url, history) => {
        const client = new OpenAI({ baseURL: url, apiKey: "sk-test", maxRetries: 0 })
        const { body } = placeOpenAIChat(toolRequest("gpt-5.6", history))
        const completion = await client.chat.completions.create({ ...body, stream: false })
        const message = completion.choices[0]!.message
        const calls = (message.tool_calls ?? []).flatMap((c): Array<AssistantPart> =>
          c.type === "function" ? [{ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: jsonObject(JSON.parse(c.function.arguments)) }] : [])
        return { role: "assistant", content: [...textPart(message.content ?? undefined), ...calls] }
      }
    })
    const tools = bodies.map((b) => collect(b, (o) => o["role"] === "tool"))
    expect(tools.map((t) => t.length)).toEqual([0, 2, 3])
    expect(JSON.stringify(tools[2]![2])).toContain("ENOENT")
    // GPT-5.6 takes explicit breakpoints, none on assistant output: L1 ends on the second
    // assistant turn, so its marker moves back to the last result before it (call_b).
    expect(collect(bodies[2], (o) => o["prompt_cache_breakpoint"] !== undefined)).toHaveLength(2)
    expect(tools[2]![1]).toMatchObject({ tool_call_id: "call_b", content: [{ type: "text", prompt_cache_breakpoint: { mode: "explicit" } }] })
  })

  it("openai: responses.create with function_call, function_call_output and reasoning items", async () => {
    const { bodies } = await agentLoop({
      validate: validateResponses,
      error: (message) => ({ error: { message, type: "invalid_request_error", param: null, code: null } }),
      answer: (round, n) => ({
        id: `resp_${n}`,
        object: "response",
        created_at: 0,
        model: "gpt-5.6",
        status: "completed",
        output: [
          ...(round.reasoning === undefined ? [] : [{ type: "reasoning", id: `rs_${n}`, summary: [{ type: "summary_text", text: round.reasoning }], encrypted_content: `enc-${n}` }]),
          ...(round.text === undefined ? [] : [{ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: round.text, annotations: [] }] }]),
          ...round.calls.map((c) => ({ type: "function_call", id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.input), status: "completed" }))
        ],
        parallel_tool_calls: true,
        tools: [],
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }
      }),
      call: async (url, history) => {
        const client = new OpenAI({ baseURL: url, apiKey: "sk-test", maxRetries: 0 })
        const { body } = placeOpenAIResponses(toolRequest("gpt-5.6", history))
        const response = await client.responses.create({ ...body, stream: false })
        const content = response.output.flatMap((item): Array<AssistantPart> => {
          if (item.type === "reasoning") {
            const text = item.summary.map((s) => s.text).join("\n\n")
            return [{ type: "reasoning", text, provider: "openai", id: item.id, ...(item.encrypted_content == null ? {} : { redactedData: item.encrypted_content }) }]
          }
          if (item.type === "message") return item.content.flatMap((c) => (c.type === "output_text" ? textPart(c.text) : []))
          if (item.type === "function_call") return [{ type: "tool-call", toolCallId: item.call_id, toolName: item.name, input: jsonObject(JSON.parse(item.arguments)) }]
          return []
        })
        return { role: "assistant", content }
      }
    })
    const outputs = bodies.map((b) => collect(b, (o) => o["type"] === "function_call_output"))
    expect(outputs.map((o) => o.length)).toEqual([0, 2, 3])
    expect(JSON.stringify(outputs[2]![2])).toContain("ENOENT")
    expect(collect(bodies[2], (o) => o["type"] === "reasoning").map((o) => [o["id"], o["encrypted_content"]])).toEqual([["rs_0", "enc-0"], ["rs_1", "enc-1"]])
  })

  it("bedrock: ConverseCommand with toolUse, toolResult and reasoningContent", async () => {
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    const { bodies } = await agentLoop({
      http2: true,
      validate: validateConverse,
      error: (message) => ({ message }),
      answer: (round) => ({
        output: {
          message: {
            role: "assistant",
            content: [
              ...(round.reasoning === undefined ? [] : [{ reasoningContent: { reasoningText: { text: round.reasoning, signature: "bsig==" } } }]),
              ...(round.text === undefined ? [] : [{ text: round.text }]),
              ...round.calls.map((c) => ({ toolUse: { toolUseId: c.id, name: c.name, input: c.input } }))
            ]
          }
        },
        stopReason: round.calls.length > 0 ? "tool_use" : "end_turn",
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        metrics: { latencyMs: 1 }
      }),
      call: async (url, history) => {
        const client = new BedrockRuntimeClient({ region: "us-west-2", endpoint: url, maxAttempts: 1, credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" } })
        const { body } = placeBedrockConverse(toolRequest(model, history), { maxTokens: 1024 })
        const response = await client.send(new ConverseCommand(body))
        client.destroy()
        const content = (response.output?.message?.content ?? []).flatMap((b): Array<AssistantPart> => {
          if (b.reasoningContent?.reasoningText !== undefined) {
            return [{ type: "reasoning", text: b.reasoningContent.reasoningText.text ?? "", provider: "anthropic", signature: b.reasoningContent.reasoningText.signature ?? "" }]
          }
          if (b.text !== undefined) return textPart(b.text)
          if (b.toolUse !== undefined) return [{ type: "tool-call", toolCallId: b.toolUse.toolUseId ?? "", toolName: b.toolUse.name ?? "", input: jsonObject(b.toolUse.input) }]
          return []
        })
        return { role: "assistant", content }
      }
    })
    const results = bodies.map((b) => collect(b, (o) => o["toolResult"] !== undefined))
    expect(results.map((r) => r.length)).toEqual([0, 2, 3])
    expect(collect(bodies[2], (o) => o["status"] === "error")).toHaveLength(1)
    expect(collect(bodies[2], (o) => o["reasoningText"] !== undefined).map((o) => o["reasoningText"])).toEqual([
      { text: SCRIPT[0]!.reasoning, signature: "bsig==" },
      { text: SCRIPT[1]!.reasoning, signature: "bsig==" }
    ])
  })

  it("gemini: models.generateContent with functionCall, functionResponse and thought signatures", async () => {
    const model = "gemini-2.5-flash"
    const { bodies } = await agentLoop({
      validate: validateGemini,
      error: (message) => ({ error: { code: 400, message, status: "INVALID_ARGUMENT" } }),
      answer: (round, n) => ({
        candidates: [{
          content: {
            role: "model",
            parts: [
              ...(round.reasoning === undefined ? [] : [{ text: round.reasoning, thought: true }]),
              ...(round.text === undefined ? [] : [{ text: round.text }]),
              ...round.calls.map((c, k) => ({ functionCall: { id: c.id, name: c.name, args: c.input }, ...(k === 0 ? { thoughtSignature: `gsig-${n}` } : {}) }))
            ]
          },
          finishReason: "STOP",
          index: 0
        }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: model
      }),
      call: async (url, history) => {
        const ai = new GoogleGenAI({ apiKey: "gemini-test", httpOptions: { baseUrl: url } })
        const { body } = placeGemini(toolRequest(model, history))
        const response = await ai.models.generateContent(body)
        const content = (response.candidates?.[0]?.content?.parts ?? []).flatMap((p): Array<AssistantPart> => {
          const signature: Array<AssistantPart> = p.thoughtSignature === undefined || p.thought === true ? [] : [{ type: "reasoning", text: "", provider: "gemini", signature: p.thoughtSignature }]
          if (p.thought === true) return [{ type: "reasoning", text: p.text ?? "", provider: "gemini", ...(p.thoughtSignature === undefined ? {} : { signature: p.thoughtSignature }) }]
          if (p.functionCall !== undefined) {
            return [...signature, { type: "tool-call", toolCallId: p.functionCall.id ?? "", toolName: p.functionCall.name ?? "", input: jsonObject(p.functionCall.args ?? {}) }]
          }
          return p.text === undefined ? [] : [...signature, ...textPart(p.text)]
        })
        return { role: "assistant", content }
      }
    })
    const responses = bodies.map((b) => collect(b, (o) => o["functionResponse"] !== undefined))
    expect(responses.map((r) => r.length)).toEqual([0, 2, 3])
    expect(collect(bodies[2], (o) => isErrorResponse(o))).toHaveLength(1)
    // The signature goes back on the part it came with: the first call of each round.
    expect(collect(bodies[2], (o) => o["thoughtSignature"] !== undefined).map((o) => [(o["functionCall"] as { id: string }).id, o["thoughtSignature"]])).toEqual([
      ["call_a", "gsig-0"],
      ["call_c", "gsig-1"]
    ])
  })

  it("ai-sdk: generateText through @ai-sdk/anthropic", async () => {
    const schema: JsonSchemaObject = TOOLS[0]!.inputSchema
    const { bodies } = await agentLoop({
      validate: validateAnthropic,
      error: anthropicError,
      answer: anthropicAnswer,
      call: async (url, history) => {
        const provider = createAnthropic({ baseURL: url, apiKey: "sk-ant-test" })
        const { body } = placeAiSdk(toolRequest("claude-sonnet-4-5", history), { target: "anthropic" })
        const result = await generateText({
          model: provider("claude-sonnet-4-5"),
          tools: { read_file: tool({ description: TOOLS[0]!.description ?? "", inputSchema: jsonSchema<{ path: string }>({ ...schema }) }) },
          maxRetries: 0,
          allowSystemInMessages: true,
          ...body
        })
        const content = result.content.flatMap((p): Array<AssistantPart> => {
          if (p.type === "reasoning") {
            const meta = p.providerMetadata?.["anthropic"]
            const signature = meta?.["signature"]
            return typeof signature === "string" ? [{ type: "reasoning", text: p.text, provider: "anthropic", signature }] : []
          }
          if (p.type === "text") return textPart(p.text)
          if (p.type === "tool-call") return [{ type: "tool-call", toolCallId: p.toolCallId, toolName: p.toolName, input: jsonObject(p.input) }]
          return []
        })
        return { role: "assistant", content }
      }
    })
    expectAnthropicBodies(bodies)
  })
})

const isErrorResponse = (o: Record<string, unknown>): boolean => collect(o["functionResponse"], (r) => typeof r["response"] === "object" && r["response"] !== null && "error" in r["response"]).length > 0
