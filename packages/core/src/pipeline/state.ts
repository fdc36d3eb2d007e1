/**
 * The assembly pipeline's data: the plain input a request is built from, the immutable
 * `AssemblyState` each stage reads and extends, and the `Stage` contract itself.
 */
import { Effect, Schema, type Context } from "effect"
import type { CountedUrl, Counted, LayoutBlock, Part } from "../assembly/tiered.ts"
import type { NeutralRequest } from "../domain/Block.ts"
import { InvalidInput } from "../domain/errors.ts"
import type { ItemKey, TierChange } from "../domain/Item.ts"
import { History, ImagePart, type Message } from "../domain/Message.ts"
import { TIERS, type CachedTier, type Tier } from "../domain/Tier.ts"
import type { Placement, PlacementError, PlacementResult } from "../services/Placement.ts"
import type { SymbolIndex, SymbolIndexError } from "../services/SymbolIndex.ts"
import type { TrackerSnapshot } from "../services/Tracker.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import type { JournalMemory, JournalPlan, LayoutMode } from "./journal.ts"

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
  /** Conversation history before this prompt; index N is item `history:N`. Tool calls must be answered. */
  history: Schema.optionalKey(History),
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

/** An item as a stage holds it: key, content hash, rendered text and its tokens. */
export interface Entry extends Counted {
  readonly key: ItemKey
  readonly hash: string
}
export interface FileEntry extends Entry {
  readonly path: string
  readonly content: string
}
export interface SymbolEntry extends Entry {
  readonly path: string
}
export interface HistoryEntry extends Entry {
  readonly index: number
  readonly message: Message
}

/** Lists per tier. */
export type TierLists<A> = Readonly<Record<Tier, ReadonlyArray<A>>>
export type CachedTierLists<A> = Readonly<Record<CachedTier, ReadonlyArray<A>>>

export const emptyTierLists = <A>(): TierLists<A> => ({ L0: [], L1: [], L2: [], L3: [], active: [] })
export const emptyCachedTierLists = <A>(): CachedTierLists<A> => ({ L0: [], L1: [], L2: [], L3: [] })

/** Group values by tier, keeping their order. */
export const groupByTier = <A, T extends Tier>(values: ReadonlyArray<A>, tierOf: (a: A) => T, tiers: ReadonlyArray<T>): Readonly<Record<T, ReadonlyArray<A>>> => {
  const out = Object.fromEntries(tiers.map((t) => [t, [] as Array<A>])) as Record<T, Array<A>>
  for (const v of values) out[tierOf(v)].push(v)
  return out
}

/**
 * The tier an entry renders in: the tracker's tier, except that an entry whose content
 * hash differs from the tracked one renders as active already, because this request's
 * update sends it there (seed 003: a changed hash demotes to active). Its old tier is
 * rewritten once, in this request, instead of once now and again next request. A
 * placeholder hash (`""`) is accepted as unchanged. Undefined for untracked entries.
 */
export const renderTier = (tracker: TrackerSnapshot, entry: { readonly key: string; readonly hash: string }): Tier | undefined => {
  const tracked = tracker.get(entry.key)
  if (tracked === undefined) return undefined
  return tracked.hash !== "" && tracked.hash !== entry.hash ? "active" : tracked.tier
}

/** What the symbol index contributed to this request. */
export interface SymbolData {
  readonly legend: Counted
  /** Symbol blocks rendered per cached tier, sorted by path. */
  readonly tiers: CachedTierLists<SymbolEntry>
  /** Every file's symbol entry, rendered or not (files in context are tracked but not rendered). */
  readonly entries: ReadonlyArray<SymbolEntry>
  readonly tree: Entry | undefined
  /** Files that exist, for the tracker's stale-entry removal; undefined without an index. */
  readonly existingFiles: ReadonlySet<string> | undefined
}

export const NO_SYMBOLS: SymbolData = {
  legend: { text: "", tokens: 0 },
  tiers: emptyCachedTierLists(),
  entries: [],
  tree: undefined,
  existingFiles: undefined
}

/** This request's tracker update, not yet committed. */
export interface PendingUpdate {
  readonly snapshot: TrackerSnapshot
  /** Initial placement (first request) and this update's changes, in order. */
  readonly changes: ReadonlyArray<TierChange>
}

/**
 * The services a request is assembled with, read from the context when it starts: the
 * symbol index (optional) and the provider plugin (default: the seeds' OpenAI-compatible
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
  /** historyTiers: history messages by tier, in conversation order. */
  readonly historyTiers: TierLists<HistoryEntry>
  /** l0Block, cachedBlocks, activeBlock (and extra stages): the layout, in request order. */
  readonly blocks: ReadonlyArray<LayoutBlock>
  /** The layout mode (`LayoutMode`) and, in journal mode, the last committed request's memory. */
  readonly layoutMode: LayoutMode
  readonly journalMemory: JournalMemory | undefined
  /** journal: the frozen tiers, journal and Working Files of this request (journal mode only). */
  readonly journal: JournalPlan | undefined
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

/** Anything an assembly can fail with. */
export type AssemblyError = StageError | SymbolIndexError | PlacementError

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
 * ```ts
 * // Put a section between the URL context and the Working Files.
 * insertPart(state, "active", part, ["workingFiles", "history", "prompt"])
 * ```
 */
export const insertPart = (state: AssemblyState, tier: Tier, part: Part, before: ReadonlyArray<string> = []): AssemblyState => {
  const block = blockOf(state, tier)
  const at = before.map((name) => block.parts.findIndex((p) => p.name === name)).find((i) => i >= 0) ?? block.parts.length
  return withBlock(state, { tier, parts: [...block.parts.slice(0, at), part, ...block.parts.slice(at)] })
}

/** The start state of a request. */
export const initialState = (
  input: AssemblyInput,
  counter: TokenCounter,
  services: PipelineServices,
  tracker: TrackerSnapshot,
  normalized: { readonly urls: ReadonlyArray<CountedUrl>; readonly images: ReadonlyArray<ImagePart>; readonly warnings: ReadonlyArray<string> },
  layout: { readonly mode: LayoutMode; readonly memory: JournalMemory | undefined } = { mode: "seed", memory: undefined }
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
  historyTiers: emptyTierLists(),
  blocks: [],
  layoutMode: layout.mode,
  journalMemory: layout.memory,
  journal: undefined,
  request: undefined,
  placed: undefined,
  pending: undefined
})
