/**
 * Flat (non-tiered) assembly, seed 002 `assemble_messages`: one message array with no
 * cache breakpoints, used before the tracker exists and as the fallback. A pure
 * function: the same input gives byte-identical messages.
 */
import type { ContentPart, Message } from "../domain/Message.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import {
  ACK,
  FILE_TREE_HEADER,
  FILES_ACTIVE_HEADER,
  formatFiles,
  REPO_MAP_HEADER,
  URL_ACK,
  URL_CONTEXT_HEADER,
  URL_SEPARATOR,
  withReminder
} from "./headers.ts"
import { imagePart, limitUrls, type ImageInput } from "./normalize.ts"

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

/** The system message text: the prompt, then the legend and map under `REPO_MAP_HEADER`. */
const systemText = (input: FlatAssemblyInput): string => {
  // The legend is trimmed so exactly one blank line separates it from the map.
  const legend = input.symbolLegend?.trimEnd() ?? ""
  const map = input.symbolMap ?? ""
  if (legend.trim() === "" && map.trim() === "") return input.systemPrompt
  const body = [legend, map].filter((s) => s.trim() !== "").join("\n\n")
  return `${input.systemPrompt}\n\n${REPO_MAP_HEADER}${body}`
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
  const messages: Array<Message> = [{ role: "system", content: systemText(input) }]
  const pair = (user: string, assistant: string) => {
    messages.push({ role: "user", content: user }, { role: "assistant", content: assistant })
  }

  const tree = input.fileTree ?? ""
  if (tree.trim() !== "") pair(FILE_TREE_HEADER + tree, ACK)

  const urls = limitUrls((input.urlContext ?? []).filter((u) => u.trim() !== "")).urls
  if (urls.length > 0) pair(URL_CONTEXT_HEADER + urls.join(URL_SEPARATOR), URL_ACK)

  const files = formatFiles(input.files ?? [], FILES_ACTIVE_HEADER)
  if (files !== "") pair(files, ACK)

  for (const message of input.history ?? []) messages.push(message)

  const text = withReminder(input.prompt, input.systemReminder ?? "")
  const images = input.images ?? []
  if (images.length === 0) {
    messages.push({ role: "user", content: text })
  } else {
    const parts: Array<ContentPart> = [{ type: "text", text }, ...images.map(imagePart)]
    messages.push({ role: "user", content: parts })
  }
  return messages
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
