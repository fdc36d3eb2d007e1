/**
 * What the model reads, checked on any provider's native request body (Anthropic,
 * Bedrock, Chat Completions, Responses, Gemini, the AI SDK's prompt): the last
 * assistant message is one the model wrote, a request after tool results ends with the
 * message carrying them (results first), every call is answered in the next message,
 * and no synthetic turn follows the first real user message. Used by the end-to-end
 * fidelity property and by the replay's dumped bodies (issue 25).
 */

export type BodyPartKind = "text" | "call" | "result"

/** One part of a turn: its kind and (text parts) its text. */
export interface BodyPart {
  readonly kind: BodyPartKind
  readonly text: string
}

/** One turn of a body's conversation: consecutive same-role messages merged, as every provider reads them. */
export interface BodyTurn {
  readonly role: "user" | "assistant"
  readonly parts: ReadonlyArray<BodyPart>
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === "string" ? v : "")

/** One content item of any provider's message as a part, or undefined (images, cache points). */
const partOf = (p: unknown): BodyPart | undefined => {
  if (typeof p === "string") return { kind: "text", text: p }
  if (!isRecord(p)) return undefined
  const type = str(p["type"])
  if (type === "tool_use" || type === "tool-call" || "toolUse" in p || "functionCall" in p) return { kind: "call", text: "" }
  if (type === "tool_result" || type === "tool-result" || "toolResult" in p || "functionResponse" in p) return { kind: "result", text: "" }
  if (type === "text" || type === "input_text" || type === "output_text" || (type === "" && typeof p["text"] === "string")) return { kind: "text", text: str(p["text"]) }
  return undefined
}

/** The conversation of a body (system messages left out), consecutive same-role turns merged as every provider reads them. */
export const bodyTurns = (body: unknown): ReadonlyArray<BodyTurn> => {
  if (!isRecord(body)) throw new Error("body is not an object")
  const list = body["messages"] ?? body["input"] ?? body["contents"]
  if (!Array.isArray(list)) throw new Error(`no message list in ${Object.keys(body).join(",")}`)
  const out: Array<{ role: "user" | "assistant"; parts: Array<BodyPart> }> = []
  const push = (role: "user" | "assistant", parts: ReadonlyArray<BodyPart>) => {
    const kept = parts.filter((p) => p.kind !== "text" || p.text.trim() !== "")
    if (kept.length === 0) return
    const last = out.at(-1)
    if (last?.role === role) last.parts.push(...kept)
    else out.push({ role, parts: [...kept] })
  }
  for (const item of list) {
    if (!isRecord(item)) continue
    const type = str(item["type"])
    if (type === "function_call") {
      push("assistant", [{ kind: "call", text: "" }])
      continue
    }
    if (type === "function_call_output") {
      push("user", [{ kind: "result", text: "" }])
      continue
    }
    const role = str(item["role"])
    if (role === "system" || role === "developer") continue
    const content = item["content"] ?? item["parts"]
    const parts = (Array.isArray(content) ? content : [content]).flatMap((p) => partOf(p) ?? [])
    if (role === "tool") {
      // Chat Completions: one result per tool message; the AI SDK: one part per result.
      const results = parts.filter((p) => p.kind === "result")
      push("user", results.length > 0 ? results : [{ kind: "result", text: "" }])
      continue
    }
    const calls = Array.isArray(item["tool_calls"]) ? item["tool_calls"].map(() => ({ kind: "call" as const, text: "" })) : []
    push(role === "assistant" || role === "model" ? "assistant" : "user", [...parts, ...calls])
  }
  return out
}

/** How a check tells the session's real turns from the ones the layout made up. */
export interface RealTurns {
  /** A user turn that holds a real prompt (the conversation starts at the first one). */
  readonly user: (turn: BodyTurn) => boolean
  /** An assistant turn the model wrote (a turn with a call always counts as the model's). */
  readonly assistant: (turn: BodyTurn) => boolean
}

/**
 * The rules, on one body: every problem found, as a sentence (none: the body passes).
 * `afterTools`: the request carries the results of the last reply's calls.
 *
 * @example
 * ```ts
 * import { fidelityProblems, type RealTurns } from "@strata/test-support/fidelity"
 * const real: RealTurns = { user: (t) => t.parts.some((p) => p.text.startsWith("Q:")), assistant: (t) => t.parts.some((p) => p.text.startsWith("A:")) }
 * // An "Ok." the model never wrote, after the first real prompt: one problem.
 * fidelityProblems({ messages: [{ role: "user", content: "Q: hi" }, { role: "assistant", content: "Ok." }, { role: "user", content: "ctx" }] }, false, real).length // 1
 * ```
 */
export const fidelityProblems = (body: unknown, afterTools: boolean, real: RealTurns): ReadonlyArray<string> => {
  const turns = bodyTurns(body)
  const problems: Array<string> = []
  const firstReal = turns.findIndex((t) => t.role === "user" && real.user(t))
  turns.forEach((t, i) => {
    if (t.role !== "assistant") return
    const isReal = t.parts.some((p) => p.kind === "call") || real.assistant(t)
    if (firstReal >= 0 && i > firstReal && !isReal) problems.push(`synthetic assistant turn ${i} after the first real user message: ${JSON.stringify(t.parts)}`)
    const calls = t.parts.filter((p) => p.kind === "call").length
    if (calls === 0) return
    const next = turns[i + 1]
    const results = next?.parts.filter((p) => p.kind === "result").length ?? 0
    const leading = next?.parts.findIndex((p) => p.kind !== "result") ?? 0
    if (next?.role !== "user" || results !== calls || (leading !== -1 && leading < calls)) problems.push(`assistant turn ${i}'s ${calls} call(s) are not answered first in the next message`)
  })
  const last = turns.at(-1)
  if (last?.role !== "user") problems.push("the request does not end with a user message")
  const lastAssistant = turns.findLastIndex((t) => t.role === "assistant")
  if (afterTools && lastAssistant !== turns.length - 2) problems.push("after tool results the request does not end with the message carrying them")
  if (afterTools && last?.parts[0]?.kind !== "result") problems.push("the final message does not start with the tool results")
  return problems
}
