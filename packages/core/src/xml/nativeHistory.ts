/**
 * The chunk builder's agent memory as native tool turns, and back. A `MemoryState`'s tool calls
 * and results, and its sub-agent delegations (a spawn or a message, answered by the
 * sub-agent's result), become the AI SDK-named parts of core's `Message` (`tool-call`,
 * `tool-result`), so an agent framework's memory feeds the tiered engine as real tool
 * turns; every other chunk keeps its XML rendering. A call that cannot be answered in
 * the next message (no result yet, another turn in between) is rendered as XML too, so
 * the history is always valid.
 */
import { Schema } from "effect"
import {
  historyProblems,
  toolCalls,
  toolOutputText,
  type AssistantPart,
  type Message,
  type ToolCallPart,
  type ToolResultOutput,
  type ToolResultPart
} from "../domain/Message.ts"
import type { ContextMessageRole } from "./ContextMessage.ts"
import { ChunkType, type MemoryChunk, type MemoryChunkInput } from "./MemoryState.ts"
import { chunkBody, chunkField } from "./renderers.ts"

/** Chunks merged into one message's text are separated by a blank line (as `toHistory` merges them). */
const SEPARATOR = "\n\n"

/** Tool names the delegation chunks become. */
export const SPAWN_SUBAGENT_TOOL = "spawn_subagent"
export const MESSAGE_SUBAGENT_TOOL = "message_subagent"

/** A transcript with native tool turns: the system text apart, the messages, and the chunk ids behind each. */
export interface NativeMemoryHistory {
  /** SYSTEM chunks (and any chunk a renderer gives role `system`), joined; `""` when none. */
  readonly system: string
  /** User, assistant and tool messages; every tool call is answered by the next message. */
  readonly messages: Array<Message>
  /** The chunk ids behind each message, index-aligned with `messages`. */
  readonly chunkIds: Array<Array<string>>
}

/** How the builder renders a chunk it does not turn into a native part. */
export type RenderChunk = (chunk: MemoryChunk) => { readonly role: ContextMessageRole; readonly text: string }

type Item =
  | { readonly kind: "text"; readonly role: ContextMessageRole; readonly text: string; readonly chunk: MemoryChunk }
  | { readonly kind: "call"; readonly part: ToolCallPart; readonly chunk: MemoryChunk; readonly subagent: string | undefined }
  | { readonly kind: "result"; readonly part: Omit<ToolResultPart, "toolCallId" | "toolName">; readonly chunk: MemoryChunk; readonly callId: string | undefined; readonly subagent: string | undefined }

const lower = (s: unknown): string | undefined => (typeof s === "string" ? s.toLowerCase() : undefined)
const field = (chunk: MemoryChunk, name: Parameters<typeof chunkField>[1]): string | undefined => {
  const v = chunkField(chunk, name)
  return v === undefined || v === null ? undefined : String(v)
}

const isJson = Schema.is(Schema.Json)
const isJsonObject = Schema.is(Schema.JsonObject)

/** A call's input: the chunk's content when it is a JSON object, else `{ input: <its text> }`. */
const inputOf = (content: unknown): ToolCallPart["input"] => (isJsonObject(content) ? content : { input: chunkBody(content) })

const TEAM9_KINDS = new Set(["TEXT", "IMAGE", "MIXED", "CHUNK_REF"])

/** A result's output: text for a string (or team9 content), JSON for other JSON values; errors as errors. */
const outputOf = (content: unknown, failed: boolean): ToolResultOutput => {
  const team9 = typeof content === "object" && content !== null && "type" in content && typeof content.type === "string" && TEAM9_KINDS.has(content.type)
  if (typeof content !== "string" && content !== null && content !== undefined && !team9 && isJson(content)) {
    return failed ? { type: "error-json", value: content } : { type: "json", value: content }
  }
  const text = chunkBody(content)
  return failed ? { type: "error-text", value: text } : { type: "text", value: text }
}

/** The native part a chunk becomes, if it is a tool call, a tool result or a delegation. */
const nativeItem = (chunk: MemoryChunk): Item | undefined => {
  if (chunk.type === ChunkType.WORKFLOW) {
    const tool = field(chunk, "tool")
    const action = lower(field(chunk, "action")) ?? (tool !== undefined ? "tool_call" : undefined)
    if (action !== "tool_call" || tool === undefined) return undefined
    const id = field(chunk, "callId") ?? chunk.id
    return { kind: "call", chunk, subagent: undefined, part: { type: "tool-call", toolCallId: id, toolName: tool, input: inputOf(chunk.content) } }
  }
  if (chunk.type === ChunkType.ENVIRONMENT) {
    const tool = field(chunk, "tool")
    const kind = lower(field(chunk, "action") ?? field(chunk, "source"))
    const isTool = kind?.startsWith("tool") ?? tool !== undefined
    if (!isTool) return undefined
    const failed = chunkField(chunk, "error") === true || chunkField(chunk, "success") === false || (kind?.endsWith("_error") ?? false)
    return { kind: "result", chunk, callId: field(chunk, "callId"), subagent: undefined, part: { type: "tool-result", output: outputOf(chunk.content, failed) } }
  }
  if (chunk.type === ChunkType.DELEGATION) {
    const action = lower(field(chunk, "action"))
    const subagent = field(chunk, "subagentId")
    if (subagent === undefined) return undefined
    const id = field(chunk, "callId") ?? chunk.id
    if (action === "spawn" || action === "spawn_subagent") {
      const agentType = field(chunk, "agentType")
      const input = { subagent_id: subagent, ...(agentType === undefined ? {} : { agent_type: agentType }), task: chunkBody(chunk.content) }
      return { kind: "call", chunk, subagent, part: { type: "tool-call", toolCallId: id, toolName: SPAWN_SUBAGENT_TOOL, input } }
    }
    if (action === "message_subagent" || action === "message_to_subagent") {
      return { kind: "call", chunk, subagent, part: { type: "tool-call", toolCallId: id, toolName: MESSAGE_SUBAGENT_TOOL, input: { subagent_id: subagent, message: chunkBody(chunk.content) } } }
    }
    if (action === "subagent_result" || action === "subagent_error") {
      const failed = action === "subagent_error" || chunkField(chunk, "success") === false || chunkField(chunk, "error") === true
      return { kind: "result", chunk, callId: field(chunk, "callId"), subagent, part: { type: "tool-result", output: outputOf(chunk.content, failed) } }
    }
  }
  return undefined
}

/** Results matched to calls: by call id, or a sub-agent's result to the newest open call to it. */
const matchResults = (items: ReadonlyArray<Item>, demoted: ReadonlySet<MemoryChunk>): Map<MemoryChunk, ToolCallPart> => {
  const answers = new Map<MemoryChunk, ToolCallPart>()
  const open: Array<Extract<Item, { kind: "call" }>> = []
  for (const item of items) {
    if (demoted.has(item.chunk)) continue
    if (item.kind === "call") open.push(item)
    if (item.kind !== "result") continue
    let at = -1
    for (let i = open.length - 1; i >= 0; i--) {
      const call = open[i]!
      if (item.callId !== undefined ? call.part.toolCallId === item.callId : item.subagent !== undefined && call.subagent === item.subagent) {
        at = i
        break
      }
    }
    if (at < 0) continue
    answers.set(item.chunk, open[at]!.part)
    open.splice(at, 1)
  }
  return answers
}

interface Group {
  readonly role: "user" | "assistant" | "tool"
  readonly parts: Array<AssistantPart | ToolResultPart>
  readonly ids: Array<string>
}

const group = (items: ReadonlyArray<Item>, answers: ReadonlyMap<MemoryChunk, ToolCallPart>, demoted: ReadonlySet<MemoryChunk>, render: RenderChunk): Array<Group> => {
  const groups: Array<Group> = []
  const push = (role: Group["role"], part: AssistantPart | ToolResultPart, id: string) => {
    const last = groups.at(-1)
    if (last !== undefined && last.role === role) {
      const prev = last.parts.at(-1)
      // Consecutive text merges into one part, as `toHistory` merges chunks into one message.
      if (prev?.type === "text" && part.type === "text") last.parts[last.parts.length - 1] = { type: "text", text: prev.text + SEPARATOR + part.text }
      else last.parts.push(part)
      last.ids.push(id)
    } else groups.push({ role, parts: [part], ids: [id] })
  }
  for (const item of items) {
    const native = !demoted.has(item.chunk) && (item.kind === "call" || answers.has(item.chunk))
    if (item.kind === "call" && native) push("assistant", item.part, item.chunk.id)
    else if (item.kind === "result" && native) {
      const call = answers.get(item.chunk)!
      push("tool", { ...item.part, toolCallId: call.toolCallId, toolName: call.toolName }, item.chunk.id)
    } else {
      const { role, text } = item.kind === "text" ? item : render(item.chunk)
      if (role !== "system") push(role, { type: "text", text }, item.chunk.id)
    }
  }
  return groups
}

const toMessage = (g: Group): Message => {
  if (g.role === "tool") return { role: "tool", content: g.parts.filter((p): p is ToolResultPart => p.type === "tool-result") }
  const only = g.parts[0]
  if (g.parts.length === 1 && only?.type === "text") return { role: g.role, content: only.text }
  return g.role === "user"
    ? { role: "user", content: g.parts.flatMap((p) => (p.type === "text" ? [p] : [])) }
    : { role: "assistant", content: g.parts.filter((p): p is AssistantPart => p.type !== "tool-result") }
}

/**
 * A memory's chunks as native messages. `render` renders the chunks that stay XML (and
 * `isCustom` says which chunks a custom renderer claims: they stay XML too). Calls whose
 * result cannot directly follow them are rendered as XML with their results, until the
 * history pairs. Pure.
 */
export const chunksToNativeHistory = (
  chunks: ReadonlyArray<MemoryChunk>,
  render: RenderChunk,
  isCustom: (chunk: MemoryChunk) => boolean = () => false
): NativeMemoryHistory => {
  const items: Array<Item> = chunks.map((chunk) => {
    const native = isCustom(chunk) ? undefined : nativeItem(chunk)
    if (native !== undefined) return native
    return { kind: "text", chunk, ...render(chunk) }
  })
  const system = items.filter((i): i is Extract<Item, { kind: "text" }> => i.kind === "text" && i.role === "system").map((i) => i.text).join(SEPARATOR)
  const demoted = new Set<MemoryChunk>()
  const calls = items.filter((i): i is Extract<Item, { kind: "call" }> => i.kind === "call")
  // Each pass demotes the calls (with their results) that do not pair where they landed.
  for (;;) {
    const answers = matchResults(items, demoted)
    const answered = new Set(answers.values())
    const seen = new Set<string>()
    for (const call of calls) {
      if (demoted.has(call.chunk)) continue
      // Unanswered, or an id used before: XML.
      if (!answered.has(call.part) || seen.has(call.part.toolCallId)) demoted.add(call.chunk)
      seen.add(call.part.toolCallId)
    }
    const groups = group(items, answers, demoted, render)
    const messages = groups.map(toMessage)
    if (historyProblems(messages).length === 0) return { system, messages, chunkIds: groups.map((g) => g.ids) }
    const misplaced = misplacedCalls(messages)
    const before = demoted.size
    for (const call of calls) {
      if (!misplaced.has(call.part.toolCallId) || demoted.has(call.chunk)) continue
      demoted.add(call.chunk)
      for (const [result, part] of answers) if (part === call.part) demoted.add(result)
    }
    // Cannot happen (every problem names a call), but never loop: everything as XML then.
    if (demoted.size === before) for (const item of items) if (item.kind !== "text") demoted.add(item.chunk)
  }
}

/** Ids of the calls not answered by the very next message, and of those answered anywhere else. */
const misplacedCalls = (messages: ReadonlyArray<Message>): ReadonlySet<string> => {
  const out = new Set<string>()
  messages.forEach((m, i) => {
    const next = messages[i + 1]
    const results = new Set(next?.role === "tool" ? next.content.map((r) => r.toolCallId) : [])
    for (const c of toolCalls(m)) if (!results.has(c.toolCallId)) out.add(c.toolCallId)
    if (m.role !== "tool") return
    const previous = new Set(i === 0 ? [] : toolCalls(messages[i - 1]!).map((c) => c.toolCallId))
    for (const r of m.content) if (!previous.has(r.toolCallId)) out.add(r.toolCallId)
  })
  return out
}

// ---------------------------------------------------------------------------------------
// Native history -> memory

/**
 * A history of native messages as chunk-builder chunks (`<prefix><message>.<part>` ids): user
 * and assistant text as AGENT chunks, reasoning as THINKING, tool calls as WORKFLOW
 * `tool_call` (sub-agent spawns and messages as DELEGATION), results as ENVIRONMENT
 * `tool_result` / `tool_error` (a sub-agent's as `subagent_result`). The inverse of
 * `memoryToNativeHistory` for tool turns: the calls and results come back with the same
 * ids, names, inputs and outputs. Images are left out.
 *
 * @example
 * ```ts fragment
 * import { historyToMemory, memoryToNativeHistory } from "@strata/core"
 * const memory = historyToMemory(messages)
 * memoryToNativeHistory(memory).messages // the same tool calls and results, text as XML
 * ```
 */
export const historyToMemory = (messages: ReadonlyArray<Message>, idPrefix = "m"): { readonly chunks: Array<MemoryChunkInput> } => {
  const chunks: Array<MemoryChunkInput> = []
  const spawned = new Map<string, string>()
  messages.forEach((message, i) => {
    const id = (k: number) => `${idPrefix}${i}.${k}`
    if (message.role === "system") {
      chunks.push({ id: id(0), type: ChunkType.SYSTEM, content: typeof message.content === "string" ? message.content : message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(SEPARATOR) })
      return
    }
    if (message.role === "tool") {
      message.content.forEach((r, k) => {
        const failed = r.output.type === "error-text" || r.output.type === "error-json"
        const content = r.output.type === "json" || r.output.type === "error-json" ? r.output.value : toolOutputText(r.output)
        const subagent = spawned.get(r.toolCallId)
        chunks.push(subagent !== undefined
          ? { id: id(k), type: ChunkType.DELEGATION, action: failed ? "subagent_error" : "subagent_result", subagentId: subagent, callId: r.toolCallId, success: !failed, content }
          : { id: id(k), type: ChunkType.ENVIRONMENT, action: failed ? "tool_error" : "tool_result", tool: r.toolName, callId: r.toolCallId, success: !failed, ...(failed ? { error: true } : {}), content })
      })
      return
    }
    const parts = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content
    parts.forEach((p, k) => {
      if (p.type === "text") chunks.push({ id: id(k), type: ChunkType.AGENT, role: message.role, content: p.text })
      else if (p.type === "reasoning") chunks.push({ id: id(k), type: ChunkType.WORKING_FLOW, subtype: "THINKING", content: p.text })
      else if (p.type === "tool-call") {
        const subagent = p.input["subagent_id"]
        if ((p.toolName === SPAWN_SUBAGENT_TOOL || p.toolName === MESSAGE_SUBAGENT_TOOL) && typeof subagent === "string") {
          spawned.set(p.toolCallId, subagent)
          const spawn = p.toolName === SPAWN_SUBAGENT_TOOL
          const agentType = p.input["agent_type"]
          const body = p.input[spawn ? "task" : "message"]
          chunks.push({
            id: id(k),
            type: ChunkType.DELEGATION,
            action: spawn ? "spawn_subagent" : "message_subagent",
            subagentId: subagent,
            callId: p.toolCallId,
            ...(typeof agentType === "string" ? { agentType } : {}),
            content: typeof body === "string" ? body : ""
          })
        } else chunks.push({ id: id(k), type: ChunkType.WORKFLOW, action: "tool_call", tool: p.toolName, callId: p.toolCallId, content: p.input })
      }
    })
  })
  return { chunks }
}
