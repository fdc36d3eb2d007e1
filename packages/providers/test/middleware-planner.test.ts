// The breakpoint planner behind strataCache, without a network: slots, the minimum
// (cumulative and Bedrock's per checkpoint), TTL order, expiry, and the middleware's
// OpenAI and pass-through paths.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cachedPromptBodies, decodeAiSdkUsage, type CallParams, lookupModel, makeCachePlanner, makeSimulator, nativeBodyOf, strataCache, type Prompt, type PromptMessage, type PromptPart } from "../src/index.ts"

const words = (label: string, tokens: number): string => `${label} `.repeat(Math.ceil((tokens * 4) / (label.length + 1))).slice(0, tokens * 4)
/** A content part with its fields (the prompt types name only `type` and `providerOptions`). */
const part = (p: { readonly type: string } & Readonly<Record<string, unknown>>): PromptPart => p
const text = (t: string): ReadonlyArray<PromptPart> => [part({ type: "text", text: t })]
const user = (t: string): PromptMessage => ({ role: "user", content: text(t) })
const assistant = (t: string): PromptMessage => ({ role: "assistant", content: text(t) })

/** An append-only chat, one prompt per turn. */
const chat = (turns: number, systemTokens = 1500): Array<Prompt> => {
  const out: Array<Prompt> = []
  const history: Array<PromptMessage> = [{ role: "system", content: words("system", systemTokens) }]
  for (let t = 0; t < turns; t++) {
    history.push(user(words(`q${t}`, 300)))
    out.push([...history])
    history.push(assistant(words(`a${t}`, 100)))
  }
  return out
}

describe("makeCachePlanner", () => {
  it("marks the system prompt and the last message; TTLs never increase along the prefix", () => {
    const planner = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-5", ttl: "1h", prefixTtl: "5m" })
    const plan = planner.plan(chat(1)[0]!, 0)
    expect(plan.markers.map((m) => [m.role, m.message, m.ttl])).toEqual([["system", 0, "1h"], ["trailing", 1, "1h"]])
    const longPrefix = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-5", prefixTtl: "1h" }).plan(chat(1)[0]!, 0)
    expect(longPrefix.markers.map((m) => m.ttl)).toEqual(["1h", "5m"])
  })

  it("leaves the application's own markers in place and uses only the slots left", () => {
    const own = (m: PromptMessage): PromptMessage => ({ ...m, providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } })
    const prompt: Prompt = [{ role: "system", content: words("system", 2000) }, own(user(words("a", 500))), own(assistant("ok")), own(user(words("b", 500))), user("question")]
    const plan = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-5" }).plan(prompt, 0)
    expect(plan.existing).toBe(3)
    expect(plan.markers.map((m) => m.role)).toEqual(["trailing"])
    expect(plan.skipped.some((s) => s.startsWith("system: no marker slot left"))).toBe(true)
  })

  it("Bedrock: markers at message ends, each checkpoint at least the minimum after the previous", () => {
    // Sonnet 4.5 on Bedrock: 1024 tokens per checkpoint. The system prompt is 1100, the first question 300:
    // both fit one checkpoint each on their own, not together; the trailing one covers more.
    const planner = makeCachePlanner({ target: "bedrock", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" })
    const plan = planner.plan(chat(1, 1100)[0]!, 0)
    expect(plan.markers.map((m) => m.role)).toEqual(["trailing"])
    expect(plan.skipped).toContain("system: with the breakpoints kept, a checkpoint (prefix 1100 tokens) would hold less than Claude Sonnet 4.5's 1024-token minimum per checkpoint")
    expect(plan.markers.every((m) => m.part === -1 && m.ttl === "5m")).toBe(true)
  })

  it("does not count on an entry after its TTL", () => {
    const planner = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-5" })
    const prompts = chat(3)
    planner.plan(prompts[0]!, 0)
    expect(planner.plan(prompts[1]!, 30).readBlock).toBeGreaterThan(0)
    expect(planner.plan(prompts[2]!, 30 + 301).readBlock).toBe(-1)
  })

  it("calibration from reported usage moves the minimum check", () => {
    const planner = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-5" })
    const prompt: Prompt = [{ role: "system", content: words("system", 900) }, user(words("q", 300))]
    expect(planner.plan(prompt, 0).markers.map((m) => m.role)).toEqual(["trailing"])
    // The provider counted 1.5x what chars/4 estimated: the 900-token system prompt is ~1350.
    planner.calibrate(1200, 1800)
    expect(planner.plan(prompt, 10).markers.map((m) => m.role)).toEqual(["system", "trailing"])
  })

  it("never more markers than the model allows, none below the minimum but a tentative trailing one, and a valid Bedrock spacing (property)", () => {
    const limits = lookupModel("anthropic", "claude-sonnet-4-5")
    fc.assert(
      fc.property(
        fc.array(fc.record({ tokens: fc.integer({ min: 1, max: 900 }), rewrite: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom("anthropic" as const, "bedrock" as const),
        (turns, target) => {
          const planner = makeCachePlanner({ target, model: "claude-sonnet-4-5", limits })
          const history: Array<PromptMessage> = [{ role: "system", content: words("system", 700) }]
          turns.forEach((turn, t) => {
            if (turn.rewrite && history.length > 2) history[1] = user(words(`rewritten ${t}`, turn.tokens))
            history.push(user(words(`q${t}`, turn.tokens)))
            const plan = planner.plan([...history], t * 30)
            expect(plan.markers.length).toBeLessThanOrEqual(limits.maxBreakpoints)
            let before = 0
            for (const m of plan.markers) {
              if (m.tentative === true) {
                // Only the trailing breakpoint goes in under the minimum, on the last message.
                expect([m.role, m.message]).toEqual(["trailing", history.length - 1])
                continue
              }
              expect(target === "bedrock" ? m.tokens - before : m.tokens).toBeGreaterThanOrEqual(limits.minCacheTokens - 1)
              before = m.tokens
            }
            history.push(assistant(words(`a${t}`, 50)))
          })
        }
      ),
      { numRuns: 80 }
    )
  })
})

describe("cachedPromptBodies and the Bedrock simulator", () => {
  it("an agent loop on Bedrock costs less than a trailing cachePoint", () => {
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    const prompts: Array<Prompt> = []
    const history: Array<PromptMessage> = [{ role: "system", content: words("system", 1500) }, user(words("task", 300))]
    prompts.push([...history])
    for (let s = 0; s < 4; s++) {
      const ids = Array.from({ length: 12 }, (_, k) => `c${s}_${k}`)
      history.push({ role: "assistant", content: ids.map((id) => part({ type: "tool-call", toolCallId: id, toolName: "read", input: { path: id } })) })
      history.push({ role: "tool", content: ids.map((id) => part({ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: words(id, 150) } })) })
      prompts.push([...history])
    }
    const times = prompts.map((_, i) => i * 20)
    const ours = cachedPromptBodies(prompts, { target: "bedrock", model, times })
    const trailing = prompts.map((p) => nativeBodyOf(p.map((m, i) => (i === p.length - 1 ? { ...m, providerOptions: { bedrock: { cachePoint: { type: "default" } } } } : m)), "bedrock", model))
    const cost = (bodies: ReadonlyArray<unknown>) => {
      const sim = makeSimulator("bedrock", { model })
      return bodies.reduce((sum: number, b, i) => sum + sim.send(b, times[i]!).cost.inputEquivalentTokens, 0)
    }
    expect(cost(ours)).toBeLessThan(cost(trailing) * 0.6)
  })
})

describe("strataCache without a planner", () => {
  it("OpenAI models get a prompt cache key; other providers pass through unchanged", async () => {
    const cache = strataCache()
    const params: CallParams = { prompt: [{ role: "system", content: "Be brief." }, user("hi")] }
    const openai = await cache.transformParams({ type: "generate", params, model: { provider: "openai.responses", modelId: "gpt-5.2" } })
    expect(openai.providerOptions?.["openai"]?.["promptCacheKey"]).toMatch(/^strata-[0-9a-f]{16}$/)
    const keyed = await strataCache({ promptCacheKey: "tenant-1" }).transformParams({ type: "generate", params, model: { provider: "openai.chat", modelId: "gpt-4o" } })
    expect(keyed.providerOptions).toEqual({ openai: { promptCacheKey: "tenant-1" } })
    const gemini = { provider: "google.generative-ai", modelId: "gemini-2.5-flash" }
    const google = await cache.transformParams({ type: "generate", params, model: gemini })
    expect(google).toEqual(params)
    await cache.wrapGenerate({ doGenerate: async () => ({ usage: { inputTokens: { total: 50, noCache: 50, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1 } } }), params: google, model: gemini })
    expect(cache.report().sessions["google.generative-ai:gemini-2.5-flash"]).toMatchObject({ requests: 1, usage: { input: 50 } })
  })

  it("keeps one conversation per session key", async () => {
    const cache = strataCache({ sessionKey: (p) => (p.providerOptions?.["strata"]?.["thread"] as string | undefined), now: () => 0 })
    const model = { provider: "anthropic.messages", modelId: "claude-sonnet-4-5" }
    for (const thread of ["a", "b", "a"]) {
      const params = { prompt: chat(1)[0]!, providerOptions: { strata: { thread } } }
      const next = await cache.transformParams({ type: "generate", params, model })
      await cache.wrapGenerate({ doGenerate: async () => ({ usage: { inputTokens: { total: 100, noCache: 10, cacheRead: 90, cacheWrite: 0 }, outputTokens: { total: 5 } } }), params: next, model })
    }
    const report = cache.report()
    expect(Object.keys(report.sessions)).toEqual(["a", "b"])
    expect(report.sessions["a"]!.requests).toBe(2)
    expect(report.usage).toEqual({ input: 30, cacheRead: 270, cacheWrite: 0, output: 15 })
    expect(report.hitRate).toBeCloseTo(0.9, 10)
  })
})

describe("decodeAiSdkUsage", () => {
  it("reads ai 6/7 nested usage and ai 5 flat usage", () => {
    expect(decodeAiSdkUsage({ inputTokens: { total: 5000, noCache: 200, cacheRead: 4000, cacheWrite: 800 }, outputTokens: { total: 90, text: 90, reasoning: undefined } }))
      .toEqual({ input: 200, cacheRead: 4000, cacheWrite: 800, output: 90 })
    expect(decodeAiSdkUsage({ inputTokens: { total: 5000, noCache: undefined, cacheRead: 4000, cacheWrite: undefined }, outputTokens: { total: undefined } }))
      .toEqual({ input: 1000, cacheRead: 4000, cacheWrite: 0, output: 0 })
    expect(decodeAiSdkUsage({ inputTokens: 5000, outputTokens: 12, cachedInputTokens: 4096 })).toEqual({ input: 904, cacheRead: 4096, cacheWrite: 0, output: 12 })
    expect(() => decodeAiSdkUsage({ inputTokens: "many" })).toThrow()
  })
})

describe("the planner never loses to the trailing breakpoint", () => {
  const sonnet = { anthropic: "claude-sonnet-4-5", bedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" } as const
  type Target = keyof typeof sonnet
  const fn = (name: string, tokens: number) => ({ type: "function", name, description: words(name, tokens), inputSchema: { type: "object", properties: { path: { type: "string" } } } })
  /** Tool definitions as each provider takes them, for the bodies' `extra`. */
  const nativeTools = (target: Target, tools: ReadonlyArray<ReturnType<typeof fn>>): Record<string, unknown> =>
    tools.length === 0
      ? {}
      : target === "anthropic"
      ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) }
      : { toolConfig: { tools: tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.inputSchema } } })) } }
  /** The usual recipe: one marker on the last message. */
  const trailingBodies = (target: Target, prompts: ReadonlyArray<Prompt>, extra: Record<string, unknown>) =>
    prompts.map((p) => {
      const marker = target === "bedrock" ? { bedrock: { cachePoint: { type: "default" } } } : { anthropic: { cacheControl: { type: "ephemeral" } } }
      return nativeBodyOf(p.map((m, i) => (i === p.length - 1 ? { ...m, providerOptions: marker } : m)), target, sonnet[target], extra)
    })
  const cost = (target: Target, bodies: ReadonlyArray<unknown>, times: ReadonlyArray<number>) => {
    const sim = makeSimulator(target, { model: sonnet[target] })
    return bodies.reduce((sum: number, b, i) => sum + sim.send(b, times[i]!).cost.inputEquivalentTokens, 0)
  }

  it("a first call under the minimum by the estimate but over it with the tool definitions: the trailing write happens", () => {
    // 1,000 tokens of prompt: under Sonnet 4.5's 1,024 without the tools the AI SDK passes apart from it.
    const tools = [fn("read_file", 200)]
    const prompt: Prompt = [{ role: "system", content: words("system", 700) }, user(words("task", 300))]
    const withTools = makeCachePlanner({ target: "anthropic", model: sonnet.anthropic }).plan(prompt, 0, tools)
    expect(withTools.markers.map((m) => [m.role, m.tentative ?? false])).toEqual([["trailing", false]])
    expect(withTools.promptTokens).toBeGreaterThan(1200)
    // Without the tools the estimate is under the minimum: the trailing marker still goes in, tentative.
    const without = makeCachePlanner({ target: "anthropic", model: sonnet.anthropic }).plan(prompt, 0)
    expect(without.markers.map((m) => [m.role, m.message, m.tentative])).toEqual([["trailing", 1, true]])
    expect(without.skipped.some((s) => s.startsWith("trailing: by the estimate the prefix of 1000 tokens is below"))).toBe(true)
    // Either way the provider writes the prompt with its tools, as one trailing breakpoint would.
    const extra = { max_tokens: 1024, ...nativeTools("anthropic", tools) }
    const sent = cachedPromptBodies([prompt], { target: "anthropic", model: sonnet.anthropic, extra })
    const usage = makeSimulator("anthropic", { model: sonnet.anthropic }).send(sent[0], 0).usage
    expect(usage.cacheWrite).toBeGreaterThan(1024)
  })

  it("Bedrock: no checkpoint before the trailing one that would leave it under the minimum if the estimate runs high", () => {
    // The planner overestimates by 15%: the messages after the system prompt, 950 tokens by
    // the provider's count, are 1,093 by the planner's, over the 1,024 per checkpoint.
    const countTokens = (text: string) => Math.ceil((text.length / 4) * 1.15)
    const system: PromptMessage = { role: "system", content: words("system", 1400) }
    const prompts: Array<Prompt> = [[system, user(words("task", 950))], [system, user(words("task", 950)), assistant(words("a", 300)), user(words("b", 100))]]
    const times = [0, 20]
    const planned = makeCachePlanner({ target: "bedrock", model: sonnet.bedrock, countTokens }).plan(prompts[0]!, 0)
    expect(planned.markers.map((m) => m.role)).toEqual(["trailing"])
    expect(planned.skipped.some((s) => s.startsWith("system: with the breakpoints kept"))).toBe(true)
    const ours = cachedPromptBodies(prompts, { target: "bedrock", model: sonnet.bedrock, times, countTokens })
    expect(cost("bedrock", ours, times)).toBeLessThanOrEqual(cost("bedrock", trailingBodies("bedrock", prompts, {}), times))
  })

  it("changed tool definitions change every prefix: nothing is counted on as cached", () => {
    const planner = makeCachePlanner({ target: "anthropic", model: sonnet.anthropic })
    const prompts = chat(2)
    planner.plan(prompts[0]!, 0, [fn("read_file", 100)])
    expect(planner.plan(prompts[1]!, 10, [fn("read_file", 100)]).readBlock).toBeGreaterThan(0)
    const changed = planner.plan([...prompts[1]!, assistant("ok"), user("and then?")], 20, [fn("read_file", 120)])
    expect([changed.readBlock, changed.sharedBlocks]).toEqual([-1, 0])
  })

  it("append-only sessions with tools, gaps and misestimated tokens cost no more than one trailing breakpoint (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Target>("anthropic", "bedrock"),
        fc.integer({ min: 100, max: 1500 }),
        fc.array(fc.integer({ min: 50, max: 400 }), { maxLength: 3 }),
        fc.array(fc.record({ parallel: fc.integer({ min: 0, max: 12 }), tokens: fc.integer({ min: 20, max: 700 }), gap: fc.integer({ min: 1, max: 400 }) }), { minLength: 1, maxLength: 10 }),
        fc.double({ min: 0.8, max: 1.2, noNaN: true }),
        (target, systemTokens, toolSizes, steps, misestimate) => {
          const tools = toolSizes.map((n, i) => fn(`tool_${i}`, n))
          const history: Array<PromptMessage> = [{ role: "system", content: words("system", systemTokens) }, user(words("task", 200))]
          const prompts: Array<Prompt> = [[...history]]
          const times = [0]
          steps.forEach((s, k) => {
            if (s.parallel === 0) {
              history.push(assistant(words(`a${k}`, s.tokens)), user(words(`q${k}`, 50)))
            } else {
              const ids = Array.from({ length: s.parallel }, (_, j) => `c${k}_${j}`)
              history.push({ role: "assistant", content: ids.map((id) => part({ type: "tool-call", toolCallId: id, toolName: "tool_0", input: { path: id } })) })
              history.push({ role: "tool", content: ids.map((id) => part({ type: "tool-result", toolCallId: id, toolName: "tool_0", output: { type: "text", value: words(id, s.tokens) } })) })
            }
            prompts.push([...history])
            times.push(times[times.length - 1]! + s.gap)
          })
          const extra = { ...(target === "anthropic" ? { max_tokens: 1024 } : {}), ...nativeTools(target, tools) }
          // The planner counts with an estimate up to 20% off the provider's count.
          const countTokens = (text: string) => Math.ceil((text.length / 4) * misestimate)
          const ours = cachedPromptBodies(prompts, { target, model: sonnet[target], times, extra, tools, countTokens })
          expect(cost(target, ours, times)).toBeLessThanOrEqual(cost(target, trailingBodies(target, prompts, extra), times) + 1e-6)
        }
      ),
      { numRuns: 60 }
    )
  })
})
