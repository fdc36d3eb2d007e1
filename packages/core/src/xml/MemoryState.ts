/**
 * Agent memory as data: typed chunks (`MemoryChunk`) in an ordered `MemoryState`, as
 * docs/xml-chunk-builder.md describes them. Decoding validates a state and reports the path of the
 * first bad field; both the ordered form and team9's indexed form are accepted.
 */
import { Effect, Result, Schema } from "effect"
import { InvalidInput } from "../domain/errors.ts"

const CHUNK_TYPES = {
  SYSTEM: "SYSTEM",
  AGENT: "AGENT",
  WORKFLOW: "WORKFLOW",
  DELEGATION: "DELEGATION",
  ENVIRONMENT: "ENVIRONMENT",
  WORKING_FLOW: "WORKING_FLOW",
  OUTPUT: "OUTPUT"
} as const

/**
 * The seven chunk types of the XML chunk builder (docs/xml-chunk-builder.md). Both a schema and an enum-like object, so
 * `ChunkType.OUTPUT` works as in the seed. A chunk's `type` may also be any other
 * string: such chunks render with the generic `<chunk>` tag.
 *
 * @example
 * ```ts
 * import { ChunkType, createContextBuilder } from "@strata/core"
 * const state = { chunks: [{ id: "c1", type: ChunkType.AGENT, role: "user", content: "hi" }, { id: "c2", type: ChunkType.OUTPUT, content: "42" }] }
 * createContextBuilder().build(state, { excludeTypes: [ChunkType.OUTPUT] }).includedChunkIds // ["c1"]
 * ```
 */
export const ChunkType = Object.assign(Schema.Enum(CHUNK_TYPES).annotate({ identifier: "ChunkType" }), CHUNK_TYPES)
export type ChunkType = typeof ChunkType.Type

/** Free-form chunk metadata; `custom` is where applications keep their own flags. */
export const ChunkMetadata = Schema.Struct({
  createdAt: Schema.optionalKey(Schema.Number),
  parentIds: Schema.optionalKey(Schema.Array(Schema.String)),
  custom: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type ChunkMetadata = typeof ChunkMetadata.Type

const optionalString = Schema.optionalKey(Schema.String)

/**
 * One chunk of agent memory. `content` is a string (rendered as escaped text) or any
 * JSON-like value (rendered as JSON with sorted keys). The optional fields are the
 * attributes the XML tags carry (`callId` becomes `call_id`, and so on); chunks in
 * team9's shape, with these fields inside `{ type: "TEXT", text, ... }` content, are
 * read too. `metadata` defaults to `{}`.
 *
 * @example
 * ```ts
 * import { ChunkType, type MemoryChunk } from "@strata/core"
 * const call: typeof MemoryChunk.Encoded = {
 *   id: "chunk_2", type: ChunkType.WORKFLOW, action: "tool_call",
 *   tool: "read_file", callId: "call_123", status: "pending",
 *   content: { path: "/src/main.ts" }
 * }
 * ```
 */
export const MemoryChunk = Schema.Struct({
  id: Schema.String.check(Schema.isNonEmpty()),
  type: Schema.String,
  content: Schema.Unknown,
  metadata: ChunkMetadata.pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  /** Chunk priority; the `priority` attribute of `<system_context>`. */
  priority: Schema.optionalKey(Schema.Number),
  /** AGENT: `user` or `assistant`; DELEGATION: `parent` marks a parent-agent message. */
  role: optionalString,
  /** What the chunk records: `clarification`, `tool_call`, `skill_call`, `spawn_subagent`, `message_subagent`, `subagent_result`, `tool_result`, `tool_error`, `todo_set`, `task_completed`, ... */
  action: optionalString,
  /** WORKING_FLOW subtype: `COMPACTED`, `THINKING`, `USER`, `RESPONSE`, ... (team9 spelled it `subType`; both are read). */
  subtype: optionalString,
  subType: optionalString,
  tool: optionalString,
  skill: optionalString,
  callId: optionalString,
  status: optionalString,
  /** ENVIRONMENT origin as team9 recorded it: `tool`, `tool_error`, `skill`, `skill_error`. */
  source: optionalString,
  success: Schema.optionalKey(Schema.Boolean),
  error: Schema.optionalKey(Schema.Boolean),
  subagentId: optionalString,
  agentType: optionalString,
  parentAgentId: optionalString,
  compactedAt: Schema.optionalKey(Schema.Union([Schema.Number, Schema.String])),
  originalCount: Schema.optionalKey(Schema.Number),
  reason: optionalString,
  terminatedBy: optionalString
}).annotate({ identifier: "MemoryChunk" })
export type MemoryChunk = typeof MemoryChunk.Type

const uniqueChunkIds = Schema.makeFilter((state: { readonly chunks: ReadonlyArray<MemoryChunk> }) => {
  const seen = new Set<string>()
  const issues: Array<Schema.FilterIssue> = []
  state.chunks.forEach((chunk, i) => {
    if (seen.has(chunk.id)) issues.push({ path: ["chunks", i, "id"], issue: `duplicate chunk id ${JSON.stringify(chunk.id)}` })
    seen.add(chunk.id)
  })
  return issues
})

/**
 * An agent's memory: its chunks in order, each id unique.
 *
 * @example
 * ```ts
 * import { ChunkType, type MemoryState } from "@strata/core"
 * const state: typeof MemoryState.Encoded = {
 *   chunks: [{ id: "chunk_1", type: ChunkType.AGENT, role: "user", content: "Fix the build" }]
 * }
 * ```
 */
export const MemoryState = Schema.Struct({
  id: optionalString,
  threadId: optionalString,
  chunks: Schema.Array(MemoryChunk)
}).check(uniqueChunkIds).annotate({ identifier: "MemoryState" })
export type MemoryState = typeof MemoryState.Type

/** team9's indexed form, as its memory manager returns it: an order list and a lookup. */
const IndexedMemoryState = Schema.Struct({
  id: optionalString,
  threadId: optionalString,
  chunkIds: Schema.Array(Schema.String),
  chunks: Schema.Record(Schema.String, MemoryChunk)
}).check(
  Schema.makeFilter((state) => {
    const issues: Array<Schema.FilterIssue> = []
    const seen = new Set<string>()
    state.chunkIds.forEach((id, i) => {
      if (seen.has(id)) issues.push({ path: ["chunkIds", i], issue: `duplicate chunk id ${JSON.stringify(id)}` })
      else if (!Object.hasOwn(state.chunks, id)) issues.push({ path: ["chunkIds", i], issue: `no chunk with id ${JSON.stringify(id)} in chunks` })
      seen.add(id)
    })
    for (const [key, chunk] of Object.entries(state.chunks)) {
      if (chunk.id !== key) issues.push({ path: ["chunks", key, "id"], issue: `chunk stored under ${JSON.stringify(key)} has id ${JSON.stringify(chunk.id)}` })
    }
    return issues
  })
).annotate({ identifier: "IndexedMemoryState" })

/** A chunk as callers write it (`metadata` optional). */
export type MemoryChunkInput = typeof MemoryChunk.Encoded

/** team9's state shape: `chunkIds` gives the order, `chunks` is a Map or a plain object by id. */
export interface IndexedMemoryStateInput {
  readonly id?: string
  readonly threadId?: string
  readonly chunkIds: ReadonlyArray<string>
  readonly chunks: ReadonlyMap<string, MemoryChunkInput> | { readonly [id: string]: MemoryChunkInput }
}

/** Everything `build` accepts as a state: the ordered form or team9's indexed form. */
export type MemoryStateInput = typeof MemoryState.Encoded | IndexedMemoryStateInput

const decodeOrdered = Schema.decodeUnknownResult(MemoryState)
const decodeIndexed = Schema.decodeUnknownResult(IndexedMemoryState)

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

/**
 * Decode and validate a state into the ordered form; throws `InvalidInput` whose
 * message names the bad field (`at ["chunks"][1]["id"]`).
 *
 * @example
 * ```ts
 * import { decodeMemoryState } from "@strata/core"
 * decodeMemoryState({ chunks: [{ id: "c1", type: "AGENT", content: "hi" }] }).chunks[0]?.metadata // {}
 * ```
 */
export const decodeMemoryState = (input: unknown): MemoryState => {
  if (isRecord(input) && "chunkIds" in input) {
    // A Map has no own keys, so it is turned into a plain object before decoding.
    const chunks = input.chunks instanceof Map ? Object.fromEntries(input.chunks) : input.chunks
    const result = decodeIndexed({ ...input, chunks })
    if (Result.isFailure(result)) throw new InvalidInput({ what: "MemoryState", issue: result.failure.message })
    const indexed = result.success
    return {
      ...(indexed.id === undefined ? {} : { id: indexed.id }),
      ...(indexed.threadId === undefined ? {} : { threadId: indexed.threadId }),
      chunks: indexed.chunkIds.map((id) => indexed.chunks[id] as MemoryChunk)
    }
  }
  const result = decodeOrdered(input)
  if (Result.isFailure(result)) throw new InvalidInput({ what: "MemoryState", issue: result.failure.message })
  return result.success
}
