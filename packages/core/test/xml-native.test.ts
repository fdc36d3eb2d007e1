// The XML chunk builder's memory as native tool turns (docs/xml-chunk-builder.md#as-native-tool-turns): tool calls, results and
// sub-agent delegations become tool-call / tool-result parts, the rest keeps its XML; a
// call that cannot pair stays XML; the history is always valid; and the round trip
// through `historyToMemory` keeps every call and result.
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { assemble, createContextBuilder, historyProblems, historyToMemory, memoryToHistory, memoryToNativeHistory, type Message, type MemoryChunkInput, type ToolCallPart, type ToolResultPart } from "../src/effect.ts"
import { SPAWN_SUBAGENT_TOOL } from "../src/xml/nativeHistory.ts"
import { journalTestLayer, stubTrackerLayer } from "./pipeline-stubs.ts"
import { historyOf, pairingProblems, stepsArb } from "./tool-sessions.ts"

const callsOf = (messages: ReadonlyArray<Message>): ReadonlyArray<ToolCallPart> =>
  messages.flatMap((m) => (m.role === "assistant" && typeof m.content !== "string" ? m.content.flatMap((p) => (p.type === "tool-call" ? [p] : [])) : []))
const resultsOf = (messages: ReadonlyArray<Message>): ReadonlyArray<ToolResultPart> => messages.flatMap((m) => (m.role === "tool" ? m.content : []))

const STATE: { chunks: Array<MemoryChunkInput> } = {
  chunks: [
    { id: "s", type: "SYSTEM", content: "You are an agent." },
    { id: "u1", type: "AGENT", role: "user", content: "What is in main.ts?" },
    { id: "c1", type: "WORKFLOW", action: "tool_call", tool: "read_file", callId: "call_1", status: "pending", content: { path: "/src/main.ts" } },
    { id: "r1", type: "ENVIRONMENT", action: "tool_result", tool: "read_file", callId: "call_1", success: true, content: "export const main = 1" },
    { id: "c2", type: "WORKFLOW", action: "tool_call", tool: "run", callId: "call_2", content: { cmd: "test" } },
    { id: "r2", type: "ENVIRONMENT", action: "tool_error", tool: "run", callId: "call_2", content: { code: 1 } },
    { id: "d1", type: "DELEGATION", action: "spawn_subagent", subagentId: "agent_7", agentType: "researcher", content: "Find the callers" },
    { id: "d2", type: "DELEGATION", action: "subagent_result", subagentId: "agent_7", success: true, content: "Two callers" },
    { id: "a1", type: "AGENT", role: "assistant", content: "main exports 1." }
  ]
}

describe("XML chunk memory as native tool turns", () => {
  it("tool calls, results (errors included) and a sub-agent become native parts; the rest keeps its XML", () => {
    const { system, messages, chunkIds } = memoryToNativeHistory(STATE)
    expect(system).toContain("<system_context")
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"])
    expect(messages[0]?.content).toContain("<user_message")
    expect(callsOf(messages)).toEqual([
      { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "/src/main.ts" } },
      { type: "tool-call", toolCallId: "call_2", toolName: "run", input: { cmd: "test" } },
      { type: "tool-call", toolCallId: "d1", toolName: SPAWN_SUBAGENT_TOOL, input: { subagent_id: "agent_7", agent_type: "researcher", task: "Find the callers" } }
    ])
    expect(resultsOf(messages).map((r) => [r.toolCallId, r.output])).toEqual([
      ["call_1", { type: "text", value: "export const main = 1" }],
      ["call_2", { type: "error-json", value: { code: 1 } }],
      ["d1", { type: "text", value: "Two callers" }]
    ])
    expect(chunkIds).toEqual([["u1"], ["c1"], ["r1"], ["c2"], ["r2"], ["d1"], ["d2"], ["a1"]])
    expect(historyProblems(messages)).toEqual([])
  })

  it("a memory without tool chunks gives exactly `toHistory`'s messages", () => {
    const plain = { chunks: STATE.chunks.filter((c) => c.type === "AGENT" || c.type === "SYSTEM") }
    const native = memoryToNativeHistory(plain)
    const xml = memoryToHistory(plain)
    expect(native.messages).toEqual(xml.messages)
    expect(native.chunkIds).toEqual(xml.chunkIds)
    expect(native.system).toBe(xml.system)
  })

  it("a call that cannot pair stays XML with its result: pending, answered after a user turn, or a result without its call", () => {
    const pending = memoryToNativeHistory({ chunks: [STATE.chunks[1]!, STATE.chunks[2]!] })
    expect(callsOf(pending.messages)).toEqual([])
    expect(pending.messages[1]?.content).toContain("<tool_call")
    const late = memoryToNativeHistory({ chunks: [STATE.chunks[2]!, { id: "u2", type: "AGENT", role: "user", content: "hurry" }, STATE.chunks[3]!] })
    expect(callsOf(late.messages)).toEqual([])
    expect(late.messages.map((m) => m.role)).toEqual(["assistant", "user"])
    const orphan = memoryToNativeHistory({ chunks: [STATE.chunks[1]!, STATE.chunks[3]!] })
    expect(resultsOf(orphan.messages)).toEqual([])
    expect(historyProblems([...pending.messages, ...late.messages, ...orphan.messages].filter((m) => m.role !== "tool"))).toEqual([])
  })

  it("a custom renderer keeps its chunks as XML", () => {
    const builder = createContextBuilder()
    builder.registerRenderer({ canRender: (c) => c.id === "c1" || c.id === "r1", getRole: (c) => (c.id === "c1" ? "assistant" : "user"), render: (c) => `<mine id="${c.id}"/>` })
    const { messages } = builder.toNativeHistory({ chunks: STATE.chunks.slice(0, 4) })
    expect(callsOf(messages)).toEqual([])
    expect(JSON.stringify(messages)).toContain("<mine id=\\\"c1\\\"/>")
  })

  it("feeds the tiered engine: the converted memory assembles with its calls next to their results", async () => {
    const { system, messages } = memoryToNativeHistory(STATE)
    const result = await Effect.runPromise(
      assemble({ model: "gpt-4o", prompt: "Go on", systemPrompt: system, history: messages, useRepoMap: false }).pipe(Effect.provide(journalTestLayer(stubTrackerLayer())))
    )
    expect(pairingProblems(result.request.messages)).toEqual([])
    expect(callsOf(result.request.messages)).toHaveLength(3)
  })
})

// Random memories: calls answered, pending, answered late, duplicated or orphaned; sub-agents.
const chunkArb = fc.oneof(
  fc.record({ k: fc.constant("user" as const) }),
  fc.record({ k: fc.constant("think" as const) }),
  fc.record({ k: fc.constant("call" as const), id: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ k: fc.constant("result" as const), id: fc.integer({ min: 0, max: 6 }), error: fc.boolean() }),
  fc.record({ k: fc.constant("spawn" as const), agent: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ k: fc.constant("subresult" as const), agent: fc.integer({ min: 0, max: 2 }) })
)

type ChunkSpec = { readonly k: string; readonly id?: number; readonly error?: boolean; readonly agent?: number }

const memoryOf = (items: ReadonlyArray<ChunkSpec>): { chunks: Array<MemoryChunkInput> } => ({
  chunks: items.map((it, i): MemoryChunkInput => {
    const id = `x${i}`
    switch (it.k) {
      case "user":
        return { id, type: "AGENT", role: "user", content: `ask ${i}` }
      case "think":
        return { id, type: "WORKING_FLOW", subtype: "THINKING", content: `hmm ${i}` }
      case "call":
        return { id, type: "WORKFLOW", action: "tool_call", tool: "t", callId: `c${it.id}`, content: { n: i } }
      case "result":
        return { id, type: "ENVIRONMENT", action: it.error === true ? "tool_error" : "tool_result", tool: "t", callId: `c${it.id}`, content: `out ${i}` }
      case "spawn":
        return { id, type: "DELEGATION", action: "spawn_subagent", subagentId: `a${it.agent}`, content: `task ${i}` }
      default:
        return { id, type: "DELEGATION", action: "subagent_result", subagentId: `a${it.agent}`, content: `done ${i}` }
    }
  })
})

describe("XML chunk memory as native tool turns (property tests)", () => {
  it("any memory gives a valid history that keeps every chunk once, in order", () => {
    fc.assert(
      fc.property(fc.array(chunkArb, { maxLength: 25 }), (items) => {
        const state = memoryOf(items)
        const { messages, chunkIds } = memoryToNativeHistory(state)
        expect(historyProblems(messages)).toEqual([])
        expect(chunkIds.flat()).toEqual(state.chunks.map((c) => c.id))
      }),
      { numRuns: 400 }
    )
  })

  it("round trip: native tool turns -> memory -> native keeps every call and result (ids, names, inputs, outputs) and the pairing", () => {
    fc.assert(
      fc.property(stepsArb(20), (steps) => {
        const history = historyOf(steps)
        const back = memoryToNativeHistory(historyToMemory(history)).messages
        expect(historyProblems(back)).toEqual([])
        expect(callsOf(back)).toEqual(callsOf(history))
        expect(resultsOf(back)).toEqual(resultsOf(history))
        expect(back.filter((m) => m.role === "tool").length).toBe(history.filter((m) => m.role === "tool").length)
      }),
      { numRuns: 300 }
    )
  })

  it("round trip: memory -> native -> memory -> native is a fixpoint for tool turns", () => {
    fc.assert(
      fc.property(fc.array(chunkArb, { maxLength: 25 }), (items) => {
        const once = memoryToNativeHistory(memoryOf(items)).messages
        const twice = memoryToNativeHistory(historyToMemory(once)).messages
        expect(callsOf(twice)).toEqual(callsOf(once))
        expect(resultsOf(twice)).toEqual(resultsOf(once))
      }),
      { numRuns: 300 }
    )
  })
})
