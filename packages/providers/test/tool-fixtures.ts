// Tool sessions for the plugin, wire and property tests: one tool (read_file), a fixed
// repository to run it on, the neutral request a history makes, and random histories.
import {
  type Block,
  type Breakpoint,
  type CachedTier,
  type Message,
  type NeutralRequest,
  type ReasoningPart,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultOutput,
  type ToolResultPart
} from "@strata/core"
import fc from "fast-check"
import { estimateMessageTokens } from "../src/rules/prefix.ts"
import { textOf } from "./plugins-fixtures.ts"

export const TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "read_file",
    description: "Read a file of the repository",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
  }
]

export const FILES: Readonly<Record<string, string>> = {
  "src/a.ts": "export const a = 1\n",
  "src/b.ts": "export const b = 2\n"
}

/** Run a `read_file` call on `FILES`: the content, or an error result for a missing file. */
export const runTool = (call: ToolCallPart): ToolResultPart => {
  const path = typeof call.input["path"] === "string" ? call.input["path"] : ""
  const content = FILES[path]
  const output: ToolResultOutput = content === undefined ? { type: "error-text", value: `ENOENT: no such file ${path}` } : { type: "text", value: content }
  return { type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output }
}

/** A system prompt big enough for every model's minimum cacheable prefix. */
export const SYSTEM = textOf("You are a careful coding agent.", 4500)

/**
 * The neutral request for a history: L0 the system prompt, L1 every message but the last
 * (when there are at least three), the last message active; a breakpoint per cached block.
 */
export const toolRequest = (model: string, history: ReadonlyArray<Message>, options: { readonly breakpoints?: ReadonlyArray<number> } = {}): NeutralRequest => {
  const messages: ReadonlyArray<Message> = [{ role: "system", content: SYSTEM }, ...history]
  const ends = options.breakpoints ?? (history.length >= 3 ? [0, history.length - 1] : [0])
  const tiers: ReadonlyArray<CachedTier> = ["L0", "L1", "L2", "L3"]
  const blocks: Array<Block> = []
  const breakpoints: Array<Breakpoint> = []
  let start = 0
  ends.forEach((end, k) => {
    const own = messages.slice(start, end + 1)
    blocks.push({ tier: tiers[k]!, messages: own, items: [], tokens: own.reduce((n, m) => n + estimateMessageTokens(m), 0) })
    breakpoints.push({ tier: tiers[k]!, messageIndex: end })
    start = end + 1
  })
  const rest = messages.slice(start)
  if (rest.length > 0) blocks.push({ tier: "active", messages: rest, items: [], tokens: rest.reduce((n, m) => n + estimateMessageTokens(m), 0) })
  return { model, tools: TOOLS, blocks, messages, breakpoints }
}

// ---------------------------------------------------------------------------------------
// Random tool histories

/** Reasoning of every provider family, so each plugin keeps its own and leaves out the rest. */
const reasoningArb = (n: number): fc.Arbitrary<ReasoningPart> =>
  fc.constantFrom<ReasoningPart>(
    { type: "reasoning", text: `think ${n}`, provider: "anthropic", signature: `sig-${n}` },
    { type: "reasoning", text: "", provider: "anthropic", redactedData: `redacted-${n}` },
    { type: "reasoning", text: `summary ${n}`, provider: "openai", id: `rs_${n}`, redactedData: `enc-${n}` },
    { type: "reasoning", text: "", provider: "gemini", signature: `gsig-${n}` },
    { type: "reasoning", text: `thought ${n}`, provider: "gemini" }
  )

const PNG = "data:image/png;base64,iVBORw0KGgo="

const outputArb = (images: boolean): fc.Arbitrary<ToolResultOutput> =>
  fc.oneof(
    fc.string({ maxLength: 40 }).map((value): ToolResultOutput => ({ type: "text", value: `out ${value}` })),
    fc.constant<ToolResultOutput>({ type: "json", value: { lines: [1, 2], ok: true } }),
    fc.constant<ToolResultOutput>({ type: "error-text", value: "ENOENT" }),
    fc.constant<ToolResultOutput>({ type: "error-json", value: { code: 2 } }),
    fc.constant<ToolResultOutput>({
      type: "content",
      value: images ? [{ type: "text", text: "see the screenshot" }, { type: "image", url: PNG, mediaType: "image/png" }] : [{ type: "text", text: "part one" }, { type: "text", text: "part two" }]
    })
  )

/** One step of a session: a chat exchange, or a tool round (calls, then their results). */
type Step =
  | { readonly kind: "chat" }
  | { readonly kind: "tools"; readonly calls: number; readonly reasoning: boolean; readonly text: boolean; readonly outputs: ReadonlyArray<ToolResultOutput> }

const stepArb = (images: boolean): fc.Arbitrary<Step> =>
  fc.oneof(
    fc.constant<Step>({ kind: "chat" }),
    fc.record({
      kind: fc.constant("tools" as const),
      calls: fc.integer({ min: 1, max: 3 }),
      reasoning: fc.boolean(),
      text: fc.boolean(),
      outputs: fc.array(outputArb(images), { minLength: 3, maxLength: 3 })
    })
  )

/**
 * A random session: a user prompt, then chat exchanges and tool rounds (1-3 parallel
 * calls, optional reasoning and text before the calls, mixed outputs including errors),
 * ending on a user prompt or on tool results. `images`: tool results may hold images.
 */
export const toolHistoryArb = (options: { readonly images?: boolean } = {}): fc.Arbitrary<ReadonlyArray<Message>> =>
  fc.tuple(fc.array(stepArb(options.images === true), { minLength: 1, maxLength: 6 }), fc.boolean(), fc.array(reasoningArb(0), { minLength: 6, maxLength: 6 })).map(([steps, endOnUser, kinds]) => {
    const history: Array<Message> = [{ role: "user", content: "Look at the repository." }]
    let id = 0
    steps.forEach((step, s) => {
      if (step.kind === "chat") {
        if (history[history.length - 1]!.role !== "user") history.push({ role: "user", content: `Question ${s}` })
        history.push({ role: "assistant", content: `Answer ${s}` })
        history.push({ role: "user", content: `Next ${s}` })
        return
      }
      const reasoning = kinds[s % kinds.length]!
      const calls: Array<ToolCallPart> = Array.from({ length: step.calls }, () => ({ type: "tool-call", toolCallId: `call_${id++}`, toolName: "read_file", input: { path: `src/f${id}.ts` } }))
      history.push({
        role: "assistant",
        content: [
          ...(step.reasoning ? [{ ...reasoning, text: reasoning.text === "" ? "" : `${reasoning.text} ${s}` }] : []),
          ...(step.text ? [{ type: "text" as const, text: `Reading ${step.calls} files.` }] : []),
          ...calls
        ]
      })
      history.push({ role: "tool", content: calls.map((c, k) => ({ type: "tool-result", toolCallId: c.toolCallId, toolName: c.toolName, output: step.outputs[k % step.outputs.length]! })) })
    })
    if (endOnUser && history[history.length - 1]!.role !== "user") history.push({ role: "user", content: "Go on." })
    return history
  })

/** Breakpoint positions over a request of `n` messages (system first): L0 at 0, up to 3 more, increasing. */
export const breakpointsArb = (n: number): fc.Arbitrary<ReadonlyArray<number>> =>
  fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, n - 1) }), { maxLength: 3 }).map((xs) => [0, ...[...xs].filter((x) => x < n).sort((a, b) => a - b)])
