/**
 * The pieces every layout is built from: text counted once, sections of entries, and the
 * parts (named runs of messages, the layout's sections, docs/pipeline.md) a block is made of, from the system
 * message to the prompt; and the provider-neutral request a list of blocks makes. Pure:
 * the layouts (`pipeline/layouts.ts`, `pipeline/seed/`, `pipeline/journal/`) put these parts in order, a `Placement` renders them.
 */
import type { ItemKey } from "../domain/Item.ts"
import type { Breakpoint, Block, NeutralRequest } from "../domain/Block.ts"
import type { ImagePart, Message } from "../domain/Message.ts"
import type { ToolDefinition } from "../domain/Tool.ts"
import { CACHED_TIERS, isCachedTier, type CachedTier, type Tier } from "../domain/Tier.ts"
import { IMAGE_TOKENS, LIST_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS, partTokens, sha256, type TokenCounter } from "../tokens/TokenCounter.ts"
import {
  ACK,
  FILE_TREE_HEADER,
  FILES_HEADERS,
  REPO_MAP_HEADER,
  REVIEW_ACK,
  REVIEW_CONTEXT_HEADER,
  TIER_SYMBOLS_HEADER,
  URL_ACK,
  URL_CONTEXT_HEADER,
  URL_SEPARATOR
} from "./headers.ts"

/** What the builders need to count tokens (a `TokenCounter` fits). */
export type Count = Pick<TokenCounter, "count">

/** A counter that counts nothing: for callers that only want the messages. */
export const NO_COUNT: Count = { count: () => 0 }

/** Separator between the sections of one message and between symbol blocks. */
export const SECTION_SEPARATOR = "\n\n"

/** Text with its token count, counted once upstream (per item, memoized by hash). */
export interface Counted {
  readonly text: string
  readonly tokens: number
}

export const NOTHING: Counted = { text: "", tokens: 0 }

/** Count `text` once. */
export const counted = (text: string, count: Count): Counted => ({ text, tokens: count.count(text) })

/**
 * Join the non-empty pieces with `separator`. Tokens add up piecewise, so an unchanged
 * piece is never re-tokenized; at the joins this can differ from tokenizing the whole
 * string by a token or so, and is exact for any additive counter.
 */
export const joinCounted = (pieces: ReadonlyArray<Counted>, separator: string, count: Count): Counted => {
  const texts: Array<string> = []
  let tokens = 0
  for (const p of pieces) {
    if (p.text.length === 0) continue
    texts.push(p.text)
    tokens += p.tokens
  }
  if (texts.length === 0) return NOTHING
  return { text: concat(texts, separator), tokens: tokens + (texts.length - 1) * count.count(separator) }
}

// A few large pieces are concatenated, which links them instead of copying their bytes
// (the request is serialized once, later); many small pieces are joined.
const concat = (texts: ReadonlyArray<string>, separator: string): string => {
  if (texts.length > 4) return texts.join(separator)
  let out = texts[0] ?? ""
  for (let i = 1; i < texts.length; i++) out = out + separator + texts[i]
  return out
}

/** `header + body`, or nothing when the body is empty (a header alone is never emitted). */
export const headed = (header: string, body: Counted, count: Count): Counted =>
  body.text.length === 0 ? NOTHING : { text: header + body.text, tokens: count.count(header) + body.tokens }

/** One kind of content inside a part, as the breakdown API reports it (tokens exclude framing). */
export interface Content {
  /** `system`, `legend`, `symbols`, `files`, `tree`, `urls`, `review`, `history`, `prompt`, or a custom stage's kind. */
  readonly type: string
  readonly tokens: number
  readonly count?: number
  /** Paths (symbols, files) or URLs (urls) in this content, in request order. */
  readonly files?: ReadonlyArray<string>
}

/**
 * A named run of consecutive messages inside a block: what stages add, and what the
 * breakdown lists. `tokens` is exact for the messages (framing included).
 */
export interface Part {
  readonly name: string
  readonly messages: ReadonlyArray<Message>
  readonly tokens: number
  readonly contents: ReadonlyArray<Content>
  readonly items: ReadonlyArray<ItemKey>
}

/** The parts of one tier, in request order. A tier with no messages is empty and emits nothing. */
export interface LayoutBlock {
  readonly tier: Tier
  readonly parts: ReadonlyArray<Part>
}

/** The text of one tier's section (symbols or files), with the paths and items it renders. */
export interface Section {
  readonly body: Counted
  readonly paths: ReadonlyArray<string>
  readonly items: ReadonlyArray<ItemKey>
}

export const EMPTY_SECTION: Section = { body: NOTHING, paths: [], items: [] }

type SectionEntry = Counted & { readonly path: string; readonly key?: ItemKey }

const sections = new WeakMap<object, { readonly count: Count; readonly section: Section }>()
const chunks = new WeakMap<object, { readonly entries: ReadonlyArray<SectionEntry>; readonly text: string; readonly tokens: number; readonly pieces: number }>()

// Chunk boundaries depend on the path alone (FNV-1a of its tail), so adding or removing an
// entry changes one chunk, not every chunk after it. About 32 entries per chunk.
const endsChunk = (path: string): boolean => {
  let h = 0x811c9dc5
  for (let i = Math.max(0, path.length - 24); i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 0x01000193)
  return (h >>> 27) === 0
}

const sameEntries = (a: ReadonlyArray<SectionEntry>, b: ReadonlyArray<SectionEntry>): boolean =>
  a.length === b.length && a.every((e, i) => e === b[i])

/**
 * A section from counted entries (symbol blocks or formatted files), joined by a blank
 * line in the order given. Memoized twice, because large sections change a little at a
 * time: by the entries array (the pipeline hands the same array for a tier whose entries
 * did not change) and by chunk, so a changed entry re-joins its own chunk only and the
 * chunks are linked, not copied.
 */
export const sectionOf = (entries: ReadonlyArray<SectionEntry>, count: Count): Section => {
  const known = sections.get(entries)
  if (known !== undefined && known.count === count) return known.section
  const paths: Array<string> = []
  const items: Array<ItemKey> = []
  let text = ""
  let tokens = 0
  let pieces = 0
  let start = 0
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    paths.push(e.path)
    if (e.key !== undefined) items.push(e.key)
    if (i < entries.length - 1 && !endsChunk(e.path)) continue
    const chunk = entries.slice(start, i + 1)
    start = i + 1
    let joined = chunks.get(chunk[0]!)
    if (joined === undefined || !sameEntries(joined.entries, chunk)) {
      const present = chunk.filter((c) => c.text.length > 0)
      joined = { entries: chunk, text: present.map((c) => c.text).join(SECTION_SEPARATOR), tokens: present.reduce((n, c) => n + c.tokens, 0), pieces: present.length }
      chunks.set(chunk[0]!, joined)
    }
    if (joined.pieces === 0) continue
    text = pieces === 0 ? joined.text : text + SECTION_SEPARATOR + joined.text
    tokens += joined.tokens
    pieces += joined.pieces
  }
  const body: Counted = pieces === 0 ? NOTHING : { text, tokens: tokens + (pieces - 1) * count.count(SECTION_SEPARATOR) }
  const section: Section = { body, paths, items }
  if (entries.length > 0) sections.set(entries, { count, section })
  return section
}

/**
 * One unit of history with its token count (message framing included) and optional item
 * key: a message, or a whole tool exchange (the assistant message with its tool calls and
 * the tool message answering them). A unit is laid out, cached and dropped whole, so a
 * call never lands apart from its result.
 */
export interface HistoryUnit {
  readonly messages: ReadonlyArray<Message>
  readonly tokens: number
  readonly key?: ItemKey
}

const contentOf = (type: string, tokens: number, extra: Omit<Content, "type" | "tokens"> = {}): ReadonlyArray<Content> =>
  tokens === 0 ? [] : [{ type, tokens, ...extra }]

const sectionContent = (type: string, header: string, section: Section, count: Count): ReadonlyArray<Content> =>
  section.body.text.length === 0
    ? []
    : [{ type, count: section.paths.length, tokens: count.count(header) + section.body.tokens, files: section.paths }]

/**
 * A user message carrying `body`, answered by the assistant with `ack`. Most sections of
 * a request are such a pair; custom stages use it too.
 *
 * @example
 * ```ts
 * import { userAckPart, counted, makeEstimatingCounter } from "@strata/core"
 * const counter = makeEstimatingCounter()
 * const part = userAckPart("notes", counted("# Notes\n\nShip on Friday.", counter), "Ok.", [], [], counter)
 * part.messages.length // 2
 * ```
 */
export const userAckPart = (
  name: string,
  body: Counted,
  ack: string,
  contents: ReadonlyArray<Content>,
  items: ReadonlyArray<ItemKey>,
  count: Count
): Part => ({
  name,
  messages: [
    { role: "user", content: body.text },
    { role: "assistant", content: ack }
  ],
  tokens: 2 * MESSAGE_OVERHEAD_TOKENS + body.tokens + count.count(ack),
  contents,
  items
})

/** Native history messages, or nothing. `count` in its content is the number of messages. */
export const historyPart = (history: ReadonlyArray<HistoryUnit>): ReadonlyArray<Part> => {
  if (history.length === 0) return []
  let tokens = 0
  const items: Array<ItemKey> = []
  const messages: Array<Message> = []
  for (const h of history) {
    tokens += h.tokens
    if (h.key !== undefined) items.push(h.key)
    for (const m of h.messages) messages.push(m)
  }
  return [{ name: "history", messages, tokens, contents: [{ type: "history", count: messages.length, tokens }], items }]
}

/** The tool definitions, counted: rendered by the plugin before everything else. */
export interface CountedTools {
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly tokens: number
}

const toolCounts = new WeakMap<ReadonlyArray<ToolDefinition>, { readonly count: Count; readonly tokens: number }>()

/**
 * The tool definitions with their tokens (their JSON, counted once per array): what a
 * request's tools weigh. Providers add a few framing tokens of their own.
 */
export const countedTools = (tools: ReadonlyArray<ToolDefinition> | undefined, count: Count): CountedTools | undefined => {
  if (tools === undefined || tools.length === 0) return undefined
  const known = toolCounts.get(tools)
  if (known !== undefined && known.count === count) return { tools, tokens: known.tokens }
  const tokens = count.count(JSON.stringify(tools))
  toolCounts.set(tools, { count, tokens })
  return { tools, tokens }
}

/** What the tool definitions' bytes hash to (`""` for none): a change is a new prefix. */
export const toolsHash = (tools: ReadonlyArray<ToolDefinition> | undefined): string => {
  if (tools === undefined || tools.length === 0) return ""
  const known = toolHashes.get(tools)
  if (known !== undefined) return known
  const hash = sha256(JSON.stringify(tools))
  toolHashes.set(tools, hash)
  return hash
}

const toolHashes = new WeakMap<ReadonlyArray<ToolDefinition>, string>()

/**
 * The tool definitions as the head of L0: no message (the plugin renders `request.tools`
 * before the system prompt), but their tokens count toward L0 and the breakdown lists
 * them; nothing when there are none.
 */
export const toolsPart = (tools: CountedTools | undefined): ReadonlyArray<Part> =>
  tools === undefined ? [] : [{ name: "tools", messages: [], tokens: tools.tokens, contents: [{ type: "tools", count: tools.tools.length, tokens: tools.tokens }], items: [] }]

/** The system message's content: the system prompt, the legend, the L0 symbols and L0 files. */
export interface SystemContent {
  readonly system: Counted
  readonly legend: Counted
  readonly symbols: Section
  readonly files: Section
  /** Items the system prompt stands for (the pipeline's `system`). */
  readonly systemItems?: ReadonlyArray<ItemKey>
}

/**
 * The system message: the system prompt, `# Repository Structure` with the legend and the
 * L0 symbols, then `# Reference Files (Stable)` with the L0 files; nothing when all are empty.
 */
export const systemPart = (c: SystemContent, count: Count): ReadonlyArray<Part> => {
  const mapBody = joinCounted([c.legend, c.symbols.body], SECTION_SEPARATOR, count)
  const map = headed(REPO_MAP_HEADER, mapBody, count)
  const files = headed(FILES_HEADERS.L0, c.files.body, count)
  const text = joinCounted([c.system, map, files], SECTION_SEPARATOR, count)
  if (text.text.length === 0) return []
  return [{
    name: "system",
    messages: [{ role: "system", content: text.text }],
    tokens: MESSAGE_OVERHEAD_TOKENS + text.tokens,
    contents: [
      ...contentOf("system", c.system.tokens),
      ...(map.text.length > 0 ? [{ type: "legend", tokens: count.count(REPO_MAP_HEADER) + c.legend.tokens }] : []),
      ...sectionContent("symbols", "", c.symbols, count),
      ...sectionContent("files", FILES_HEADERS.L0, c.files, count)
    ],
    items: [...(c.systemItems ?? []), ...c.symbols.items, ...c.files.items]
  }]
}

/** L0's content: the system message's, and the L0 history. */
export interface L0Content extends SystemContent {
  readonly history: ReadonlyArray<HistoryUnit>
}

/** The L0 block of the tiered layout (docs/pipeline.md): the system message, then L0 history as native messages. */
export const buildL0Block = (c: L0Content, count: Count): LayoutBlock => ({
  tier: "L0",
  parts: [...systemPart(c, count), ...historyPart(c.history)]
})

/** A cached tier's symbols and files. */
export interface TierSections {
  readonly symbols: Section
  readonly files: Section
}

/**
 * An L1-L3 tier's symbols (`# Repository Structure (continued)`) and files (the tier's
 * file header) as one user message with an `Ok.` reply; nothing when both are empty.
 */
export const tierContentPart = (tier: Exclude<CachedTier, "L0">, c: TierSections, count: Count): ReadonlyArray<Part> => {
  const symbols = headed(TIER_SYMBOLS_HEADER, c.symbols.body, count)
  const files = headed(FILES_HEADERS[tier], c.files.body, count)
  const body = joinCounted([symbols, files], SECTION_SEPARATOR, count)
  return body.text.length === 0
    ? []
    : [userAckPart("content", body, ACK, [
      ...sectionContent("symbols", TIER_SYMBOLS_HEADER, c.symbols, count),
      ...sectionContent("files", FILES_HEADERS[tier], c.files, count)
    ], [...c.symbols.items, ...c.files.items], count)]
}

/** One cached tier's content (the tiered layout's tier content, counted). */
export interface TierContent extends TierSections {
  readonly history: ReadonlyArray<HistoryUnit>
}

/** An L1-L3 block of the tiered layout: the tier's content pair, then the tier's history. */
export const buildCachedBlock = (tier: Exclude<CachedTier, "L0">, c: TierContent, count: Count): LayoutBlock => ({
  tier,
  parts: [...tierContentPart(tier, c, count), ...historyPart(c.history)]
})

/** The flat file tree as a user message with an `Ok.` reply (its items: the tree's `key`, if any). */
export const treePart = (
  tree: Counted & { readonly key?: ItemKey },
  count: Count,
  items: ReadonlyArray<ItemKey> = tree.key === undefined ? [] : [tree.key]
): ReadonlyArray<Part> =>
  tree.text.length === 0
    ? []
    : [userAckPart("tree", headed(FILE_TREE_HEADER, tree, count), ACK, [{ type: "tree", tokens: count.count(FILE_TREE_HEADER) + tree.tokens }], items, count)]

/** A URL's content, already formatted for the prompt. */
export interface CountedUrl {
  readonly url: string
  readonly content: Counted
  readonly key?: ItemKey
}

/** URL contents joined with `\n---\n`, answered with the URL acknowledgement. */
export const urlsPart = (urls: ReadonlyArray<CountedUrl>, count: Count): ReadonlyArray<Part> => {
  const body = joinCounted(urls.map((u) => u.content), URL_SEPARATOR, count)
  if (body.text.length === 0) return []
  const present = urls.filter((u) => u.content.text.length > 0)
  return [userAckPart("urls", headed(URL_CONTEXT_HEADER, body, count), URL_ACK, [
    { type: "urls", count: present.length, tokens: count.count(URL_CONTEXT_HEADER) + body.tokens, files: present.map((u) => u.url) }
  ], present.flatMap((u) => (u.key === undefined ? [] : [u.key])), count)]
}

/** The code review context, answered with the review acknowledgement. */
export const reviewPart = (review: Counted, count: Count): ReadonlyArray<Part> =>
  review.text.length === 0
    ? []
    : [userAckPart("review", headed(REVIEW_CONTEXT_HEADER, review, count), REVIEW_ACK, [{ type: "review", tokens: count.count(REVIEW_CONTEXT_HEADER) + review.tokens }], [], count)]

/** The active files under `# Working Files`, answered with `Ok.`. */
export const workingFilesPart = (files: Section, count: Count): ReadonlyArray<Part> =>
  files.body.text.length === 0
    ? []
    : [userAckPart("workingFiles", headed(FILES_HEADERS.active, files.body, count), ACK, sectionContent("files", FILES_HEADERS.active, files, count), files.items, count)]

/** The current user message: the prompt (system reminder already appended) and images as parts. */
export const promptPart = (prompt: Counted, images: ReadonlyArray<ImagePart>): Part => {
  const tokens = MESSAGE_OVERHEAD_TOKENS + prompt.tokens + images.length * IMAGE_TOKENS
  const message: Message = images.length === 0
    ? { role: "user", content: prompt.text }
    : { role: "user", content: [{ type: "text", text: prompt.text }, ...images] }
  return { name: "prompt", messages: [message], tokens, contents: [{ type: "prompt", tokens: prompt.tokens + images.length * IMAGE_TOKENS }], items: [] }
}

/**
 * A part's synthetic assistant messages: the acknowledgements ("Ok.") that close the
 * user-only sections. Real assistant messages come only from history parts.
 */
const syntheticIn = (part: Part): ReadonlyArray<Message> =>
  part.name === "history" ? [] : part.messages.filter((m) => m.role === "assistant")

/**
 * The fidelity rule on a layout: once the conversation has started (a history message
 * is in the request), no synthetic assistant turn follows. A section after it keeps
 * its user message and loses its acknowledgement, so the provider plugins merge it into
 * the next user message (or the one carrying the tool results before it): the last
 * assistant message of every request is one the model wrote, and after tool results the
 * request ends with the message that carries them. Sections before the conversation
 * (the cached tiers of a fresh session, the journal's frozen tiers) keep their pairs.
 * Pure; applying it twice changes nothing.
 *
 * @example
 * ```ts
 * import { conversationalBlocks, counted, historyPart, userAckPart, makeEstimatingCounter } from "@strata/core"
 * const c = makeEstimatingCounter()
 * const files = userAckPart("workingFiles", counted("# Working Files", c), "Ok.", [], [], c)
 * const history = historyPart([{ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }], tokens: 8 }])
 * conversationalBlocks([{ tier: "active", parts: [...history, files] }], c)[0]!.parts[1]!.messages.length // 1
 * ```
 */
export const conversationalBlocks = (blocks: ReadonlyArray<LayoutBlock>, count: Count): ReadonlyArray<LayoutBlock> => {
  let conversation = false
  return blocks.map((block) => {
    const folded = conversationalParts(block.parts, count, conversation)
    conversation = folded.conversation
    return folded.parts === block.parts ? block : { ...block, parts: folded.parts }
  })
}

/**
 * `conversationalBlocks` over one run of parts (the journal keeps its parts this way, so
 * its memory counts what is sent): after a history message (or from the start, when
 * `conversation` is true) no part keeps its acknowledgement. The same array when nothing
 * changes. Pure.
 */
export const conversationalParts = (
  parts: ReadonlyArray<Part>,
  count: Count,
  conversation = false
): { readonly parts: ReadonlyArray<Part>; readonly conversation: boolean } => {
  let started = conversation
  let changed = false
  const out = parts.map((part) => {
    if (part.name === "history") {
      if (part.messages.length > 0) started = true
      return part
    }
    const acks = syntheticIn(part)
    if (!started || acks.length === 0) return part
    changed = true
    return {
      ...part,
      messages: part.messages.filter((m) => m.role !== "assistant"),
      tokens: part.tokens - acks.reduce((n, m) => n + messageTokens(m, count), 0)
    }
  })
  return { parts: changed ? out : parts, conversation: started }
}

/**
 * The synthetic assistant messages a layout carries (the acknowledgements of context
 * pairs before the conversation) and their tokens: what the "Ok." convention costs.
 */
export const syntheticMessages = (blocks: ReadonlyArray<LayoutBlock>, count: Count): { readonly messages: number; readonly tokens: number } => {
  let messages = 0
  let tokens = 0
  for (const block of blocks) {
    for (const part of block.parts) {
      for (const m of syntheticIn(part)) {
        messages++
        tokens += messageTokens(m, count)
      }
    }
  }
  return { messages, tokens }
}

/** Tokens of a block's messages; the active block also carries the list's reply priming. */
export const blockTokens = (block: LayoutBlock): number => {
  let tokens = 0
  for (const p of block.parts) tokens += p.tokens
  return block.tier === "active" && tokens > 0 ? tokens + LIST_OVERHEAD_TOKENS : tokens
}

/** Cached tiers whose block emits no messages (they are skipped, and counted). */
export const emptyCachedTiers = (blocks: ReadonlyArray<LayoutBlock>): ReadonlyArray<CachedTier> =>
  CACHED_TIERS.filter((tier) => !blocks.some((b) => b.tier === tier && b.parts.some((p) => p.messages.length > 0)))

/**
 * The provider-neutral request: non-empty blocks in order, their flat message list, and a
 * breakpoint on the last message of every non-empty cached block.
 */
export const neutralRequest = (model: string, layout: ReadonlyArray<LayoutBlock>): NeutralRequest => {
  const blocks: Array<Block> = []
  const messages: Array<Message> = []
  const breakpoints: Array<Breakpoint> = []
  for (const block of layout) {
    const own = block.parts.flatMap((p) => p.messages)
    if (own.length === 0) continue
    messages.push(...own)
    blocks.push({ tier: block.tier, messages: own, items: block.parts.flatMap((p) => p.items), tokens: blockTokens(block) })
    if (isCachedTier(block.tier)) breakpoints.push({ tier: block.tier, messageIndex: messages.length - 1 })
  }
  return { model, blocks, messages, breakpoints }
}

/** Tokens of one message as `TokenCounter.countMessage` counts them. */
export const messageTokens = (message: Message, count: Count): number => {
  if (typeof message.content === "string") return MESSAGE_OVERHEAD_TOKENS + count.count(message.content)
  let tokens = MESSAGE_OVERHEAD_TOKENS
  for (const p of message.content) tokens += partTokens(p, (text) => count.count(text))
  return tokens
}
