// Tool exchanges and tool definitions in the pipeline: one history item per exchange,
// a malformed history refused before any layout, the tools in the request, the
// breakdown and the `system` item.
import { Effect } from "effect"
import { describe, expect } from "vitest"
import {
  assemble,
  getContextBreakdown,
  historyEntries,
  makeEstimatingCounter,
  type AssemblyInput,
  type Message
} from "../src/effect.ts"
import { it } from "@strata/test-support"
import { charCounter, journalTestLayer, newLog, stubTrackerLayer, testLayer } from "./pipeline-stubs.ts"
import { TOOLS } from "./tool-sessions.ts"

const call = (id: string): Message => ({ role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: "a.ts" } }] })
const result = (id: string): Message => ({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: `contents ${id}` } }] })

const HISTORY: ReadonlyArray<Message> = [
  { role: "user", content: "Read a.ts twice" },
  call("c1"),
  result("c1"),
  call("c2"),
  result("c2"),
  { role: "assistant", content: "Done." }
]

const input: AssemblyInput = { model: "gpt-4o", prompt: "next", systemPrompt: "SYS", history: HISTORY, useRepoMap: false }

describe("tool exchanges as history items", () => {
  it.effect("an exchange is one item named after its call's index; other messages one each", () =>
    Effect.sync(() => {
      const entries = historyEntries(HISTORY, makeEstimatingCounter())
      expect(entries.map((e) => [e.key, e.messages.length])).toEqual([["history:0", 1], ["history:1", 2], ["history:3", 2], ["history:5", 1]])
      // Hashes are stable and distinct.
      const again = historyEntries(structuredClone(HISTORY), makeEstimatingCounter())
      expect(again.map((e) => e.hash)).toEqual(entries.map((e) => e.hash))
      expect(new Set(entries.map((e) => e.hash)).size).toBe(entries.length)
    }))

  it.effect("the tracker sees one item per exchange, with both messages' tokens", () => {
    const log = newLog()
    return Effect.gen(function* () {
      yield* assemble(input)
      const items = log.updates[0]?.items.filter((i) => i.key.startsWith("history:")) ?? []
      expect(items.map((i) => i.key)).toEqual(["history:0", "history:1", "history:3", "history:5"])
      const counter = charCounter()
      expect(items[1]?.tokens).toBe(counter.countMessage(HISTORY[1]!) + counter.countMessage(HISTORY[2]!))
    }).pipe(Effect.provide(testLayer(stubTrackerLayer({ log }))))
  })

  it.effect("a history whose call is unanswered, or whose result answers nothing, fails before any layout, naming the message", () =>
    Effect.gen(function* () {
      for (const history of [[...HISTORY.slice(0, 2)], [HISTORY[0]!, result("c9")], [HISTORY[0]!, call("c1"), { role: "user" as const, content: "?" }, result("c1")]]) {
        const error = yield* Effect.flip(assemble({ ...input, history }))
        expect(error._tag).toBe("StageError")
        expect(error.message).toMatch(/message \d+: tool/)
      }
    }).pipe(Effect.provide(journalTestLayer(stubTrackerLayer()))))
})

describe("tool definitions", () => {
  it.effect("travel with the request, render in the seeds' format before the messages, and count in L0", () =>
    Effect.gen(function* () {
      const withTools = yield* assemble({ ...input, tools: TOOLS })
      expect(withTools.request.tools).toEqual(TOOLS)
      const body = withTools.placed.body as { tools: ReadonlyArray<{ type: string; function: { name: string } }> }
      expect(Object.keys(body)).toEqual(["model", "tools", "messages"])
      expect(body.tools.map((t) => t.function.name)).toEqual(TOOLS.map((t) => t.name))
      const l0 = withTools.breakdown.blocks.find((b) => b.tier === "L0")
      expect(l0?.contents[0]).toEqual({ type: "tools", count: TOOLS.length, tokens: withTools.report.categories.tools })
      expect(withTools.report.categories.tools).toBeGreaterThan(0)
      const breakdown = yield* getContextBreakdown({ ...input, tools: TOOLS })
      expect(breakdown.total_tokens).toBe(withTools.report.totalTokens)
      // Without tools the request has no `tools` key at all (requests stay byte-identical).
      const without = yield* assemble(input)
      expect("tools" in without.request).toBe(false)
      expect("tools" in (without.placed.body as object)).toBe(false)
    }).pipe(Effect.provide(testLayer(stubTrackerLayer()))))

  it.effect("are part of the `system` item: a change to them is a change of the prefix head (journal: `tools changed`)", () =>
    Effect.gen(function* () {
      const first = yield* assemble({ ...input, tools: TOOLS })
      yield* first.commit
      const same = yield* assemble({ ...input, tools: structuredClone(TOOLS) })
      expect(same.journal?.rebuild).toBeUndefined()
      const changed = yield* assemble({ ...input, tools: TOOLS.slice(1) })
      expect(changed.journal?.rebuild).toBe("tools changed")
      const log: Array<string> = []
      for (const r of [first, same, changed]) log.push(JSON.stringify(r.request.tools?.map((t) => t.name)))
      expect(log[0]).toBe(log[1])
    }).pipe(Effect.provide(journalTestLayer(stubTrackerLayer()))))
})
