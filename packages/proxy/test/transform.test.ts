// The transform alone: faithful (only cache controls change), valid for the provider (at
// most 4 markers, 1h before 5m, none on thinking), deterministic, and on random tool-loop
// sessions never dearer than the agent's own requests under the provider's simulator.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeAnthropicSimulator } from "@strata/providers"
import { chainOf, chooseTtl, transformRequest, withoutCacheControls } from "@strata/proxy"
import { driveAnthropic } from "./drive.ts"

type Json = Record<string, unknown>
const SYSTEM = [{ type: "text", text: "You are a coding agent. ".repeat(300), cache_control: { type: "ephemeral" } }]
const TOOLS = [{ name: "Read", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } } } }]

/** A tool loop as an agent builds it: each step appends the reply's tool calls and their results; the agent marks its last block. */
const session = (steps: ReadonlyArray<{ readonly calls: number; readonly size: number; readonly answer?: boolean }>, agentMarks: boolean): Array<Json> => {
  const messages: Array<Json> = [{ role: "user", content: [{ type: "text", text: "Fix the bug." }] }]
  const bodies: Array<Json> = []
  const mark = (msgs: Array<Json>): Array<Json> => {
    if (!agentMarks) return msgs
    const last = msgs[msgs.length - 1]!
    const content = [...(last["content"] as Array<Json>)]
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: "ephemeral" } }
    return [...msgs.slice(0, -1), { ...last, content }]
  }
  steps.forEach((step, i) => {
    bodies.push({ model: "claude-sonnet-4-5", max_tokens: 4096, temperature: 0, system: agentMarks ? SYSTEM : SYSTEM.map(({ type, text }) => ({ type, text })), tools: TOOLS, messages: mark(messages) })
    if (step.answer === true) {
      // The agent answers; the person writes the next task's prompt.
      messages.push({ role: "assistant", content: [{ type: "text", text: `Done with step ${i}.` }] })
      messages.push({ role: "user", content: [{ type: "text", text: `Next task after step ${i}.` }] })
      return
    }
    const calls = Array.from({ length: step.calls }, (_, k) => ({ type: "tool_use", id: `t${i}_${k}`, name: "Read", input: { path: `f${k}.ts` } }))
    messages.push({ role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, ...calls] })
    messages.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "x".repeat(step.size) })) })
  })
  return bodies
}

const markers = (body: unknown): Array<{ ttl: string; where: string }> => {
  const out: Array<{ ttl: string; where: string }> = []
  const walk = (v: unknown, where: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}.${i}`))
    else if (typeof v === "object" && v !== null) {
      const r = v as Json
      if (typeof r["cache_control"] === "object" && r["cache_control"] !== null) out.push({ ttl: (r["cache_control"] as Json)["ttl"] === "1h" ? "1h" : "5m", where: `${where}:${String(r["type"])}` })
      for (const [k, x] of Object.entries(r)) if (k !== "cache_control") walk(x, `${where}.${k}`)
    }
  }
  walk(body, "")
  return out
}

const arbSteps = fc.array(fc.record({ calls: fc.integer({ min: 1, max: 14 }), size: fc.integer({ min: 10, max: 3000 }), answer: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }), { minLength: 2, maxLength: 20 })
const arbGaps = (n: number) => fc.array(fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 301, max: 2400 })), { minLength: n, maxLength: n })

const drive = (bodies: ReadonlyArray<Json>, times: ReadonlyArray<number>) => driveAnthropic("cache", bodies, times)

describe("transformRequest", () => {
  it("observe changes nothing", () => {
    const [body] = session([{ calls: 1, size: 10 }], true)
    expect(transformRequest({ protocol: "anthropic", mode: "observe", body, session: { id: "s", gaps: [], lastBlocks: 0 } }).body).toBe(body)
  })

  it("changes only cache controls, stays valid; never dearer than the agent's requests on tool loops, and reports the ratio with idle gaps (property)", () => {
    const ratios: Array<{ agentMarks: boolean; ratio: number; long: boolean }> = []
    fc.assert(
      fc.property(arbSteps, fc.boolean(), fc.integer({ min: 0, max: 2 ** 30 }), (steps, agentMarks, seed) => {
        const bodies = session(steps, agentMarks)
        const gaps = fc.sample(arbGaps(bodies.length), { seed, numRuns: 1 })[0]!
        const times = gaps.reduce<Array<number>>((t, g, i) => [...t, i === 0 ? 0 : t[i - 1]! + g], [])
        const outs = drive(bodies, times)
        const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
        const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
        let a = 0
        let f = 0
        outs.forEach((out, i) => {
          expect(withoutCacheControls(out.body)).toEqual(withoutCacheControls(bodies[i]))
          const ms = markers(out.body)
          expect(ms.length).toBeLessThanOrEqual(4)
          expect(ms.every((m) => !m.where.endsWith(":thinking"))).toBe(true)
          const firstShort = ms.findIndex((m) => m.ttl === "5m")
          expect(ms.slice(firstShort < 0 ? ms.length : firstShort).every((m) => m.ttl === "5m")).toBe(true)
          a += asSent.send(bodies[i], times[i]!).cost.inputEquivalentTokens
          f += forwarded.send(out.body, times[i]!).cost.inputEquivalentTokens
        })
        // Never dearer than what the agent sent, when the agent set its own markers; and a
        // client that sets none pays at most the uncached price.
        ratios.push({ agentMarks, ratio: f / a, long: gaps.some((g) => g > 300) })
        if (agentMarks) expect(f).toBeLessThanOrEqual(a * 1.0000001)
      }),
      { numRuns: 60 }
    )
    const worst = Math.max(...ratios.filter((r) => r.agentMarks).map((r) => r.ratio))
    console.log(`agent-marked sessions: worst forwarded/as-sent ${worst.toFixed(3)}; mean ${(ratios.filter((r) => r.agentMarks).reduce((s, r) => s + r.ratio, 0) / ratios.filter((r) => r.agentMarks).length).toFixed(3)}`)
  })

  it("bridges a step that appends more blocks than the lookback window", () => {
    const bodies = session([{ calls: 2, size: 2000 }, { calls: 12, size: 500 }, { calls: 1, size: 10 }], true)
    const outs = drive(bodies, [0, 5, 10])
    expect(outs[2]!.changed.some((c) => c.includes("bridging marker"))).toBe(true)
    const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const fwd = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const sent = bodies.map((b, i) => asSent.send(b, i * 5))
    const got = outs.map((o, i) => fwd.send(o.body, i * 5))
    expect(got[2]!.usage.cacheRead).toBeGreaterThan(sent[2]!.usage.cacheRead)
  })

  it("chooses 1h only when the session's gaps make a read past 5 minutes likely enough to pay", () => {
    expect(chooseTtl([], 50_000, 2_000)).toBe("5m")
    expect(chooseTtl([3, 4, 5, 2, 6], 50_000, 2_000)).toBe("5m")
    expect(chooseTtl([3, 900, 4, 1200, 2, 700], 50_000, 2_000)).toBe("1h")
    expect(chooseTtl([3, 900, 4, 1200, 2, 700], 3_000, 2_000)).toBe("5m")
  })

  it("adds a marker for a client that sets none, and prompt_cache_key for OpenAI", () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }
    const out = transformRequest({ protocol: "anthropic", mode: "cache", body, session: { id: "s", gaps: [], lastBlocks: 0 } })
    expect(markers(out.body)).toHaveLength(1)
    const chat = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }
    expect(transformRequest({ protocol: "openai-chat", mode: "cache", body: chat, session: { id: "s-1", gaps: [], lastBlocks: 0 } }).body).toEqual({ ...chat, prompt_cache_key: "strata-s-1" })
    const own = { ...chat, prompt_cache_key: "mine" }
    expect(transformRequest({ protocol: "openai-chat", mode: "cache", body: own, session: { id: "s-1", gaps: [], lastBlocks: 0 } }).body).toBe(own)
  })

  it("chains a conversation so a continuation extends its prefix and cache controls do not count", () => {
    const [a, b] = session([{ calls: 1, size: 10 }, { calls: 1, size: 10 }], true)
    const ca = chainOf("anthropic", a!)
    const cb = chainOf("anthropic", b!)
    expect(cb.slice(0, ca.length)).toEqual(ca)
    expect(chainOf("anthropic", withoutCacheControls(b) as Json)).toEqual(cb)
  })
})
