// Tool calls, tool results and reasoning in each plugin's own terms: where markers go when
// a message ends in reasoning, the lookback warning for long tool runs, which reasoning each
// provider takes back (byte-exact), request tools, and the simulators and usage decoders on
// bodies with tool blocks.
import type { AssistantPart, Message, NeutralRequest, ToolDefinition } from "@strata/core"
import { describe, expect, it } from "vitest"
import {
  makeSimulator,
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeGemini,
  placeOpenAIChat,
  placeOpenAIResponses,
  planBreakpoints,
  lookupModel,
  usageFromStream,
  decodeAnthropicUsage,
  type AnthropicBody
} from "../src/index.ts"
import { TOOLS, toolRequest } from "./tool-fixtures.ts"

const CLAUDE = "claude-sonnet-4-5"
const THINKING: AssistantPart = { type: "reasoning", text: "  Plan: read a.ts.\n\tThen b.ts — ünïcödé ", provider: "anthropic", signature: "EqQBCkgIARAB/+=" }

const call = (id: string, path = `src/${id}.ts`): AssistantPart => ({ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path } })
const results = (...ids: ReadonlyArray<string>): Message => ({
  role: "tool",
  content: ids.map((id) => ({ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: `content of ${id}` } }))
})

/** A history whose second assistant turn ends on reasoning (a Gemini-style trailing signature and an Anthropic thought). */
const endsOnThinking: ReadonlyArray<Message> = [
  { role: "user", content: "Read a.ts" },
  { role: "assistant", content: [call("c1")] },
  results("c1"),
  { role: "assistant", content: [{ type: "text", text: "Done reading." }, THINKING] },
  { role: "user", content: "And now?" }
]

describe("breakpoints and thinking blocks", () => {
  it("a marker on a message that ends in thinking moves to the last block before it, and says so", () => {
    // Request messages: 0 system, 1 user, 2 assistant, 3 tool, 4 assistant [text, thinking], 5 user.
    const r = placeAnthropic(toolRequest(CLAUDE, endsOnThinking, { breakpoints: [0, 4] }))
    const turn = r.body.messages[3]!
    expect(turn.content.map((b) => b.type)).toEqual(["text", "thinking"])
    expect(turn.content[0]).toMatchObject({ cache_control: { type: "ephemeral" } })
    expect(turn.content[1]).toEqual({ type: "thinking", thinking: THINKING.type === "reasoning" ? THINKING.text : "", signature: "EqQBCkgIARAB/+=" })
    expect(r.breakpoints.find((b) => b.tier === "L1")?.location).toBe("messages[3].content[0]")
    expect(r.notes).toContain("L1 breakpoint moved to part 0 of message 4: a breakpoint may not sit on a thinking block")
  })

  it("a message that is only thinking passes its marker back to the message before, or drops it", () => {
    const history: ReadonlyArray<Message> = [
      { role: "user", content: "Think first" },
      { role: "assistant", content: [THINKING] },
      { role: "user", content: "Go on" }
    ]
    const moved = placeAnthropic(toolRequest(CLAUDE, history, { breakpoints: [0, 2] }))
    expect(moved.notes.some((n) => n.startsWith("L1 breakpoint moved from message 2 to 1: message 2 holds only reasoning"))).toBe(true)
    expect(moved.body.messages[0]!.content.at(-1)).toMatchObject({ cache_control: { type: "ephemeral" } })
    const dropped = placeAnthropic(toolRequest(CLAUDE, history, { breakpoints: [0, 1, 2] }))
    expect(dropped.dropped).toContainEqual({ tier: "L2", reason: "its block (messages 2..2) has no non-empty message" })
    // Bedrock Converse: the checkpoint follows the text, never the reasoning block.
    const bedrock = placeBedrockConverse(toolRequest("us.anthropic.claude-sonnet-4-5-20250929-v1:0", endsOnThinking, { breakpoints: [0, 4] }))
    expect(bedrock.body.messages[3]!.content.map((b) => Object.keys(b)[0])).toEqual(["text", "cachePoint", "reasoningContent"])
    // The AI SDK: the marker leaves the message level (it would land on the reasoning part) for the text part.
    const ai = placeAiSdk(toolRequest(CLAUDE, endsOnThinking, { breakpoints: [0, 4] }), { target: "anthropic" })
    const aiTurn = ai.body.messages[3]!
    expect(aiTurn.providerOptions).toBeUndefined()
    expect(aiTurn.role === "assistant" && aiTurn.content[0]!.providerOptions).toEqual({ anthropic: { cacheControl: { type: "ephemeral" } } })
  })

  it("tool_use, tool_result and thinking blocks count toward the 20-block lookback", () => {
    const history: Array<Message> = [{ role: "user", content: "Read everything" }]
    for (let i = 0; i < 6; i++) {
      const ids = [`a${i}`, `b${i}`]
      history.push({ role: "assistant", content: [THINKING, ...ids.map((id) => call(id))] }, results(...ids))
    }
    const plan = planBreakpoints(toolRequest(CLAUDE, history, { breakpoints: [0, history.length] }), { limits: lookupModel("anthropic", CLAUDE), reasoning: () => true })
    // 1 prompt + 6 rounds of (thinking + 2 tool_use) + 2 tool_result = 31 blocks after the system breakpoint.
    expect(plan.notes.find((n) => n.includes("looks back"))).toBe(
      "L1 breakpoint is 31 content blocks after the L0 breakpoint (tool_use, tool_result and thinking blocks count); Claude Sonnet 4.5 looks back 20 blocks from a breakpoint, so a cache entry written more than 20 blocks before it is not found"
    )
    const short = planBreakpoints(toolRequest(CLAUDE, history.slice(0, 3), { breakpoints: [0, 3] }), { limits: lookupModel("anthropic", CLAUDE) })
    expect(short.notes.some((n) => n.includes("looks back"))).toBe(false)
  })
})

describe("reasoning goes back only to the provider that made it", () => {
  const mixed: ReadonlyArray<Message> = [
    { role: "user", content: "Read a.ts" },
    {
      role: "assistant",
      content: [
        THINKING,
        { type: "reasoning", text: "", provider: "anthropic", redactedData: "UmVkYWN0ZWQ=" },
        { type: "reasoning", text: "summary", provider: "openai", id: "rs_1", redactedData: "enc" },
        { type: "reasoning", text: "", provider: "gemini", signature: "gsig" },
        call("c1")
      ]
    },
    results("c1")
  ]

  it("anthropic keeps its thinking byte-exact and leaves out the rest, with a note", () => {
    const r = placeAnthropic(toolRequest(CLAUDE, mixed, { breakpoints: [0] }))
    expect(r.body.messages[1]!.content).toEqual([
      { type: "thinking", thinking: "  Plan: read a.ts.\n\tThen b.ts — ünïcödé ", signature: "EqQBCkgIARAB/+=" },
      { type: "redacted_thinking", data: "UmVkYWN0ZWQ=" },
      { type: "tool_use", id: "c1", name: "read_file", input: { path: "src/c1.ts" } }
    ])
    expect(r.notes).toContain("2 reasoning parts left out: the Anthropic API takes back only Anthropic thinking blocks with their signature (or redacted data)")
  })

  it("openai chat takes none, responses its own items, gemini its signature on the next part", () => {
    const chat = placeOpenAIChat(toolRequest("gpt-4.1", mixed, { breakpoints: [0] }))
    expect(JSON.stringify(chat.body)).not.toMatch(/reasoning|summary|sig/)
    expect(chat.notes[0]).toBe("4 reasoning parts left out: Chat Completions takes no reasoning back")
    const responses = placeOpenAIResponses(toolRequest("gpt-4.1", mixed, { breakpoints: [0] }))
    expect(responses.body.input.slice(2, 4)).toEqual([
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "summary" }], encrypted_content: "enc" },
      { type: "function_call", call_id: "c1", name: "read_file", arguments: "{\"path\":\"src/c1.ts\"}" }
    ])
    const gemini = placeGemini(toolRequest("gemini-2.5-flash", mixed, { breakpoints: [0] }))
    expect(gemini.body.contents[1]).toEqual({ role: "model", parts: [{ functionCall: { id: "c1", name: "read_file", args: { path: "src/c1.ts" } }, thoughtSignature: "gsig" }] })
  })
})

describe("tool messages in each API's shape", () => {
  const history: ReadonlyArray<Message> = [
    { role: "user", content: "Read a.ts and b.ts" },
    { role: "assistant", content: [{ type: "text", text: "Reading both." }, call("c1"), call("c2")] },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "json", value: { a: 1 } } },
        { type: "tool-result", toolCallId: "c2", toolName: "read_file", output: { type: "error-json", value: { code: "ENOENT" } } }
      ]
    },
    { role: "user", content: "Summarize" }
  ]

  it("anthropic: results first in the merged user turn, is_error on failures", () => {
    const body: AnthropicBody = placeAnthropic(toolRequest(CLAUDE, history, { breakpoints: [0] })).body
    expect(body.messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c1", content: "{\"a\":1}" },
        { type: "tool_result", tool_use_id: "c2", content: "{\"code\":\"ENOENT\"}", is_error: true },
        { type: "text", text: "Summarize" }
      ]
    })
  })

  it("bedrock: toolResult json and status error; openai: one tool message per result", () => {
    const converse = placeBedrockConverse(toolRequest("us.anthropic.claude-sonnet-4-5-20250929-v1:0", history, { breakpoints: [0] })).body
    expect(converse.messages[2]!.content.slice(0, 2)).toEqual([
      { toolResult: { toolUseId: "c1", content: [{ json: { a: 1 } }] } },
      { toolResult: { toolUseId: "c2", content: [{ json: { code: "ENOENT" } }], status: "error" } }
    ])
    const chat = placeOpenAIChat(toolRequest("gpt-4.1", history, { breakpoints: [0] })).body
    expect(chat.messages.slice(2, 5)).toEqual([
      { role: "assistant", content: [{ type: "text", text: "Reading both." }], tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: "{\"path\":\"src/c1.ts\"}" } }, { id: "c2", type: "function", function: { name: "read_file", arguments: "{\"path\":\"src/c2.ts\"}" } }] },
      { role: "tool", tool_call_id: "c1", content: "{\"a\":1}" },
      { role: "tool", tool_call_id: "c2", content: "{\"code\":\"ENOENT\"}" }
    ])
    const gemini = placeGemini(toolRequest("gemini-2.5-flash", history, { breakpoints: [0] })).body
    expect(gemini.contents[2]!.parts.slice(0, 2)).toEqual([
      { functionResponse: { id: "c1", name: "read_file", response: { output: { a: 1 } } } },
      { functionResponse: { id: "c2", name: "read_file", response: { error: { code: "ENOENT" } } } }
    ])
  })

  it("the request's tools render first; the plugin option is the fallback", () => {
    const other: ReadonlyArray<ToolDefinition> = [{ name: "grep", inputSchema: { type: "object" } }]
    const withTools = placeAnthropic(toolRequest(CLAUDE, history, { breakpoints: [0] }), { tools: other }).body
    expect(withTools.tools?.map((t) => t.name)).toEqual(["read_file"])
    const { tools: _, ...bare } = toolRequest(CLAUDE, history, { breakpoints: [0] })
    const request: NeutralRequest = bare
    expect(placeAnthropic(request, { tools: other }).body.tools?.map((t) => t.name)).toEqual(["grep"])
    expect(placeGemini(toolRequest("gemini-2.5-flash", history)).body.config?.tools).toEqual([
      { functionDeclarations: [{ name: "read_file", description: TOOLS[0]!.description, parametersJsonSchema: TOOLS[0]!.inputSchema }] }
    ])
  })
})

describe("simulators and usage on bodies with tool blocks", () => {
  /** A tool session two requests long: the second adds a round after the first's breakpoint. */
  const session = (rounds: number): ReadonlyArray<Message> => {
    const h: Array<Message> = [{ role: "user", content: "Read the files" }]
    for (let i = 0; i < rounds; i++) {
      h.push({ role: "assistant", content: [THINKING, call(`c${i}`)] }, {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "read_file", output: { type: "text", value: `file ${i} `.repeat(400) } }]
      })
    }
    return h
  }

  it("anthropic: tool_use, tool_result and thinking tokens count, and the prefix is read back", () => {
    const sim = makeSimulator("anthropic", { model: CLAUDE })
    const first = sim.send(placeAnthropic(toolRequest(CLAUDE, session(2))).body, 0)
    const withoutTools = makeSimulator("anthropic", { model: CLAUDE }).send(placeAnthropic(toolRequest(CLAUDE, session(0))).body, 0)
    // Two results of 2,800 chars (700 tokens at chars/4), plus the calls and the thinking.
    expect(first.trace.promptTokens - withoutTools.trace.promptTokens).toBeGreaterThan(2 * 700 + 20)
    const second = sim.send(placeAnthropic(toolRequest(CLAUDE, session(3))).body, 10)
    // Everything through the first request's last breakpoint is read; the new round is written.
    expect(second.usage.cacheRead).toBe(first.usage.cacheWrite + first.usage.cacheRead)
    expect(second.usage.cacheWrite).toBeGreaterThan(0)
  })

  it("bedrock, openai and gemini simulators take the plugins' tool bodies", () => {
    const bedrockModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    const bedrock = makeSimulator("bedrock", { model: bedrockModel })
    bedrock.send(placeBedrockConverse(toolRequest(bedrockModel, session(2))).body, 0)
    expect(bedrock.send(placeBedrockConverse(toolRequest(bedrockModel, session(3))).body, 10).usage.cacheRead).toBeGreaterThan(4000)
    const openai = makeSimulator("openai", { model: "gpt-5.6" })
    const explicit = (h: ReadonlyArray<Message>) => placeOpenAIResponses(toolRequest("gpt-5.6", h), { cacheMode: "explicit" }).body
    const r1 = openai.send(explicit(session(2)), 0)
    // The explicit marker on the function_call_output part is a write the simulator sees.
    expect(r1.trace.writes.length).toBe(2)
    expect(openai.send(explicit(session(3)), 10).usage.cacheRead).toBeGreaterThan(4000)
    const gemini = makeSimulator("gemini", { model: "gemini-2.5-flash" })
    gemini.send(placeGemini(toolRequest("gemini-2.5-flash", session(2))).body, 0)
    expect(gemini.send(placeGemini(toolRequest("gemini-2.5-flash", session(3))).body, 10).usage.cacheRead).toBeGreaterThan(4000)
  })

  it("usage decoding ignores tool events in a stream and reads tool-use responses", () => {
    const events = [
      { type: "message_start", message: { usage: { input_tokens: 12, cache_read_input_tokens: 4096, cache_creation_input_tokens: 0, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "c1", name: "read_file", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"usage\": 1}" } },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 57 } }
    ]
    expect(usageFromStream("anthropic", events)).toEqual({ input: 12, cacheRead: 4096, cacheWrite: 0, output: 57 })
    expect(usageFromStream("openai-chat", [
      { choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "read_file", arguments: "{}" } }] } }], usage: null },
      { choices: [], usage: { prompt_tokens: 2048, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 1920 } } }
    ])).toEqual({ input: 128, cacheRead: 1920, cacheWrite: 0, output: 9 })
    expect(usageFromStream("bedrock", [
      { contentBlockStart: { start: { toolUse: { toolUseId: "c1", name: "read_file" } }, contentBlockIndex: 0 } },
      { contentBlockDelta: { delta: { toolUse: { input: "{}" } }, contentBlockIndex: 0 } },
      { metadata: { usage: { inputTokens: 5, outputTokens: 7, cacheReadInputTokens: 3000, cacheWriteInputTokens: 0 } } }
    ])).toEqual({ input: 5, cacheRead: 3000, cacheWrite: 0, output: 7 })
    expect(decodeAnthropicUsage({ input_tokens: 3, output_tokens: 40, cache_read_input_tokens: 900, cache_creation_input_tokens: 0 })).toEqual({ input: 3, cacheRead: 900, cacheWrite: 0, output: 40 })
  })
})
