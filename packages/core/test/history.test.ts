// Tool histories: the `History` schema pairs every tool call with its result in the next
// message, and every entry point that takes an untrusted history (setHistory, loadSession,
// assembly input) rejects a broken one with an InvalidInput naming the message and the id,
// changing nothing. Also: tool parts count as tokens, and the seeds' format renders them.
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it as vitestIt } from "vitest"
import {
  createContextEngine,
  decodeAssemblyInput,
  History,
  historyProblems,
  InvalidInput,
  makeCustomCounter,
  makeEstimatingCounter,
  Message,
  messageText,
  placeSeedFormat,
  type ToolCallPart,
  type ToolResultOutput
} from "../src/effect.ts"
import { it } from "@strata/test-support"

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "strata-history-"))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const engine = () => createContextEngine({ model: "gpt-4o", repoRoot: root, tokenCounter: makeEstimatingCounter() })

const call = (id: string, path = "src/a.ts"): ToolCallPart => ({ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path } })
const result = (id: string, output: ToolResultOutput = { type: "text", value: "export const a = 1" }) => ({ type: "tool-result" as const, toolCallId: id, toolName: "read_file", output })

const session: ReadonlyArray<Message> = [
  { role: "user", content: "What is in src?" },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: " keep\tme\nexactly ", provider: "anthropic", signature: "EqQB+/==" },
      { type: "text", text: "Reading two files." },
      call("c1"),
      call("c2", "src/b.ts")
    ]
  },
  { role: "tool", content: [result("c1"), result("c2", { type: "error-text", value: "ENOENT" })] },
  { role: "assistant", content: "a exports 1; b is missing." }
]

describe("History", () => {
  it("decodes a tool session unchanged, reasoning byte-exact", () => {
    const decoded = Schema.decodeUnknownSync(History)(session)
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(session))
  })

  it("decodes text and image histories exactly as before", () => {
    const old = [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "see" }, { type: "image", url: "data:image/png;base64,AA", mediaType: "image/png" }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] }
    ]
    expect(JSON.stringify(Schema.decodeUnknownSync(History)(old))).toBe(JSON.stringify(old))
  })

  const broken: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, RegExp]> = [
    ["an orphan result", [{ role: "user", content: "hi" }, { role: "tool", content: [result("c9")] }], /message 1: tool result "c9" answers no tool call of message 0/],
    ["a call not answered in the next message", [session[0], session[1], { role: "user", content: "and?" }], /message 1: tool call "c1" \(read_file\) is not answered: message 2 must be a tool message with its result, but it is a user message/],
    ["a call whose result is missing", [session[0], session[1], { role: "tool", content: [result("c1")] }], /message 2: tool call "c2" \(read_file\) of message 1 has no result here/],
    ["a history ending on calls", [session[0], session[1]], /message 1: tool call "c1" \(read_file\) is not answered: .*the history ends/],
    ["a duplicate call id", [...session, { role: "assistant", content: [call("c1")] }, { role: "tool", content: [result("c1")] }], /message 4: tool call id "c1" is already used by message 1/],
    ["a tool message with text", [session[0], { role: "assistant", content: [call("c1")] }, { role: "tool", content: [{ type: "text", text: "done" }] }], /Expected "tool-result"\n {2}at (\["history"\])?\[2\]\["content"\]\[0\]\["type"\]/],
    ["a result naming another tool", [session[0], { role: "assistant", content: [call("c1")] }, { role: "tool", content: [{ ...result("c1"), toolName: "ls" }] }], /message 2: tool result "c1" names tool "ls", but the call was to "read_file"/]
  ]

  for (const [name, input, message] of broken) {
    vitestIt(`setHistory rejects ${name} with InvalidInput and keeps the history`, async () => {
      await using e = engine()
      await e.addExchange("keep", "me")
      const error = await e.setHistory(input).catch((x: unknown) => x)
      expect(error).toBeInstanceOf(InvalidInput)
      expect((error as InvalidInput).message).toMatch(message)
      const loaded = await e.loadSession(input).catch((x: unknown) => x)
      expect((loaded as InvalidInput).message).toMatch(message)
      expect(await e.getHistory()).toEqual([{ role: "user", content: "keep" }, { role: "assistant", content: "me" }])
      const assembly = await Effect.runPromise(Effect.flip(decodeAssemblyInput({ model: "gpt-4o", prompt: "go", systemPrompt: "s", history: input })))
      expect(assembly.message).toMatch(message)
    })
  }

  vitestIt("setHistory takes a tool session and getHistory returns a copy of it", async () => {
    await using e = engine()
    await e.setHistory(session)
    const copy = await e.getHistory()
    expect(copy).toEqual(session)
    expect(copy[1]).not.toBe(session[1])
  })

  /** Random sessions of tool rounds (1-3 parallel calls) and chat turns. */
  const sessionArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 6 }).map((rounds) => {
    const history: Array<Message> = [{ role: "user", content: "start" }]
    let id = 0
    for (const calls of rounds) {
      if (calls === 0) {
        history.push({ role: "assistant", content: "ok" }, { role: "user", content: "next" })
        continue
      }
      const ids = Array.from({ length: calls }, () => `call_${id++}`)
      history.push({ role: "assistant", content: ids.map((c) => call(c)) }, { role: "tool", content: ids.map((c) => result(c)) })
    }
    return history
  })

  it("random valid sessions decode; each break is named by message and id", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), (history, pick) => {
        expect(historyProblems(history)).toEqual([])
        const tools = history.flatMap((m, i) => (m.role === "tool" ? [i] : []))
        if (tools.length === 0) return
        const at = tools[pick % tools.length]!
        const tool = history[at]!
        if (tool.role !== "tool") return
        const id = tool.content[0]!.toolCallId
        // Orphan: drop the calls; unanswered: drop the results; duplicate: reuse an id.
        const orphan = [...history.slice(0, at - 1), ...history.slice(at)]
        expect(historyProblems(orphan)[0]?.issue).toMatch(new RegExp(`^message ${at - 1}: tool result "${id}" answers no tool call`))
        const unanswered = [...history.slice(0, at), ...history.slice(at + 1)]
        expect(historyProblems(unanswered)[0]?.issue).toMatch(new RegExp(`^message ${at - 1}: tool call "${id}" \\(read_file\\) is not answered`))
        const again: ReadonlyArray<Message> = [...history, { role: "assistant", content: [call(id)] }, { role: "tool", content: [result(id)] }]
        expect(historyProblems(again)[0]?.issue).toBe(`message ${history.length}: tool call id "${id}" is already used by message ${at - 1}; tool call ids must be unique`)
      }),
      { numRuns: 100 }
    )
  })
})

describe("tool parts elsewhere in core", () => {
  it("count as their text: a call's name and JSON input, a result's output", () => {
    const counter = makeCustomCounter("chars", (t) => t.length)
    expect(counter.countMessage({ role: "assistant", content: [call("c1")] })).toBe(4 + `read_file {"path":"src/a.ts"}`.length)
    expect(counter.countMessage({ role: "tool", content: [result("c1", { type: "json", value: { a: 1 } })] })).toBe(4 + `{"a":1}`.length)
    expect(counter.countMessage({ role: "tool", content: [result("c1", { type: "content", value: [{ type: "text", text: "x" }, { type: "image", url: "data:image/png;base64,AA" }] })] })).toBe(4 + 1 + 1000)
    expect(messageText(session[1]!)).toBe(` keep\tme\nexactly \n\nReading two files.\n\nread_file {"path":"src/a.ts"}\n\nread_file {"path":"src/b.ts"}`)
  })

  it("the seeds' format renders tool calls and one tool message per result, markers in place", () => {
    const messages: ReadonlyArray<Message> = [{ role: "system", content: "s" }, ...session]
    const placed = placeSeedFormat({ model: "m", blocks: [], messages, breakpoints: [{ tier: "L0", messageIndex: 0 }, { tier: "L1", messageIndex: 3 }] })
    const body = placed.body as { messages: ReadonlyArray<unknown> }
    expect(body.messages.slice(2, 5)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Reading two files." }],
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read_file", arguments: "{\"path\":\"src/a.ts\"}" } },
          { id: "c2", type: "function", function: { name: "read_file", arguments: "{\"path\":\"src/b.ts\"}" } }
        ]
      },
      { role: "tool", tool_call_id: "c1", content: "export const a = 1" },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "ENOENT", cache_control: { type: "ephemeral" } }] }
    ])
    expect(placed.breakpoints.map((b) => b.location)).toEqual(["messages[0].content[0]", "messages[4].content[0]"])
  })
})
