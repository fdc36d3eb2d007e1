/**
 * The synthetic turns of a request: assistant messages no model wrote, the
 * acknowledgements ("Ok.") that close a context section sent as a user message. The
 * replay counts them in every strategy's native body, so the cost of that convention
 * shows in the report (`syntheticMessages`, `syntheticTokens`) and a dump re-scores to
 * the same counts. Pure.
 */
import { ACK, REVIEW_ACK, URL_ACK } from "@strata/core/effect"

/** The acknowledgement texts Strata's layouts and the replay's baselines put in an assistant turn. */
export const SYNTHETIC_TEXTS: ReadonlySet<string> = new Set([ACK, URL_ACK, REVIEW_ACK])

/** Synthetic assistant messages of one request and the tokens of their text. */
export interface SyntheticCount {
  readonly messages: number
  readonly tokens: number
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * The text of an assistant message of any provider's body when it holds text only
 * (Anthropic, Bedrock, Chat Completions, Responses, Gemini), else undefined.
 */
const assistantText = (item: Record<string, unknown>): string | undefined => {
  const role = item["role"]
  if (role !== "assistant" && role !== "model") return undefined
  if (Array.isArray(item["tool_calls"]) && item["tool_calls"].length > 0) return undefined
  const content = item["content"] ?? item["parts"]
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  const texts: Array<string> = []
  for (const part of content) {
    if (typeof part === "string") texts.push(part)
    else if (isRecord(part) && typeof part["text"] === "string" && (part["type"] === undefined || part["type"] === "text" || part["type"] === "output_text")) texts.push(part["text"])
    else if (isRecord(part) && ("cachePoint" in part)) continue
    else return undefined
  }
  return texts.join("")
}

/**
 * Count the synthetic assistant messages of a native request body: those whose whole
 * text is an acknowledgement (`SYNTHETIC_TEXTS`). `count` gives a text's tokens.
 *
 * @example
 * ```ts
 * import { syntheticTurnsOf } from "@strata/replay"
 * const body = { messages: [{ role: "user", content: "# Repository Files ..." }, { role: "assistant", content: "Ok." }, { role: "user", content: "Fix the bug." }] }
 * syntheticTurnsOf(body, (t) => Math.ceil(t.length / 4)) // { messages: 1, tokens: 1 }
 * ```
 */
export const syntheticTurnsOf = (body: unknown, count: (text: string) => number): SyntheticCount => {
  if (!isRecord(body)) return { messages: 0, tokens: 0 }
  const list = body["messages"] ?? body["input"] ?? body["contents"]
  if (!Array.isArray(list)) return { messages: 0, tokens: 0 }
  let messages = 0
  let tokens = 0
  for (const item of list) {
    if (!isRecord(item)) continue
    const text = assistantText(item)
    if (text === undefined || !SYNTHETIC_TEXTS.has(text.trim())) continue
    messages++
    tokens += count(text)
  }
  return { messages, tokens }
}
