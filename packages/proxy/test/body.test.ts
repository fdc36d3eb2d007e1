// The hot path's byte reader (src/internal/body.ts) against the plain path it replaces:
// the same value as JSON.parse, the same chain as chainOf, and the same bytes as
// JSON.stringify of the transform's result, on random bodies of all three protocols.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { chainOf, transformRequest, type Protocol } from "@strata/proxy"
import { chainOfParsed, parseBody, spliceBody } from "../src/internal/body.ts"

type Json = Record<string, unknown>

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }), fc.constantFrom("a\nb\t\"q\"\\", "\u00e9\u4e2d\ud83d\ude00", ""))
/** A string past the interning threshold (16 KB), sometimes with escapes. */
const big = fc.tuple(fc.integer({ min: 16 * 1024, max: 40 * 1024 }), fc.constantFrom("x", "line\n", "\u00e9")).map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)))
const marker = fc.option(fc.constantFrom({ type: "ephemeral" }, { type: "ephemeral", ttl: "1h" }), { nil: undefined })
const withMarker = (b: Json, m: Json | undefined): Json => (m === undefined ? b : { ...b, cache_control: m })

const anthropicBlock = fc.oneof(
  fc.tuple(fc.oneof(text, big), marker).map(([t, m]) => withMarker({ type: "text", text: t }, m)),
  fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom("Read", "Bash", "Edit"), fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)), { maxKeys: 4 }), marker).map(([id, name, input, m]) => withMarker({ type: "tool_use", id, name, input }, m)),
  fc.tuple(fc.string({ maxLength: 8 }), fc.oneof(text, big), marker).map(([id, c, m]) => withMarker({ type: "tool_result", tool_use_id: id, content: c }, m)),
  fc.constant({ type: "thinking", thinking: "hmm", signature: "sig" })
)
const anthropicBody = fc.record({
  model: fc.constantFrom("claude-sonnet-4-5", "claude-haiku-4-5"),
  max_tokens: fc.integer({ min: 1, max: 8192 }),
  stream: fc.boolean(),
  system: fc.oneof(text, fc.array(fc.tuple(fc.oneof(text, big), marker).map(([t, m]) => withMarker({ type: "text", text: t }, m)), { maxLength: 3 })),
  tools: fc.array(fc.record({ name: fc.string({ maxLength: 8 }), input_schema: fc.constant({ type: "object" }) }), { maxLength: 2 }),
  messages: fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.oneof(text, fc.array(anthropicBlock, { minLength: 1, maxLength: 4 })) }), { minLength: 1, maxLength: 8 })
}, { requiredKeys: ["model", "max_tokens", "messages"] })
const responsesBody = fc.record({
  model: fc.constant("gpt-5"),
  instructions: text,
  input: fc.oneof(text, fc.array(fc.oneof(
    fc.record({ type: fc.constant("message"), role: fc.constant("user"), content: text }),
    fc.record({ type: fc.constant("function_call_output"), call_id: fc.string({ maxLength: 6 }), output: fc.oneof(text, big) })
  ), { maxLength: 6 })),
  prompt_cache_key: fc.option(text, { nil: undefined })
}, { requiredKeys: ["model", "input"] })
const chatBody = fc.record({ model: fc.constant("gpt-4o"), messages: fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), content: text }), { maxLength: 6 }) })
const bodies = fc.oneof(
  anthropicBody.map((b) => ["anthropic", b] as const),
  responsesBody.map((b) => ["openai-responses", b] as const),
  chatBody.map((b) => ["openai-chat", b] as const)
)

/**
 * How a client other than `JSON.stringify` may write the same value: whitespace between
 * tokens, `\uXXXX` escapes where plain characters would do, its own key order.
 */
interface Style {
  readonly space: string
  /** Escape every `escapeEvery`-th character of each string (0: none). */
  readonly escapeEvery: number
  /** Rotate each object's keys by this much plus its depth (0: as written). */
  readonly rotate: number
}
const style: fc.Arbitrary<Style> = fc.record({
  space: fc.constantFrom("", " ", "\n  ", "\t", "\r\n"),
  escapeEvery: fc.constantFrom(0, 1, 2, 5),
  rotate: fc.constantFrom(0, 0, 1, 2)
})
const writeString = (s: string, every: number): string => {
  if (every === 0) return JSON.stringify(s)
  let out = ""
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!
    out += i % every === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : JSON.stringify(c).slice(1, -1)
  }
  return `"${out}"`
}
const write = (v: unknown, st: Style, depth = 0): string => {
  const w = st.space
  if (typeof v === "string") return writeString(v, st.escapeEvery)
  if (Array.isArray(v)) return `[${w}${v.map((x) => write(x, st, depth + 1)).join(`${w},${w}`)}${w}]`
  if (typeof v === "object" && v !== null) {
    const keys = Object.keys(v).filter((k) => (v as Json)[k] !== undefined)
    const r = st.rotate === 0 || keys.length === 0 ? 0 : (st.rotate + depth) % keys.length
    const ordered = [...keys.slice(r), ...keys.slice(0, r)]
    return `{${w}${ordered.map((k) => `${writeString(k, st.escapeEvery)}${w}:${w}${write((v as Json)[k], st, depth + 1)}`).join(`${w},${w}`)}${w}}`
  }
  return JSON.stringify(v)
}

describe("the byte reader", () => {
  it("reads what JSON.parse reads, chains like chainOf and splices what JSON.stringify writes", () => {
    fc.assert(
      fc.property(bodies, fc.constantFrom("observe", "cache", "edit"), fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 5 }), ([protocol, body], mode, gaps) => {
        const bytes = Buffer.from(JSON.stringify(body), "utf8")
        const parsed = parseBody(bytes)
        expect(parsed).toBeDefined()
        const value = parsed!.value as Json
        expect(value).toEqual(JSON.parse(bytes.toString("utf8")))
        expect(chainOfParsed(protocol as Protocol, parsed!)).toEqual(chainOf(protocol, value))
        const out = transformRequest({ protocol, mode, body: value, session: { id: "s-1", gaps, lastBlocks: 2 } })
        const pieces = spliceBody(parsed!, out.body)
        expect(pieces).toBeDefined()
        expect(Buffer.concat(pieces!).toString("utf8")).toBe(JSON.stringify(out.body))
      }),
      { numRuns: 300 }
    )
  })

  it("splices bodies written otherwise (whitespace, escapes, key orders) into bytes that parse to the transform's result", () => {
    let spliced = 0
    fc.assert(
      fc.property(bodies, style, fc.constantFrom("cache", "edit"), fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 5 }), ([protocol, body], st, mode, gaps) => {
        const sent = write(body, st)
        const bytes = Buffer.from(sent, "utf8")
        const parsed = parseBody(bytes)
        expect(parsed).toBeDefined()
        const value = parsed!.value as Json
        expect(value).toEqual(JSON.parse(sent))
        const out = transformRequest({ protocol, mode, body: value, session: { id: "s-1", gaps, lastBlocks: 2 } })
        const pieces = spliceBody(parsed!, out.body)
        // Keys in the client's order always splice; a reordered object may take the plain path.
        if (st.rotate === 0) expect(pieces).toBeDefined()
        if (pieces === undefined) return
        spliced++
        const forwarded = Buffer.concat(pieces).toString("utf8")
        expect(JSON.parse(forwarded)).toEqual(JSON.parse(JSON.stringify(out.body)))
        // Nothing changed: the client's own bytes, untouched.
        if (out.body === value) expect(forwarded).toBe(sent)
      }),
      { numRuns: 150 }
    )
    expect(spliced).toBeGreaterThan(75)
  })

  it("takes the plain path for what it does not read: malformed bytes, whitespace, duplicate keys", () => {
    for (const bad of ["{", "{\"a\":}", "[1,]", "{\"a\":1}x", "nul", "\"abc", "{\"a\" 1}", "01", "{'a':1}"]) {
      expect(parseBody(Buffer.from(bad))).toBeUndefined()
    }
    const spaced = parseBody(Buffer.from("{ \"messages\": [ {\"role\":\"user\",\"content\":\"hi\"} ] }"))!
    expect(spaced.value).toEqual({ messages: [{ role: "user", content: "hi" }] })
    expect(chainOfParsed("anthropic", spaced)).toBeUndefined()
    const twice = parseBody(Buffer.from("{\"a\":1,\"a\":2}"))!
    expect(twice.value).toEqual({ a: 2 })
    expect(chainOfParsed("anthropic", twice)).toBeUndefined()
    // `__proto__` is an own key, as JSON.parse makes it.
    const proto = parseBody(Buffer.from("{\"__proto__\":{\"x\":1}}"))!.value as Json
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype)
    expect(Object.keys(proto)).toEqual(["__proto__"])
  })

  it("reads, chains and splices objects with many keys (looked up through an index), and finds a duplicate among them", () => {
    const extra = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]))
    const body = { model: "claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: [{ ...extra, type: "text", text: "hi" }] }] }
    const bytes = Buffer.from(JSON.stringify(body))
    const parsed = parseBody(bytes)!
    expect(parsed.value).toEqual(body)
    expect(chainOfParsed("anthropic", parsed)).toEqual(chainOf("anthropic", body))
    const out = transformRequest({ protocol: "anthropic", mode: "cache", body: parsed.value, session: { id: "s", gaps: [], lastBlocks: 0 } })
    expect(JSON.stringify(out.body)).toContain("cache_control")
    expect(Buffer.concat(spliceBody(parsed, out.body)!).toString("utf8")).toBe(JSON.stringify(out.body))
    // The 21st key repeats the 3rd: JSON.parse keeps the last, and the body is not compact.
    const twice = parseBody(Buffer.from(`{${Array.from({ length: 20 }, (_, i) => `"k${i}":${i}`).join(",")},"k2":"last"}`))!
    expect((twice.value as Json)["k2"]).toBe("last")
    expect(twice.compact).toBe(false)
  })

  it("keeps the client's bytes where nothing changed and splices a marker in place", () => {
    // A client that writes its keys in its own order and escapes more than JSON.stringify.
    const sent = "{\"messages\":[{\"content\":[{\"text\":\"caf\\u00e9\",\"type\":\"text\"}],\"role\":\"user\"}],\"model\":\"claude-sonnet-4-5\",\"max_tokens\":5}"
    const parsed = parseBody(Buffer.from(sent))!
    const out = transformRequest({ protocol: "anthropic", mode: "cache", body: parsed.value, session: { id: "s", gaps: [], lastBlocks: 0 } })
    expect(Buffer.concat(spliceBody(parsed, out.body)!).toString("utf8")).toBe(
      "{\"messages\":[{\"content\":[{\"text\":\"caf\\u00e9\",\"type\":\"text\",\"cache_control\":{\"type\":\"ephemeral\"}}],\"role\":\"user\"}],\"model\":\"claude-sonnet-4-5\",\"max_tokens\":5}"
    )
  })
})

/** What a session does next: send its conversation again, extend it, change an earlier message or its system prompt, repeat a message. */
const step = fc.oneof(
  fc.record({ kind: fc.constant("extend" as const), seed: fc.integer({ min: 0, max: 1_000_000 }) }),
  fc.record({ kind: fc.constant("again" as const) }),
  fc.record({ kind: fc.constant("edit" as const), at: fc.nat(), seed: fc.integer({ min: 0, max: 1_000_000 }) }),
  fc.record({ kind: fc.constant("system" as const), seed: fc.integer({ min: 0, max: 1_000_000 }) }),
  fc.record({ kind: fc.constant("repeat" as const), at: fc.nat() })
)

/** The client's marker moves to the last block, as an agent's does. */
const markLast = (protocol: Protocol, messages: ReadonlyArray<unknown>): Array<unknown> => {
  const strip = (m: unknown): unknown => {
    if (protocol !== "anthropic" || typeof m !== "object" || m === null) return m
    const content = (m as Json)["content"]
    if (!Array.isArray(content)) return m
    return { ...(m as Json), content: content.map((b: Json) => Object.fromEntries(Object.entries(b).filter(([k]) => k !== "cache_control"))) }
  }
  const out = messages.map(strip)
  const last = out.at(-1) as Json | undefined
  const content = last?.["content"]
  if (protocol === "anthropic" && Array.isArray(content) && content.length > 0) {
    out[out.length - 1] = { ...last, content: [...content.slice(0, -1), { ...(content.at(-1) as Json), cache_control: { type: "ephemeral" } }] }
  }
  return out
}

describe("elements kept from earlier bodies", () => {
  it("read, chain and splice like the plain path over sessions that grow, fork, change their system prompt and repeat messages", () => {
    let shared = 0
    fc.assert(
      fc.property(fc.array(bodies, { minLength: 1, maxLength: 3 }), fc.array(fc.tuple(fc.nat(), step), { minLength: 1, maxLength: 12 }), fc.constantFrom("cache", "edit"), (starts, steps, mode) => {
        const key = (protocol: Protocol) => (protocol === "openai-responses" ? "input" : "messages")
        const sessions = starts.map(([protocol, body]) => ({ protocol: protocol as Protocol, body: body as Json, last: undefined as Json | undefined }))
        // A pool of messages to extend and edit with: the other sessions' and their own.
        const pool = starts.flatMap(([protocol, b]) => {
          const m = (b as Json)[key(protocol as Protocol)]
          return Array.isArray(m) ? m : []
        })
        for (const [which, s] of steps) {
          const session = sessions[which % sessions.length]!
          const k = key(session.protocol)
          const messages = Array.isArray(session.body[k]) ? [...(session.body[k] as Array<unknown>)] : []
          const from = (seed: number): unknown => pool[seed % Math.max(1, pool.length)] ?? { role: "user", content: `m${seed}` }
          if (s.kind === "extend") messages.push(from(s.seed), from(s.seed + 1))
          if (s.kind === "edit" && messages.length > 1) messages[s.at % (messages.length - 1)] = from(s.seed)
          const repeated = s.kind === "repeat" && messages.length > 0 ? s.at % messages.length : undefined
          if (repeated !== undefined) messages.push(messages[repeated])
          const body: Json = { ...session.body, [k]: markLast(session.protocol, messages) }
          if (s.kind === "system") {
            if (session.protocol === "anthropic") body["system"] = [{ type: "text", text: `system ${s.seed}` }]
            if (session.protocol === "openai-responses") body["instructions"] = `system ${s.seed}`
            if (session.protocol === "openai-chat") body["tools"] = [{ type: "function", function: { name: `f${s.seed}` } }]
          }
          session.body = body
          const bytes = Buffer.from(JSON.stringify(body), "utf8")
          const parsed = parseBody(bytes)!
          const value = parsed.value as Json
          expect(value).toEqual(JSON.parse(bytes.toString("utf8")))
          expect(chainOfParsed(session.protocol, parsed)).toEqual(chainOf(session.protocol, value))
          const out = transformRequest({ protocol: session.protocol, mode, body: value, session: { id: "s-1", gaps: [400], lastBlocks: 2 } })
          const pieces = spliceBody(parsed, out.body)
          expect(pieces).toBeDefined()
          expect(Buffer.concat(pieces!).toString("utf8")).toBe(JSON.stringify(out.body))
          // Kept elements are shared between bodies (and so frozen): the case this test is about.
          const now = value[k]
          const before = session.last?.[k]
          if (Array.isArray(now) && Array.isArray(before) && now.some((m) => typeof m === "object" && m !== null && before.includes(m))) {
            shared++
            expect(now.every((m) => typeof m !== "object" || m === null || Object.isFrozen(m))).toBe(true)
          }
          // A message twice in one body: two objects, each with its own place in the bytes.
          if (Array.isArray(now) && s.kind === "repeat" && repeated !== undefined) {
            if (typeof now[repeated] === "object" && now[repeated] !== null) expect(now.at(-1)).not.toBe(now[repeated])
          }
          session.last = value
        }
      }),
      { numRuns: 100 }
    )
    expect(shared).toBeGreaterThan(50)
  })

  it("gives a message sent twice in one body two objects, each spliced at its own place", () => {
    const m = { role: "user", content: [{ type: "text", text: "the same words" }] }
    const body = { model: "claude-sonnet-4-5", max_tokens: 5, messages: [m, { role: "assistant", content: [{ type: "text", text: "ok" }] }, m, { role: "assistant", content: [{ type: "text", text: "ok" }] }, { role: "user", content: "go on" }] }
    for (let round = 0; round < 2; round++) {
      const parsed = parseBody(Buffer.from(JSON.stringify(body)))!
      const messages = (parsed.value as Json)["messages"] as Array<unknown>
      expect(messages[0]).not.toBe(messages[2])
      expect(messages[1]).not.toBe(messages[3])
      // The transform marks blocks by position: each edit lands in its own message's bytes.
      const out = transformRequest({ protocol: "anthropic", mode: "cache", body: parsed.value, session: { id: "s", gaps: [], lastBlocks: 0 } })
      expect(Buffer.concat(spliceBody(parsed, out.body)!).toString("utf8")).toBe(JSON.stringify(out.body))
      expect(chainOfParsed("anthropic", parsed)).toEqual(chainOf("anthropic", parsed.value as Json))
    }
  })
})
