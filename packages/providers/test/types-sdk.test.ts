// Type tests: every plugin's body is assignable to the official SDK's request type
// (checked by `tsc` over test/), plus runtime checks where an SDK ships a validator.
import type { MessageCreateParamsBase, MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages"
import type { ConverseCommandInput, ConverseStreamCommandInput, InvokeModelCommandInput } from "@aws-sdk/client-bedrock-runtime"
import type { CreateCachedContentParameters, GenerateContentParameters } from "@google/genai"
import { modelMessageSchema, type generateText, type ModelMessage } from "ai"
import type { ChatCompletionCreateParamsBase } from "openai/resources/chat/completions"
import type { ResponseCreateParamsBase } from "openai/resources/responses/responses"
import type { Message } from "@strata/core"
import { describe, expect, it } from "vitest"
import {
  invokeModelInput,
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeBedrockInvoke,
  placeGemini,
  placeOpenAIChat,
  placeOpenAICompatible,
  placeOpenAIResponses,
  type ToolDefinition
} from "../src/index.ts"
import { bigRequest } from "./plugins-fixtures.ts"
import { toolRequest } from "./tool-fixtures.ts"

const tools: ReadonlyArray<ToolDefinition> = [
  { name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }
]
const image = { type: "image" as const, url: "data:image/png;base64,iVBORw0KGgo=" }
const withImage = (model: string) => {
  const r = bigRequest(model)
  return { ...r, messages: [...r.messages.slice(0, -1), { role: "user" as const, content: [{ type: "text" as const, text: "see" }, image] }] }
}

describe("SDK request types", () => {
  it("anthropic: MessageCreateParams", () => {
    const r = placeAnthropic(withImage("claude-sonnet-4-5"), { tools, cacheTools: true, automatic: true, ttl: "1h" })
    const params: MessageCreateParamsBase = r.body
    const nonStreaming: MessageCreateParamsNonStreaming = { ...r.body, stream: false }
    expect(params.system).toBeDefined()
    expect(nonStreaming.stream).toBe(false)
    expect(r.body.cache_control).toEqual({ type: "ephemeral", ttl: "1h" })
  })

  it("bedrock: ConverseCommandInput, ConverseStreamCommandInput, InvokeModelCommandInput", () => {
    const converse = placeBedrockConverse(withImage("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), { tools, toolTokens: 8000, cacheTools: true, maxTokens: 512, ttl: "1h" })
    const input: ConverseCommandInput = converse.body
    const stream: ConverseStreamCommandInput = converse.body
    expect(input.modelId).toBe(stream.modelId)
    expect(converse.body.toolConfig?.tools.at(-1)).toEqual({ cachePoint: { type: "default", ttl: "1h" } })

    const invoke = placeBedrockInvoke(bigRequest("anthropic.claude-sonnet-4-5-20250929-v1:0"), { tools })
    // The InvokeModel payload is the Messages body without `model`.
    const payload: Omit<MessageCreateParamsBase, "model"> = invoke.body
    const command: InvokeModelCommandInput = invokeModelInput(invoke, "anthropic.claude-sonnet-4-5-20250929-v1:0")
    expect(payload.max_tokens).toBe(21_333)
    expect(JSON.parse(command.body as string)).toMatchObject({ anthropic_version: "bedrock-2023-05-31" })
  })

  it("openai: ChatCompletionCreateParams and ResponseCreateParams, automatic and GPT-5.6 explicit", () => {
    for (const model of ["gpt-4.1", "gpt-5.6"]) {
      const chat = placeOpenAIChat(withImage(model), { tools, promptCacheKey: "s1", maxTokens: 100 })
      const chatParams: ChatCompletionCreateParamsBase = chat.body
      const responses = placeOpenAIResponses(withImage(model), { tools, promptCacheKey: "s1", cacheMode: "explicit" })
      const responsesParams: ResponseCreateParamsBase = responses.body
      expect(chatParams.prompt_cache_key).toBe("s1")
      expect(responsesParams.prompt_cache_key).toBe("s1")
    }
  })

  it("gemini: GenerateContentParameters and CreateCachedContentParameters", () => {
    const implicit = placeGemini(withImage("gemini-2.5-flash"), { tools, maxTokens: 256 })
    const params: GenerateContentParameters = implicit.body
    const explicit = placeGemini(bigRequest("gemini-2.5-pro"), { tools, explicitCache: { name: "cachedContents/abc" } })
    const create: CreateCachedContentParameters = explicit.cache!.create
    const withCache: GenerateContentParameters = explicit.body
    expect(params.model).toBe("gemini-2.5-flash")
    expect(create.config?.ttl).toBe("3600s")
    expect(withCache.config?.cachedContent).toBe("cachedContents/abc")
  })

  it("openai-compatible: ChatCompletionCreateParams (cache_control rides along as an extra field)", () => {
    const r = placeOpenAICompatible(withImage("openrouter/anthropic/claude-sonnet-4.5"), { tools })
    const params: ChatCompletionCreateParamsBase = r.body
    expect(params.stream).toBeUndefined()
  })

  it("ai-sdk: ModelMessage[] and ProviderOptions, validated by the SDK's own schema", () => {
    for (const target of ["anthropic", "bedrock", "openai"] as const) {
      const model = target === "openai" ? "gpt-4.1" : "claude-sonnet-4-5"
      const r = placeAiSdk(withImage(model), { target, promptCacheKey: "s1" })
      const messages: Array<ModelMessage> = r.body.messages
      const options: Parameters<typeof generateText>[0]["providerOptions"] = r.body.providerOptions
      for (const m of messages) expect(modelMessageSchema.safeParse(m).success).toBe(true)
      if (target === "openai") expect(options).toEqual({ openai: { promptCacheKey: "s1" } })
      else expect(messages.some((m) => m.providerOptions?.[target] !== undefined)).toBe(true)
    }
  })
})

// A tool session with every new part: reasoning of each provider, parallel calls, text,
// JSON, error and image results. Each body must be assignable to the SDK's own parameter
// type without a cast.
const PNG = "data:image/png;base64,iVBORw0KGgo="
const toolHistory = (images: boolean): ReadonlyArray<Message> => [
  { role: "user", content: "Read a.ts and b.ts" },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Both, in parallel.", provider: "anthropic", signature: "sig" },
      { type: "reasoning", text: "", provider: "anthropic", redactedData: "cmVkYWN0ZWQ=" },
      { type: "reasoning", text: "Both files.", provider: "openai", id: "rs_1", redactedData: "enc" },
      { type: "reasoning", text: "", provider: "gemini", signature: "gsig" },
      { type: "text", text: "Reading." },
      { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a.ts" } },
      { type: "tool-call", toolCallId: "c2", toolName: "read_file", input: { path: "b.ts" } }
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: images ? { type: "content", value: [{ type: "text", text: "a" }, { type: "image", url: PNG }] } : { type: "json", value: { a: 1 } } },
      { type: "tool-result", toolCallId: "c2", toolName: "read_file", output: { type: "error-text", value: "ENOENT" } }
    ]
  },
  { role: "assistant", content: "a is 1; b is missing." }
]

describe("SDK request types with tool calls, tool results and reasoning", () => {
  it("anthropic and bedrock invoke: MessageCreateParams", () => {
    const r = placeAnthropic(toolRequest("claude-sonnet-4-5", toolHistory(true)), { automatic: true })
    const params: MessageCreateParamsBase = r.body
    const invoke: Omit<MessageCreateParamsBase, "model"> = placeBedrockInvoke(toolRequest("anthropic.claude-sonnet-4-5-20250929-v1:0", toolHistory(true))).body
    expect(JSON.stringify(params)).toContain("redacted_thinking")
    expect(invoke.messages).toHaveLength(4)
  })

  it("bedrock: ConverseCommandInput", () => {
    const input: ConverseCommandInput = placeBedrockConverse(toolRequest("us.anthropic.claude-sonnet-4-5-20250929-v1:0", toolHistory(true))).body
    expect(input.messages?.[2]?.content?.[0]?.toolResult?.toolUseId).toBe("c1")
  })

  it("openai: ChatCompletionCreateParams and ResponseCreateParams", () => {
    const chat: ChatCompletionCreateParamsBase = placeOpenAIChat(toolRequest("gpt-5.6", toolHistory(false))).body
    const responses: ResponseCreateParamsBase = placeOpenAIResponses(toolRequest("gpt-5.6", toolHistory(true))).body
    const compat: ChatCompletionCreateParamsBase = placeOpenAICompatible(toolRequest("anthropic/claude-sonnet-4.5", toolHistory(false))).body
    expect(chat.messages.some((m) => m.role === "tool")).toBe(true)
    expect(JSON.stringify(responses.input)).toContain("function_call_output")
    expect(compat.messages.some((m) => m.role === "tool")).toBe(true)
  })

  it("gemini: GenerateContentParameters", () => {
    const params: GenerateContentParameters = placeGemini(toolRequest("gemini-2.5-flash", toolHistory(true))).body
    expect(JSON.stringify(params.contents)).toContain("functionResponse")
  })

  it("ai-sdk: ModelMessage[], validated by the SDK's own schema", () => {
    for (const target of ["anthropic", "bedrock", "openai"] as const) {
      const messages: Array<ModelMessage> = placeAiSdk(toolRequest(target === "openai" ? "gpt-4.1" : "claude-sonnet-4-5", toolHistory(true)), { target }).body.messages
      for (const m of messages) expect(modelMessageSchema.safeParse(m).success).toBe(true)
      expect(messages.some((m) => m.role === "tool")).toBe(true)
    }
  })
})
