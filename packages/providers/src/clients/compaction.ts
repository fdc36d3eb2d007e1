/**
 * Core's `CompactionModel` backed by an `LlmClient`: the history compactor asks a cheap
 * model for a topic boundary and a summary through whichever provider is configured.
 */
import { CompactionModel, CompactionModelError } from "@strata/core"
import { Effect, Fiber, Layer } from "effect"
import { simpleBody } from "./bodies.ts"
import { LlmClient } from "./LlmClient.ts"

/** Stop reasons that mean the answer was cut at the token limit (Anthropic, OpenAI, Bedrock). */
const CUT_OFF = new Set(["max_tokens", "length"])

/**
 * Run `effect` in a detached fiber and wait for it; when the caller is interrupted (the
 * compactor's timeout), return at once and interrupt the request in the background.
 * The client opens its stream (retries and backoff included) in an uninterruptible
 * step, which would otherwise hold the compactor past its timeout until the client's
 * own timeouts end.
 */
const interruptibleCall = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.forkDetach(effect), (fiber) =>
    Fiber.join(fiber).pipe(Effect.onInterrupt(() => Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber))))))

/**
 * A `CompactionModel` layer that sends the compactor's requests to `model` (or to the
 * compaction config's `detectionModel`, when set) through the `LlmClient` in context.
 * Any client error, an empty answer, or an answer cut at the token limit becomes a
 * `CompactionModelError`: the compactor then falls back to truncation; nothing fails
 * the turn.
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
        complete: (request) => {
          const chosen = request.model ?? model
          return interruptibleCall(llm.complete({
            body: simpleBody(llm.provider, { model: chosen, system: request.system, messages: [{ role: "user", content: request.user }], maxTokens: request.maxTokens })
          })).pipe(
            Effect.mapError((error) => new CompactionModelError({ reason: error.message })),
            Effect.flatMap((response) => {
              if (response.stopReason !== undefined && CUT_OFF.has(response.stopReason)) {
                return Effect.fail(new CompactionModelError({ reason: `${chosen} stopped at the ${request.maxTokens}-token limit before finishing its answer` }))
              }
              if (response.text.trim() === "") {
                return Effect.fail(new CompactionModelError({ reason: `${chosen} returned no text (stop reason: ${response.stopReason ?? "none"})` }))
              }
              return Effect.succeed(response.text)
            })
          )
        }
      }
    })
  )
