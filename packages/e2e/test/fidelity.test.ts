// What the model reads in an agent step, on every provider plugin's body: the last
// assistant message is one the model wrote, a request after tool results ends with the
// message carrying them (results first), every call is answered in the next message, and
// no synthetic turn ("Ok.") follows the first real user message. A property over random
// agent sessions (text turns, parallel tool calls, files added and dropped, compaction,
// long tool output for context editing, both layouts, every plugin); the docs' tool loop
// and the streaming helper against a scripted Anthropic server on 127.0.0.1 that refuses
// a body breaking those rules; sessions that never mix and strict commits over the file store.
import Anthropic from "@anthropic-ai/sdk"
import { LayoutMode } from "@strata/core/effect"
import { createContextEngine, StaleTurn, TurnAlreadyCommitted, InvalidInput, type ContextEngine, type Message, type ProviderPlugin, type ToolDefinition, type ToolResultPart } from "@strata/core"
import {
  AiSdkPlacement,
  AnthropicPlacement,
  BedrockPlacement,
  GeminiPlacement,
  OpenAICompatiblePlacement,
  OpenAIPlacement,
  OpenAIResponsesPlacement,
  streamAnthropicTurn
} from "@strata/providers"
import { stateStore } from "@strata/store"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import { bodyTurns as turnsOf, fidelityProblems as checkFidelity, type RealTurns } from "@strata/test-support/fidelity"
import { json, sse, startServer } from "@strata/test-support/http"
import { Layer } from "effect"
import fc from "fast-check"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let repo: string
beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "strata-e2e-fidelity-"))
  mkdirSync(join(repo, "src"))
  writeFileSync(join(repo, "src/math.ts"), "export const add = (a: number, b: number): number => a + b\n")
  writeFileSync(join(repo, "src/util.ts"), "import { add } from \"./math\"\nexport function twice(n: number): number {\n  return add(n, n)\n}\n")
  writeFileSync(join(repo, "src/main.ts"), "import { twice } from \"./util\"\nexport const main = () => twice(2)\n")
})
afterAll(() => rmSync(repo, { recursive: true, force: true }))

const READ_FILE: ToolDefinition = {
  name: "read_file",
  description: "Read a file of the repository.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === "string" ? v : "")

// The session's real turns carry markers: prompts ⟦Q, replies ⟦R (a turn with a call is the model's too).
const REAL: RealTurns = {
  user: (t) => t.parts.some((p) => p.text.includes("⟦Q")),
  assistant: (t) => t.parts.some((p) => p.text.includes("⟦R"))
}
const fidelityProblems = (body: unknown, afterTools: boolean): ReadonlyArray<string> => checkFidelity(body, afterTools, REAL)

// ---------------------------------------------------------------------------------
// The property.

const PLUGINS: ReadonlyArray<readonly [string, string, ProviderPlugin<unknown>]> = [
  ["anthropic", "claude-sonnet-4-5", AnthropicPlacement({ tools: [READ_FILE] })],
  ["bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", BedrockPlacement({ tools: [READ_FILE] })],
  ["openai", "gpt-4o", OpenAIPlacement({ tools: [READ_FILE] })],
  ["openai-responses", "gpt-4o", OpenAIResponsesPlacement({ tools: [READ_FILE] })],
  ["gemini", "gemini-2.5-pro", GeminiPlacement({ tools: [READ_FILE] })],
  ["openai-compatible", "claude-sonnet-4-5", OpenAICompatiblePlacement({ tools: [READ_FILE] })],
  ["ai-sdk", "claude-sonnet-4-5", AiSdkPlacement({ tools: [READ_FILE] })]
]

type Step =
  | { readonly kind: "text" }
  | { readonly kind: "tools"; readonly calls: number; readonly long: boolean; readonly withText: boolean }
  | { readonly kind: "add"; readonly file: string }
  | { readonly kind: "drop"; readonly file: string }
  | { readonly kind: "compact" }

const FILES = ["src/math.ts", "src/util.ts", "src/main.ts"]
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ kind: "text" as const }),
  fc.record({ kind: fc.constant("tools" as const), calls: fc.integer({ min: 1, max: 3 }), long: fc.boolean(), withText: fc.boolean() }),
  fc.record({ kind: fc.constant("add" as const), file: fc.constantFrom(...FILES) }),
  fc.record({ kind: fc.constant("drop" as const), file: fc.constantFrom(...FILES) }),
  fc.constant({ kind: "compact" as const })
)

const runSession = async (engine: ContextEngine<unknown>, steps: ReadonlyArray<Step>) => {
  let n = 0
  const check = (body: unknown, afterTools: boolean, what: string) => {
    expect(fidelityProblems(body, afterTools), what).toEqual([])
  }
  for (const s of steps) {
    n++
    if (s.kind === "add") await engine.addFile(s.file)
    else if (s.kind === "drop") await engine.removeFile(s.file)
    else if (s.kind === "compact") await engine.compactHistoryIfNeeded()
    else {
      const turn = await engine.assemble({ prompt: `⟦Q${n}⟧ What does the code do?` })
      check(turn.request, false, `step ${n}: prompt`)
      if (s.kind === "text") {
        await turn.commit({ reply: `⟦R${n}⟧ It adds.` })
        continue
      }
      const calls = Array.from({ length: s.calls }, (_, k) => ({ type: "tool-call" as const, toolCallId: `call_${n}_${k}`, toolName: "read_file", input: { path: FILES[k % FILES.length]! } }))
      const reply: ReadonlyArray<Message> = [{ role: "assistant", content: [...(s.withText ? [{ type: "text" as const, text: `⟦R${n}⟧ Reading.` }] : []), ...calls] }]
      await turn.commit({ reply })
      const results: ReadonlyArray<ToolResultPart> = calls.map((c) => ({ type: "tool-result", toolCallId: c.toolCallId, toolName: c.toolName, output: { type: "text", value: s.long ? `${c.input.path}\n${"export const x = 1\n".repeat(400)}` : `${c.input.path}: short` } }))
      const next = await engine.assemble({ toolResults: results })
      check(next.request, true, `step ${n}: after tool results`)
      await next.commit({ reply: `⟦R${n}⟧ Done.` })
    }
  }
}

describe("what the model reads in an agent step", () => {
  it("property: on every provider plugin and layout, no forged turn, tool results end the request, every call answered next", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PLUGINS), fc.constantFrom("journal" as const, "seed" as const), fc.array(step, { minLength: 3, maxLength: 9 }), async ([, model, provider], layout, steps) => {
        await using engine = createContextEngine({
          repoRoot: repo,
          model,
          tracker: TrackerLayer.memory({ config: { thresholds: { L3: 1, L2: 2, L1: 3, L0: 4 } } }),
          symbols: symbolIndexLayer(repo, { cache: false, git: false }),
          provider,
          compaction: { triggerTokens: 1_500, verbatimWindowTokens: 300, minVerbatimExchanges: 1 },
          layers: [Layer.succeed(LayoutMode, layout)]
        })
        await runSession(engine, steps)
      }),
      { numRuns: 24, seed: 25 }
    )
  }, 240_000)
})

// ---------------------------------------------------------------------------------
// The docs' tool loop and the streaming helper, against a scripted Anthropic server.

/** A Messages API stand-in: refuses a body that breaks the rules, asks for a file, then answers. */
const scriptedAnthropic = () =>
  startServer(async (req, _n, res) => {
    const body = req.json
    const problems = fidelityProblems(body, JSON.stringify(body).includes("\"tool_result\""))
    if (problems.length > 0) return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: problems.join("; ") } })
    const answered = JSON.stringify(body).includes("\"tool_result\"")
    const usage = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
    const content = answered
      ? [{ type: "text", text: "⟦R⟧ math.ts exports add." }]
      : [{ type: "text", text: "⟦R⟧ Let me read it." }, { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "src/math.ts" } }]
    const message = { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content, stop_reason: answered ? "end_turn" : "tool_use", stop_sequence: null, usage }
    if (isRecord(body) && body["stream"] === true) {
      const text = str(content[0]?.text)
      return sse(res, [
        { event: "message_start", data: { type: "message_start", message: { ...message, content: [], stop_reason: null } } },
        { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
        { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text.slice(0, 5) } } },
        { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text.slice(5) } } },
        { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
        { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 10 } } },
        { event: "message_stop", data: { type: "message_stop" } }
      ])
    }
    return json(res, 200, message)
  })

describe("the tool loop and streaming against a scripted server", () => {
  it("engine.runToolLoop: the docs' loop with a file in context passes the server's checks and commits every round", async () => {
    const server = await scriptedAnthropic()
    try {
      const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 })
      await using engine = createContextEngine({
        repoRoot: repo,
        model: "claude-sonnet-4-6",
        tracker: TrackerLayer.memory(),
        symbols: symbolIndexLayer(repo, { cache: false, git: false }),
        provider: AnthropicPlacement({ tools: [READ_FILE] })
      })
      await engine.addFile("src/math.ts")
      const read: Array<string> = []
      const result = await engine.runToolLoop({
        prompt: "⟦Q⟧ What does math.ts export?",
        send: (request, { signal }) => client.messages.create(request, signal === undefined ? {} : { signal }),
        tools: { read_file: (input) => { read.push(JSON.stringify(input)); return "export const add = (a, b) => a + b" } }
      })
      expect(result).toMatchObject({ text: "⟦R⟧ math.ts exports add.", requests: 2, toolRounds: 1 })
      expect(read).toEqual([JSON.stringify({ path: "src/math.ts" })])
      expect(server.requests.map((r) => r.path)).toEqual(["/v1/messages", "/v1/messages"])
      expect((await engine.getHistory()).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
      // The second body: the tool result first in the last message, then the file in context,
      // journaled once in the user turn of the step (cached with it: later steps read it from
      // the cache), no "Ok." anywhere after the prompt.
      const last = turnsOf(server.requests[1]?.json).at(-1)
      expect(last?.parts.map((p) => p.kind)).toEqual(["result", "text"])
      expect(last?.parts[1]?.text).toContain("src/math.ts\n```")
      const body = server.requests[1]?.json
      const lastMessage = isRecord(body) && Array.isArray(body["messages"]) ? body["messages"].at(-1) : undefined
      const lastBlock = isRecord(lastMessage) && Array.isArray(lastMessage["content"]) ? lastMessage["content"].at(-1) : undefined
      expect(isRecord(lastBlock) && lastBlock["cache_control"] !== undefined).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("a handler's error and an unknown tool go back to the model as error results", async () => {
    const server = await scriptedAnthropic()
    try {
      const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 })
      await using engine = createContextEngine({ repoRoot: repo, model: "claude-sonnet-4-6", provider: AnthropicPlacement({ tools: [READ_FILE] }) })
      await engine.runToolLoop({
        prompt: "⟦Q⟧ What does math.ts export?",
        send: (request) => client.messages.create(request),
        tools: { read_file: () => { throw new Error("no such file") } }
      })
      const tool = (await engine.getHistory())[2]
      expect(tool).toMatchObject({ role: "tool", content: [{ type: "tool-result", output: { type: "error-text", value: "no such file" } }] })
    } finally {
      await server.close()
    }
  })

  it("streamAnthropicTurn streams the text and commits the final message", async () => {
    const server = await scriptedAnthropic()
    try {
      const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 })
      await using engine = createContextEngine({ repoRoot: repo, model: "claude-sonnet-4-6", provider: AnthropicPlacement })
      const turn = await engine.assemble({ prompt: "⟦Q⟧ Hello?" })
      const deltas: Array<string> = []
      const { committed } = await streamAnthropicTurn(turn, client.messages.stream(turn.request), { onText: (d) => deltas.push(d) })
      expect(deltas.join("")).toBe("⟦R⟧ Let me read it.")
      expect(committed.appended.at(-1)).toEqual({ role: "assistant", content: "⟦R⟧ Let me read it." })
      expect((await engine.getSessionRecord()).turns).toBe(1)
    } finally {
      await server.close()
    }
  })
})

// ---------------------------------------------------------------------------------
// Sessions never mix; strict commits; what commit accepts is what the store keeps.

describe("sessions and commits over the file store", () => {
  it("two engines on one store without session see nothing of each other; continuing is explicit", async () => {
    const store = stateStore("file")
    {
      await using a = createContextEngine({ repoRoot: repo, model: "gpt-4o", store })
      await using b = createContextEngine({ repoRoot: repo, model: "gpt-4o", store })
      expect(a.sessionId).not.toBe(b.sessionId)
      const turn = await a.assemble({ prompt: "from A" })
      await turn.commit({ reply: "reply to A" })
      expect(await b.getHistory()).toEqual([])
      expect((await b.assemble({ prompt: "from B" })).neutral.messages.map((m) => JSON.stringify(m.content)).join()).not.toContain("from A")
      await using c = createContextEngine({ repoRoot: repo, model: "gpt-4o", store, session: a.sessionId })
      expect((await c.getHistory()).map((m) => m.content)).toEqual(["from A", "reply to A"])
    }
  })

  it("double commit and a stale turn give their tagged errors; malformed input is InvalidInput and nothing reaches the store", async () => {
    const store = stateStore("file")
    {
      await using e = createContextEngine({ repoRoot: repo, model: "gpt-4o", store })
      const first = await e.assemble({ prompt: "one" })
      const second = await e.assemble({ prompt: "two" })
      await first.commit({ reply: "1" })
      await expect(first.commit({ reply: "1 again" })).rejects.toBeInstanceOf(TurnAlreadyCommitted)
      await expect(second.commit({ reply: "2" })).rejects.toBeInstanceOf(StaleTurn)
      for (const bad of [{ prompt: 12345 }, { prompt: {} }, { toolResults: [{ type: "tool-result", toolCallId: "c", toolName: "t", output: "str" }] }, { toolResults: [{ type: "tool-result", toolCallId: "c", toolName: "t", output: undefined }] }]) {
        // @ts-expect-error: what a JavaScript caller may pass
        await expect(e.assemble(bad)).rejects.toBeInstanceOf(InvalidInput)
      }
      // A fresh engine on the same session decodes exactly what was committed.
      await using again = createContextEngine({ repoRoot: repo, model: "gpt-4o", store, session: e.sessionId })
      expect((await again.getHistory()).map((m) => m.content)).toEqual(["one", "1"])
    }
  })
})
