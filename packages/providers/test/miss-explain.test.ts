// explainMiss over every body format: the reason for each kind of miss, the block
// walk matching the simulators' blocks, and the comparison with reported usage.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  explainMiss,
  makeSimulator,
  placeAiSdk,
  placeAnthropic,
  placeBedrockConverse,
  placeGemini,
  placeOpenAIChat,
  placeOpenAIResponses,
  walkBody,
  type BodyFormat,
  type SimProvider
} from "../src/index.ts"
import { bigRequest } from "./plugins-fixtures.ts"
import { chars, tb, text } from "./sim-helpers.ts"

const MODEL = "claude-sonnet-4-5" // minimum 1024
const opts = { countTokens: chars }

type Block = ReturnType<typeof tb> | { type: string; [k: string]: unknown }

/** A Messages body: a marked 2000-token system prompt and the given messages. */
const body = (messages: ReadonlyArray<{ role: "user" | "assistant"; content: ReadonlyArray<Block> }>, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 100,
  system: [tb(2000, "sys", true)],
  messages,
  ...extra
})

/** A chat of `turns` user questions (300 tokens each) and the answers between them; the last question is marked. */
const chat = (turns: number, edit?: { readonly message: number; readonly seed: string }) => {
  const messages: Array<{ role: "user" | "assistant"; content: Array<Block> }> = []
  for (let i = 0; i < turns; i++) {
    for (const role of i === turns - 1 ? (["user"] as const) : (["user", "assistant"] as const)) {
      const m = messages.length
      messages.push({ role, content: [tb(300, edit?.message === m ? edit.seed : `${role}${i}`)] })
    }
  }
  const last = messages.at(-1)!
  last.content = last.content.map((b) => ({ ...b, cache_control: { type: "ephemeral" } }))
  return messages
}

describe("explainMiss (anthropic)", () => {
  it("an append-only turn is a hit: nothing the previous request cached was lost", () => {
    const why = explainMiss(body(chat(2)), body(chat(3)), opts)
    expect(why.reason).toEqual({ kind: "none" })
    expect(why.verdict).toBe("hit")
    expect(why.usage.expected.cacheRead).toBe(2000 + 3 * 300)
    expect(why.summary).toBe("hit: nothing lost: it read all it shares with what the previous request cached; read 2,900 of 3,500 tokens, new from messages[3].content[0] on")
  })

  it("names the edited message and part", () => {
    const why = explainMiss(body(chat(3)), body(chat(4, { message: 2, seed: "rewritten" })), opts)
    expect(why.reason).toMatchObject({ kind: "message-edited", message: 2, change: { type: "edited", path: "messages[2].content[0]", kind: "text" } })
    expect(why.verdict).toBe("partial")
    expect(why.divergence).toBe(3) // system, message 0, message 1
    expect(why.usage.expected.cacheRead).toBe(2000)
    expect(why.readThrough).toBe("system[0]")
  })

  it("system changed, tools changed, model changed, settings changed", () => {
    const system = body(chat(2))
    const edited = { ...body(chat(3)), system: [tb(2000, "sys v2", true)] }
    expect(explainMiss(system, edited, opts).reason).toMatchObject({ kind: "system-changed", change: { path: "system[0]" } })

    const tool = (name: string) => ({ name, description: `${name} tool`, input_schema: { type: "object" } })
    const withTools = (names: ReadonlyArray<string>) => ({ ...body(chat(3)), tools: names.map(tool) })
    const added = explainMiss(withTools(["read"]), withTools(["read", "write"]), opts)
    expect(added.reason).toMatchObject({ kind: "tools-changed", change: { type: "inserted", path: "tools[1]" } })
    expect(added.verdict).toBe("miss")
    const inserted = explainMiss(withTools(["read", "write"]), withTools(["list", "read", "write"]), opts)
    expect(inserted.reason).toMatchObject({ kind: "tools-changed", change: { type: "inserted", path: "tools[0]" } })

    const other = { ...body(chat(3)), model: "claude-opus-4-1" }
    expect(explainMiss(body(chat(2)), other, opts).reason).toEqual({ kind: "model-changed", from: MODEL, to: "claude-opus-4-1" })

    const thinking = { ...body(chat(3)), thinking: { type: "enabled", budget_tokens: 2048 } }
    const settings = explainMiss(body(chat(2)), thinking, opts)
    expect(settings.reason).toEqual({ kind: "settings-changed", fields: ["thinking"] })
    expect(settings.usage.expected.cacheRead).toBe(2000) // the messages tier only
  })

  it("TTL expired and not yet written, from the send times", () => {
    const expired = explainMiss(body(chat(2)), body(chat(3)), { ...opts, previousAt: 0, nextAt: 420 })
    expect(expired.reason).toEqual({ kind: "ttl-expired", idleSeconds: 420, ttlSeconds: 300 })
    expect(expired.verdict).toBe("miss")
    expect(expired.usage.attainable).toBe(2900)
    expect(expired.summary).toContain("2,900 attainable")
    const early = explainMiss(body(chat(2)), body(chat(3)), { ...opts, previousAt: 0, nextAt: 0.5 })
    expect(early.reason).toEqual({ kind: "not-yet-written", gapSeconds: 0.5 })
    // A 1 h breakpoint survives the same gap.
    const hour = (m: ReturnType<typeof chat>) => ({ ...body(m), system: [tb(2000, "sys", "1h")] })
    expect(explainMiss(hour(chat(2)), hour(chat(3)), { ...opts, previousAt: 0, nextAt: 420 }).usage.expected.cacheRead).toBe(2000)
  })

  it("prefix under the model's minimum", () => {
    const small = (turns: number) => ({ model: MODEL, max_tokens: 100, messages: chat(turns).map((m) => ({ ...m, content: m.content.map((b) => ({ ...b, text: String(b["text"]).slice(0, 100) })) })) })
    const why = explainMiss(small(1), small(2), opts)
    expect(why.reason).toEqual({ kind: "below-minimum", prefixTokens: 100, minimum: 1024 })
    expect(why.verdict).toBe("miss")
  })

  it("the previous entry beyond the 20-block lookback window", () => {
    const blocks = (n: number) => Array.from({ length: n }, (_, i) => tb(100, `b${i}`))
    const mark = (xs: Array<Block>) => xs.map((b, i) => (i === xs.length - 1 ? { ...b, cache_control: { type: "ephemeral" } } : b))
    const previous = body([{ role: "user", content: mark(blocks(5)) }])
    const next = body([{ role: "user", content: blocks(5) }, { role: "assistant", content: [tb(10, "ok")] }, { role: "user", content: mark(blocks(25)) }])
    const why = explainMiss(previous, next, opts)
    expect(why.reason).toEqual({ kind: "beyond-lookback", distance: 26, window: 20 })
    // The system breakpoint is still read; the 500 tokens after it are not.
    expect(why.usage.expected.cacheRead).toBe(2000)
    expect(why.usage.attainable).toBe(2500)
  })

  it("no breakpoint in the previous request, or in the next one", () => {
    const unmarked = (m: ReturnType<typeof chat>) => ({ model: MODEL, max_tokens: 100, system: [tb(2000, "sys")], messages: m.map((x) => ({ ...x, content: x.content.map((b) => ({ type: "text", text: b["text"] })) })) })
    expect(explainMiss(unmarked(chat(2)), body(chat(3)), opts).reason).toEqual({ kind: "no-breakpoint", request: "previous" })
    expect(explainMiss(body(chat(2)), unmarked(chat(3)), opts).reason).toEqual({ kind: "no-breakpoint", request: "next" })
  })

  it("a tail after the previous request's last breakpoint was never cached", () => {
    const systemOnly = (m: ReturnType<typeof chat>) => body(m.map((x) => ({ ...x, content: x.content.map((b) => ({ type: "text", text: b["text"] })) })))
    const why = explainMiss(systemOnly(chat(2)), body(chat(3)), opts)
    expect(why.reason).toEqual({ kind: "uncached-tail", lastBreakpoint: "system[0]" })
  })

  it("walks tool_use and tool_result blocks like any other", () => {
    const turn = (id: string, result: string) => [
      { role: "assistant" as const, content: [tb(50, `plan ${id}`), { type: "tool_use", id, name: "read_file", input: { path: `${id}.ts` } }] },
      { role: "user" as const, content: [{ type: "tool_result", tool_use_id: id, content: result }] }
    ]
    const messages = (results: ReadonlyArray<string>) => {
      const ms: Array<{ role: "user" | "assistant"; content: Array<Block> }> = [{ role: "user", content: [tb(300, "task")] }]
      results.forEach((r, i) => ms.push(...turn(`t${i}`, r)))
      const last = ms.at(-1)!
      last.content = last.content.map((b) => ({ ...b, cache_control: { type: "ephemeral" } }))
      return ms
    }
    const why = explainMiss(body(messages(["a".repeat(400), "b".repeat(400)])), body(messages(["A".repeat(400), "b".repeat(400), "c"])), opts)
    expect(why.reason).toMatchObject({ kind: "message-edited", message: 2, change: { type: "edited", kind: "tool_result", path: "messages[2].content[0]" } })
    // A new result in place of the last one loses nothing cached: the rest is new.
    const appended = explainMiss(body(messages(["a".repeat(400), "b".repeat(400)])), body(messages(["a".repeat(400), "B".repeat(400), "c"])), opts)
    expect(appended.reason).toEqual({ kind: "none" })
    expect(appended.firstDifference).toMatchObject({ kind: "tool_result", path: "messages[4].content[0]" })
  })

  it("compares the expected read with what the provider reported", () => {
    const previous = body(chat(2))
    const next = body(chat(3))
    const expected = explainMiss(previous, next, opts).usage.expected
    const agrees = explainMiss(previous, next, { ...opts, reported: expected })
    expect(agrees.discrepancy).toBeUndefined()
    expect(agrees.summary).toContain("the provider reported 2,900 read")
    const evicted = explainMiss(previous, next, { ...opts, reported: { input: 300, cacheRead: 0, cacheWrite: 3500, output: 20 } })
    expect(evicted.discrepancy).toMatch(/read 0% of the prompt, the simulator expected 83%/)
    const warmer = explainMiss(body(chat(2, { message: 0, seed: "x" })), next, { ...opts, reported: expected })
    expect(warmer.discrepancy).toMatch(/an earlier request/)
  })
})

describe("explainMiss (other formats)", () => {
  it("bedrock converse: cachePoint blocks are markers, not blocks", () => {
    const converse = (extra: string) => ({
      modelId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      system: [{ text: text(2000, "sys") }, { cachePoint: { type: "default" } }],
      messages: [{ role: "user", content: [{ text: text(1500, "u0") }, { text: text(100, extra) }, { text: text(300, "tail") }, { cachePoint: { type: "default" } }] }]
    })
    const why = explainMiss(converse("a"), converse("b"), opts)
    expect(why.format).toBe("bedrock-converse")
    expect(why.reason).toMatchObject({ kind: "message-edited", message: 0, change: { path: "messages[0].content[1]", kind: "text" } })
    expect(why.usage.expected.cacheRead).toBe(2000)
  })

  it("openai chat and responses: automatic caching reads the common prefix", () => {
    const chatBody = (edited: string) => ({ model: "gpt-4o", messages: [{ role: "system", content: text(3000, "sys") }, { role: "user", content: text(500, "u") }, { role: "user", content: edited }, { role: "user", content: text(300, "tail") }] })
    const why = explainMiss(chatBody("one"), chatBody("two"), opts)
    expect(why.format).toBe("openai-chat")
    expect(why.reason).toMatchObject({ kind: "message-edited", message: 2, change: { path: "messages[2].content" } })
    expect(why.usage.expected.cacheRead).toBe(3456) // 3500 in 128-token steps
    const keyed = explainMiss({ ...chatBody("one"), prompt_cache_key: "a" }, { ...chatBody("one"), prompt_cache_key: "b" }, opts)
    expect(keyed.reason).toEqual({ kind: "settings-changed", fields: ["prompt_cache_key"] })

    // Function call outputs given as content parts are one block per part, like messages.
    const outputs = (second: string) => ({
      model: "gpt-5.6",
      input: [
        { role: "user", content: [{ type: "input_text", text: text(2000, "task") }] },
        { type: "function_call", call_id: "c1", name: "read", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: text(1500, "file") }, { type: "input_text", text: second, prompt_cache_breakpoint: { mode: "explicit" } }] },
        { role: "user", content: [{ type: "input_text", text: text(300, "next") }] }
      ]
    })
    const parts = explainMiss(outputs("v1"), outputs("v2"), opts)
    expect(parts.reason).toMatchObject({ kind: "message-edited", message: 2, change: { path: "input[2].output[1]", kind: "input_text" } })
    expect(walkBody(outputs("v1"), "openai-responses").markers).toEqual([3])

    const responses = (instructions: string) => ({ model: "gpt-4o", instructions, input: [{ role: "user", content: [{ type: "input_text", text: text(2000, "u") }] }] })
    const r = explainMiss(responses(text(1500, "a")), responses(text(1500, "b")), opts)
    expect(r.format).toBe("openai-responses")
    expect(r.reason).toMatchObject({ kind: "system-changed", change: { path: "instructions" } })
  })

  it("gemini: implicit caching, parts by position", () => {
    const gemini = (second: string) => ({ model: "gemini-2.5-flash", contents: [{ role: "user", parts: [{ text: text(3000, "doc") }, { text: second }, { text: text(200, "tail") }] }] })
    const why = explainMiss(gemini("a"), gemini("b"), opts)
    expect(why.format).toBe("gemini")
    expect(why.reason).toMatchObject({ kind: "message-edited", message: 0, change: { path: "contents[0].parts[1]" } })
    expect(why.usage.expected.cacheRead).toBe(3000)
  })

  it("AI SDK messages, simulated as @ai-sdk/anthropic renders them", () => {
    const first = placeAiSdk(bigRequest(MODEL), { target: "anthropic" }).body
    const edited = { ...first, messages: first.messages.map((m, i) => (i === 3 ? { role: "user" as const, content: [{ type: "text" as const, text: "changed" }] } : m)) }
    const why = explainMiss(first, edited, { model: MODEL })
    expect(why.format).toBe("ai-sdk")
    expect(why.provider).toBe("anthropic")
    expect(why.reason).toMatchObject({ kind: "message-edited", change: { path: "messages[3].content[0]" } })
    expect(why.verdict).toBe("partial")
  })

  // The block walk yields the simulator's blocks, so the simulator's hit block maps onto a path.
  it("every plugin's body walks into as many blocks as its simulator hashes", () => {
    const cases: ReadonlyArray<readonly [Exclude<BodyFormat, "ai-sdk">, SimProvider, string, unknown]> = [
      ["anthropic", "anthropic", MODEL, placeAnthropic(bigRequest(MODEL), { tools: [{ name: "t", description: "d", inputSchema: { type: "object" } }], cacheTools: true }).body],
      ["bedrock-converse", "bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", placeBedrockConverse(bigRequest("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).body],
      ["openai-chat", "openai", "gpt-4o", placeOpenAIChat(bigRequest("gpt-4o")).body],
      ["openai-responses", "openai", "gpt-5.6", placeOpenAIResponses(bigRequest("gpt-5.6")).body],
      ["gemini", "gemini", "gemini-2.5-flash", placeGemini(bigRequest("gemini-2.5-flash")).body]
    ]
    for (const [format, provider, model, b] of cases) {
      const trace = makeSimulator(provider, { model }).send(b, 0).trace
      expect(walkBody(b, format).blocks.length, format).toBe(trace.blocks)
    }
  })
})

describe("explainMiss properties", () => {
  const turnArb = fc.array(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 2, maxLength: 12 })

  it("an append-only continuation of a marked request never misses; an edit is found at its block", () => {
    fc.assert(
      fc.property(turnArb, fc.nat(), fc.string({ minLength: 1, maxLength: 10 }), (texts, pick, replacement) => {
        const messages = texts.map((t, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: [tb(60, `${i}:${t}`)] }))
        const marked = (ms: typeof messages) => ms.map((m, i) => (i === ms.length - 1 ? { ...m, content: m.content.map((b) => ({ ...b, cache_control: { type: "ephemeral" } })) } : m))
        const previous = body(marked(messages))
        const extended = body(marked([...messages, { role: messages.length % 2 === 0 ? "user" : "assistant", content: [tb(60, "next")] }]))
        expect(explainMiss(previous, extended, opts).reason.kind).toBe("none")
        const at = pick % messages.length
        const edited = messages.map((m, i) => (i === at ? { ...m, content: [tb(60, `edit ${replacement} ${i}`)] } : m))
        const why = explainMiss(previous, body(marked(edited)), opts)
        expect(why.divergence).toBe(1 + at)
        expect(why.firstDifference).toMatchObject({ path: `messages[${at}].content[0]` })
        // Editing the last message loses nothing cached that the next request still sends.
        if (at === messages.length - 1) expect(why.reason.kind).toBe("none")
        else expect(why.reason).toMatchObject({ kind: "message-edited", message: at })
      }),
      { numRuns: 60 }
    )
  })
})
