// The drop-in cache middleware, for real: scripted sessions through `generateText` with
// `@ai-sdk/anthropic` against a recording server on 127.0.0.1 that answers with the
// Anthropic simulator's usage. Asserts where the breakpoints land in the wire body and
// that the session costs no more than a trailing-breakpoint baseline, and less where the
// lookback window or the minimum prefix bites.
import { createAnthropic } from "@ai-sdk/anthropic"
import { generateText, jsonSchema, streamText, tool, wrapLanguageModel, type LanguageModelMiddleware, type ModelMessage, type ToolSet } from "ai"
import { afterEach, describe, expect, it } from "vitest"
import { cachedPromptBodies, makeSimulator, strataCache, type Prompt } from "../src/index.ts"
import { json, sse, startServer, type Recorded, type TestServer } from "./wire-server.ts"

const MODEL = "claude-sonnet-4-5" // minimum 1024 tokens, 20-block lookback, 4 markers

let servers: Array<TestServer> = []
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()))
  servers = []
})

/** Text of about `tokens` tokens at chars/4, distinct per label. */
const words = (label: string, tokens: number): string => {
  const unit = `${label} reads the parser's output and checks each node. `
  let s = ""
  while (s.length < tokens * 4) s += unit
  return s.slice(0, tokens * 4)
}

/** A server that simulates Anthropic's cache over what it receives, request `n` at `times[n]` seconds. */
const simulatedServer = async (times: ReadonlyArray<number>, stream = false) => {
  const sim = makeSimulator("anthropic", { model: MODEL })
  let cost = 0
  const server = await startServer((req, n, res) => {
    const r = sim.send(req.json, times[n] ?? n * 30, { outputTokens: 5 })
    cost += r.cost.inputEquivalentTokens
    if (!stream) {
      json(res, 200, { id: `msg_${n}`, type: "message", role: "assistant", model: MODEL, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: r.native })
      return
    }
    return sse(res, [
      { event: "message_start", data: { type: "message_start", message: { id: `msg_${n}`, type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { ...r.native, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } } },
      { event: "message_stop", data: { type: "message_stop" } }
    ])
  })
  servers.push(server)
  return { server, cost: () => cost, usage: sim }
}

/** The usual recipe: one `cacheControl` on the last message. */
const trailingBreakpoint: LanguageModelMiddleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({
    ...params,
    prompt: params.prompt.map((m, i) => (i === params.prompt.length - 1 ? { ...m, providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } } : m))
  })
}

interface Session {
  readonly system: string
  /** The messages of each call, in order. */
  readonly calls: ReadonlyArray<Array<ModelMessage>>
  readonly times: ReadonlyArray<number>
  /** Tools every call passes (the AI SDK sends them ahead of the system prompt). */
  readonly tools?: ToolSet | undefined
}

/** Run a session through `generateText` with a middleware; the recorded bodies and the simulated cost. */
const run = async (session: Session, middleware: LanguageModelMiddleware, options: { readonly stream?: boolean } = {}) => {
  const { server, cost } = await simulatedServer(session.times, options.stream === true)
  const provider = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: "sk-ant-test" })
  const prompts: Array<Prompt> = []
  const capture: LanguageModelMiddleware = {
    specificationVersion: "v3",
    transformParams: async ({ params }) => {
      prompts.push(params.prompt)
      return params
    }
  }
  const model = wrapLanguageModel({ model: provider(MODEL), middleware: [capture, middleware] })
  for (const messages of session.calls) {
    if (options.stream === true) {
      const result = streamText({ model, system: session.system, messages, maxOutputTokens: 64, ...(session.tools === undefined ? {} : { tools: session.tools }) })
      await result.consumeStream()
    } else {
      await generateText({ model, system: session.system, messages, maxOutputTokens: 64, ...(session.tools === undefined ? {} : { tools: session.tools }) })
    }
  }
  return { bodies: server.requests.map((r: Recorded) => r.json as Record<string, unknown>), cost: cost(), prompts }
}

/** Where the cache markers are in a Messages body: `system[i]` and `messages[i].content[j]`. */
const markers = (body: Record<string, unknown>): Array<string> => {
  const out: Array<string> = []
  const system = Array.isArray(body["system"]) ? body["system"] : []
  system.forEach((b: Record<string, unknown>, i: number) => {
    if (b["cache_control"] !== undefined) out.push(`system[${i}]`)
  })
  const messages = Array.isArray(body["messages"]) ? body["messages"] : []
  messages.forEach((m: { content: Array<Record<string, unknown>> }, i: number) => {
    m.content.forEach((b, j) => {
      if (b["cache_control"] !== undefined) out.push(`messages[${i}].content[${j}]`)
    })
  })
  return out
}

/** A clock for the middleware: each call at its session time. */
const clock = (times: ReadonlyArray<number>) => {
  let n = 0
  return () => (times[n++] ?? 0) * 1000
}

/** An append-only chat: each call adds the assistant's answer and a new question. */
const chatSession = (turns: number): Session => {
  const calls: Array<Array<ModelMessage>> = []
  const history: Array<ModelMessage> = []
  for (let t = 0; t < turns; t++) {
    history.push({ role: "user", content: words(`question ${t}`, 400) })
    calls.push([...history])
    history.push({ role: "assistant", content: words(`answer ${t}`, 200) })
  }
  return { system: words("system", 1500), calls, times: calls.map((_, i) => i * 30) }
}

/** An agent loop whose steps each run `parallel` tools: 2 × parallel blocks per step. */
const agentSession = (steps: number, parallel: number): Session => {
  const calls: Array<Array<ModelMessage>> = []
  const history: Array<ModelMessage> = [{ role: "user", content: words("task: fix the failing test", 300) }]
  calls.push([...history])
  for (let s = 0; s < steps; s++) {
    const ids = Array.from({ length: parallel }, (_, k) => `call_${s}_${k}`)
    history.push({ role: "assistant", content: ids.map((id) => ({ type: "tool-call" as const, toolCallId: id, toolName: "read_file", input: { path: `src/${id}.ts` } })) })
    history.push({ role: "tool", content: ids.map((id) => ({ type: "tool-result" as const, toolCallId: id, toolName: "read_file", output: { type: "text" as const, value: words(`contents of ${id}`, 150) } })) })
    calls.push([...history])
  }
  return { system: words("system", 1500), calls, times: calls.map((_, i) => i * 20) }
}

/**
 * An application that rewrites its first message on every call (a "memory" block it
 * regenerates), then appends the conversation: everything after the system prompt changes.
 */
const rewritingSession = (turns: number, systemTokens: number): Session => {
  const calls: Array<Array<ModelMessage>> = []
  const conversation: Array<ModelMessage> = []
  for (let t = 0; t < turns; t++) {
    conversation.push({ role: "user", content: words(`question ${t}`, 300) })
    calls.push([{ role: "user", content: words(`memory as of call ${t}`, 600) }, { role: "assistant", content: "Noted." }, ...conversation])
    conversation.push({ role: "assistant", content: words(`answer ${t}`, 150) })
  }
  return { system: words("system", systemTokens), calls, times: calls.map((_, i) => i * 30) }
}

describe("strataCache middleware through generateText and @ai-sdk/anthropic", () => {
  it("append-only chat: system and trailing breakpoints; costs the same as the trailing baseline", async () => {
    const session = chatSession(5)
    const cache = strataCache({ now: clock(session.times) })
    const ours = await run(session, cache)
    const baseline = await run(session, trailingBreakpoint)
    expect(markers(ours.bodies[0]!)).toEqual(["system[0]", "messages[0].content[0]"])
    expect(markers(ours.bodies[4]!)).toEqual(["system[0]", "messages[8].content[0]"])
    expect(ours.cost).toBeLessThanOrEqual(baseline.cost)
    expect(ours.cost).toBeCloseTo(baseline.cost, 6)
    // The report is what the provider (here the simulator) billed, summed.
    const report = cache.report()
    expect(report.requests).toBe(5)
    expect(report.usage.cacheRead).toBeGreaterThan(0)
    expect(report.hitRate).toBeCloseTo(report.usage.cacheRead / (report.usage.input + report.usage.cacheRead + report.usage.cacheWrite), 10)
  })

  it("agent loop adding 24 blocks a step: a breakpoint on the previous entry bridges the 20-block lookback", async () => {
    const session = agentSession(4, 12)
    const ours = await run(session, strataCache({ now: clock(session.times) }))
    const baseline = await run(session, trailingBreakpoint)
    // From the second call on: the previous call's trailing entry (read) and the new trailing one.
    expect(markers(ours.bodies[1]!)).toEqual(["system[0]", "messages[0].content[0]", "messages[2].content[11]"])
    expect(markers(ours.bodies[2]!)).toEqual(["system[0]", "messages[2].content[11]", "messages[4].content[11]"])
    expect(markers(baseline.bodies[2]!)).toEqual(["messages[4].content[11]"])
    expect(ours.cost).toBeLessThan(baseline.cost * 0.6)
  })

  it("an application that rewrites its early messages: the system prompt is read on every call", async () => {
    const session = rewritingSession(6, 2000)
    const ours = await run(session, strataCache({ now: clock(session.times) }))
    const baseline = await run(session, trailingBreakpoint)
    // After two rewrites in a row the trailing write, which nothing reads, is left out.
    expect(markers(ours.bodies[1]!)).toEqual(["system[0]", "messages[4].content[0]"])
    expect(markers(ours.bodies[3]!)).toEqual(["system[0]"])
    expect(markers(baseline.bodies[3]!)).toEqual(["messages[8].content[0]"])
    expect(ours.cost).toBeLessThan(baseline.cost * 0.6)
  })

  it("the same application with a system prompt under the minimum: no write premium on prefixes nothing reads", async () => {
    const session = rewritingSession(6, 500)
    const ours = await run(session, strataCache({ now: clock(session.times) }))
    const baseline = await run(session, trailingBreakpoint)
    // The system prompt alone (500 tokens) is below Sonnet 4.5's 1024-token minimum: no marker there.
    expect(markers(ours.bodies[0]!)).toEqual([`messages[2].content[0]`])
    expect(markers(ours.bodies[3]!)).toEqual([])
    // Every call of the baseline writes a prefix no later call reads (1.25x); ours, from the third call on, 1x.
    expect(ours.cost).toBeLessThan(baseline.cost * 0.9)
  })

  it("a chat just under the minimum without its tool definitions: the tools count, so it costs what the trailing baseline costs", async () => {
    // System and first question: about 900 tokens; the tool definitions lift the prefix over 1,024.
    const chat = chatSession(3)
    const session: Session = {
      ...chat,
      system: words("system", 600),
      tools: { read_file: tool({ description: words("Reads a file of the repository", 300), inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }) }) }
    }
    const cache = strataCache({ now: clock(session.times) })
    const ours = await run(session, cache)
    const baseline = await run(session, trailingBreakpoint)
    expect(markers(ours.bodies[0]!)).toEqual(["messages[0].content[0]"])
    expect(ours.cost).toBeLessThanOrEqual(baseline.cost)
    expect(cache.report().sessions[`anthropic.messages:${MODEL}`]?.lastPlan?.promptTokens).toBeGreaterThan(1024)
  })

  it("streamText: usage from the stream's finish part reaches the report", async () => {
    const session = chatSession(3)
    const cache = strataCache({ now: clock(session.times) })
    await run(session, cache, { stream: true })
    const report = cache.report()
    expect(report.requests).toBe(3)
    expect(report.usage.output).toBe(15)
    expect(report.usage.cacheRead).toBeGreaterThan(0)
  })

  it("cachedPromptBodies gives the bodies the middleware sends, as @ai-sdk/anthropic renders them", async () => {
    const session = agentSession(3, 12)
    const ours = await run(session, strataCache({ now: clock(session.times) }))
    const replayed = cachedPromptBodies(ours.prompts, { target: "anthropic", model: MODEL, times: session.times })
    expect(replayed.map((b) => ({ system: b["system"], messages: b["messages"] }))).toEqual(
      ours.bodies.map((b) => ({ system: b["system"], messages: b["messages"] }))
    )
  })
})
