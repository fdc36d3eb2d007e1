import { describe, expect, it } from "vitest"
import { placeOpenAIChat, placeOpenAIResponses, serializeBody } from "../src/index.ts"
import { bigRequest, seedRequest } from "./plugins-fixtures.ts"

describe("openai chat plugin", () => {
  it("sends no markers for automatic caching, keeps the prefix stable and reports cacheable tiers", () => {
    const r = placeOpenAIChat(bigRequest("gpt-4.1"), { promptCacheKey: "session-1" })
    const json = serializeBody(r.body)
    expect(json).not.toContain("prompt_cache_breakpoint")
    expect(json).not.toContain("cache_control")
    expect(r.body.prompt_cache_key).toBe("session-1")
    expect(r.body.prompt_cache_options).toBeUndefined()
    expect("stream" in r.body || "stream_options" in r.body).toBe(false)
    expect(r.body.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: expect.any(String) }] })
    expect(r.breakpoints.map((b) => b.location)).toEqual([
      "messages[0] (automatic prefix)",
      "messages[2] (automatic prefix)",
      "messages[4] (automatic prefix)",
      "messages[6] (automatic prefix)"
    ])
    expect(r.notes[0]).toMatch(/128-token steps/)
  })

  it("reports tiers below the 1024-token minimum as dropped", () => {
    const r = placeOpenAIChat(seedRequest("gpt-4o", { L0: { tokens: 500 }, L1: { tokens: 2000 } }))
    expect(r.dropped).toEqual([{ tier: "L0", reason: expect.stringMatching(/below the 1024-token minimum for GPT-4o/) }])
  })

  it("GPT-5.6: explicit breakpoints on content blocks, never on assistant output, 3 besides the implicit one", () => {
    const r = placeOpenAIChat(bigRequest("gpt-5.6"))
    expect(r.body.prompt_cache_options).toEqual({ mode: "implicit" })
    // L1..L3 end on the assistant "Ok."; the marks move back to the user turn of each block.
    // With 3 slots, L1 (the smallest segment before the last) merges into L2.
    expect(r.breakpoints.map((b) => [b.tier, b.location])).toEqual([
      ["L0", "messages[0].content[0]"],
      ["L2", "messages[3].content[0]"],
      ["L3", "messages[5].content[0]"]
    ])
    expect(r.dropped).toEqual([{ tier: "L1", reason: expect.stringMatching(/merged into the L2 breakpoint: .*1 taken by OpenAI's implicit breakpoint/) }])
    expect(r.notes.filter((n) => n.includes("no breakpoint on assistant output"))).toHaveLength(3)
    const assistants = r.body.messages.filter((m) => m.role === "assistant")
    expect(JSON.stringify(assistants)).not.toContain("prompt_cache_breakpoint")
    expect(r.body.messages[3]!.content?.[0]).toMatchObject({ prompt_cache_breakpoint: { mode: "explicit" } })
    expect(r.body.messages[1]!.content?.[0]).not.toHaveProperty("prompt_cache_breakpoint")
  })

  it("GPT-5.6 explicit mode uses all 4 writes", () => {
    const r = placeOpenAIChat(bigRequest("gpt-5.6"), { cacheMode: "explicit", systemRole: "developer" })
    expect(r.body.prompt_cache_options).toEqual({ mode: "explicit" })
    expect(r.breakpoints).toHaveLength(4)
    expect(r.body.messages[0]).toEqual({ role: "developer", content: [{ type: "text", text: expect.any(String), prompt_cache_breakpoint: { mode: "explicit" } }] })
  })

  it("GPT-5.6 explicit mode with nothing cacheable falls back to implicit (explicit without markers caches nothing)", () => {
    const r = placeOpenAIChat(seedRequest("gpt-5.6", { L0: { tokens: 300 } }), { cacheMode: "explicit" })
    expect(r.body.prompt_cache_options).toEqual({ mode: "implicit" })
    expect(r.notes[0]).toMatch(/sent implicit instead/)
  })
})

describe("openai responses plugin", () => {
  it("keeps system in input, assistant turns as strings, markers on input_text for GPT-5.6", () => {
    const r = placeOpenAIResponses(bigRequest("gpt-5.6"), { cacheMode: "explicit", maxTokens: 50 })
    expect(r.body.input[0]).toMatchObject({ role: "system", content: [{ type: "input_text", prompt_cache_breakpoint: { mode: "explicit" } }] })
    expect(r.body.input[2]).toEqual({ role: "assistant", content: "Ok." })
    expect(r.body.max_output_tokens).toBe(50)
    expect(r.breakpoints.map((b) => b.location)).toEqual(["input[0].content[0]", "input[1].content[0]", "input[3].content[0]", "input[5].content[0]"])
  })

  it("renders tools in the Responses shape", () => {
    const r = placeOpenAIResponses(bigRequest("gpt-4.1"), { tools: [{ name: "t", inputSchema: { type: "object" } }] })
    expect(r.body.tools).toEqual([{ type: "function", name: "t", parameters: { type: "object" }, strict: false }])
  })
})
