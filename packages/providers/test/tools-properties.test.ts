// Properties of tool sessions over every plugin: a random tool history (parallel calls,
// mixed outputs and errors, reasoning of every provider) renders to a body the API's
// validator accepts, with its calls and results all there and no marker on reasoning;
// a malformed history fails with a PlacementError naming the message. The validators
// themselves are checked to reject the classic mistakes.
import { PlacementError, type Message, type NeutralRequest } from "@strata/core"
import { modelMessageSchema, type ModelMessage } from "ai"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeBedrockInvoke,
  placeGemini,
  placeOpenAIChat,
  placeOpenAICompatible,
  placeOpenAIResponses,
  serializeBody
} from "../src/index.ts"
import { breakpointsArb, toolHistoryArb, toolRequest } from "./tool-fixtures.ts"
import { validateAnthropic, validateChat, validateConverse, validateGemini, validateResponses } from "./wire-validators.ts"

/** A body as it goes over the wire (Bedrock's bytes as base64). */
const wire = (body: unknown): unknown => JSON.parse(serializeBody(body))

interface Target {
  readonly name: string
  readonly model: string
  readonly images: boolean
  readonly place: (request: NeutralRequest) => unknown
  readonly validate: (body: unknown) => Array<string>
}

/** The AI SDK's own message schema, plus the pairing its providers need. */
const validateModelMessages = (body: unknown): Array<string> => {
  const messages = (body as { messages: ReadonlyArray<ModelMessage> }).messages
  const problems = messages.flatMap((m, i) => (modelMessageSchema.safeParse(m).success ? [] : [`messages[${i}]: not a ModelMessage`]))
  messages.forEach((m, i) => {
    if (m.role !== "assistant" || typeof m.content === "string") return
    const calls = m.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : []))
    const next = messages[i + 1]
    const answered = next?.role === "tool" ? next.content.flatMap((p) => (p.type === "tool-result" ? [p.toolCallId] : [])) : []
    if (calls.some((c) => !answered.includes(c))) problems.push(`messages[${i}]: a tool call is not answered by the next tool message`)
  })
  return problems
}

const TARGETS: ReadonlyArray<Target> = [
  { name: "anthropic", model: "claude-sonnet-4-5", images: true, place: (r) => placeAnthropic(r, { automatic: true }).body, validate: validateAnthropic },
  { name: "bedrock-invoke", model: "anthropic.claude-sonnet-4-5-20250929-v1:0", images: true, place: (r) => placeBedrockInvoke(r).body, validate: validateAnthropic },
  { name: "bedrock", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", images: true, place: (r) => placeBedrockConverse(r).body, validate: validateConverse },
  { name: "openai", model: "gpt-5.6", images: false, place: (r) => placeOpenAIChat(r).body, validate: validateChat },
  { name: "openai-responses", model: "gpt-5.6", images: true, place: (r) => placeOpenAIResponses(r, { cacheMode: "explicit" }).body, validate: validateResponses },
  { name: "gemini", model: "gemini-2.5-flash", images: true, place: (r) => placeGemini(r).body, validate: validateGemini },
  { name: "openai-compatible (claude)", model: "anthropic/claude-sonnet-4.5", images: false, place: (r) => placeOpenAICompatible(r).body, validate: validateChat },
  { name: "openai-compatible (gpt)", model: "gpt-5.6", images: false, place: (r) => placeOpenAICompatible(r).body, validate: validateChat },
  { name: "ai-sdk (anthropic)", model: "claude-sonnet-4-5", images: true, place: (r) => placeAiSdk(r, { target: "anthropic" }).body, validate: validateModelMessages },
  { name: "ai-sdk (openai)", model: "gpt-4.1", images: true, place: (r) => placeAiSdk(r, { target: "openai" }).body, validate: validateModelMessages }
]

/** Every tool call id and result id in a body, whatever its shape. */
const idsIn = (body: unknown): { readonly calls: Set<string>; readonly results: Set<string> } => {
  const calls = new Set<string>()
  const results = new Set<string>()
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (typeof v !== "object" || v === null) return
    const o = v as Record<string, unknown>
    const id = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined)
    if (o["type"] === "tool_use" || o["type"] === "tool-call") calls.add(id("id") ?? id("toolCallId") ?? "")
    if (o["type"] === "function_call") calls.add(id("call_id") ?? "")
    if (o["type"] === "tool_result") results.add(id("tool_use_id") ?? "")
    if (o["type"] === "tool-result") results.add(id("toolCallId") ?? "")
    if (o["type"] === "function_call_output") results.add(id("call_id") ?? "")
    if (o["role"] === "tool" && typeof o["tool_call_id"] === "string") results.add(o["tool_call_id"])
    if (typeof o["toolUseId"] === "string") (o["toolUse"] === undefined && "content" in o ? results : calls).add(o["toolUseId"])
    if (typeof o["functionCall"] === "object" && o["functionCall"] !== null) calls.add(String((o["functionCall"] as Record<string, unknown>)["id"]))
    if (typeof o["functionResponse"] === "object" && o["functionResponse"] !== null) results.add(String((o["functionResponse"] as Record<string, unknown>)["id"]))
    if (Array.isArray(o["tool_calls"])) for (const c of o["tool_calls"]) calls.add(String((c as Record<string, unknown>)["id"]))
    Object.values(o).forEach(walk)
  }
  walk(body)
  return { calls, results }
}

const historyIds = (history: ReadonlyArray<Message>): ReadonlyArray<string> =>
  history.flatMap((m) => (m.role === "tool" ? m.content.map((r) => r.toolCallId) : []))

describe("random tool histories render to bodies each API accepts", () => {
  for (const target of TARGETS) {
    it(target.name, () => {
      const arb = toolHistoryArb({ images: target.images }).chain((history) => fc.tuple(fc.constant(history), breakpointsArb(history.length + 1)))
      fc.assert(
        fc.property(arb, ([history, breakpoints]) => {
          const body = wire(target.place(toolRequest(target.model, history, { breakpoints })))
          expect(target.validate(body)).toEqual([])
          // Nothing lost: every call and every result of the history is in the body.
          const ids = idsIn(body)
          for (const id of historyIds(history)) {
            expect(ids.calls.has(id)).toBe(true)
            expect(ids.results.has(id)).toBe(true)
          }
          // Deterministic: the same history renders to the same bytes.
          expect(serializeBody(target.place(toolRequest(target.model, history, { breakpoints })))).toBe(serializeBody(target.place(toolRequest(target.model, history, { breakpoints }))))
        }),
        { numRuns: 60 }
      )
    })
  }
})

/** Ways to break a valid history, each naming the message it breaks. */
const breakers: ReadonlyArray<readonly [string, (h: Array<Message>, at: number) => void]> = [
  ["a result without its call (orphan)", (h, at) => {
    h.splice(at - 1, 1)
  }],
  ["a call not answered in the next message", (h, at) => {
    h.splice(at, 1)
  }],
  ["a duplicate call id", (h, at) => {
    const tool = h[at]!
    const first = h.findIndex((m) => m.role === "tool")
    if (tool.role !== "tool" || first === at) return
    const firstTool = h[first]!
    if (firstTool.role !== "tool") return
    const reused = firstTool.content[0]!.toolCallId
    const call = h[at - 1]!
    if (call.role !== "assistant" || typeof call.content === "string") return
    const calls = call.content.filter((p) => p.type === "tool-call")
    const old = calls[0]!.type === "tool-call" ? calls[0]!.toolCallId : ""
    h[at - 1] = { role: "assistant", content: call.content.map((p) => (p.type === "tool-call" && p.toolCallId === old ? { ...p, toolCallId: reused } : p)) }
    h[at] = { role: "tool", content: tool.content.map((r) => (r.toolCallId === old ? { ...r, toolCallId: reused } : r)) }
  }]
]

describe("malformed tool histories fail in every plugin", () => {
  for (const [name, breakIt] of breakers) {
    it(name, () => {
      fc.assert(
        fc.property(toolHistoryArb().filter((h) => h.filter((m) => m.role === "tool").length >= 2), fc.nat(), (valid, pick) => {
          const tools = valid.flatMap((m, i) => (m.role === "tool" ? [i] : []))
          const at = tools[pick % tools.length]!
          const history = [...valid]
          breakIt(history, at)
          if (JSON.stringify(history) === JSON.stringify(valid)) return
          for (const target of TARGETS) {
            const request = toolRequest(target.model, history, { breakpoints: [0] })
            let error: unknown
            try {
              target.place(request)
            } catch (e) {
              error = e
            }
            expect(error, target.name).toBeInstanceOf(PlacementError)
            expect(String((error as PlacementError).message)).toMatch(/message \d+/)
          }
        }),
        { numRuns: 25 }
      )
    })
  }
})

describe("the validators reject what the APIs reject", () => {
  const call = { type: "tool_use", id: "t1", name: "ls", input: {} }
  const result = { type: "tool_result", tool_use_id: "t1", content: "a" }
  const anthropic = (messages: ReadonlyArray<unknown>) => validateAnthropic({ model: "m", max_tokens: 1, messages })

  it("anthropic", () => {
    expect(anthropic([{ role: "user", content: "hi" }, { role: "assistant", content: [call] }, { role: "user", content: [result] }])).toEqual([])
    expect(anthropic([{ role: "user", content: "hi" }, { role: "assistant", content: [call] }, { role: "user", content: [{ type: "text", text: "x" }, result] }]).join()).toMatch(/must come first/)
    expect(anthropic([{ role: "user", content: "hi" }, { role: "assistant", content: [call] }, { role: "user", content: "no" }]).join()).toMatch(/without `tool_result`/)
    expect(anthropic([{ role: "user", content: [result] }]).join()).toMatch(/unexpected `tool_use_id`/)
    expect(anthropic([{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "s", cache_control: { type: "ephemeral" } }, call] }, { role: "user", content: [result] }]).join()).toMatch(/cannot be set on thinking/)
  })

  it("chat, responses, converse, gemini", () => {
    const asst = { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] }
    expect(validateChat({ messages: [{ role: "user", content: "hi" }, asst, { role: "tool", tool_call_id: "c1", content: "a" }] })).toEqual([])
    expect(validateChat({ messages: [{ role: "user", content: "hi" }, asst, { role: "user", content: "x" }] }).join()).toMatch(/did not have response messages: c1/)
    expect(validateChat({ messages: [{ role: "user", content: "hi" }, { role: "tool", tool_call_id: "c1", content: "a" }] }).join()).toMatch(/must be a response to a preceeding message/)
    expect(validateResponses({ input: [{ type: "function_call_output", call_id: "x", output: "a" }] }).join()).toMatch(/No tool call found/)
    expect(validateResponses({ input: [{ type: "function_call", call_id: "x", name: "ls", arguments: "{}" }] }).join()).toMatch(/No tool output found/)
    const use = { role: "assistant", content: [{ reasoningContent: { reasoningText: { text: "r", signature: "s" } } }, { cachePoint: { type: "default" } }, { toolUse: { toolUseId: "u1", name: "ls", input: {} } }] }
    expect(validateConverse({ messages: [{ role: "user", content: [{ text: "hi" }] }, use, { role: "user", content: [{ toolResult: { toolUseId: "u1", content: [] } }] }] }).join()).toMatch(/cannot follow a reasoning block/)
    expect(validateConverse({ messages: [{ role: "user", content: [{ text: "hi" }] }, { role: "assistant", content: [{ toolUse: { toolUseId: "u1", name: "ls", input: {} } }] }, { role: "user", content: [{ text: "x" }] }] }).join()).toMatch(/Expected toolResult blocks/)
    const model = { role: "model", parts: [{ functionCall: { id: "f1", name: "ls", args: {} } }, { functionCall: { id: "f2", name: "ls", args: {} } }] }
    expect(validateGemini({ contents: [{ role: "user", parts: [{ text: "hi" }] }, model, { role: "user", parts: [{ functionResponse: { id: "f1", name: "ls", response: {} } }] }] }).join()).toMatch(/number of function response parts/)
  })
})
