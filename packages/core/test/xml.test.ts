// The XML chunk builder (docs/xml-chunk-builder.md): every usage example, the tag mapping, result
// fields, grouping, limit handling, team9-shaped input and bad input.
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ChunkType, ContextBuilder, ContextBuildResult, createContextBuilder, createTokenizer, decodeMemoryState, estimateTokens, IChunkRenderer, InvalidInput, makeTokenCounter, Message, ContextMessageRole, MemoryChunk, type MemoryChunkInput, type MemoryStateInput } from "../src/index.ts"
import { LIST_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS } from "../src/tokens/TokenCounter.ts"

const chunk = (id: string, fields: Omit<MemoryChunkInput, "id">): MemoryChunkInput => ({ id, ...fields })
const user = (id: string, text: string): MemoryChunkInput => chunk(id, { type: ChunkType.AGENT, role: "user", content: text })
const assistant = (id: string, text: string): MemoryChunkInput =>
  chunk(id, { type: ChunkType.AGENT, role: "assistant", content: text })
const stateOf = (...chunks: Array<MemoryChunkInput>): MemoryStateInput => ({ id: "state_1", threadId: "thread_1", chunks })

/** A transcript with every chunk type, as an agent's working memory looks. */
const agentState = (): MemoryStateInput =>
  stateOf(
    chunk("chunk_0", { type: ChunkType.SYSTEM, priority: 1000, content: "You work in the repository at /repo." }),
    user("chunk_1", "Read src/main.ts and summarize it."),
    chunk("chunk_2", {
      type: ChunkType.WORKFLOW,
      action: "tool_call",
      tool: "read_file",
      callId: "call_123",
      status: "pending",
      content: { path: "/src/main.ts" }
    }),
    chunk("chunk_3", {
      type: ChunkType.ENVIRONMENT,
      action: "tool_result",
      tool: "read_file",
      callId: "call_123",
      success: true,
      content: "export const main = () => 42"
    }),
    assistant("chunk_4", "main.ts exports a function returning 42."),
    chunk("chunk_5", { type: ChunkType.OUTPUT, action: "task_completed", content: { result: "42", summary: "done" } })
  )

describe("XML chunk builder: basic usage", () => {
  it("builds messages a chat client takes directly", () => {
    const builder = createContextBuilder()
    const state = agentState()
    const result = builder.build(state, {
      maxTokens: 8000,
      systemPrompt: "You are a helpful assistant."
    })
    // A client typed with a mutable message array, as LLM SDKs are.
    const llm = { chat: (request: { messages: Array<{ role: "system" | "user" | "assistant"; content: string }> }) => request.messages.length }
    expect(llm.chat({ messages: result.messages })).toBe(result.messages.length)
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant"])
    expect(result.messages[0]?.content).toBe(
      "You are a helpful assistant.\n\n" +
        '<system_context id="chunk_0" priority="1000">\nYou work in the repository at /repo.\n</system_context>'
    )
    for (const m of result.messages) expect(Schema.is(Message)(m)).toBe(true)
    expect(result.includedChunkIds).toEqual(["chunk_0", "chunk_1", "chunk_2", "chunk_3", "chunk_4", "chunk_5"])
    expect(result.excludedChunkIds).toEqual([])
  })

  it("an empty state gives no messages; a system prompt alone gives one", () => {
    const builder = createContextBuilder()
    expect(builder.build({ chunks: [] }).messages).toEqual([])
    expect(builder.build({ chunks: [] }).tokenCount).toBe(0)
    const result = builder.build({ chunks: [] }, { systemPrompt: "You are a helpful assistant." })
    expect(result.messages).toEqual([{ role: "system", content: "You are a helpful assistant." }])
  })
})

describe("XML chunk builder: tokenizer", () => {
  it("maps models to encodings, Claude as a flagged approximation", () => {
    expect(createTokenizer("gpt-4o")).toMatchObject({ encoding: "o200k_base", exact: true })
    expect(createTokenizer("gpt-4")).toMatchObject({ encoding: "cl100k_base", exact: true })
    expect(createTokenizer("gpt-3.5-turbo")).toMatchObject({ encoding: "cl100k_base", exact: true })
    expect(createTokenizer("claude-3-5-sonnet-20241022")).toMatchObject({ encoding: "cl100k_base", exact: false })
    expect(createTokenizer("gpt-4o").getModelName()).toBe("gpt-4o")
    expect(createTokenizer("gpt-4o").countTokens("hello world")).toBe(2)
    // One instance per model, so the memo of counts is shared by every build.
    expect(createTokenizer("gpt-4o")).toBe(createTokenizer("gpt-4o"))
  })

  it("method 1 (construction) and method 2 (build time) give the same exact count", async () => {
    const tokenizer = createTokenizer("gpt-4o")
    const state = agentState()
    const atConstruction = createContextBuilder(tokenizer).build(state, { maxTokens: 8000 })
    const atBuild = createContextBuilder().build(state, { maxTokens: 8000, tokenizer })
    expect(atBuild).toEqual(atConstruction)
    expect(atBuild.tokenCountExact).toBe(true)
    // The count is the foundation counter's count of the messages, overheads included.
    const reference = await makeTokenCounter("gpt-4o")
    expect(atBuild.tokenCount).toBe(reference.countMessages(atBuild.messages))
  })

  it("the build-time tokenizer overrides the builder's default", () => {
    const builder = createContextBuilder(createTokenizer("claude-sonnet-4-5"))
    expect(builder.build(agentState()).tokenCountExact).toBe(false)
    expect(builder.build(agentState(), { tokenizer: createTokenizer("gpt-4") }).tokenCountExact).toBe(true)
  })

  it("without a tokenizer counts chars/4 and says so", () => {
    const result = createContextBuilder().build(stateOf(user("c1", "hello there")))
    const content = result.messages[0]?.content ?? ""
    expect(result.tokenCountExact).toBe(false)
    expect(result.tokenCount).toBe(LIST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS + estimateTokens(content))
  })

  it("accepts a team9-style tokenizer with only countTokens", () => {
    const words = { countTokens: (text: string) => text.split(/\s+/).length, getModelName: () => "words" }
    const result = createContextBuilder(words).build(stateOf(user("c1", "a b c")))
    expect(result.tokenCountExact).toBe(true)
    expect(result.tokenCount).toBe(LIST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS + words.countTokens(result.messages[0]?.content ?? ""))
  })
})

describe("XML chunk builder: usage with options", () => {
  const currentTask = "Fix the failing test in src/parser.ts"

  it("runs the seed's options example", () => {
    const builder = createContextBuilder()
    const state = stateOf(
      user("chunk_1", "Fix the failing test."),
      assistant("chunk_2", "Looking at the parser."),
      chunk("chunk_3", { type: ChunkType.OUTPUT, action: "task_completed", content: { result: "fixed" } })
    )
    const result = builder.build(state, {
      maxTokens: 4000,
      tokenizer: createTokenizer("gpt-4o"),
      systemPrompt: `You are an expert developer.

<task>
${currentTask}
</task>`,
      includeSystem: true,
      includeEnvironment: true,
      excludeTypes: [ChunkType.OUTPUT],
      includeOnlyChunkIds: ["chunk_1", "chunk_2"]
    })
    expect(result.includedChunkIds).toEqual(["chunk_1", "chunk_2"])
    expect(result.excludedChunkIds).toEqual([])
    expect(result.tokenCountExact).toBe(true)
    // The system prompt is the caller's own text: it is passed through, not escaped.
    expect(result.messages[0]).toEqual({ role: "system", content: `You are an expert developer.\n\n<task>\n${currentTask}\n</task>` })
    expect(result.tokenCount).toBeLessThanOrEqual(4000)
  })

  it("includeSystem: false and includeEnvironment: false leave those chunks out", () => {
    const builder = createContextBuilder()
    const all = builder.build(agentState()).includedChunkIds
    expect(builder.build(agentState(), { includeSystem: false }).includedChunkIds).toEqual(all.filter((id) => id !== "chunk_0"))
    expect(builder.build(agentState(), { includeEnvironment: false }).includedChunkIds).toEqual(all.filter((id) => id !== "chunk_3"))
  })

  it("excludeTypes and includeOnlyChunkIds filter; filtered chunks are in neither list", () => {
    const builder = createContextBuilder()
    const result = builder.build(agentState(), { excludeTypes: [ChunkType.OUTPUT, ChunkType.WORKFLOW] })
    expect(result.includedChunkIds).toEqual(["chunk_0", "chunk_1", "chunk_3", "chunk_4"])
    expect(result.excludedChunkIds).toEqual([])
    const only = builder.build(agentState(), { includeOnlyChunkIds: ["chunk_4", "chunk_1", "missing"] })
    expect(only.includedChunkIds).toEqual(["chunk_1", "chunk_4"])
  })
})

describe("XML chunk builder: custom renderer", () => {
  // The builder's original example class (the unused parameter renamed for noUnusedParameters).
  class CustomChunkRenderer implements IChunkRenderer {
    canRender(chunk: MemoryChunk): boolean {
      // Only handle specific custom chunks
      return chunk.metadata.custom?.myCustomType === true
    }

    getRole(_chunk: MemoryChunk): ContextMessageRole {
      return "assistant"
    }

    render(chunk: MemoryChunk): string {
      const content = chunk.content
      return `<my_custom_tag id="${chunk.id}">
${JSON.stringify(content)}
</my_custom_tag>`
    }
  }

  it("takes priority over the default renderers", () => {
    const builder = createContextBuilder()
    builder.registerRenderer(new CustomChunkRenderer())
    const state = stateOf(
      user("chunk_1", "plain"),
      chunk("chunk_2", { type: ChunkType.AGENT, role: "user", content: { n: 1 }, metadata: { custom: { myCustomType: true } } })
    )
    const result = builder.build(state)
    expect(result.messages).toEqual([
      { role: "user", content: '<user_message id="chunk_1" role="user">\nplain\n</user_message>' },
      { role: "assistant", content: '<my_custom_tag id="chunk_2">\n{"n":1}\n</my_custom_tag>' }
    ])
  })

  it("a later registration wins over an earlier one", () => {
    const builder = createContextBuilder()
    const tagged = (tag: string): IChunkRenderer => ({ canRender: () => true, getRole: () => "user", render: (c) => `<${tag} id="${c.id}"/>` })
    builder.registerRenderer(tagged("first"))
    builder.registerRenderer(tagged("second"))
    expect(builder.build(stateOf(user("c1", "x"))).messages[0]?.content).toBe('<second id="c1"/>')
  })

  it("rejects something that is not a renderer, and a renderer returning a bad role", () => {
    const builder = createContextBuilder()
    expect(() => builder.registerRenderer({ canRender: () => true } as unknown as IChunkRenderer)).toThrow(InvalidInput)
    builder.registerRenderer({ canRender: () => true, getRole: () => "tool" as ContextMessageRole, render: () => "x" })
    expect(() => builder.build(stateOf(user("c1", "x")))).toThrow(/getRole returned "tool" for chunk "c1"/)
  })

  it("IChunkRenderer is also a schema", () => {
    expect(Schema.is(IChunkRenderer)(new CustomChunkRenderer())).toBe(true)
    expect(Schema.is(IChunkRenderer)({})).toBe(false)
  })
})

describe("XML chunk builder: ContextBuildResult", () => {
  it("has the five fields, and decodes as the schema", () => {
    const result = createContextBuilder().build(agentState(), { maxTokens: 60, keep: "newest" })
    expect(Object.keys(result).sort()).toEqual(["excludedChunkIds", "includedChunkIds", "messages", "tokenCount", "tokenCountExact"])
    expect(Schema.is(ContextBuildResult)(result)).toBe(true)
    expect(result.excludedChunkIds.length).toBeGreaterThan(0)
    expect(result.tokenCount).toBeLessThanOrEqual(60)
  })
})

describe("XML chunk builder: message grouping", () => {
  it("merges consecutive same-role chunks into one message", () => {
    const state = stateOf(user("c1", "one"), user("c2", "two"), assistant("c3", "three"), user("c4", "four"), user("c5", "five"))
    const result = createContextBuilder().build(state)
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
    expect(result.messages[0]?.content).toBe(
      '<user_message id="c1" role="user">\none\n</user_message>\n\n<user_message id="c2" role="user">\ntwo\n</user_message>'
    )
    expect(result.messages[2]?.content.split("\n\n")).toHaveLength(2)
  })

  it("a tool call and the assistant text around it share a message; its result starts the next", () => {
    const result = createContextBuilder().build(agentState(), { includeSystem: false })
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(result.messages[1]?.content).toMatch(/^<tool_call /)
    expect(result.messages[2]?.content).toMatch(/^<tool_result /)
  })
})

describe("XML chunk builder: token limit handling", () => {
  const tenMessages = () =>
    stateOf(...Array.from({ length: 10 }, (_, i) => user(`c${i}`, `This is message ${i} with some content to increase token count.`)))

  it("processes chunks in order; chunks past the limit are excluded, with no gaps", () => {
    const result = createContextBuilder().build(tenMessages(), { maxTokens: 100 })
    expect(result.tokenCount).toBeLessThanOrEqual(100)
    expect(result.excludedChunkIds.length).toBeGreaterThan(0)
    expect(result.includedChunkIds.length).toBeGreaterThan(0)
    const all = Array.from({ length: 10 }, (_, i) => `c${i}`)
    expect([...result.includedChunkIds, ...result.excludedChunkIds]).toEqual(all)
  })

  it("does not fill a gap with a later small chunk (team9 did)", () => {
    const state = stateOf(user("c0", "short"), user("c1", "x".repeat(400)), user("c2", "tiny"))
    const result = createContextBuilder().build(state, { maxTokens: 40 })
    expect(result.includedChunkIds).toEqual(["c0"])
    expect(result.excludedChunkIds).toEqual(["c1", "c2"])
  })

  it("counts the system prompt against the limit", () => {
    const state = tenMessages()
    const without = createContextBuilder().build(state, { maxTokens: 120 })
    const withPrompt = createContextBuilder().build(state, { maxTokens: 120, systemPrompt: "p".repeat(120) })
    expect(withPrompt.includedChunkIds.length).toBeLessThan(without.includedChunkIds.length)
    expect(withPrompt.tokenCount).toBeLessThanOrEqual(120)
  })

  it("maxTokens: 0 excludes every chunk", () => {
    const result = createContextBuilder().build(tenMessages(), { maxTokens: 0 })
    expect(result.includedChunkIds).toEqual([])
    expect(result.messages).toEqual([])
    expect(result.tokenCount).toBe(0)
  })
})

describe("XML tag mapping", () => {
  const cases: ReadonlyArray<readonly [string, Omit<MemoryChunkInput, "id">, ContextMessageRole, string]> = [
    ["system_context", { type: "SYSTEM", priority: 1000, content: "System context content" }, "system",
      '<system_context id="chunk_xxx" priority="1000">\nSystem context content\n</system_context>'],
    ["user_message", { type: "AGENT", role: "user", content: "User message content" }, "user",
      '<user_message id="chunk_xxx" role="user">\nUser message content\n</user_message>'],
    ["assistant_response", { type: "AGENT", role: "assistant", content: "Assistant response content" }, "assistant",
      '<assistant_response id="chunk_xxx" role="assistant">\nAssistant response content\n</assistant_response>'],
    ["assistant_clarification", { type: "AGENT", role: "assistant", action: "clarification", content: "Clarification question" }, "assistant",
      '<assistant_clarification id="chunk_xxx" role="assistant" action="clarification">\nClarification question\n</assistant_clarification>'],
    ["tool_call", { type: "WORKFLOW", action: "tool_call", tool: "read_file", callId: "call_123", status: "pending", content: { path: "/src/main.ts" } }, "assistant",
      '<tool_call id="chunk_xxx" action="tool_call" tool="read_file" call_id="call_123" status="pending">\n{"path":"/src/main.ts"}\n</tool_call>'],
    ["skill_call", { type: "WORKFLOW", action: "skill_call", skill: "code_review", callId: "call_456", status: "pending", content: { code: "..." } }, "assistant",
      '<skill_call id="chunk_xxx" action="skill_call" skill="code_review" call_id="call_456" status="pending">\n{"code":"..."}\n</skill_call>'],
    ["spawn_subagent", { type: "DELEGATION", action: "spawn_subagent", subagentId: "agent_123", agentType: "researcher", content: { task: "Search for..." } }, "assistant",
      '<spawn_subagent id="chunk_xxx" subagent_id="agent_123" agent_type="researcher">\n{"task":"Search for..."}\n</spawn_subagent>'],
    ["message_to_subagent", { type: "DELEGATION", action: "message_subagent", subagentId: "agent_123", content: "Please continue research..." }, "assistant",
      '<message_to_subagent id="chunk_xxx" subagent_id="agent_123">\nPlease continue research...\n</message_to_subagent>'],
    ["subagent_result", { type: "DELEGATION", action: "subagent_result", subagentId: "agent_123", success: true, content: "Research results..." }, "user",
      '<subagent_result id="chunk_xxx" subagent_id="agent_123" success="true">\nResearch results...\n</subagent_result>'],
    ["parent_agent_message", { type: "DELEGATION", parentAgentId: "agent_000", content: "Parent task instruction" }, "user",
      '<parent_agent_message id="chunk_xxx" parent_agent_id="agent_000">\nParent task instruction\n</parent_agent_message>'],
    ["tool_result", { type: "ENVIRONMENT", action: "tool_result", tool: "read_file", callId: "call_123", success: true, content: "File content..." }, "user",
      '<tool_result id="chunk_xxx" tool="read_file" call_id="call_123" success="true">\nFile content...\n</tool_result>'],
    ["tool_result (error)", { type: "ENVIRONMENT", action: "tool_result", tool: "read_file", callId: "call_123", error: true, content: "File not found" }, "user",
      '<tool_result id="chunk_xxx" tool="read_file" call_id="call_123" success="false" error="true">\nFile not found\n</tool_result>'],
    ["skill_result", { type: "ENVIRONMENT", action: "skill_result", skill: "code_review", callId: "call_456", success: true, content: "Review results..." }, "user",
      '<skill_result id="chunk_xxx" skill="code_review" call_id="call_456" success="true">\nReview results...\n</skill_result>'],
    ["progress_summary", { type: "WORKING_FLOW", subtype: "COMPACTED", compactedAt: 1703000000000, originalCount: 15, content: "## Progress Summary\n### Completed Actions\n- Action 1\n- Action 2" }, "assistant",
      '<progress_summary id="chunk_xxx" compacted_at="1703000000000" original_count="15">\n## Progress Summary\n### Completed Actions\n- Action 1\n- Action 2\n</progress_summary>'],
    ["todo_update", { type: "WORKING_FLOW", action: "todo_set", content: { todos: ["a", "b"] } }, "assistant",
      '<todo_update id="chunk_xxx" action="todo_set">\n{"todos":["a","b"]}\n</todo_update>'],
    ["thinking", { type: "WORKING_FLOW", subtype: "THINKING", content: "Thinking process..." }, "assistant",
      '<thinking id="chunk_xxx" subtype="THINKING">\nThinking process...\n</thinking>'],
    ["user_intervention", { type: "WORKING_FLOW", subtype: "USER", content: "User intervention during process" }, "user",
      '<user_intervention id="chunk_xxx" subtype="USER">\nUser intervention during process\n</user_intervention>'],
    ["task_completed", { type: "OUTPUT", action: "task_completed", content: { summary: "...", result: "..." } }, "assistant",
      '<task_completed id="chunk_xxx">\n{"result":"...","summary":"..."}\n</task_completed>'],
    ["task_abandoned", { type: "OUTPUT", action: "task_abandoned", reason: "Unable to complete", content: { partialResult: "..." } }, "assistant",
      '<task_abandoned id="chunk_xxx" reason="Unable to complete">\n{"partialResult":"..."}\n</task_abandoned>'],
    ["task_terminated", { type: "OUTPUT", action: "task_terminated", terminatedBy: "user", content: "Task was terminated" }, "assistant",
      '<task_terminated id="chunk_xxx" terminated_by="user">\nTask was terminated\n</task_terminated>'],
    ["generic (unknown type)", { type: "MY_PLUGIN_EVENT", content: { z: 1, a: "<b>" } }, "user",
      '<chunk id="chunk_xxx" type="MY_PLUGIN_EVENT">\n{"a":"&lt;b&gt;","z":1}\n</chunk>']
  ]

  it.each(cases)("%s", (_name, fields, role, expected) => {
    const result = createContextBuilder().build(stateOf(chunk("chunk_xxx", fields)))
    expect(result.messages).toEqual([{ role, content: expected }])
  })

  it("infers tool_call / tool_result from the tool field when action is absent", () => {
    const result = createContextBuilder().build(stateOf(
      chunk("a", { type: "WORKFLOW", tool: "ls", callId: "k", content: {} }),
      chunk("b", { type: "ENVIRONMENT", tool: "ls", callId: "k", content: "x" })
    ))
    expect(result.messages.map((m) => m.content.slice(0, m.content.indexOf(" ")))).toEqual(["<tool_call", "<tool_result"])
  })

  it("every default renderer claims its type and renders the chunk id", () => {
    const builder = new ContextBuilder()
    for (const type of Object.values(ChunkType.enums)) {
      const content = builder.build(stateOf(chunk("id_" + type, { type, content: "x" }))).messages[0]?.content ?? ""
      expect(content).toContain(`id="id_${type}"`)
      expect(content).not.toMatch(/^<chunk /)
    }
  })
})

describe("team9-shaped input", () => {
  it("reads attributes from TEXT content and accepts the indexed state with a Map", () => {
    const chunks = [
      { id: "c1", type: "AGENT", content: { type: "TEXT", text: "Hello", role: "user" }, priority: 1, mutable: false, retentionStrategy: "CRITICAL", metadata: { createdAt: 1 } },
      { id: "c2", type: "WORKFLOW", content: { type: "TEXT", text: "{}", action: "tool_call", toolName: "ls", callId: "k1", status: "pending" }, metadata: { createdAt: 2 } },
      { id: "c3", type: "ENVIRONMENT", content: { type: "TEXT", text: "no such dir", source: "tool_error", toolName: "ls", callId: "k1" }, metadata: { createdAt: 3 } },
      { id: "c4", type: "WORKING_FLOW", subType: "COMPACTED", content: { type: "TEXT", text: "summary" }, metadata: { createdAt: 4, custom: { compactedAt: 99, originalChunkCount: 7 } } },
      { id: "c5", type: "AGENT", content: { type: "MIXED", parts: [{ type: "TEXT", text: "see" }, { type: "IMAGE", data: "x", mimeType: "image/png" }, { type: "TEXT", text: "this" }], role: "user" }, metadata: { createdAt: 5 } }
    ]
    const state = { id: "s", threadId: "t", chunkIds: ["c1", "c2", "c3", "c4", "c5"], chunks: new Map(chunks.map((c) => [c.id, c])) }
    const result = createContextBuilder().build(state)
    expect(result.includedChunkIds).toEqual(["c1", "c2", "c3", "c4", "c5"])
    expect(result.messages.map((m) => m.content)).toEqual([
      '<user_message id="c1" role="user">\nHello\n</user_message>',
      '<tool_call id="c2" action="tool_call" tool="ls" call_id="k1" status="pending">\n{}\n</tool_call>',
      '<tool_result id="c3" tool="ls" call_id="k1" success="false" error="true">\nno such dir\n</tool_result>',
      '<progress_summary id="c4" compacted_at="99" original_count="7">\nsummary\n</progress_summary>',
      '<user_message id="c5" role="user">\nsee\nthis\n</user_message>'
    ])
    // The same state as a plain object keyed by id builds the same messages.
    expect(createContextBuilder().build({ chunkIds: state.chunkIds, chunks: Object.fromEntries(state.chunks) })).toEqual(result)
  })
})

describe("bad input", () => {
  const issueOf = (f: () => unknown): string => {
    try {
      f()
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInput)
      return (error as InvalidInput).message
    }
    throw new Error("expected InvalidInput")
  }

  it("a malformed state fails decoding with the path of the bad field", () => {
    const builder = createContextBuilder()
    expect(issueOf(() => builder.build({ chunks: [user("a", "x"), { id: 7 }] } as unknown as MemoryStateInput)))
      .toBe('Invalid MemoryState: Expected string\n  at ["chunks"][1]["id"]')
    expect(issueOf(() => builder.build({ chunks: [{ id: "a", type: "AGENT" }] } as unknown as MemoryStateInput)))
      .toContain('at ["chunks"][0]["content"]')
    expect(issueOf(() => builder.build({ chunks: [user("a", "x"), { ...user("b", "y"), success: "yes" }] } as unknown as MemoryStateInput)))
      .toContain('at ["chunks"][1]["success"]')
    expect(issueOf(() => builder.build(stateOf(user("a", "x"), user("a", "y")))))
      .toContain('duplicate chunk id "a"\n  at ["chunks"][1]["id"]')
    expect(issueOf(() => builder.build(null as unknown as MemoryStateInput))).toMatch(/^Invalid MemoryState/)
  })

  it("a malformed indexed state names the bad entry", () => {
    const builder = createContextBuilder()
    expect(issueOf(() => builder.build({ chunkIds: ["a", "b"], chunks: { a: user("a", "x") } })))
      .toContain('no chunk with id "b" in chunks\n  at ["chunkIds"][1]')
    expect(issueOf(() => builder.build({ chunkIds: ["a"], chunks: new Map([["a", { ...user("a", "x"), priority: "high" }]]) } as unknown as MemoryStateInput)))
      .toContain('at ["chunks"]["a"]["priority"]')
  })

  it("bad options name the option", () => {
    expect(issueOf(() => createContextBuilder().build(stateOf(), { maxTokens: -1 })))
      .toMatch(/^Invalid ContextBuildOptions: .*\n\s+at \["maxTokens"\]/)
    expect(issueOf(() => createContextBuilder().build(stateOf(), { keep: "middle" } as never))).toContain('at ["keep"]')
  })

  it("decodeMemoryState defaults metadata and drops unknown keys", () => {
    const decoded = decodeMemoryState({ chunks: [{ id: "a", type: "AGENT", content: "x", extra: 1 }] })
    expect(decoded.chunks[0]).toEqual({ id: "a", type: "AGENT", content: "x", metadata: {} })
  })
})
