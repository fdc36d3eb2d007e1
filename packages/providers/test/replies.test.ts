// Provider replies decode into core messages that the same provider's plugin renders
// back as the provider gave them: text, tool calls, and reasoning with its signature or
// encrypted data byte-exact. A malformed reply is an error that names the shape expected.
import { Schema } from "effect"
import { History, type Message, type NeutralRequest } from "@strata/core"
import { describe, expect, it } from "vitest"
import {
  AiSdkPlacement,
  AnthropicPlacement,
  BedrockPlacement,
  decodeAiSdkReply,
  decodeAiSdkResultUsage,
  decodeAiSdkUsage,
  decodeAnthropicReply,
  decodeBedrockConverseReply,
  decodeGeminiReply,
  decodeOpenAIChatReply,
  decodeOpenAIResponsesReply,
  GeminiPlacement,
  OpenAIPlacement,
  OpenAIResponsesPlacement
} from "../src/index.ts"

/** A request whose history ends with `reply`, answered by a tool message when it calls tools. */
const requestWith = (model: string, reply: ReadonlyArray<Message>): NeutralRequest => {
  const last = reply.at(-1)
  const calls = last?.role === "assistant" && typeof last.content !== "string" ? last.content.filter((p) => p.type === "tool-call") : []
  const messages: Array<Message> = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Read a.ts" },
    ...reply,
    calls.length === 0
      ? { role: "user", content: "Thanks." }
      : { role: "tool", content: calls.map((c) => ({ type: "tool-result" as const, toolCallId: c.toolCallId, toolName: c.toolName, output: { type: "text" as const, value: "export const a = 1" } })) }
  ]
  Schema.decodeUnknownSync(History)(messages)
  return { model, blocks: [{ tier: "active", messages, items: [], tokens: 10 }], messages, breakpoints: [] }
}

describe("reply decoders", () => {
  it("Anthropic: text, tool_use and thinking with its signature render back byte-exact", () => {
    const content = [
      { type: "thinking", thinking: "The file is small.", signature: "EqQBCkgIARABGAIiQL" },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDF" },
      { type: "text", text: "Reading it." },
      { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "a.ts" } }
    ]
    const decoded = decodeAnthropicReply({ id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content, stop_reason: "tool_use", usage: { input_tokens: 12, cache_read_input_tokens: 4000, cache_creation_input_tokens: 100, output_tokens: 40 } })
    expect(decoded.usage).toEqual({ input: 12, cacheRead: 4000, cacheWrite: 100, output: 40 })
    const body = AnthropicPlacement.place(requestWith("claude-sonnet-4-5", decoded.messages)).body
    expect(body.messages[1]).toEqual({ role: "assistant", content })
  })

  it("OpenAI Chat: text and tool calls; arguments that are not an object are kept", () => {
    const decoded = decodeOpenAIChatReply({
      id: "c1", object: "chat.completion", choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: "Let me look.", refusal: null, tool_calls: [
        { id: "call_1", type: "function", function: { name: "read_file", arguments: "{\"path\":\"a.ts\"}" } },
        { id: "call_2", type: "function", function: { name: "ls", arguments: "not json" } }
      ] } }],
      usage: { prompt_tokens: 5000, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 4096 } }
    })
    expect(decoded.messages).toEqual([{ role: "assistant", content: [
      { type: "text", text: "Let me look." },
      { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "a.ts" } },
      { type: "tool-call", toolCallId: "call_2", toolName: "ls", input: { arguments: "not json" } }
    ] }])
    expect(decoded.usage).toEqual({ input: 904, cacheRead: 4096, cacheWrite: 0, output: 9 })
    const body = OpenAIPlacement.place(requestWith("gpt-4.1", decoded.messages)).body
    expect(body.messages[2]).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Let me look." }], tool_calls: [{ id: "call_1", function: { name: "read_file", arguments: "{\"path\":\"a.ts\"}" } }, { id: "call_2" }] })
  })

  it("OpenAI Responses: message text, function calls and reasoning items with encrypted content", () => {
    const decoded = decodeOpenAIResponsesReply({
      id: "resp_1", object: "response", status: "completed",
      output: [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need the file." }], encrypted_content: "gAAAAB" },
        { type: "function_call", id: "fc_1", call_id: "call_9", name: "read_file", arguments: "{\"path\":\"a.ts\"}", status: "completed" }
      ],
      usage: { input_tokens: 300, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20 }
    })
    expect(decoded.messages).toEqual([{ role: "assistant", content: [
      { type: "reasoning", text: "Need the file.", provider: "openai", id: "rs_1", redactedData: "gAAAAB" },
      { type: "tool-call", toolCallId: "call_9", toolName: "read_file", input: { path: "a.ts" } }
    ] }])
    const body = OpenAIResponsesPlacement.place(requestWith("gpt-5.6", decoded.messages)).body
    expect(body.input).toContainEqual({ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need the file." }], encrypted_content: "gAAAAB" })
    expect(body.input).toContainEqual({ type: "function_call", call_id: "call_9", name: "read_file", arguments: "{\"path\":\"a.ts\"}" })
  })

  it("Bedrock Converse: reasoning (bytes or base64), tool use, usage", () => {
    const bytes = new Uint8Array([1, 2, 3, 250])
    const decoded = decodeBedrockConverseReply({
      output: { message: { role: "assistant", content: [
        { reasoningContent: { reasoningText: { text: "Small file.", signature: "sig-1" } } },
        { reasoningContent: { redactedContent: bytes } },
        { toolUse: { toolUseId: "tu_1", name: "read_file", input: { path: "a.ts" } } }
      ] } },
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 2000, cacheWriteInputTokens: 0 }
    })
    expect(decoded.usage).toEqual({ input: 10, cacheRead: 2000, cacheWrite: 0, output: 5 })
    const body = BedrockPlacement.place(requestWith("us.anthropic.claude-sonnet-4-5-20250929-v1:0", decoded.messages)).body
    expect(body.messages[1]).toEqual({ role: "assistant", content: [
      { reasoningContent: { reasoningText: { text: "Small file.", signature: "sig-1" } } },
      { reasoningContent: { redactedContent: bytes } },
      { toolUse: { toolUseId: "tu_1", name: "read_file", input: { path: "a.ts" } } }
    ] })
  })

  it("Gemini: thoughts, a signature on a function call goes back on it, calls without ids get unique ones", () => {
    const decoded = decodeGeminiReply({
      responseId: "r-1",
      candidates: [{ content: { role: "model", parts: [
        { text: "Thinking about a.ts", thought: true },
        { functionCall: { name: "read_file", args: { path: "a.ts" } }, thoughtSignature: "c2lnbmF0dXJl" },
        { functionCall: { name: "read_file", args: { path: "b.ts" } } }
      ] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 7 }
    })
    expect(decoded.usage).toEqual({ input: 40, cacheRead: 60, cacheWrite: 0, output: 7 })
    const calls = decoded.messages.flatMap((m) => (m.role === "assistant" && typeof m.content !== "string" ? m.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId) : []))
    expect(calls).toEqual(["r-1-1", "r-1-2"])
    const body = GeminiPlacement.place(requestWith("gemini-2.5-flash", decoded.messages)).body
    expect(body.contents[1]).toEqual({ role: "model", parts: [
      { text: "Thinking about a.ts", thought: true },
      { functionCall: { id: "r-1-1", name: "read_file", args: { path: "a.ts" } }, thoughtSignature: "c2lnbmF0dXJl" },
      { functionCall: { id: "r-1-2", name: "read_file", args: { path: "b.ts" } } }
    ] })
  })

  it("AI SDK: response.messages (tool steps included), reasoning provider data, total usage with metadata", () => {
    const decoded = decodeAiSdkReply({
      text: "a is 1.",
      response: { messages: [
        { role: "assistant", content: [
          { type: "reasoning", text: "Check the file.", providerOptions: { anthropic: { signature: "sig-9" } } },
          { type: "tool-call", toolCallId: "t1", toolName: "read_file", input: { path: "a.ts" } }
        ] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "t1", toolName: "read_file", output: { type: "text", value: "export const a = 1" } }] },
        { role: "assistant", content: [{ type: "text", text: "a is 1." }] }
      ] },
      usage: { inputTokens: 10, inputTokenDetails: { noCacheTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }, outputTokens: 3 },
      totalUsage: { inputTokens: 9000, inputTokenDetails: { noCacheTokens: 200, cacheReadTokens: 8000, cacheWriteTokens: 800 }, outputTokens: 40 },
      providerMetadata: { anthropic: { cacheCreationInputTokens: 0 } }
    })
    expect(decoded.messages).toEqual([
      { role: "assistant", content: [
        { type: "reasoning", text: "Check the file.", provider: "anthropic", signature: "sig-9" },
        { type: "tool-call", toolCallId: "t1", toolName: "read_file", input: { path: "a.ts" } }
      ] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "t1", toolName: "read_file", output: { type: "text", value: "export const a = 1" } }] },
      { role: "assistant", content: "a is 1." }
    ])
    expect(decoded.usage).toEqual({ input: 200, cacheRead: 8000, cacheWrite: 800, output: 40 })
    const body = AiSdkPlacement({ target: "anthropic" }).place(requestWith("claude-sonnet-4-5", decoded.messages)).body
    expect(body.messages[1]).toEqual({ role: "assistant", content: [
      { type: "reasoning", text: "Check the file.", providerOptions: { anthropic: { signature: "sig-9" } } },
      { type: "tool-call", toolCallId: "t1", toolName: "read_file", input: { path: "a.ts" } }
    ] })
    // A plain `{ text }` (a streamText whose response was not awaited) is one text message.
    expect(decodeAiSdkReply({ text: "hi" }).messages).toEqual([{ role: "assistant", content: "hi" }])
  })

  it("AI SDK usage: ai 6/7 flat usage with details, ai 5 flat, and cache writes from provider metadata", () => {
    expect(decodeAiSdkUsage({ inputTokens: 5000, inputTokenDetails: { noCacheTokens: 200, cacheReadTokens: 4000, cacheWriteTokens: 800 }, outputTokens: 9 })).toEqual({ input: 200, cacheRead: 4000, cacheWrite: 800, output: 9 })
    expect(decodeAiSdkUsage({ inputTokens: 5000, inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: 4000, cacheWriteTokens: undefined }, outputTokens: 9 })).toEqual({ input: 1000, cacheRead: 4000, cacheWrite: 0, output: 9 })
    expect(decodeAiSdkResultUsage({ inputTokens: 5000, cachedInputTokens: 4000, outputTokens: 9 }, { anthropic: { cacheCreationInputTokens: 800 } })).toEqual({ input: 200, cacheRead: 4000, cacheWrite: 800, output: 9 })
    expect(decodeAiSdkResultUsage({ inputTokens: 5000, cachedInputTokens: 4000, outputTokens: 9 }, { bedrock: { usage: { cacheWriteInputTokens: 100 } } })).toMatchObject({ cacheWrite: 100, input: 900 })
  })

  it("a reply of another provider fails, naming what was expected", () => {
    expect(() => decodeAnthropicReply({ choices: [] })).toThrow(/not an Anthropic message/)
    expect(() => decodeOpenAIChatReply({ choices: [] })).toThrow(/not a Chat Completions response/)
    expect(() => decodeGeminiReply({ content: [] })).toThrow(/not a generateContent response/)
    expect(() => AnthropicPlacement.decodeReply({ output: [] })).toThrow(/not an Anthropic message/)
  })
})

describe("plugin values", () => {
  it("are callable with options, merged over the ones they have, and keep their functions", () => {
    const hour = AnthropicPlacement({ ttl: "1h" })
    const both = hour({ maxTokens: 100 })
    expect(both.options).toEqual({ ttl: "1h", maxTokens: 100 })
    expect(both.provider).toBe("anthropic")
    const request = requestWith("claude-sonnet-4-5", [{ role: "assistant", content: "ok" }])
    expect(both.place(request).body.max_tokens).toBe(100)
    expect(both.place(request, { maxTokens: 7 }).body.max_tokens).toBe(7)
    expect(AnthropicPlacement.options).toEqual({})
    expect(OpenAIPlacement.responses).toBe(OpenAIResponsesPlacement)
    expect(OpenAIPlacement.placeResponses(request).body.input).toBeDefined()
  })
})
