/**
 * A whole flat request from the session's state: prompts from the prompts folder,
 * URL limiting, pre-request shedding (layer 3), then `assembleMessages`. Every
 * warning a user should see comes back with the messages.
 */
import { Effect } from "effect"
import { assembleMessages } from "../pipeline/seed/flat.ts"
import { limitUrls, type ImageInput } from "../assembly/normalize.ts"
import type { Message } from "../domain/Message.ts"
import { unknownModelWarning } from "../models/modelTable.ts"
import { RequestLimits, resolveRequestLimits } from "../pipeline/inputLimit/requestLimits.ts"
import { RequestTooLarge } from "../pipeline/base/state.ts"
import { Prompts } from "../prompts/Prompts.ts"
import type { ShedFile } from "./requestBudget.ts"
import { ContextManager } from "./ContextManager.ts"

export interface FlatRequestInput {
  /** The user's current prompt. */
  readonly prompt: string
  readonly images?: ReadonlyArray<ImageInput> | undefined
  readonly symbolLegend?: string | undefined
  readonly symbolMap?: string | undefined
  readonly fileTree?: string | undefined
  /** Formatted URL contents; more than 3 are cut to 3 with a warning. */
  readonly urlContext?: ReadonlyArray<string> | undefined
}

export interface FlatRequest {
  readonly messages: ReadonlyArray<Message>
  /** Estimated input tokens of `messages`. */
  readonly tokens: number
  /** An unknown model, prompt fallbacks, URLs cut, files shed: say these to the user. */
  readonly warnings: ReadonlyArray<string>
  /** Files removed from context by shedding for this request. */
  readonly shed: ReadonlyArray<ShedFile>
}

/**
 * Assemble a flat request from `history` (the session's, from its `StateStore`; none
 * when omitted) and the manager's files. Files are shed (largest first,
 * removed from context) when the request would pass 90% of the model's input limit; a
 * request still over the limit (with the output reserve) fails with `RequestTooLarge`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { assembleFlatRequest } from "@strata/core/effect"
 * const request = assembleFlatRequest({ prompt: "Explain src/a.ts" }) // needs ContextManager and Prompts
 * ```
 */
export const assembleFlatRequest = Effect.fn("ContextManager.assembleFlatRequest")(function* (input: FlatRequestInput, history?: ReadonlyArray<Message>) {
  const manager = yield* ContextManager
  const prompts = yield* Prompts
  const system = yield* prompts.systemPrompt
  const reminder = yield* prompts.systemReminder
  const modelWarning = unknownModelWarning(manager.model)
  const warnings: Array<string> = [...(modelWarning === undefined ? [] : [modelWarning]), ...system.warnings, ...reminder.warnings]
  const urls = limitUrls(input.urlContext ?? [])
  if (urls.warning !== undefined) warnings.push(urls.warning)
  const base = {
    systemPrompt: system.text,
    symbolLegend: input.symbolLegend,
    symbolMap: input.symbolMap,
    fileTree: input.fileTree,
    urlContext: urls.urls,
    prompt: input.prompt,
    systemReminder: reminder.text,
    images: input.images
  }
  // Everything but the files; the manager adds those to its estimate.
  const otherTokens = manager.counter.countMessages(assembleMessages(base)) + (history === undefined ? 0 : manager.counter.countMessages(history))
  const shed = yield* manager.shedFilesIfNeeded(otherTokens)
  if (shed.warning !== undefined) warnings.push(shed.warning)
  const files = yield* manager.files
  const messages = assembleMessages({ ...base, files: files.entries(), history: history ?? [] })
  const tokens = manager.counter.countMessages(messages)
  // Shedding keeps files out; what remains (history, a large map or prompt) must still fit.
  const limits = resolveRequestLimits(manager.model, { ...(yield* RequestLimits), maxInputTokens: manager.maxInputTokens })
  if (tokens + limits.outputReserveTokens > limits.maxInputTokens) {
    const c = manager.counter
    const historyTokens = c.countMessages(history ?? [])
    const fileTokens = files.countTokens(c)
    const mapTokens = [input.symbolLegend, input.symbolMap, input.fileTree].reduce((n, t) => n + (t === undefined ? 0 : c.count(t)), 0)
    return yield* new RequestTooLarge({
      model: limits.model,
      maxInputTokens: limits.maxInputTokens,
      outputReserveTokens: limits.outputReserveTokens,
      requestTokens: tokens,
      historyTokens,
      fileTokens,
      mapTokens,
      otherTokens: Math.max(0, tokens - historyTokens - fileTokens - mapTokens)
    })
  }
  return {
    messages,
    tokens,
    warnings,
    shed: shed.dropped
  } satisfies FlatRequest
})
