// Random agent sessions for property tests: histories of user prompts, assistant replies
// and tool exchanges (parallel calls, error results, JSON outputs, reasoning), always
// valid (`historyProblems` is empty). Every message and result carries a marker
// (⟦H<j>⟧ in text, ⟦R<id>⟧ in a result) so a test can find it in a request.
import fc from "fast-check"
import {
  historyProblems,
  toolCalls,
  type AssistantPart,
  type Message,
  type ToolDefinition,
  type ToolResultPart
} from "../src/effect.ts"

export const TOOL_NAMES = ["read_file", "edit_file", "search", "run_tests"] as const
export type ToolName = (typeof TOOL_NAMES)[number]
export const TOOL_PATHS = ["src/a.ts", "src/b.ts", "lib/c.ts"] as const

export const TOOLS: ReadonlyArray<ToolDefinition> = TOOL_NAMES.map((name) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: "object", properties: { path: { type: "string" } } }
}))

/** One step of a session, before ids and markers are given out. */
export type Step =
  | { readonly kind: "user" }
  | { readonly kind: "reply" }
  | {
    readonly kind: "exchange"
    readonly calls: ReadonlyArray<{ readonly tool: ToolName; readonly path: number; readonly size: number; readonly output: "text" | "json" | "error" }>
    readonly reasoning: boolean
    readonly text: boolean
  }

const callArb = fc.record({
  tool: fc.constantFrom(...TOOL_NAMES),
  path: fc.integer({ min: 0, max: TOOL_PATHS.length - 1 }),
  size: fc.integer({ min: 1, max: 40 }),
  output: fc.constantFrom<"text" | "json" | "error">("text", "text", "json", "error")
})

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Step>({ kind: "user" }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "reply" }) },
  {
    weight: 5,
    arbitrary: fc.record({ calls: fc.array(callArb, { minLength: 1, maxLength: 3 }), reasoning: fc.boolean(), text: fc.boolean() }).map((e): Step => ({ kind: "exchange", ...e }))
  }
)

export const stepsArb = (maxLength = 24): fc.Arbitrary<ReadonlyArray<Step>> => fc.array(stepArb, { maxLength })

/** A tool result's output text: the marker and `size` words. */
export const resultText = (id: string, size: number): string => `⟦R${id}⟧ ${"word ".repeat(size).trim()}`

/**
 * The history of `steps`, starting at message marker `from` and call id `idFrom`: a
 * user prompt opens it; exchanges follow the message before them.
 */
export const historyOf = (steps: ReadonlyArray<Step>, start: { readonly message?: number; readonly call?: number } = {}): Array<Message> => {
  const out: Array<Message> = []
  let j = start.message ?? 0
  let id = start.call ?? 0
  for (const step of steps) {
    if (step.kind === "user") out.push({ role: "user", content: `question ⟦H${j++}⟧` })
    else if (step.kind === "reply") out.push({ role: "assistant", content: `answer ⟦H${j++}⟧` })
    else {
      const parts: Array<AssistantPart> = []
      if (step.reasoning) parts.push({ type: "reasoning", text: `thinking ⟦H${j}⟧`, provider: "anthropic", signature: `sig${j}` })
      if (step.text) parts.push({ type: "text", text: `let me look ⟦H${j}⟧` })
      if (!step.reasoning && !step.text) parts.push({ type: "text", text: `calling ⟦H${j}⟧` })
      j++
      const results: Array<ToolResultPart> = []
      for (const call of step.calls) {
        const callId = `call_${id++}`
        parts.push({ type: "tool-call", toolCallId: callId, toolName: call.tool, input: { path: TOOL_PATHS[call.path]! } })
        const text = resultText(callId, call.size)
        results.push({
          type: "tool-result",
          toolCallId: callId,
          toolName: call.tool,
          output: call.output === "error" ? { type: "error-text", value: text } : call.output === "json" ? { type: "json", value: { text } } : { type: "text", value: text }
        })
      }
      out.push({ role: "assistant", content: parts })
      out.push({ role: "tool", content: results })
      j++
    }
  }
  if (historyProblems(out).length > 0) throw new Error(`invalid generated history: ${JSON.stringify(historyProblems(out))}`)
  return out
}

/**
 * Pairing in a flat message list: every assistant message with tool calls is directly
 * followed by a tool message answering exactly those calls, and every tool message
 * directly follows one. The problems found (empty when paired).
 */
export const pairingProblems = (messages: ReadonlyArray<Message>): ReadonlyArray<string> => historyProblems(messages).map((p) => p.issue)

/** Call ids of a history's tool calls, in order. */
export const callIds = (history: ReadonlyArray<Message>): ReadonlyArray<string> => history.flatMap((m) => toolCalls(m).map((c) => c.toolCallId))
