/**
 * Assembly from the session's state: the `ContextManager`'s history and files and the
 * prompts folder (re-read on every request), gathered into an `AssemblyInput` and run
 * through the pipeline. The Promise facade's `assemble` and `getContextBreakdown` call these.
 * It sits with the engine, above both the pipeline and the context manager: the pipeline
 * assembles plain input and knows no session.
 */
import { Effect } from "effect"
import type { ContextBreakdown } from "../breakdown/index.ts"
import { ContextManager } from "../context/ContextManager.ts"
import type { ImagePart } from "../domain/Message.ts"
import { Prompts } from "../prompts/Prompts.ts"
import { assemble, getContextBreakdown, type AssemblyResult } from "../pipeline/assemble.ts"
import type { AssemblyInput, UrlContent } from "../pipeline/state.ts"

/** What a caller adds to the session's state for one request. */
export interface SessionAssemblyRequest {
  /** The user's prompt (the system reminder is appended by assembly). */
  readonly prompt: string
  readonly images?: ReadonlyArray<string | ImagePart>
  /** Fetched URL contents, formatted for the prompt; at most 3 are used. */
  readonly urls?: ReadonlyArray<UrlContent>
  /** Code review context (review mode). */
  readonly review?: string
  /** Include the symbol map and file tree (default true). */
  readonly useRepoMap?: boolean
}

/** The session's history, files and prompts as an `AssemblyInput`, with prompt-loading warnings. */
export const sessionAssemblyInput = Effect.fnUntraced(function* (request: SessionAssemblyRequest) {
  const manager = yield* ContextManager
  const prompts = yield* Prompts
  const system = yield* prompts.systemPrompt
  const reminder = yield* prompts.systemReminder
  const state = yield* manager.state
  const input: AssemblyInput = {
    model: manager.model,
    prompt: request.prompt,
    systemPrompt: system.text,
    systemReminder: reminder.text,
    files: state.files.entries(),
    history: state.history,
    ...(request.images === undefined ? {} : { images: request.images }),
    ...(request.urls === undefined ? {} : { urls: request.urls }),
    ...(request.review === undefined ? {} : { review: request.review }),
    ...(request.useRepoMap === undefined ? {} : { useRepoMap: request.useRepoMap })
  }
  return { input, warnings: [...system.warnings, ...reminder.warnings] }
})

/**
 * Assemble the session's next request. Before it is returned, seed 004's pre-request
 * shedding runs: when the request would pass 90% of the input limit the largest files
 * leave context (with a warning) and the request is assembled again.
 */
export const assembleSession = Effect.fn("ContextManager.assemble")(function* (request: SessionAssemblyRequest) {
  const manager = yield* ContextManager
  const first = yield* sessionAssemblyInput(request)
  const result = yield* assemble(first.input)
  const { categories, totalTokens } = result.report
  const shed = yield* manager.shedFilesIfNeeded(totalTokens - categories.files - categories.history)
  const final: AssemblyResult = shed.dropped.length === 0 ? result : yield* assemble((yield* sessionAssemblyInput(request)).input)
  return { ...final, warnings: [...first.warnings, ...(shed.warning === undefined ? [] : [shed.warning]), ...final.warnings] }
})

/** The seed 003 breakdown of the session's next request (prompt empty unless given). */
export const sessionBreakdown = Effect.fn("ContextManager.getContextBreakdown")(function* (request: Partial<SessionAssemblyRequest> = {}) {
  const { input } = yield* sessionAssemblyInput({ ...request, prompt: request.prompt ?? "" })
  const breakdown: ContextBreakdown = yield* getContextBreakdown(input)
  return breakdown
})
