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
import { assemble, getContextBreakdown, type AssemblyResult } from "../pipeline/assemble.ts"
import { requestInput, type RequestParts } from "./requestInput.ts"

/** What a caller adds to the session's state for one request. */
export type SessionAssemblyRequest = RequestParts

/** The session's history, files and prompts as an `AssemblyInput`, with prompt-loading warnings. */
export const sessionAssemblyInput = Effect.fnUntraced(function* (request: SessionAssemblyRequest) {
  const manager = yield* ContextManager
  const state = yield* manager.state
  return yield* requestInput({ ...request, model: manager.model, files: state.files.entries(), history: state.history })
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
