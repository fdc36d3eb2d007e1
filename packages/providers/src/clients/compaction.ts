/**
 * Core's `CompactionModel` backed by an `LlmClient`: the history compactor asks a cheap
 * model for a topic boundary and a summary through whichever provider is configured.
 */
import { CompactionModel, CompactionModelError } from "@strata/core"
import { Effect, Layer } from "effect"
import { simpleBody } from "./bodies.ts"
import { LlmClient } from "./LlmClient.ts"

/**
 * A `CompactionModel` layer that sends the compactor's requests to `model` through the
 * `LlmClient` in context. Any client error becomes a `CompactionModelError` (the
 * compactor then falls back to truncation; nothing fails the turn).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { LlmClient, compactionModelLayer } from "@strata/providers"
 * const compaction = compactionModelLayer("claude-haiku-4-5").pipe(Layer.provide(LlmClient.layerAnthropic()))
 * ```
 */
export const compactionModelLayer = (model: string): Layer.Layer<CompactionModel, never, LlmClient> =>
  Layer.effect(
    CompactionModel,
    Effect.gen(function* () {
      const llm = yield* LlmClient
      return {
        complete: (request) =>
          llm.complete({
            body: simpleBody(llm.provider, { model, system: request.system, messages: [{ role: "user", content: request.user }], maxTokens: request.maxTokens })
          }).pipe(
            Effect.map((response) => response.text),
            Effect.mapError((error) => new CompactionModelError({ reason: error.message }))
          )
      }
    })
  )
