// Edit mode: superseded tool results replaced by a placeholder, and nothing else but cache
// controls changes; once cleared, every later request carries the same bytes; never a
// result of the last few steps; and (priced by the provider's simulator) never dearer
// than what the agent sent, over random sessions and gaps.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeAnthropicSimulator, makeOpenAISimulator } from "@strata/providers"
import { transformRequest, withoutCacheControls, type SessionLedger } from "@strata/proxy"
import { driveAnthropic } from "./drive.ts"

type Json = Record<string, unknown>
const SYSTEM = [{ type: "text", text: "You are a coding agent. ".repeat(300), cache_control: { type: "ephemeral" } }]
const TOOLS = ["Read", "Edit", "Bash"].map((name) => ({ name, description: name, input_schema: { type: "object", properties: {} } }))

type Step = { readonly tool: "Read" | "Edit" | "Bash" | "Answer"; readonly arg: number; readonly size: number }

/** A Claude Code-like loop: one tool call a step, its result appended; the agent marks its last block. */
const session = (steps: ReadonlyArray<Step>): Array<Json> => {
  const messages: Array<Json> = [{ role: "user", content: [{ type: "text", text: "Fix the bug." }] }]
  const bodies: Array<Json> = []
  const marked = () => {
    const last = messages[messages.length - 1]!
    const content = [...(last["content"] as Array<Json>)]
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: "ephemeral" } }
    return [...messages.slice(0, -1), { ...last, content }]
  }
  steps.forEach((step, i) => {
    bodies.push({ model: "claude-sonnet-4-5", max_tokens: 4096, temperature: 0, system: SYSTEM, tools: TOOLS, messages: marked() })
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

describe("edit mode", () => {
  it("only replaces superseded results with placeholders, byte-stable afterwards, never the last steps, never dearer (property)", () => {
    let clearedSessions = 0
    let ratios: Array<number> = []
    fc.assert(
      fc.property(fc.array(arbStep, { minLength: 4, maxLength: 30 }), fc.array(arbGap, { minLength: 30, maxLength: 30 }), (steps, gapList) => {
        const bodies = session(steps)
        const times = bodies.map((_, i) => gapList.slice(0, i).reduce((a, b) => a + b, 0))
        const outs = drive(bodies, times)
        const placeholders = new Map<string, unknown>()
        outs.forEach((out, i) => {
          // Nothing but cache controls and tool_result contents differs.
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
        if (placeholders.size > 0) clearedSessions++
        const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
        const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
        let a = 0
        let f = 0
        outs.forEach((out, i) => {
          a += asSent.send(bodies[i], times[i]!).cost.inputEquivalentTokens
          f += forwarded.send(out.body, times[i]!).cost.inputEquivalentTokens
        })
        ratios.push(f / a)
        expect(f).toBeLessThanOrEqual(a * 1.0000001)
      }),
      { numRuns: 60 }
    )
    // The property must exercise clearing, not only pass through.
    expect(clearedSessions).toBeGreaterThan(5)
    console.log(`edit mode: ${clearedSessions} sessions cleared something (of the runs); forwarded/as-sent mean ${(ratios.reduce((x, y) => x + y, 0) / ratios.length).toFixed(3)}, worst ${Math.max(...ratios).toFixed(3)}`)
    ratios = []
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
