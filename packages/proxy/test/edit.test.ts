// Edit mode: superseded tool results replaced by a placeholder, and nothing else but cache
// controls changes; once cleared, every later request carries the same bytes; never a
// result of the last few steps; and (priced by the provider's simulator) never dearer
// than what the agent sent, over random sessions and gaps.
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeAnthropicSimulator, makeOpenAISimulator } from "@strata/providers"
import { SessionLedgerRecord, transformRequest, withoutCacheControls, type SessionLedger } from "@strata/proxy"
import { driveAnthropic } from "./drive.ts"

type Json = Record<string, unknown>
const SYSTEM = [{ type: "text", text: "You are a coding agent. ".repeat(300), cache_control: { type: "ephemeral" } }]
const TOOLS = ["Read", "Edit", "Bash"].map((name) => ({ name, description: name, input_schema: { type: "object", properties: {} } }))

type Step = { readonly tool: "Read" | "Edit" | "Bash" | "Answer"; readonly arg: number; readonly size: number }

/**
 * A Claude Code-like loop: one tool call a step, its result appended; the agent marks the
 * system prompt and its last block (`allSlots`: also its last tool and its first prompt,
 * every marker slot taken).
 */
const session = (steps: ReadonlyArray<Step>, allSlots = false): Array<Json> => {
  const first: Json = { type: "text", text: "Fix the bug." }
  const messages: Array<Json> = [{ role: "user", content: [allSlots ? { ...first, cache_control: { type: "ephemeral" } } : first] }]
  const bodies: Array<Json> = []
  const tools = allSlots ? [...TOOLS.slice(0, -1), { ...TOOLS.at(-1), cache_control: { type: "ephemeral" } }] : TOOLS
  const marked = () => {
    const last = messages[messages.length - 1]!
    const content = [...(last["content"] as Array<Json>)]
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: "ephemeral" } }
    return [...messages.slice(0, -1), { ...last, content }]
  }
  steps.forEach((step, i) => {
    bodies.push({ model: "claude-sonnet-4-5", max_tokens: 4096, temperature: 0, system: SYSTEM, tools, messages: marked() })
    if (step.tool === "Answer") {
      // The agent answers; the person writes the next task's prompt.
      messages.push({ role: "assistant", content: [{ type: "text", text: `Done with task ${i}.` }] })
      messages.push({ role: "user", content: [{ type: "text", text: `Next: task ${i + 1}.` }] })
      return
    }
    const input = step.tool === "Bash" ? { command: `make test${step.arg}` } : step.tool === "Read" ? { file_path: `/r/f${step.arg}.ts` } : { file_path: `/r/f${step.arg}.ts`, old_string: "a", new_string: "b" }
    messages.push({ role: "assistant", content: [{ type: "thinking", thinking: `step ${i}`, signature: "sig" }, { type: "tool_use", id: `toolu_${i}`, name: step.tool, input }] })
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `${step.tool} ${step.arg} #${i}\n` + "line of output\n".repeat(step.size) }] })
  })
  return bodies
}

const arbStep = fc.record({ tool: fc.constantFrom("Read" as const, "Read" as const, "Edit" as const, "Bash" as const, "Answer" as const), arg: fc.integer({ min: 0, max: 3 }), size: fc.integer({ min: 5, max: 400 }) })
const arbGap = fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 301, max: 5000 }))

const drive = (bodies: ReadonlyArray<Json>, times: ReadonlyArray<number>) => driveAnthropic("edit", bodies, times)

/** Every tool_result of a body, by its tool-use id. */
const resultsOf = (body: unknown): Map<string, unknown> => {
  const out = new Map<string, unknown>()
  for (const m of (body as { messages: Array<Json> }).messages) {
    for (const b of m["content"] as Array<Json>) if (b["type"] === "tool_result") out.set(b["tool_use_id"] as string, b["content"])
  }
  return out
}

/** The body with every tool_result's content blanked (to compare the rest). */
const withoutResults = (body: unknown): unknown => ({
  ...(body as Json),
  messages: (body as { messages: Array<Json> }).messages.map((m) => ({ ...m, content: (m["content"] as Array<Json>).map((b) => (b["type"] === "tool_result" ? { ...b, content: "" } : b)) }))
})

/**
 * Drive random sessions through edit mode and check every request: nothing but cache
 * controls and tool_result contents differs; a cleared result is a placeholder, never one
 * of the last few steps, the same bytes in every later request and never sent in full
 * again; the markers are valid (the simulator rejects a fifth or a 5m before a 1h); and
 * the session, priced by the simulator, is never dearer than sent.
 */
const checkSessions = (arbSteps: fc.Arbitrary<ReadonlyArray<Step>>, numRuns: number, gaps: fc.Arbitrary<number> = arbGap, allSlots: fc.Arbitrary<boolean> = fc.constant(false)) => {
  const seen = { sessions: 0, cleared: 0, anchored: 0, ratios: [] as Array<number> }
  fc.assert(
    fc.property(arbSteps, fc.array(gaps, { minLength: 30, maxLength: 30 }), allSlots, (steps, gapList, full) => {
      const bodies = session(steps, full)
      const times = bodies.map((_, i) => gapList.slice(0, i).reduce((a, b) => a + b, 0))
      const outs = drive(bodies, times)
      const placeholders = new Map<string, unknown>()
      outs.forEach((out, i) => {
        expect(withoutCacheControls(withoutResults(out.body))).toEqual(withoutCacheControls(withoutResults(bodies[i])))
        const sent = resultsOf(bodies[i])
        const got = resultsOf(out.body)
        const assistants = (bodies[i]!["messages"] as Array<Json>).filter((m) => m["role"] === "assistant").length
        for (const [id, content] of got) {
          if (content === sent.get(id)) {
            // Once cleared, never sent in full again.
            expect(placeholders.has(id)).toBe(false)
            continue
          }
          expect(typeof content).toBe("string")
          expect(content as string).toMatch(/^\[strata proxy: cleared the superseded result of (Read|Bash) \(toolu_\d+\): .*(read|run) it again to see it\]$/)
          // Never one of the last few steps.
          expect(Number(id.slice("toolu_".length))).toBeLessThan(assistants - 3)
          // Byte-stable: the same placeholder in every later request.
          if (placeholders.has(id)) expect(content).toBe(placeholders.get(id))
          placeholders.set(id, content)
        }
      })
      seen.sessions++
      if (placeholders.size > 0) seen.cleared++
      const anchored = outs.some((o) => o.changed.some((c) => c.startsWith("marker at block")))
      // A client that takes every slot leaves none for the marker at the entry.
      if (full) expect(anchored).toBe(false)
      if (anchored) seen.anchored++
      const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
      const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
      let a = 0
      let f = 0
      outs.forEach((out, i) => {
        a += asSent.send(bodies[i], times[i]!).cost.inputEquivalentTokens
        f += forwarded.send(out.body, times[i]!).cost.inputEquivalentTokens
      })
      seen.ratios.push(f / a)
      expect(f).toBeLessThanOrEqual(a * 1.0000001)
    }),
    { numRuns }
  )
  const ratios = seen.ratios
  console.log(`edit mode: ${seen.cleared} of ${seen.sessions} sessions cleared something, ${seen.anchored} with a marker at a cached entry; forwarded/as-sent mean ${(ratios.reduce((x, y) => x + y, 0) / ratios.length).toFixed(3)}, worst ${Math.max(...ratios).toFixed(3)}`)
  return seen
}

describe("edit mode", () => {
  it("only replaces superseded results with placeholders, byte-stable afterwards, never the last steps, never dearer (property)", () => {
    const seen = checkSessions(fc.array(arbStep, { minLength: 4, maxLength: 30 }), 60)
    // The property must exercise clearing, not only pass through.
    expect(seen.cleared).toBeGreaterThan(5)
  })

  it("clearing through a marker at a cached entry keeps every invariant, and takes no fifth marker slot (property)", () => {
    // Big reads, mostly small steps after them, idle gaps rare: clearings that read the
    // prefix through an earlier entry pay at once; some clients take every slot.
    const arg = fc.integer({ min: 0, max: 2 })
    const arbCheap: fc.Arbitrary<Step> = fc.oneof(
      { arbitrary: fc.record({ tool: fc.constant("Read" as const), arg, size: fc.integer({ min: 600, max: 3000 }) }), weight: 2 },
      { arbitrary: fc.record({ tool: fc.constantFrom("Edit" as const, "Bash" as const), arg, size: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 10 }), weight: 4 }, { arbitrary: fc.integer({ min: 100, max: 600 }), weight: 1 }) }), weight: 4 },
      { arbitrary: fc.record({ tool: fc.constant("Answer" as const), arg, size: fc.constant(0) }), weight: 1 }
    )
    const rareIdle = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 30 }), weight: 9 }, { arbitrary: fc.integer({ min: 301, max: 5000 }), weight: 1 })
    const seen = checkSessions(fc.array(arbCheap, { minLength: 6, maxLength: 30 }), 80, rareIdle, fc.boolean())
    expect(seen.anchored).toBeGreaterThanOrEqual(4)
  })

  it("clears a re-read file's older result when the cache is lost anyway, and says how to get it back", () => {
    const bodies = session([
      { tool: "Read", arg: 1, size: 300 },
      { tool: "Bash", arg: 0, size: 2 },
      { tool: "Read", arg: 1, size: 300 },
      { tool: "Bash", arg: 2, size: 2 },
      { tool: "Bash", arg: 3, size: 2 },
      { tool: "Bash", arg: 0, size: 2 },
      { tool: "Bash", arg: 1, size: 2 }
    ])
    const outs = drive(bodies, [0, 5, 10, 15, 20, 25, 25 + 900])
    expect(outs.slice(0, 6).every((o) => o.changed.every((c) => !c.startsWith("cleared")))).toBe(true)
    const last = resultsOf(outs[6]!.body)
    expect(last.get("toolu_0")).toBe("[strata proxy: cleared the superseded result of Read (toolu_0): /r/f1.ts was read again later; read it again to see it]")
    expect(String(last.get("toolu_2"))).toContain("Read 1 #2")
    expect(outs[6]!.ledger.cleared?.map(([id]) => id)).toEqual(["toolu_0"])
  })

  it("clears with no idle gap when a cache entry before the first cleared result is still alive: a marker there reads the prefix, only the rest is written again", () => {
    // A big read, then its edit and small steps, 5 s apart: the read is superseded and the
    // blocks after it are few. Rewriting the whole conversation would not pay; reading the
    // prefix through the prompt (the first request's entry) and writing the rest does at once.
    const bodies = session([
      { tool: "Read", arg: 1, size: 1500 },
      { tool: "Edit", arg: 1, size: 2 },
      { tool: "Bash", arg: 0, size: 2 },
      { tool: "Bash", arg: 2, size: 2 },
      { tool: "Bash", arg: 3, size: 2 },
      { tool: "Bash", arg: 1, size: 2 }
    ])
    const times = bodies.map((_, i) => i * 5)
    const outs = drive(bodies, times)
    expect(outs.slice(0, 4).every((o) => o.changed.length === 0)).toBe(true)
    const clearing = outs[4]!
    expect(clearing.changed).toHaveLength(2)
    expect(clearing.changed[0]).toMatch(/^cleared 1 superseded tool result \(\d+ tokens\)$/)
    expect(clearing.changed[1]).toBe("marker at block 0: the prefix before the cleared results is read from the cache")
    expect(resultsOf(clearing.body).get("toolu_0")).toBe("[strata proxy: cleared the superseded result of Read (toolu_0): /r/f1.ts was edited since; read it again to see it]")
    // The markers forwarded: the agent's on the last block, and one on the prompt (the first
    // request's entry, before the cleared result at block 2); the next request has only the agent's.
    const marked = (body: unknown) => (body as { messages: Array<{ content: Array<Json> }> }).messages.flatMap((m, i) => m.content.flatMap((b, j) => (b["cache_control"] === undefined ? [] : [[i, j]])))
    expect(marked(clearing.body)).toEqual([[0, 0], [8, 0]])
    expect(marked(outs[5]!.body)).toEqual([[10, 0]])
    expect(resultsOf(outs[5]!.body).get("toolu_0")).toBe(resultsOf(clearing.body).get("toolu_0"))
    // Priced by the simulator: the clearing request reads the system prompt and the prompt
    // and already costs less than the one sent; the next one reads what it wrote.
    const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const a = bodies.map((b, i) => asSent.send(b, times[i]!))
    const f = outs.map((o, i) => forwarded.send(o.body, times[i]!))
    expect(f[4]!.usage.cacheRead).toBeGreaterThan(1500)
    expect(f[4]!.cost.inputEquivalentTokens).toBeLessThan(a[4]!.cost.inputEquivalentTokens)
    expect(f[5]!.usage.cacheRead).toBe(f[4]!.usage.cacheRead + f[4]!.usage.cacheWrite)
    expect(f[5]!.cost.inputEquivalentTokens).toBeLessThan(a[5]!.cost.inputEquivalentTokens)
    // The entries it planned from are in the ledger, and the session record keeps them.
    const ledger = outs[3]!.ledger
    expect(ledger.entries?.map(([block]) => block)).toEqual([0, 3, 6, 9])
    expect(Schema.decodeUnknownSync(SessionLedgerRecord)(ledger)).toEqual(ledger)
  })

  it("tracks the cache entries its markers leave: read ones live on, aged by the gaps, gone 30 s before their lifetime or when another block sits there", () => {
    const bodies = session([{ tool: "Bash", arg: 0, size: 2 }, { tool: "Bash", arg: 1, size: 2 }, { tool: "Bash", arg: 2, size: 2 }, { tool: "Bash", arg: 3, size: 2 }, { tool: "Bash", arg: 0, size: 2 }])
    const blocksAges = (ledger: SessionLedger) => ledger.entries?.map(([block, age, lifetime]) => [block, age, lifetime])
    // Each request reads the previous one's entry (it lives on) and writes one at its last block.
    const outs = drive(bodies.slice(0, 4), [0, 5, 10, 15])
    expect(blocksAges(outs[3]!.ledger)).toEqual([[0, 10, 300], [3, 5, 300], [6, 0, 300], [9, 0, 300]])
    // 271 s later none is trusted any more (the lifetime less 30 s): only the new one.
    const late = drive(bodies, [0, 5, 10, 15, 15 + 271])
    expect(blocksAges(late[4]!.ledger)).toEqual([[12, 0, 300]])
    // Another conversation at those blocks (the replay has no session chain): the entries
    // there are dropped; those past its end stay (a shorter request of the same session).
    const other = JSON.parse(JSON.stringify(session([{ tool: "Read", arg: 0, size: 2 }, { tool: "Read", arg: 1, size: 2 }])[1]).replaceAll("Fix the bug.", "Rename it.").replaceAll("toolu_", "other_")) as Json
    const next = transformRequest({ protocol: "anthropic", mode: "edit", body: other, session: { id: "s", gaps: [5], lastBlocks: 3, ledger: outs[3]!.ledger } })
    expect(blocksAges(next.ledger)).toEqual([[3, 0, 300], [6, 5, 300], [9, 5, 300]])
  })

  it("does not bet on a clearing the later requests must pay back, until the session has saved enough to cover it", () => {
    // Twenty small steps, then a big read, its edit and steps as big as it: reading the prefix
    // through the entry before the read still leaves them to write again. Over the requests
    // a session this long can expect, the reads saved would pay for that; if it ended now,
    // the session would be dearer than sent, and it has saved nothing yet to cover that.
    const small = Array.from({ length: 20 }, (_, i) => ({ tool: "Bash" as const, arg: i % 4, size: 2 }))
    const bodies = session([
      ...small,
      { tool: "Read", arg: 1, size: 1500 },
      { tool: "Edit", arg: 1, size: 300 },
      { tool: "Bash", arg: 0, size: 300 },
      { tool: "Bash", arg: 2, size: 300 },
      { tool: "Bash", arg: 3, size: 2 }
    ])
    const outs = drive(bodies, bodies.map((_, i) => i * 5))
    expect(outs.every((o) => o.changed.length === 0)).toBe(true)
    expect(outs.at(-1)!.ledger.entries?.length).toBeGreaterThan(0)
  })

  it("Responses (Codex): only superseded command outputs become placeholders, stable, never the last 3 calls, never dearer (property)", () => {
    const CMDS = ["cat src/a.ts", "sed -n '1,80p' src/b.ts", "ls -la", "cargo test"]
    type CodexStep = { readonly kind: "exec" | "patch"; readonly arg: number; readonly size: number }
    const arbCodex = fc.record({ kind: fc.constantFrom("exec" as const, "exec" as const, "patch" as const), arg: fc.integer({ min: 0, max: 3 }), size: fc.integer({ min: 5, max: 1500 }) })
    // GPT-5.4 keeps a prefix in memory for minutes; GPT-5.5 keeps only 24h entries, so a pause
    // of minutes loses nothing there and clearing must wait.
    const codexSession = (model: string, steps: ReadonlyArray<CodexStep>): Array<Json> => {
      const input: Array<Json> = [{ type: "message", role: "user", content: [{ type: "input_text", text: "Fix the bug." }] }]
      const bodies: Array<Json> = []
      steps.forEach((step, i) => {
        bodies.push({ model, instructions: "You are Codex. ".repeat(400), tools: [{ type: "function", name: "exec_command" }], input: [...input], stream: true })
        if (step.kind === "patch") {
          const file = step.arg % 2 === 0 ? "src/a.ts" : "src/b.ts"
          input.push({ type: "custom_tool_call", call_id: `call_${i}`, name: "apply_patch", input: `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch` })
          input.push({ type: "custom_tool_call_output", call_id: `call_${i}`, output: "Success." })
        } else {
          input.push({ type: "function_call", call_id: `call_${i}`, name: "exec_command", arguments: JSON.stringify({ cmd: CMDS[step.arg] }) })
          input.push({ type: "function_call_output", call_id: `call_${i}`, output: `${CMDS[step.arg]} #${i}\n` + "output line\n".repeat(step.size) })
        }
      })
      return bodies
    }
    let cleared = 0
    fc.assert(
      fc.property(fc.constantFrom("gpt-5.4", "gpt-5.4", "gpt-5.5"), fc.array(arbCodex, { minLength: 4, maxLength: 24 }), fc.array(arbGap, { minLength: 24, maxLength: 24 }), (model, steps, gapList) => {
        const bodies = codexSession(model, steps)
        const times = bodies.map((_, i) => gapList.slice(0, i).reduce((a, b) => a + b, 0))
        const gaps: Array<number> = []
        let ledger: SessionLedger | undefined
        const placeholders = new Map<string, unknown>()
        const sent = makeOpenAISimulator({ model })
        const fwd = makeOpenAISimulator({ model })
        let a = 0
        let f = 0
        bodies.forEach((body, i) => {
          if (i > 0) gaps.push(times[i]! - times[i - 1]!)
          const out = transformRequest({ protocol: "openai-responses", mode: "edit", body, session: { id: "c", gaps: [...gaps], lastBlocks: 0, ledger } })
          ledger = out.ledger
          const got = (out.body as { input: Array<Json> }).input
          const orig = body["input"] as Array<Json>
          expect(got).toHaveLength(orig.length)
          const calls = orig.filter((x) => x["type"] === "function_call" || x["type"] === "custom_tool_call").length
          got.forEach((item, k) => {
            if (item === orig[k] || JSON.stringify(item) === JSON.stringify(orig[k])) {
              expect(placeholders.has(String(item["call_id"])) && item["type"] === "function_call_output").toBe(false)
              return
            }
            expect({ ...item, output: "" }).toEqual({ ...orig[k], output: "" })
            expect(String(item["output"])).toMatch(/^\[strata proxy: cleared the superseded output of exec_command \(call_\d+\): .*(run it again|print it again) to see it\]$/)
            expect(Number(String(item["call_id"]).slice("call_".length))).toBeLessThan(calls - 3)
            if (placeholders.has(String(item["call_id"]))) expect(item["output"]).toBe(placeholders.get(String(item["call_id"])))
            placeholders.set(String(item["call_id"]), item["output"])
          })
          expect({ ...(out.body as Json), input: [] }).toEqual({ ...body, input: [], prompt_cache_key: "strata-c" })
          a += sent.send(body, times[i]!).cost.inputEquivalentTokens
          f += fwd.send(out.body, times[i]!).cost.inputEquivalentTokens
        })
        if (placeholders.size > 0) cleared++
        expect(f).toBeLessThanOrEqual(a * 1.0000001)
      }),
      { numRuns: 90 }
    )
    expect(cleared).toBeGreaterThan(5)
  })
})
