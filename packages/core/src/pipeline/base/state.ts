/**
 * The assembly pipeline's data: the plain input a request is built from, the immutable
 * `AssemblyState` each stage reads and extends, and the two contracts over it: `Stage`
 * (one step that computes) and `Layout` (the order the request's blocks are in).
 */
import { Effect, Schema, type Context } from "effect"
import { conversationalBlocks, type CountedUrl, type LayoutBlock, type Part } from "../../assembly/parts.ts"
import type { NeutralRequest } from "../../domain/Block.ts"
import { InvalidInput } from "../../domain/errors.ts"
import type { TierChange } from "../../domain/Item.ts"
import { History, ImagePart } from "../../domain/Message.ts"
import { ToolDefinition } from "../../domain/Tool.ts"
import { TIERS, type Tier } from "../../domain/Tier.ts"
import type { LeftOut } from "../../breakdown/report.ts"
import type { Placement, PlacementError, PlacementResult } from "../../services/Placement.ts"
import type { SymbolIndex, SymbolIndexError } from "../../services/SymbolIndex.ts"
import type { TrackerSnapshot } from "../../services/Tracker.ts"
import type { TokenCounter } from "../../tokens/TokenCounter.ts"
import { emptyTierLists, NO_SYMBOLS, type FileEntry, type HistoryEntry, type SymbolData, type TierLists } from "./entries.ts"
import type { ContextEditMemory, ContextEditPlan } from "./contextEditMemory.ts"
import type { JournalMemory, JournalPlan } from "./journalMemory.ts"
import { formatCount as fmt } from "../../internal/formatCount.ts"

/** A selected file and its content (repo-relative path). */
export const FileContent = Schema.Struct({ path: Schema.String, content: Schema.String })
export type FileContent = typeof FileContent.Type

/** A URL's content, already formatted for the prompt (title, text, optional symbol map). */
export const UrlContent = Schema.Struct({ url: Schema.String, content: Schema.String })
export type UrlContent = typeof UrlContent.Type

/** An image: a `data:`/`https:` URL string or an image part. */
const AssemblyImage = Schema.Union([Schema.String, ImagePart])

/**
 * Everything one request is assembled from, as plain data.
 *
 * @example
 * ```ts
 * import type { AssemblyInput } from "@strata/core"
 * const input: AssemblyInput = {
 *   model: "gpt-4o",
 *   prompt: "Rename foo to bar",
 *   systemPrompt: "You are a careful coding assistant.",
 *   files: [{ path: "src/foo.ts", content: "export const foo = 1\n" }],
 *   history: []
 * }
 * ```
 */
export const AssemblyInput = Schema.Struct({
  model: Schema.String,
  /** The user's prompt, without the system reminder. */
  prompt: Schema.String,
  images: Schema.optionalKey(Schema.Array(AssemblyImage)),
  /** Files selected into context, with their contents. */
  files: Schema.optionalKey(Schema.Array(FileContent)),
  /**
   * Conversation history before this prompt. Item `history:N` is message N, or the tool
   * exchange starting there (an assistant message with tool calls and the tool message
   * answering it, tracked and laid out as one). Every tool call must be answered.
   */
  history: Schema.optionalKey(History),
  /**
   * The tools the model may call, rendered by the provider plugin before the system
   * prompt. They are part of the `system` item: changing them rewrites the whole prefix.
   */
  tools: Schema.optionalKey(Schema.Array(ToolDefinition)),
  /** At most 3 are used; more are cut with a warning. */
  urls: Schema.optionalKey(Schema.Array(UrlContent)),
  /** Code review context (review mode); rendered by the review-context stage. */
  review: Schema.optionalKey(Schema.String),
  /** `system.md` plus `system_extra.md`, already joined. */
  systemPrompt: Schema.String,
  /** `system_reminder.md`; appended to the prompt after a blank line. */
  systemReminder: Schema.optionalKey(Schema.String),
  /** Include the symbol map and file tree (default true). */
  useRepoMap: Schema.optionalKey(Schema.Boolean)
})
export type AssemblyInput = typeof AssemblyInput.Type

/**
 * Decode untrusted input (JSON from a UI or a file) into an `AssemblyInput`; a bad field
 * fails with `InvalidInput` naming it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { decodeAssemblyInput } from "@strata/core/effect"
 * const input = Effect.runSync(decodeAssemblyInput({ model: "gpt-4o", prompt: "Hi", systemPrompt: "Be brief." }))
 * ```
 */
export const decodeAssemblyInput = (input: unknown): Effect.Effect<AssemblyInput, InvalidInput> =>
  Effect.mapError(Schema.decodeUnknownEffect(AssemblyInput)(input), (error) => new InvalidInput({ what: "assembly input", issue: error.message }))

/** This request's tracker update, not yet committed. */
export interface PendingUpdate {
  readonly snapshot: TrackerSnapshot
  /** Initial placement (first request) and this update's changes, in order. */
  readonly changes: ReadonlyArray<TierChange>
}

/**
 * The services a request is assembled with, read from the context when it starts: the
 * symbol index (optional) and the provider plugin (default: the OpenAI-compatible format with `cache_control`
 * format). Providing either anywhere in the context swaps it.
 */
export interface PipelineServices {
  readonly symbolIndex: Context.Service.Shape<typeof SymbolIndex> | undefined
  readonly placement: Context.Service.Shape<typeof Placement>
}

/**
 * The immutable state the stages pass along. Each stage returns a new state with its
 * fields filled; fields of later stages start empty.
 */
export interface AssemblyState {
  readonly input: AssemblyInput
  readonly counter: TokenCounter
  readonly services: PipelineServices
  /** The tracker snapshot this request reads (initialized, uncommitted, on the first request). */
  readonly tracker: TrackerSnapshot
  /** Changes made to `tracker` while assembling (initial placement). */
  readonly changes: ReadonlyArray<TierChange>
  readonly warnings: ReadonlyArray<string>
  /** URLs used (at most 3). */
  readonly urls: ReadonlyArray<CountedUrl>
  readonly images: ReadonlyArray<ImagePart>
  /** activeFiles: selected files, normalized, sorted by path. */
  readonly files: ReadonlyArray<FileEntry>
  /** fileTiers: selected files by tier (untracked files are active). */
  readonly fileTiers: TierLists<FileEntry>
  /** symbolData */
  readonly symbols: SymbolData
  /** symbolData and inputLimit: what the map budget cut and what shedding left out to stay within the input limit. */
  readonly leftOut: LeftOut
  /** historyTiers: history items (messages, tool exchanges) by tier, in conversation order; contextEditing edits them. */
  readonly historyTiers: TierLists<HistoryEntry>
  /** Context editing's memory of the last committed request, and contextEditing: this request's edits. */
  readonly editMemory: ContextEditMemory | undefined
  readonly contextEdits: ContextEditPlan | undefined
  /** The layout mode's layout (`LayoutMode` picks it) and the journal layout's memory of the last committed request. */
  readonly layout: Layout
  readonly journalMemory: JournalMemory | undefined
  /** layoutPlan, journal layout: the frozen tiers, journal and Working Files of this request. */
  readonly journal: JournalPlan | undefined
  /** l0Block, cachedBlocks, activeBlock (and extra stages): the layout's blocks, in request order. */
  readonly blocks: ReadonlyArray<LayoutBlock>
  /** placement */
  readonly request: NeutralRequest | undefined
  readonly placed: PlacementResult | undefined
  /** track */
  readonly pending: PendingUpdate | undefined
}

/** A stage was misused or failed for a reason of its own. */
export class StageError extends Schema.TaggedError<StageError>()("StageError", {
  stage: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Assembly stage "${this.stage}" failed: ${this.reason}`
  }
}

/** What a request left out when nothing was left out. */
export const NOTHING_LEFT_OUT: LeftOut = { map: undefined, files: [], symbols: [], treeTokens: 0 }

/**
 * A request that would not fit in the model's input limit even after shedding every
 * selected file and the whole symbol map: what remains (history, most often) is too
 * large. Nothing was sent or recorded. `requestTokens` is the request without the
 * output reserve; the parts say where its tokens are.
 */
export class RequestTooLarge extends Schema.TaggedError<RequestTooLarge>()("RequestTooLarge", {
  model: Schema.String,
  maxInputTokens: Schema.Number,
  outputReserveTokens: Schema.Number,
  requestTokens: Schema.Number,
  historyTokens: Schema.Number,
  fileTokens: Schema.Number,
  /** Legend, symbol blocks and file tree. */
  mapTokens: Schema.Number,
  /** System prompt, prompt, URLs, review context and message framing. */
  otherTokens: Schema.Number
}) {
  override get message(): string {
    const parts = [
      `history ${fmt(this.historyTokens)}`,
      `files ${fmt(this.fileTokens)}`,
      `repository map ${fmt(this.mapTokens)}`,
      `system prompt, prompt and framing ${fmt(this.otherTokens)}`
    ].join(", ")
    return `The request for ${this.model} is ${fmt(this.requestTokens)} tokens (${parts}); with ${fmt(this.outputReserveTokens)} tokens kept for the reply ` +
      `it is over the model's ${fmt(this.maxInputTokens)}-token input limit, so it was not sent. ` +
      `Compact or clear the history, drop files, shorten the prompt, or raise maxInputTokens if the model accepts more.`
  }
}

/** Anything an assembly can fail with. */
export type AssemblyError = StageError | SymbolIndexError | PlacementError | RequestTooLarge

/**
 * One step of assembly: reads the state and returns a new one.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Stage } from "@strata/core/effect"
 * const logFiles: Stage = {
 *   name: "logFiles",
 *   run: (state) => Effect.as(Effect.log(`${state.files.length} files`), state)
 * }
 * ```
 */
export interface Stage {
  readonly name: string
  readonly run: (state: AssemblyState) => Effect.Effect<AssemblyState, AssemblyError>
}

/**
 * A layout mode: the order the computed state is put in. Stages compute, a layout orders,
 * the `Placement` plugin renders. The `layoutPlan`, `l0Block`, `cachedBlocks`,
 * `activeBlock` and `placement` stages delegate to the state's layout. One module per mode
 * in its feature folder (`pipeline/seed/`, `pipeline/journal/`), registered by name in `pipeline/layouts.ts`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { neutralRequest, seedLayout, type Layout } from "@strata/core/effect"
 * // The tiered layout's order, with the URL context left out of the request.
 * const noUrls: Layout = {
 *   name: "noUrls",
 *   plan: Effect.succeed,
 *   blocks: (state) => seedLayout.blocks({ ...state, urls: [] }),
 *   request: (state) => neutralRequest(state.input.model, state.blocks)
 * }
 * ```
 */
export interface Layout {
  readonly name: string
  /** What the layout decides before ordering, from its memory (the journal's frozen tiers); most plan nothing. */
  readonly plan: (state: AssemblyState) => Effect.Effect<AssemblyState>
  /** The request's blocks in request order (L0, L1, L2, L3, active), from what the stages computed. Pure. */
  readonly blocks: (state: AssemblyState) => ReadonlyArray<LayoutBlock>
  /** The provider-neutral request of `state.blocks`: messages and breakpoints. */
  readonly request: (state: AssemblyState) => NeutralRequest
}

/** The state with the layout's blocks of `tiers` in it: how the block stages take their share of the layout. */
export const withLayoutBlocks = (state: AssemblyState, tiers: ReadonlyArray<Tier>): AssemblyState =>
  state.layout.blocks(state).filter((b) => tiers.includes(b.tier)).reduce(withBlock, state)

/** The block of `tier` in the state (an empty one if no stage built it yet). */
export const blockOf = (state: AssemblyState, tier: Tier): LayoutBlock =>
  state.blocks.find((b) => b.tier === tier) ?? { tier, parts: [] }

/** Replace (or append, in tier order) the block of `block.tier`. */
export const withBlock = (state: AssemblyState, block: LayoutBlock): AssemblyState => {
  const others = state.blocks.filter((b) => b.tier !== block.tier)
  const blocks = [...others, block].sort((a, b) => TIERS.indexOf(a.tier) - TIERS.indexOf(b.tier))
  return { ...state, blocks }
}

/**
 * Insert `part` into the block of `tier`, before the first part named in `before` that
 * exists (or at the end). This is how extra stages add sections between existing ones.
 *
 * @example
 * ```ts fragment
 * // Put a section between the URL context and the Working Files.
 * insertPart(state, "active", part, ["workingFiles", "prompt"])
 * ```
 */
export const insertPart = (state: AssemblyState, tier: Tier, part: Part, before: ReadonlyArray<string> = []): AssemblyState => {
  const block = blockOf(state, tier)
  const at = before.map((name) => block.parts.findIndex((p) => p.name === name)).find((i) => i >= 0) ?? block.parts.length
  const next = withBlock(state, { tier, parts: [...block.parts.slice(0, at), part, ...block.parts.slice(at)] })
  // A section inserted after the conversation started rides in the user messages around it.
  return { ...next, blocks: conversationalBlocks(next.blocks, state.counter) }
}

/** The start state of a request. */
export const initialState = (
  input: AssemblyInput,
  counter: TokenCounter,
  services: PipelineServices,
  tracker: TrackerSnapshot,
  normalized: { readonly urls: ReadonlyArray<CountedUrl>; readonly images: ReadonlyArray<ImagePart>; readonly warnings: ReadonlyArray<string> },
  layout: { readonly layout: Layout; readonly memory: JournalMemory | undefined; readonly edits?: ContextEditMemory | undefined }
): AssemblyState => ({
  input,
  counter,
  services,
  tracker,
  changes: [],
  warnings: normalized.warnings,
  urls: normalized.urls,
  images: normalized.images,
  files: [],
  fileTiers: emptyTierLists(),
  symbols: NO_SYMBOLS,
  leftOut: NOTHING_LEFT_OUT,
  historyTiers: emptyTierLists(),
  editMemory: layout.edits,
  contextEdits: undefined,
  layout: layout.layout,
  journalMemory: layout.memory,
  journal: undefined,
  blocks: [],
  request: undefined,
  placed: undefined,
  pending: undefined
})
