/**
 * Chunk renderers: one per chunk type, each choosing the XML tag of the builder's tag
 * mapping, its attributes and the chunk's message role. Every value goes through the
 * escaping helpers; a chunk no renderer claims gets the generic `<chunk>` tag.
 */
import { Schema } from "effect"
import type { ContextMessageRole } from "./ContextMessage.ts"
import { stableJson, xmlElement, type XmlAttributeValue } from "./escape.ts"
import { ChunkType, type MemoryChunk } from "./MemoryState.ts"

/**
 * A chunk renderer. `registerRenderer` puts custom renderers ahead of the defaults;
 * the first whose `canRender` returns true renders the chunk. Build output with
 * `xmlElement` to get the default escaping.
 *
 * @example
 * ```ts
 * import { xmlElement, type IChunkRenderer, type MemoryChunk } from "@strata/core"
 * const noteRenderer: IChunkRenderer = {
 *   canRender: (chunk: MemoryChunk) => chunk.metadata.custom?.note === true,
 *   getRole: () => "assistant",
 *   render: (chunk: MemoryChunk) => xmlElement("note", { id: chunk.id }, String(chunk.content))
 * }
 * ```
 */
export interface IChunkRenderer {
  canRender(chunk: MemoryChunk): boolean
  getRole(chunk: MemoryChunk): ContextMessageRole
  render(chunk: MemoryChunk): string
}

const isRenderer = (u: unknown): u is IChunkRenderer =>
  typeof u === "object" && u !== null &&
  typeof (u as IChunkRenderer).canRender === "function" &&
  typeof (u as IChunkRenderer).getRole === "function" &&
  typeof (u as IChunkRenderer).render === "function"

/** Schema for a renderer object (`registerRenderer` checks its argument with it). */
export const IChunkRenderer = Schema.declare(isRenderer, {
  identifier: "IChunkRenderer",
  expected: "an object with canRender, getRole and render methods"
})

// team9 kept a chunk's attributes inside `{ type: "TEXT", text, ... }` content under
// these names; they are read only when the chunk does not carry the field itself.
const CONTENT_KINDS = new Set(["TEXT", "IMAGE", "MIXED", "CHUNK_REF"])
const TEAM9_NAMES: Readonly<Record<string, string>> = {
  tool: "toolName",
  skill: "skillName",
  subagentId: "subAgentId"
}

type Record_ = Readonly<Record<string, unknown>>
const isRecord = (u: unknown): u is Record_ => typeof u === "object" && u !== null && !Array.isArray(u)
const isTeam9Content = (content: unknown): content is Record_ =>
  isRecord(content) && typeof content.type === "string" && CONTENT_KINDS.has(content.type)

type ChunkField =
  | "role" | "action" | "tool" | "skill" | "callId" | "status" | "source" | "success" | "error"
  | "subagentId" | "agentType" | "parentAgentId" | "reason" | "terminatedBy"

/** A chunk attribute: the chunk's own field, else the team9 content field of that meaning. */
export const chunkField = (chunk: MemoryChunk, name: ChunkField): XmlAttributeValue => {
  const own = chunk[name]
  if (own !== undefined) return own
  if (!isTeam9Content(chunk.content)) return undefined
  const legacy = chunk.content[TEAM9_NAMES[name] ?? name]
  return typeof legacy === "string" || typeof legacy === "number" || typeof legacy === "boolean" ? legacy : undefined
}

const fieldString = (chunk: MemoryChunk, name: ChunkField): string | undefined => {
  const v = chunkField(chunk, name)
  return v === undefined || v === null ? undefined : String(v)
}

const custom = (chunk: MemoryChunk, key: string): XmlAttributeValue => {
  const v = chunk.metadata.custom?.[key]
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : undefined
}

/**
 * The text inside a chunk's tag: a string as is; team9 `TEXT` / `MIXED` / `IMAGE` /
 * `CHUNK_REF` content by its text; anything else as JSON with sorted keys (so the
 * same chunk always renders the same bytes). Escaping happens when the tag is built.
 *
 * @example
 * ```ts
 * import { chunkBody } from "@strata/core"
 * chunkBody({ path: "/src/main.ts", line: 3 }) // '{"line":3,"path":"/src/main.ts"}'
 * ```
 */
export const chunkBody = (content: unknown): string => {
  if (typeof content === "string") return content
  if (content === undefined || content === null) return ""
  if (isTeam9Content(content)) {
    switch (content.type) {
      case "TEXT":
        if (typeof content.text === "string") return content.text
        break
      case "MIXED":
        if (Array.isArray(content.parts)) {
          return content.parts
            .map((p: unknown) => (isRecord(p) && p.type === "TEXT" && typeof p.text === "string" ? p.text : undefined))
            .filter((t): t is string => t !== undefined)
            .join("\n")
        }
        break
      case "IMAGE":
        return typeof content.altText === "string" ? `[Image: ${content.altText}]` : "[Image content]"
      case "CHUNK_REF":
        return `[Reference to chunk: ${String(content.chunkId)}]`
    }
    const { type: _type, ...rest } = content
    return stableJson(rest)
  }
  return stableJson(content)
}

/** How one chunk renders: its message role, tag and attributes (in tag order). */
export interface ChunkView {
  readonly role: ContextMessageRole
  readonly tag: string
  readonly attributes: Readonly<Record<string, XmlAttributeValue>>
}

/** Build a renderer for one chunk type from a function that picks tag, attributes and role. */
export const makeTypeRenderer = (type: string, view: (chunk: MemoryChunk) => ChunkView): IChunkRenderer => ({
  canRender: (chunk) => chunk.type === type,
  getRole: (chunk) => view(chunk).role,
  render: (chunk) => {
    const v = view(chunk)
    return xmlElement(v.tag, v.attributes, chunkBody(chunk.content))
  }
})

const lower = (s: string | undefined): string | undefined => s?.toLowerCase()

/** `<system_context id priority>`; role system. */
export const SystemChunkRenderer = makeTypeRenderer(ChunkType.SYSTEM, (chunk) => ({
  role: "system",
  tag: "system_context",
  attributes: { id: chunk.id, priority: chunk.priority }
}))

/** `<user_message>`, `<assistant_response>` or `<assistant_clarification>`, by `role` and `action`. */
export const AgentChunkRenderer = makeTypeRenderer(ChunkType.AGENT, (chunk) => {
  const action = fieldString(chunk, "action")
  if (lower(fieldString(chunk, "role")) === "assistant") {
    return lower(action) === "clarification"
      ? { role: "assistant", tag: "assistant_clarification", attributes: { id: chunk.id, role: "assistant", action } }
      : { role: "assistant", tag: "assistant_response", attributes: { id: chunk.id, role: "assistant", action } }
  }
  return { role: "user", tag: "user_message", attributes: { id: chunk.id, role: "user", action } }
})

/** `<tool_call>` or `<skill_call>` (inferred from `tool` / `skill` when `action` is absent); role assistant. */
export const WorkflowChunkRenderer = makeTypeRenderer(ChunkType.WORKFLOW, (chunk) => {
  const tool = fieldString(chunk, "tool")
  const skill = fieldString(chunk, "skill")
  const action = lower(fieldString(chunk, "action")) ?? (tool !== undefined ? "tool_call" : skill !== undefined ? "skill_call" : undefined)
  const callId = fieldString(chunk, "callId")
  const status = fieldString(chunk, "status")
  if (action === "tool_call") {
    return { role: "assistant", tag: "tool_call", attributes: { id: chunk.id, action, tool, call_id: callId, status } }
  }
  if (action === "skill_call") {
    return { role: "assistant", tag: "skill_call", attributes: { id: chunk.id, action, skill, call_id: callId, status } }
  }
  return { role: "assistant", tag: "workflow", attributes: { id: chunk.id, action, tool, skill, call_id: callId, status } }
})

/**
 * `<spawn_subagent>`, `<message_to_subagent>` (role assistant), `<subagent_result>`,
 * `<parent_agent_message>` (role user: the agent receives them, as it does tool results).
 */
export const DelegationChunkRenderer = makeTypeRenderer(ChunkType.DELEGATION, (chunk) => {
  const action = lower(fieldString(chunk, "action"))
  const subagentId = fieldString(chunk, "subagentId")
  const parentAgentId = fieldString(chunk, "parentAgentId")
  switch (action) {
    case "spawn":
    case "spawn_subagent":
      return { role: "assistant", tag: "spawn_subagent", attributes: { id: chunk.id, subagent_id: subagentId, agent_type: fieldString(chunk, "agentType") } }
    case "message_subagent":
    case "message_to_subagent":
      return { role: "assistant", tag: "message_to_subagent", attributes: { id: chunk.id, subagent_id: subagentId } }
    case "subagent_result":
      return { role: "user", tag: "subagent_result", attributes: { id: chunk.id, subagent_id: subagentId, success: chunkField(chunk, "success") } }
    case "subagent_error":
      return { role: "user", tag: "subagent_result", attributes: { id: chunk.id, subagent_id: subagentId, success: false, error: true } }
  }
  if (parentAgentId !== undefined || action === "parent_message" || action === "parent_agent_message" || lower(fieldString(chunk, "role")) === "parent") {
    return { role: "user", tag: "parent_agent_message", attributes: { id: chunk.id, parent_agent_id: parentAgentId } }
  }
  return { role: "assistant", tag: "delegation", attributes: { id: chunk.id, action, subagent_id: subagentId } }
})

/**
 * `<tool_result>` / `<skill_result>` with `success`, and `error="true"` (with
 * `success="false"`) for failures; role user.
 */
export const EnvironmentChunkRenderer = makeTypeRenderer(ChunkType.ENVIRONMENT, (chunk) => {
  const tool = fieldString(chunk, "tool")
  const skill = fieldString(chunk, "skill")
  const kind = lower(fieldString(chunk, "action") ?? fieldString(chunk, "source"))
  const failed = chunkField(chunk, "error") === true || (kind?.endsWith("_error") ?? false)
  const success = failed ? false : chunkField(chunk, "success")
  const error = failed ? true : undefined
  const callId = fieldString(chunk, "callId")
  const isSkill = kind?.startsWith("skill") ?? (skill !== undefined && tool === undefined)
  const isTool = kind?.startsWith("tool") ?? tool !== undefined
  if (isTool) return { role: "user", tag: "tool_result", attributes: { id: chunk.id, tool, call_id: callId, success, error } }
  if (isSkill) return { role: "user", tag: "skill_result", attributes: { id: chunk.id, skill, call_id: callId, success, error } }
  return { role: "user", tag: "environment", attributes: { id: chunk.id, source: kind, success, error } }
})

const SUBTYPE_FROM_ACTION: Readonly<Record<string, string>> = {
  compacted: "COMPACTED",
  progress_summary: "COMPACTED",
  thinking: "THINKING",
  user: "USER",
  user_intervention: "USER",
  intervention: "USER",
  response: "RESPONSE"
}

/**
 * `<progress_summary>`, `<todo_update>`, `<thinking>`, `<user_intervention>` (role
 * user) and, for team9's other subtypes, `<assistant_response>`, `<agent_action>`,
 * `<action_response>` (role user); anything else `<working_flow>`.
 */
export const WorkingFlowChunkRenderer = makeTypeRenderer(ChunkType.WORKING_FLOW, (chunk) => {
  const action = fieldString(chunk, "action")
  const subtype = (chunk.subtype ?? chunk.subType)?.toUpperCase() ?? SUBTYPE_FROM_ACTION[lower(action) ?? ""]
  if (subtype === "COMPACTED") {
    return {
      role: "assistant",
      tag: "progress_summary",
      attributes: {
        id: chunk.id,
        compacted_at: chunk.compactedAt ?? custom(chunk, "compactedAt"),
        original_count: chunk.originalCount ?? custom(chunk, "originalCount") ?? custom(chunk, "originalChunkCount")
      }
    }
  }
  if (subtype === "TODO" || (lower(action)?.startsWith("todo") ?? false) || custom(chunk, "subType") === "todo") {
    return { role: "assistant", tag: "todo_update", attributes: { id: chunk.id, action } }
  }
  switch (subtype) {
    case "THINKING":
      return { role: "assistant", tag: "thinking", attributes: { id: chunk.id, subtype } }
    case "USER":
      return { role: "user", tag: "user_intervention", attributes: { id: chunk.id, subtype } }
    case "RESPONSE":
      return { role: "assistant", tag: "assistant_response", attributes: { id: chunk.id, subtype } }
    case "AGENT_ACTION":
      return { role: "assistant", tag: "agent_action", attributes: { id: chunk.id, subtype, action } }
    case "ACTION_RESPONSE":
      return { role: "user", tag: "action_response", attributes: { id: chunk.id, subtype, action } }
  }
  return { role: "assistant", tag: "working_flow", attributes: { id: chunk.id, subtype, action } }
})

/** `<task_completed>`, `<task_abandoned reason>`, `<task_terminated terminated_by>`; role assistant. */
export const OutputChunkRenderer = makeTypeRenderer(ChunkType.OUTPUT, (chunk) => {
  const action = lower(fieldString(chunk, "action"))
  switch (action) {
    case "completed":
    case "task_completed":
      return { role: "assistant", tag: "task_completed", attributes: { id: chunk.id } }
    case "abandoned":
    case "task_abandoned":
      return { role: "assistant", tag: "task_abandoned", attributes: { id: chunk.id, reason: fieldString(chunk, "reason") } }
    case "terminated":
    case "task_terminated":
      return { role: "assistant", tag: "task_terminated", attributes: { id: chunk.id, terminated_by: fieldString(chunk, "terminatedBy") } }
  }
  return { role: "assistant", tag: "output", attributes: { id: chunk.id, action } }
})

/** The fallback for chunks no renderer claims (unknown types): `<chunk id type>`; role user. */
export const GenericChunkRenderer: IChunkRenderer = {
  canRender: () => true,
  getRole: () => "user",
  render: (chunk) => xmlElement("chunk", { id: chunk.id, type: chunk.type }, chunkBody(chunk.content))
}

/**
 * The default renderers, one per chunk type, in the order the builder tries them
 * (after any registered ones; `GenericChunkRenderer` comes last).
 */
export const getDefaultRenderers = (): Array<IChunkRenderer> => [
  SystemChunkRenderer,
  AgentChunkRenderer,
  WorkflowChunkRenderer,
  DelegationChunkRenderer,
  EnvironmentChunkRenderer,
  WorkingFlowChunkRenderer,
  OutputChunkRenderer
]
