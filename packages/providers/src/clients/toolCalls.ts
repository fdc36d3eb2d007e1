/**
 * Tool calls out of a streamed reply. Every provider streams a call in pieces (an id
 * and a name first, then the JSON arguments as text fragments, keyed by an index); each
 * driver turns its events into `ToolCallDelta`s and `collectToolCalls` joins them into
 * whole core `ToolCallPart`s once the reply finished.
 */
import type { ToolCallPart } from "@strata/core"
import { Schema } from "effect"
import type { ToolCallDelta } from "../driver.ts"

interface Partial {
  id: string
  name: string
  text: string
  input: unknown
}

const decodeObject = Schema.decodeUnknownOption(Schema.JsonObject)

/**
 * A call's input: the joined argument text parsed as a JSON object when any arrived,
 * else the whole input the call opened with. Text that is not a JSON object is kept
 * under `arguments`, so the caller can answer it with an error result instead of losing it.
 */
const inputOf = (p: Partial): ToolCallPart["input"] => {
  if (p.text.trim() !== "") {
    try {
      const parsed = decodeObject(JSON.parse(p.text))
      if (parsed._tag === "Some") return parsed.value
    } catch {
      // kept below
    }
    return { arguments: p.text }
  }
  const whole = decodeObject(p.input ?? {})
  return whole._tag === "Some" ? whole.value : { arguments: JSON.stringify(p.input ?? null) }
}

/**
 * Join deltas into calls, in the order their indexes first appeared. A call whose
 * provider sent no id keeps `""`; the caller gives it one. Pure.
 *
 * @example
 * ```ts
 * import { collectToolCalls } from "@strata/providers"
 * collectToolCalls([
 *   { index: 1, id: "toolu_1", name: "read_file", input: {} },
 *   { index: 1, arguments: "{\"path\":" },
 *   { index: 1, arguments: "\"src/a.ts\"}" }
 * ])
 * // [{ type: "tool-call", toolCallId: "toolu_1", toolName: "read_file", input: { path: "src/a.ts" } }]
 * ```
 */
export const collectToolCalls = (deltas: Iterable<ToolCallDelta>): ReadonlyArray<ToolCallPart> => {
  const calls = new Map<number, Partial>()
  for (const d of deltas) {
    let p = calls.get(d.index)
    if (p === undefined) {
      p = { id: "", name: "", text: "", input: undefined }
      calls.set(d.index, p)
    }
    if (d.id !== undefined && d.id !== "") p.id = d.id
    if (d.name !== undefined && d.name !== "" && p.name === "") p.name = d.name
    if (d.arguments !== undefined) p.text += d.arguments
    if (d.input !== undefined) p.input = d.input
  }
  return [...calls.values()].map((p) => ({ type: "tool-call", toolCallId: p.id, toolName: p.name, input: inputOf(p) }))
}
