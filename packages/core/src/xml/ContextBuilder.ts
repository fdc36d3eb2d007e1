/**
 * The XML chunk context builder (docs/xml-chunk-builder.md): a `MemoryState` becomes role-tagged
 * messages, each chunk wrapped in its XML tag, consecutive same-role chunks merged,
 * within an optional token limit. Pure and synchronous; `ContextBuilderService`
 * wraps it for Effect pipelines.
 */
import { Result, Schema } from "effect"
import { InvalidInput } from "../domain/errors.ts"
import type { Message } from "../domain/Message.ts"
import { LIST_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS, type TokenCounter } from "../tokens/TokenCounter.ts"
import { assignUnits, dropOrder, selectWithinBudget, type BudgetItem } from "./internal/chunkBudget.ts"
import {
  ContextBuildOptions,
  ContextMessageRole,
  type ChunkFilterOptions,
  type ContextBuildResult,
  type ContextMessage
} from "./ContextMessage.ts"
import { ChunkType, decodeMemoryState, type MemoryChunk, type MemoryStateInput } from "./MemoryState.ts"
import { chunksToNativeHistory, type NativeMemoryHistory } from "./nativeHistory.ts"
import { chunkField, GenericChunkRenderer, getDefaultRenderers, IChunkRenderer } from "./renderers.ts"
import { toTokenCounter, type TokenizerLike } from "./tokenizer.ts"

/** Chunks merged into one message are separated by a blank line. */
export const CHUNK_SEPARATOR = "\n\n"

/**
 * A transcript ready for the tiered pipeline: the system text apart, and the
 * user/assistant messages whose bytes depend only on their chunks, so an unchanged
 * chunk keeps its history item (and its cache tier) from one request to the next.
 */
export interface MemoryHistory {
  /** SYSTEM chunks (and any chunk a renderer gives role `system`), joined; `""` when none. */
  readonly system: string
  /** User and assistant messages, consecutive same-role chunks merged. */
  readonly messages: Array<Message>
  /** The chunk ids behind each message, index-aligned with `messages`. */
  readonly chunkIds: Array<Array<string>>
}

interface Rendered {
  readonly chunk: MemoryChunk
  readonly role: ContextMessageRole
  readonly text: string
}

interface Group {
  readonly role: ContextMessageRole
  readonly parts: Array<string>
  readonly ids: Array<string>
}

const groupByRole = (leading: Group | undefined, rendered: ReadonlyArray<Rendered>): Array<Group> => {
  const groups: Array<Group> = leading ? [leading] : []
  for (const r of rendered) {
    const last = groups[groups.length - 1]
    if (last && last.role === r.role) {
      last.parts.push(r.text)
      last.ids.push(r.chunk.id)
    } else {
      groups.push({ role: r.role, parts: [r.text], ids: [r.chunk.id] })
    }
  }
  return groups
}

const decodeOptions = Schema.decodeUnknownResult(ContextBuildOptions)
const isRole = Schema.is(ContextMessageRole)
const isRenderer = Schema.is(IChunkRenderer)

const filterChunks = (chunks: ReadonlyArray<MemoryChunk>, options: ChunkFilterOptions): Array<MemoryChunk> => {
  const only = options.includeOnlyChunkIds ? new Set(options.includeOnlyChunkIds) : undefined
  const excluded = new Set(options.excludeTypes ?? [])
  if (options.includeSystem === false) excluded.add(ChunkType.SYSTEM)
  if (options.includeEnvironment === false) excluded.add(ChunkType.ENVIRONMENT)
  return chunks.filter((c) => (only === undefined || only.has(c.id)) && !excluded.has(c.type))
}

/**
 * Renders memory states into LLM messages. Holds the renderers (custom ones first)
 * and a default tokenizer; `build` itself keeps no state between calls.
 *
 * @example
 * ```ts
 * import { createContextBuilder } from "@strata/core"
 * const builder = createContextBuilder()
 * const state = { chunks: [{ id: "c1", type: "AGENT", role: "user", content: "Fix the build" }] }
 * const result = builder.build(state, { maxTokens: 8000, systemPrompt: "You are a helpful assistant." })
 * result.messages.map((m) => m.role) // ["system", "user"]
 * result.messages[0] // { role: "system", content: "You are a helpful assistant." }
 * ```
 */
export class ContextBuilder {
  readonly #custom: Array<IChunkRenderer> = []
  readonly #defaults: ReadonlyArray<IChunkRenderer>
  #tokenizer: TokenizerLike | undefined

  constructor(tokenizer?: TokenizerLike, renderers: ReadonlyArray<IChunkRenderer> = getDefaultRenderers()) {
    this.#tokenizer = tokenizer
    this.#defaults = [...renderers]
  }

  /**
   * Register a custom renderer. It takes priority over the default renderers and over
   * renderers registered before it.
   */
  registerRenderer(renderer: IChunkRenderer): void {
    if (!isRenderer(renderer)) {
      throw new InvalidInput({ what: "renderer", issue: "expected an object with canRender, getRole and render methods" })
    }
    this.#custom.unshift(renderer)
  }

  /** Replace the tokenizer used when `build` is given none. */
  setDefaultTokenizer(tokenizer: TokenizerLike | undefined): void {
    this.#tokenizer = tokenizer
  }

  /**
   * Build LLM messages from a memory state. Throws `InvalidInput` (naming the bad
   * field) when the state or the options do not decode.
   */
  build(state: MemoryStateInput, options: ContextBuildOptions = {}): ContextBuildResult {
    const decoded = decodeOptions(options)
    if (Result.isFailure(decoded)) throw new InvalidInput({ what: "ContextBuildOptions", issue: decoded.failure.message })
    const opts = decoded.success
    const counter = toTokenCounter(opts.tokenizer ?? this.#tokenizer)
    const rendered = filterChunks(decodeMemoryState(state).chunks, opts).map((c) => this.#render(c))
    const systemPrompt = opts.systemPrompt === undefined || opts.systemPrompt === "" ? undefined : opts.systemPrompt
    const leading = (): Group | undefined => (systemPrompt === undefined ? undefined : { role: "system", parts: [systemPrompt], ids: [] })
    const toMessages = (chosen: ReadonlyArray<Rendered>): Array<ContextMessage> =>
      groupByRole(leading(), chosen).map((g) => ({ role: g.role, content: g.parts.join(CHUNK_SEPARATOR) }))

    let selected = rendered.map(() => true)
    let messages = toMessages(rendered)
    let tokenCount = counter.countMessages(messages)
    if (opts.maxTokens !== undefined && tokenCount > opts.maxTokens) {
      const keep = opts.keep ?? "oldest"
      const items: Array<BudgetItem> = budgetItems(rendered, counter)
      selected = selectWithinBudget(items, opts.maxTokens, keep, {
        base: LIST_OVERHEAD_TOKENS + (systemPrompt === undefined ? 0 : MESSAGE_OVERHEAD_TOKENS + counter.count(systemPrompt)),
        messageOverhead: MESSAGE_OVERHEAD_TOKENS,
        separator: counter.count(CHUNK_SEPARATOR),
        leadingRole: systemPrompt === undefined ? undefined : "system"
      })
      // The estimate adds pieces; the real count tokenizes whole messages. Trim if it was short.
      const drops = dropOrder(items, selected, keep)
      while (true) {
        messages = toMessages(rendered.filter((_, i) => selected[i]))
        tokenCount = counter.countMessages(messages)
        const unit = tokenCount > opts.maxTokens ? drops.shift() : undefined
        if (unit === undefined) break
        for (const i of unit) selected[i] = false
      }
    }

    return {
      messages,
      tokenCount,
      tokenCountExact: counter.exact,
      includedChunkIds: rendered.filter((_, i) => selected[i]).map((r) => r.chunk.id),
      excludedChunkIds: rendered.filter((_, i) => !selected[i]).map((r) => r.chunk.id)
    }
  }

  /**
   * Render a whole state as history for the tiered pipeline (no token limit: budgets
   * and compaction are the pipeline's job). System-role chunks are returned apart in
   * `system`; the rest are grouped by role exactly as `build` groups them.
   *
   * @example
   * ```ts
   * import { createContextBuilder } from "@strata/core"
   * const builder = createContextBuilder()
   * const { system, messages, chunkIds } = builder.toHistory({
   *   chunks: [
   *     { id: "s", type: "SYSTEM", role: "system", content: "Be brief." },
   *     { id: "q", type: "AGENT", role: "user", content: "Fix the build" },
   *     { id: "a", type: "AGENT", role: "assistant", content: "Done." }
   *   ]
   * })
   * // messages[i] is history item `history:i`; its bytes change only when chunkIds[i]'s chunks do
   * messages.map((m) => m.role) // ["user", "assistant"]
   * chunkIds // [["q"], ["a"]]
   * ```
   */
  toHistory(state: MemoryStateInput, options: ChunkFilterOptions = {}): MemoryHistory {
    const decoded = decodeOptions(options)
    if (Result.isFailure(decoded)) throw new InvalidInput({ what: "history options", issue: decoded.failure.message })
    const rendered = filterChunks(decodeMemoryState(state).chunks, decoded.success).map((c) => this.#render(c))
    const system = rendered.filter((r) => r.role === "system").map((r) => r.text).join(CHUNK_SEPARATOR)
    const groups = groupByRole(undefined, rendered.filter((r) => r.role !== "system"))
    return {
      system,
      messages: groups.map((g) => ({ role: g.role, content: g.parts.join(CHUNK_SEPARATOR) })),
      chunkIds: groups.map((g) => g.ids)
    }
  }

  /**
   * Render a whole state as history with native tool turns: tool calls and results, and
   * sub-agent spawns, messages and results, become `tool-call` parts on the assistant's
   * message and a `tool` message of `tool-result` parts after it (a chunk a registered
   * renderer claims stays XML). Everything else renders as `toHistory` renders it, so a
   * memory without tool chunks gives the same messages. A call whose result does not
   * directly follow it (none yet, or a user turn in between) stays XML, with its result.
   *
   * @example
   * ```ts fragment
   * const { messages } = builder.toNativeHistory(state)
   * // [{ role: "user", ... }, { role: "assistant", content: [{ type: "tool-call", ... }] }, { role: "tool", ... }]
   * ```
   */
  toNativeHistory(state: MemoryStateInput, options: ChunkFilterOptions = {}): NativeMemoryHistory {
    const decoded = decodeOptions(options)
    if (Result.isFailure(decoded)) throw new InvalidInput({ what: "history options", issue: decoded.failure.message })
    const chunks = filterChunks(decodeMemoryState(state).chunks, decoded.success)
    return chunksToNativeHistory(chunks, (chunk) => this.#render(chunk), (chunk) => this.#custom.some((r) => r.canRender(chunk)))
  }

  #render(chunk: MemoryChunk): Rendered {
    const renderer = this.#custom.find((r) => r.canRender(chunk)) ??
      this.#defaults.find((r) => r.canRender(chunk)) ??
      GenericChunkRenderer
    const role: unknown = renderer.getRole(chunk)
    if (!isRole(role)) {
      throw new InvalidInput({ what: "renderer output", issue: `getRole returned ${JSON.stringify(role)} for chunk ${JSON.stringify(chunk.id)}; expected "system", "user" or "assistant"` })
    }
    const text: unknown = renderer.render(chunk)
    if (typeof text !== "string") {
      throw new InvalidInput({ what: "renderer output", issue: `render returned ${typeof text} for chunk ${JSON.stringify(chunk.id)}; expected a string` })
    }
    return { chunk, role, text }
  }
}

// SYSTEM chunks are pinned (kept first under `newest`) and never join a call's unit.
const budgetItems = (rendered: ReadonlyArray<Rendered>, counter: TokenCounter): Array<BudgetItem> => {
  const pinned = rendered.map((r) => r.chunk.type === ChunkType.SYSTEM)
  const units = assignUnits(rendered.map((r, i) => {
    const callId = chunkField(r.chunk, "callId")
    return pinned[i] || callId === undefined || callId === null ? undefined : String(callId)
  }))
  return rendered.map((r, i) => ({
    role: r.role,
    tokens: counter.count(r.text),
    unit: units[i] ?? i,
    pinned: pinned[i] ?? false
  }))
}

/**
 * Create a context builder with the default renderers and, optionally, a default
 * tokenizer (`createTokenizer(model)`); without one, counts are chars/4 estimates.
 *
 * @example
 * ```ts
 * import { createContextBuilder, createTokenizer } from "@strata/core"
 * const builder = createContextBuilder(createTokenizer("gpt-4o"))
 * ```
 */
export const createContextBuilder = (tokenizer?: TokenizerLike): ContextBuilder => new ContextBuilder(tokenizer)

/**
 * `toHistory` with the default renderers.
 *
 * @example
 * ```ts
 * import { memoryToHistory } from "@strata/core"
 * const { messages } = memoryToHistory({ chunks: [{ id: "c1", type: "AGENT", role: "user", content: "hi" }] })
 * messages.length // 1
 * ```
 */
export const memoryToHistory = (state: MemoryStateInput, options: ChunkFilterOptions = {}): MemoryHistory =>
  new ContextBuilder().toHistory(state, options)

/**
 * `toNativeHistory` with the default renderers: the memory as history with native tool
 * turns, ready to hand to the tiered engine.
 *
 * @example
 * ```ts fragment
 * import { memoryToNativeHistory } from "@strata/core"
 * const { system, messages } = memoryToNativeHistory(state)
 * // assemble({ ..., systemPrompt: system, history: messages })
 * ```
 */
export const memoryToNativeHistory = (state: MemoryStateInput, options: ChunkFilterOptions = {}): NativeMemoryHistory =>
  new ContextBuilder().toNativeHistory(state, options)

/**
 * Split a built result into history: system messages joined apart, the rest as core
 * `Message`s. Prefer `toHistory` for the tiers: a result built under `maxTokens`
 * with `keep: "newest"` slides every turn, which moves every history item.
 *
 * @example
 * ```ts
 * import { createContextBuilder, resultToHistory } from "@strata/core"
 * const state = { chunks: [{ id: "c1", type: "AGENT", role: "user", content: "hi" }] }
 * const { system, messages } = resultToHistory(createContextBuilder().build(state, { systemPrompt: "Be brief." }))
 * system // "Be brief."
 * messages.length // 1
 * ```
 */
export const resultToHistory = (result: ContextBuildResult): { readonly system: string; readonly messages: Array<Message> } => ({
  system: result.messages.filter((m) => m.role === "system").map((m) => m.content).join(CHUNK_SEPARATOR),
  messages: result.messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }))
})
