/**
 * Flat (non-tiered) assembly (docs/pipeline.md#the-tiered-layout): the tiered layout's order with nothing
 * cached, as one message array with no breakpoints. Used before the tracker exists and as
 * the fallback; not a `LayoutMode`. It lays out through `seedBlocks`, so the order is the
 * seed layout's. Pure: the same input gives byte-identical messages.
 */
import { formatFiles, withReminder } from "../../assembly/headers.ts"
import { imagePart, limitUrls, type ImageInput } from "../../assembly/normalize.ts"
import { counted, EMPTY_SECTION, NO_COUNT, NOTHING, type Counted, type Section, type TierContent } from "../../assembly/parts.ts"
import type { Message } from "../../domain/Message.ts"
import type { TokenCounter } from "../../tokens/TokenCounter.ts"
import { seedBlocks } from "./seed.ts"

/** Everything a flat request is made of; empty or missing sections are left out. */
export interface FlatAssemblyInput {
  /** The system prompt (`system.md` + `system_extra.md`). */
  readonly systemPrompt: string
  /** Symbol map legend (abbreviation key and path aliases), placed before the map. */
  readonly symbolLegend?: string | undefined
  /** The repository's symbol map, appended to the system message under `# Repository Structure`. */
  readonly symbolMap?: string | undefined
  /** The flat sorted file list. */
  readonly fileTree?: string | undefined
  /** Formatted content of each URL; at most 3 are used. */
  readonly urlContext?: ReadonlyArray<string> | undefined
  /** Files in context, already in the order they should appear. */
  readonly files?: ReadonlyArray<{ readonly path: string; readonly content: string }> | undefined
  /** Conversation history, as native messages. */
  readonly history?: ReadonlyArray<Message> | undefined
  /** The user's current prompt. */
  readonly prompt: string
  /** The system reminder, appended to the prompt after a blank line. */
  readonly systemReminder?: string | undefined
  readonly images?: ReadonlyArray<ImageInput> | undefined
}

/**
 * Assemble a flat request: system message (prompt + symbol map), file tree pair, URL
 * context pair, Working Files pair, history, then the current prompt with the system
 * reminder appended. With images the prompt becomes a list of parts (text first).
 *
 * @example
 * ```ts
 * import { assembleMessages } from "@strata/core"
 * const messages = assembleMessages({
 *   systemPrompt: "You are a coding assistant.",
 *   files: [{ path: "src/a.ts", content: "export const a = 1" }],
 *   prompt: "Rename a to b."
 * })
 * // [system, user "# Working Files...", assistant "Ok.", user "Rename a to b."]
 * ```
 */
export const assembleMessages = (input: FlatAssemblyInput): ReadonlyArray<Message> => {
  // Blank sections are left out; the legend's trailing blank lines go, so one blank line
  // separates it from the map.
  const text = (s: string | undefined): Counted => (s === undefined || s.trim() === "" ? NOTHING : counted(s, NO_COUNT))
  const section = (s: string | undefined): Section => ({ body: text(s), paths: [], items: [] })
  const empty: TierContent = { symbols: EMPTY_SECTION, files: EMPTY_SECTION, history: [] }
  const blocks = seedBlocks({
    L0: { ...empty, system: counted(input.systemPrompt, NO_COUNT), legend: text(input.symbolLegend?.trimEnd()), symbols: section(input.symbolMap) },
    L1: empty,
    L2: empty,
    L3: empty,
    tree: text(input.fileTree),
    urls: limitUrls((input.urlContext ?? []).filter((u) => u.trim() !== "")).urls.map((u, i) => ({ url: `#${i + 1}`, content: text(u) })),
    review: NOTHING,
    workingFiles: section(formatFiles(input.files ?? [])),
    history: (input.history ?? []).map((message) => ({ messages: [message], tokens: 0 })),
    prompt: counted(withReminder(input.prompt, input.systemReminder ?? ""), NO_COUNT),
    images: (input.images ?? []).map(imagePart)
  }, NO_COUNT)
  const messages = blocks.flatMap((b) => b.parts.flatMap((p) => p.messages))
  // A flat request opens with a system message even when the system prompt is empty.
  return messages[0]?.role === "system" ? messages : [{ role: "system", content: "" }, ...messages]
}

/**
 * Estimated input tokens of an assembled request (message overheads included).
 *
 * @example
 * ```ts
 * import { assembleMessages, estimatePromptTokens, makeEstimatingCounter } from "@strata/core"
 * estimatePromptTokens(assembleMessages({ systemPrompt: "Hi", prompt: "Go" }), makeEstimatingCounter()) // > 0
 * ```
 */
export const estimatePromptTokens = (
  messages: ReadonlyArray<Message>,
  counter: Pick<TokenCounter, "countMessages">
): number => counter.countMessages(messages)
