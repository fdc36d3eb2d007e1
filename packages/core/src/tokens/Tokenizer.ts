/**
 * The `Tokenizer` service: a model-aware token counter for Effect code. The default
 * layer loads js-tiktoken for the configured model.
 */
import { Context, Effect, Layer } from "effect"
import { makeEstimatingCounter, makeTokenCounter, type TokenCounter } from "./TokenCounter.ts"

/**
 * Counts tokens for the session's model.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tokenizer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const tokenizer = yield* Tokenizer
 *   return tokenizer.count("hello")
 * }).pipe(Effect.provide(Tokenizer.layer("gpt-4o")))
 * ```
 */
export class Tokenizer extends Context.Service<Tokenizer, TokenCounter>()("@strata/core/Tokenizer") {
  /** js-tiktoken for `model` (exact for OpenAI models, approximate otherwise). */
  static readonly layer = (model: string): Layer.Layer<Tokenizer> =>
    Layer.effect(Tokenizer, Effect.promise(() => makeTokenCounter(model)))

  /** chars/4 estimates only; fast and dependency-free, for tests. */
  static readonly layerEstimate: Layer.Layer<Tokenizer> = Layer.sync(Tokenizer, () => makeEstimatingCounter())

  /** Wrap an existing counter. */
  static readonly layerFrom = (counter: TokenCounter): Layer.Layer<Tokenizer> => Layer.succeed(Tokenizer, counter)
}
