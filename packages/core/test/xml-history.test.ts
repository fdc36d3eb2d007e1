// Into the tiers: a memory state becomes history messages whose bytes depend only on
// their chunks, so an agent transcript keeps its history items (and cache tiers).
import fc from "fast-check"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  ChunkType,
  createContextBuilder,
  createContextEngine,
  makeEstimatingCounter,
  memoryToHistory,
  Message,
  resultToHistory,
  sha256,
  type MemoryChunkInput
} from "../src/index.ts"

const user = (id: string, text: string): MemoryChunkInput => ({ id, type: ChunkType.AGENT, role: "user", content: text })
const assistant = (id: string, text: string): MemoryChunkInput => ({ id, type: ChunkType.AGENT, role: "assistant", content: text })

const transcript = (): Array<MemoryChunkInput> => [
  { id: "s0", type: ChunkType.SYSTEM, content: "Repository: /repo" },
  user("u1", "List the files."),
  { id: "c1", type: ChunkType.WORKFLOW, action: "tool_call", tool: "ls", callId: "k1", content: { path: "." } },
  { id: "r1", type: ChunkType.ENVIRONMENT, action: "tool_result", tool: "ls", callId: "k1", success: true, content: "a.ts\nb.ts" },
  assistant("a1", "Two files."),
  { id: "s1", type: ChunkType.SYSTEM, content: "Be terse." },
  user("u2", "Open a.ts"),
  user("u3", "and b.ts")
]

describe("memoryToHistory", () => {
  it("puts system chunks apart and groups the rest by role, with chunk ids per message", () => {
    const history = memoryToHistory({ chunks: transcript() })
    expect(history.system).toBe(
      '<system_context id="s0">\nRepository: /repo\n</system_context>\n\n<system_context id="s1">\nBe terse.\n</system_context>'
    )
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"])
    expect(history.chunkIds).toEqual([["u1"], ["c1"], ["r1"], ["a1"], ["u2", "u3"]])
    for (const m of history.messages) expect(Schema.is(Message)(m)).toBe(true)
  })

  it("renders each message exactly as build does (without a budget)", () => {
    const built = createContextBuilder().build({ chunks: transcript() }, { includeSystem: false })
    expect(memoryToHistory({ chunks: transcript() }).messages).toEqual(built.messages)
  })

  it("uses the builder's custom renderers and its filters", () => {
    const builder = createContextBuilder()
    builder.registerRenderer({ canRender: (c) => c.id === "a1", getRole: () => "assistant", render: () => "<custom/>" })
    const history = builder.toHistory({ chunks: transcript() }, { includeEnvironment: false })
    expect(history.chunkIds).toEqual([["u1"], ["c1", "a1"], ["u2", "u3"]])
    expect(history.messages[1]?.content).toMatch(/<custom\/>$/)
  })

  it("property: appending chunks leaves every earlier message byte-identical but the last", () => {
    const chunkArb = fc.record({ role: fc.constantFrom("user", "assistant"), text: fc.string({ maxLength: 40 }) })
    fc.assert(
      fc.property(fc.array(chunkArb, { minLength: 1, maxLength: 30 }), fc.nat(), (specs, cut) => {
        const chunks = specs.map((s, i) => (s.role === "user" ? user(`c${i}`, s.text) : assistant(`c${i}`, s.text)))
        const k = 1 + (cut % chunks.length)
        const before = memoryToHistory({ chunks: chunks.slice(0, k) }).messages
        const after = memoryToHistory({ chunks }).messages
        const hashes = (ms: ReadonlyArray<Message>) => ms.map((m) => sha256(typeof m.content === "string" ? m.content : ""))
        expect(hashes(after).slice(0, before.length - 1)).toEqual(hashes(before).slice(0, -1))
      }),
      { numRuns: 200 }
    )
  })

  it("a changed chunk changes only the message that holds it", () => {
    const chunks = transcript()
    const edited = chunks.map((c) => (c.id === "r1" ? { ...c, content: "a.ts\nb.ts\nc.ts" } : c))
    const a = memoryToHistory({ chunks }).messages
    const b = memoryToHistory({ chunks: edited }).messages
    expect(a.map((m, i) => m.content === b[i]?.content)).toEqual([true, true, false, true, true])
  })
})

describe("handing the history to the engine", () => {
  it("setHistory takes the messages as they are", async () => {
    const engine = createContextEngine({ model: "gpt-4o", tokenCounter: makeEstimatingCounter() })
    try {
      const { messages } = memoryToHistory({ chunks: transcript() })
      await engine.setHistory(messages)
      expect(await engine.getHistory()).toEqual(messages)
    } finally {
      await engine.dispose()
    }
  })
})

describe("resultToHistory", () => {
  it("splits system messages from a built result", () => {
    const built = createContextBuilder().build({ chunks: transcript() }, { systemPrompt: "You are an agent." })
    const history = resultToHistory(built)
    expect(history.system.startsWith("You are an agent.\n\n<system_context id=\"s0\">")).toBe(true)
    expect(history.messages.every((m) => m.role !== "system")).toBe(true)
    expect(history.messages.length).toBe(built.messages.filter((m) => m.role !== "system").length)
  })
})
