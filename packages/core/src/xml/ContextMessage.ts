/**
 * What the chunk builder takes and gives: build options, the role-tagged messages
 * and the build result of the XML chunk builder (docs/xml-chunk-builder.md). A `ContextMessage` is structurally a core
 * `Message` with string content, so results feed the rest of Strata unchanged.
 */
import { Schema } from "effect"
import { TokenizerLike } from "./tokenizer.ts"

/** The role of a built message. */
export const ContextMessageRole = Schema.Literals(["system", "user", "assistant"]).annotate({ identifier: "ContextMessageRole" })
export type ContextMessageRole = typeof ContextMessageRole.Type

/**
 * One message for the LLM: a role and the XML-tagged chunks of that turn.
 *
 * @example
 * ```ts
 * import type { ContextMessage } from "@strata/core"
 * const m: ContextMessage = { role: "user", content: '<user_message id="c1" role="user">\nhi\n</user_message>' }
 * ```
 */
export const ContextMessage = Schema.Struct({
  role: ContextMessageRole,
  content: Schema.String
}).annotate({ identifier: "ContextMessage" })
export type ContextMessage = typeof ContextMessage.Type

/**
 * The result of `builder.build`. `tokenCount` counts the messages as sent, with the
 * per-message and per-list overhead of core's `TokenCounter`; `excludedChunkIds` are
 * chunks that passed the filters but did not fit `maxTokens` (filtered-out chunks are
 * in neither list).
 *
 * @example
 * ```ts
 * import { createContextBuilder } from "@strata/core"
 * const state = { chunks: [{ id: "c1", type: "AGENT", role: "user", content: "hi" }, { id: "c2", type: "OUTPUT", content: "x".repeat(9000) }] }
 * const result = createContextBuilder().build(state, { maxTokens: 100 })
 * result.includedChunkIds // ["c1"]
 * result.excludedChunkIds // ["c2"]
 * ```
 */
export const ContextBuildResult = Schema.Struct({
  /** List of messages to send to the LLM. */
  messages: Schema.mutable(Schema.Array(ContextMessage)),
  /** Token count (exact or estimated). */
  tokenCount: Schema.Number,
  /** True when a tokenizer with the model's own encoding counted; false for chars/4 and approximations. */
  tokenCountExact: Schema.Boolean,
  /** Included chunk ids, in state order. */
  includedChunkIds: Schema.mutable(Schema.Array(Schema.String)),
  /** Excluded chunk ids (past the token limit), in state order. */
  excludedChunkIds: Schema.mutable(Schema.Array(Schema.String))
}).annotate({ identifier: "ContextBuildResult" })
export type ContextBuildResult = typeof ContextBuildResult.Type

/**
 * Which end of the transcript a token limit keeps. `oldest` is the builder's default rule
 * (chunks in order until one does not fit; it and every later chunk are excluded);
 * `newest` keeps the most recent chunks (plus SYSTEM chunks, kept first).
 */
export const KeepStrategy = Schema.Literals(["oldest", "newest"]).annotate({ identifier: "KeepStrategy" })
export type KeepStrategy = typeof KeepStrategy.Type

/**
 * Options of `builder.build`. Every field is optional.
 *
 * @example
 * ```ts
 * import { ChunkType, createContextBuilder, createTokenizer } from "@strata/core"
 * const state = { chunks: [{ id: "c1", type: "AGENT", role: "user", content: "hi" }] }
 * createContextBuilder().build(state, {
 *   maxTokens: 4000,
 *   tokenizer: createTokenizer("gpt-4o"),
 *   systemPrompt: "You are an expert developer.",
 *   excludeTypes: [ChunkType.OUTPUT],
 *   keep: "newest"
 * })
 * ```
 */
export const ContextBuildOptions = Schema.Struct({
  /** Token limit for the whole message list (overheads included). No limit when absent. */
  maxTokens: Schema.optional(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Counts tokens; overrides the builder's default. chars/4 estimates when neither is set. */
  tokenizer: Schema.optional(TokenizerLike),
  /** Prepended as the first system message (merged with leading SYSTEM chunks). */
  systemPrompt: Schema.optional(Schema.String),
  /** Include SYSTEM chunks. Default true. */
  includeSystem: Schema.optional(Schema.Boolean),
  /** Include ENVIRONMENT chunks (tool results and the like). Default true. */
  includeEnvironment: Schema.optional(Schema.Boolean),
  /** Chunk types to leave out. */
  excludeTypes: Schema.optional(Schema.Array(Schema.String)),
  /** When set, only these chunks are considered. */
  includeOnlyChunkIds: Schema.optional(Schema.Array(Schema.String)),
  /** Which end survives the token limit. Default `"oldest"`. */
  keep: Schema.optional(KeepStrategy)
}).annotate({ identifier: "ContextBuildOptions" })
export type ContextBuildOptions = typeof ContextBuildOptions.Type

/** The chunk filters of `ContextBuildOptions`, shared by `build` and `toHistory`. */
export type ChunkFilterOptions = Pick<
  ContextBuildOptions,
  "includeSystem" | "includeEnvironment" | "excludeTypes" | "includeOnlyChunkIds"
>
