// The simulators' memos: canonicalJson keeps the text of deeply frozen values (the proxy freezes the messages it
// reuses from one request to the next): the same text as for the same value unfrozen, and
// never a kept text for anything that can still change.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeSimulator } from "../src/index.ts"
import { canonicalJson, makePrefixHasher, type PrefixBlock } from "../src/internal/simulators/prefixCache.ts"

const MARKERS: ReadonlySet<string> = new Set(["cache_control"])

/** The text canonicalJson gives, written out plainly (what it gave before it kept any). */
const reference = (value: unknown, omit: ReadonlySet<string>): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map((v) => reference(v, omit)).join(",")}]`
  const record = value as Record<string, unknown>
  const parts = Object.keys(record).sort().filter((k) => record[k] !== undefined && !omit.has(k)).map((k) => `${JSON.stringify(k)}:${reference(record[k], omit)}`)
  return `{${parts.join(",")}}`
}

const deepFreeze = <T>(v: T): T => {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x)
    Object.freeze(v)
  }
  return v
}

const json = fc.jsonValue({ maxDepth: 4 }).map((v) => ({ wrapped: v, cache_control: { type: "ephemeral" } }))

describe("canonicalJson", () => {
  it("gives a deeply frozen value the text of the same value unfrozen, the same string each time", () => {
    fc.assert(
      fc.property(json, fc.constantFrom(MARKERS, new Set<string>()), (value, omit) => {
        const frozen = deepFreeze(structuredClone(value))
        const first = canonicalJson(frozen, omit)
        expect(first).toBe(reference(value, omit))
        expect(canonicalJson(value, omit)).toBe(first)
        expect(canonicalJson(frozen, omit)).toBe(first)
      }),
      { numRuns: 200 }
    )
  })

  it("never keeps the text of a value that can still change", () => {
    const open: Record<string, unknown> = { a: 1, list: [1, 2] }
    expect(canonicalJson(open)).toBe('{"a":1,"list":[1,2]}')
    open["a"] = 2
    expect(canonicalJson(open)).toBe('{"a":2,"list":[1,2]}')
    // Frozen outside, open inside: the inner array can change.
    const inner = [1, 2]
    const shell = Object.freeze({ list: inner, frozen: Object.freeze({ x: 1 }) })
    expect(canonicalJson(shell)).toBe('{"frozen":{"x":1},"list":[1,2]}')
    inner.push(3)
    expect(canonicalJson(shell)).toBe('{"frozen":{"x":1},"list":[1,2,3]}')
    // One deep level frozen inside an open one: still read anew around it.
    const around: Record<string, unknown> = { kept: deepFreeze({ y: [1] }), n: 1 }
    expect(canonicalJson(around)).toBe('{"kept":{"y":[1]},"n":1}')
    around["n"] = 2
    expect(canonicalJson(around)).toBe('{"kept":{"y":[1]},"n":2}')
  })

  it("leaves the simulator's figures unchanged when the bodies' messages are frozen and shared", () => {
    const tool = (k: number) => ({ type: "tool_use", id: `t${k}`, name: "Read", input: { path: `f${k}.ts`, lines: [k, k + 10] } })
    const result = (k: number) => ({ type: "tool_result", tool_use_id: `t${k}`, content: [{ type: "text", text: "x".repeat(2000 + k) }] })
    const plain = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
    const shared = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
    const frozen: Array<unknown> = []
    const messages: Array<unknown> = []
    for (let k = 0; k < 12; k++) {
      const call = { role: "assistant", content: [tool(k)] }
      const answer = { role: "user", content: [result(k)] }
      messages.push(call, answer)
      frozen.push(deepFreeze(structuredClone(call)), deepFreeze(structuredClone(answer)))
      const body = (ms: ReadonlyArray<unknown>) => ({
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        system: [{ type: "text", text: "s".repeat(8000), cache_control: { type: "ephemeral" } }],
        tools: [deepFreeze({ name: "Read", input_schema: { type: "object" } })],
        messages: [{ role: "user", content: "go" }, ...ms.slice(0, -1), { role: "user", content: [{ ...result(k), cache_control: { type: "ephemeral" } }] }]
      })
      expect(shared.send(body(frozen), k * 20, { outputTokens: 5 }).usage).toEqual(plain.send(body(messages), k * 20, { outputTokens: 5 }).usage)
    }
  })

  it("shares block measures between simulators only where they count tokens the same way", () => {
    const body = (k: number) => ({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      system: [{ type: "text", text: "the same long system prompt. ".repeat(400), cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: `step ${k} `.repeat(300), cache_control: { type: "ephemeral" } }] }]
    })
    const run = (sim: ReturnType<typeof makeSimulator>, steps: number) => Array.from({ length: steps }, (_, k) => sim.send(body(k), k * 30).usage)
    const alone = run(makeSimulator("anthropic", { model: "claude-sonnet-4-5" }), 4)
    // Another session's simulator finds every block measured already: the same figures.
    const second = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
    const other = makeSimulator("anthropic", { model: "claude-sonnet-4-5" })
    const interleaved = Array.from({ length: 4 }, (_, k) => {
      other.send(body(k + 100), k * 30)
      return second.send(body(k), k * 30).usage
    })
    expect(interleaved).toEqual(alone)
    // Another token counter measures for itself.
    const own = run(makeSimulator("anthropic", { model: "claude-sonnet-4-5", countTokens: (t) => t.length }), 4)
    expect(own[0]!.cacheWrite).toBeGreaterThan(3 * alone[0]!.cacheWrite)
  })

  it("builds each prefix from the one before as a fresh hasher builds it alone", () => {
    const block = fc.record({ head: fc.constantFrom("S", "M\u0000user\u0000B\u0000text", "B\u0000tool_result"), body: fc.constantFrom("a", "bb", "a long block ".repeat(20), ""), extraTokens: fc.constantFrom(0, 85) })
      .map((b): PrefixBlock => ({ ...b, text: b.body }))
    const change = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), blocks: fc.array(block, { maxLength: 3 }) }),
      fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), block }),
      fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("namespace" as const), namespace: fc.constantFrom("anthropic\u0000a", "anthropic\u0000b") })
    )
    fc.assert(
      fc.property(fc.array(block, { maxLength: 5 }), fc.array(change, { minLength: 1, maxLength: 10 }), (start, changes) => {
        const count = (t: string) => Math.ceil(t.length / 3)
        const hasher = makePrefixHasher(count, "test")
        let blocks = start
        let namespace = "anthropic\u0000a"
        for (const c of changes) {
          if (c.kind === "append") blocks = [...blocks, ...c.blocks]
          if (c.kind === "replace" && blocks.length > 0) blocks = blocks.map((b, i) => (i === c.at % blocks.length ? c.block : b))
          if (c.kind === "cut") blocks = blocks.slice(0, c.at % (blocks.length + 1))
          if (c.kind === "namespace") namespace = c.namespace
          expect(hasher.build(namespace, blocks)).toEqual(makePrefixHasher(count).build(namespace, blocks))
        }
      }),
      { numRuns: 200 }
    )
  })
})
