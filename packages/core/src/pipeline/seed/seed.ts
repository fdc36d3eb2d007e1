/**
 * The tiered layout (docs/pipeline.md#the-tiered-layout): every tier rendered from the tracker's tiers on every request, so
 * files and history graduate into the cached tiers by N. `seedBlocks` is the whole order
 * on one screen; the pipeline's `seedLayout`, the pure `assembleTieredMessages`
 * and flat assembly (`flat.ts`) all lay a request out through it.
 */
import { Effect } from "effect"
import { withReminder } from "../../assembly/headers.ts"
import { imagePart, limitUrls } from "../../assembly/normalize.ts"
import {
  conversationalBlocks,
  counted,
  countedTools,
  EMPTY_SECTION,
  historyPart,
  messageTokens,
  neutralRequest,
  NO_COUNT,
  NOTHING,
  promptPart,
  reviewPart,
  SECTION_SEPARATOR,
  sectionOf,
  systemPart,
  tierContentPart,
  toolsPart,
  treePart,
  urlsPart,
  workingFilesPart,
  type Count,
  type Counted,
  type CountedTools,
  type CountedUrl,
  type HistoryUnit,
  type L0Content,
  type LayoutBlock,
  type Section,
  type TierContent
} from "../../assembly/parts.ts"
import { ItemKeys, type ItemKey } from "../../domain/Item.ts"
import type { ImagePart, Message } from "../../domain/Message.ts"
import type { CachedTier } from "../../domain/Tier.ts"
import { toSeedMessages, type SeedMessage } from "./seedPlacement.ts"
import type { AssemblyState, Layout } from "../base/state.ts"

/** What the tiered layout (docs/pipeline.md#the-tiered-layout) orders: each cached tier's content, then the active block's sections. */
export interface SeedContent {
  /** The tool definitions, rendered by the plugin before the system message (none: undefined). */
  readonly tools?: CountedTools | undefined
  /** The system message (system prompt, legend, L0 symbols and files) and L0 history. */
  readonly L0: L0Content
  readonly L1: TierContent
  readonly L2: TierContent
  readonly L3: TierContent
  readonly tree: Counted & { readonly key?: ItemKey }
  readonly urls: ReadonlyArray<CountedUrl>
  readonly review: Counted
  readonly workingFiles: Section
  readonly history: ReadonlyArray<HistoryUnit>
  /** The user's prompt with the system reminder appended. */
  readonly prompt: Counted
  readonly images: ReadonlyArray<ImagePart>
}

/**
 * The tiered layout's request, top to bottom. An empty section emits nothing; every cached block
 * that emits messages gets a breakpoint on its last one. The URL context, review and
 * Working Files follow the active history, so they ride in the final user message with
 * the prompt; once the conversation has started no section is acknowledged by a
 * synthetic assistant turn (`conversationalBlocks`).
 */
export const seedBlocks = (c: SeedContent, count: Count): ReadonlyArray<LayoutBlock> => conversationalBlocks([
  { tier: "L0", parts: [...toolsPart(c.tools), ...systemPart(c.L0, count), ...historyPart(c.L0.history)] },
  { tier: "L1", parts: [...tierContentPart("L1", c.L1, count), ...historyPart(c.L1.history)] },
  { tier: "L2", parts: [...tierContentPart("L2", c.L2, count), ...historyPart(c.L2.history)] },
  { tier: "L3", parts: [...tierContentPart("L3", c.L3, count), ...historyPart(c.L3.history)] },
  {
    tier: "active",
    parts: [
      ...treePart(c.tree, count),
      ...historyPart(c.history),
      ...urlsPart(c.urls, count),
      ...reviewPart(c.review, count),
      ...workingFilesPart(c.workingFiles, count),
      promptPart(c.prompt, c.images)
    ]
  }
], count)

/** The state's system prompt, counted. */
export const systemPromptOf = (state: AssemblyState): Counted => counted(state.input.systemPrompt, state.counter)

/** The state's tool definitions, counted (undefined when the request has none). */
export const toolsOf = (state: AssemblyState): CountedTools | undefined => countedTools(state.input.tools, state.counter)

/** The state's prompt with the system reminder appended, counted. */
export const promptOf = (state: AssemblyState): Counted =>
  counted(withReminder(state.input.prompt, state.input.systemReminder ?? ""), state.counter)

/**
 * The tiered layout in the pipeline (`LayoutMode` "seed"): each tier as the tracker has it
 * now. Plans nothing; the review context is added by its own stage.
 */
export const seedLayout: Layout = {
  name: "seed",
  plan: Effect.succeed,
  blocks: (state) => {
    const c = state.counter
    const tier = (t: CachedTier): TierContent => ({
      symbols: sectionOf(state.symbols.tiers[t], c),
      files: sectionOf(state.fileTiers[t], c),
      history: state.historyTiers[t]
    })
    return seedBlocks({
      tools: toolsOf(state),
      L0: { ...tier("L0"), system: systemPromptOf(state), systemItems: [ItemKeys.system], legend: state.symbols.legend },
      L1: tier("L1"),
      L2: tier("L2"),
      L3: tier("L3"),
      tree: state.symbols.tree ?? NOTHING,
      urls: state.urls,
      review: NOTHING,
      workingFiles: sectionOf(state.fileTiers.active, c),
      history: state.historyTiers.active,
      prompt: promptOf(state),
      images: state.images
    }, c)
  },
  request: (state) => neutralRequest(state.input.model, state.blocks)
}

// ---------------------------------------------------------------------------------------
// assembleTieredMessages: the plain-text entry point

/** One tier of the tiered layout's content: symbol text, formatted files text and history. */
export interface TieredTierContent {
  readonly symbols?: string
  readonly files?: string
  readonly history?: ReadonlyArray<Message>
}

/** Everything `assembleTieredMessages` lays out, as plain text. */
export interface TieredMessagesInput {
  readonly systemPrompt: string
  readonly symbolLegend?: string
  /** Symbol blocks in no cached tier (the "main map"); they render with L3's symbols. */
  readonly symbolMap?: string
  readonly tieredContent?: Partial<Record<CachedTier, TieredTierContent>>
  readonly fileTree?: string
  /** Formatted URL contents; at most 3 are used. */
  readonly urlContext?: ReadonlyArray<string>
  readonly reviewContext?: string
  /** Active files formatted with `formatFiles(files)` (no header). */
  readonly activeFiles?: string
  readonly activeHistory?: ReadonlyArray<Message>
  readonly prompt: string
  /** Appended to the prompt after a blank line. */
  readonly systemReminder?: string
  /** Image URLs (`data:` or `https:`). */
  readonly images?: ReadonlyArray<string>
}

/** The tiered layout of plain-text content as blocks: L0 (system), L1, L2, L3, then the active block. */
export const tieredLayout = (input: TieredMessagesInput, count: Count = NO_COUNT): ReadonlyArray<LayoutBlock> => {
  const plain = (text: string | undefined): Counted => (text ? counted(text, count) : NOTHING)
  const section = (text: string | undefined): Section => (text ? { body: counted(text, count), paths: [], items: [] } : EMPTY_SECTION)
  const history = (h: ReadonlyArray<Message> | undefined): ReadonlyArray<HistoryUnit> =>
    (h ?? []).map((message) => ({ messages: [message], tokens: messageTokens(message, count) }))
  const tier = (t: CachedTier, symbols = input.tieredContent?.[t]?.symbols): TierContent => ({
    symbols: section(symbols),
    files: section(input.tieredContent?.[t]?.files),
    history: history(input.tieredContent?.[t]?.history)
  })
  return seedBlocks({
    L0: { ...tier("L0"), system: plain(input.systemPrompt), legend: plain(input.symbolLegend) },
    L1: tier("L1"),
    L2: tier("L2"),
    L3: tier("L3", [input.tieredContent?.L3?.symbols, input.symbolMap].filter((s) => s).join(SECTION_SEPARATOR)),
    tree: plain(input.fileTree),
    urls: limitUrls(input.urlContext ?? []).urls.map((text, i) => ({ url: `#${i + 1}`, content: plain(text) })),
    review: plain(input.reviewContext),
    workingFiles: section(input.activeFiles),
    history: history(input.activeHistory),
    prompt: plain(withReminder(input.prompt, input.systemReminder ?? "")),
    images: (input.images ?? []).map(imagePart)
  }, count)
}

/**
 * The tiered layout as one message array in the default format (`assembleTieredMessages`), with
 * the system message inside the array and `cache_control: {type: "ephemeral"}` on the last
 * content block of each non-empty cached tier (on the system message only when L0 has no
 * history). Pure: the same input gives byte-identical output.
 *
 * @example
 * ```ts
 * import { assembleTieredMessages } from "@strata/core"
 * const messages = assembleTieredMessages({
 *   systemPrompt: "You are a careful coding assistant.",
 *   tieredContent: { L1: { symbols: "src/a.ts:\nf main()" } },
 *   prompt: "What does main do?"
 * })
 * // [system (cached), user "# Repository Structure (continued)…", assistant "Ok." (cached), user prompt]
 * ```
 */
export const assembleTieredMessages = (input: TieredMessagesInput): ReadonlyArray<SeedMessage> =>
  toSeedMessages(neutralRequest("", tieredLayout(input)))
