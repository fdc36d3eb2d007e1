/**
 * The chunk builder as an Effect service, for pipelines: the same pure builder, its
 * default tokenizer taken from the `Tokenizer` service, and malformed input as a
 * typed `InvalidInput` failure instead of a throw.
 */
import { Context, Effect, Layer } from "effect"
import { InvalidInput } from "../domain/errors.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { ContextBuilder, type MemoryHistory } from "./ContextBuilder.ts"
import type { ChunkFilterOptions, ContextBuildOptions, ContextBuildResult } from "./ContextMessage.ts"
import type { MemoryStateInput } from "./MemoryState.ts"
import type { IChunkRenderer } from "./renderers.ts"

/** What the `ContextBuilderService` offers. */
export interface ContextBuilderShape {
  /** `ContextBuilder.build`; bad state or options fail with `InvalidInput`. */
  readonly build: (state: MemoryStateInput, options?: ContextBuildOptions) => Effect.Effect<ContextBuildResult, InvalidInput>
  /** `ContextBuilder.toHistory`; bad state fails with `InvalidInput`. */
  readonly toHistory: (state: MemoryStateInput, options?: ChunkFilterOptions) => Effect.Effect<MemoryHistory, InvalidInput>
}

// Only bad input is a typed failure; a renderer that throws anything else is a defect.
const attempt = <A>(f: () => A): Effect.Effect<A, InvalidInput> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (error) {
      return error instanceof InvalidInput ? Effect.fail(error) : Effect.die(error)
    }
  })

/** Wrap a pure builder as the service's shape. */
export const makeContextBuilderService = (builder: ContextBuilder): ContextBuilderShape => ({
  build: (state, options) => attempt(() => builder.build(state, options)).pipe(Effect.withSpan("ContextBuilder.build")),
  toHistory: (state, options) => attempt(() => builder.toHistory(state, options)).pipe(Effect.withSpan("ContextBuilder.toHistory"))
})

/**
 * The XML chunk context builder for Effect code.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextBuilderService, Tokenizer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const builder = yield* ContextBuilderService
 *   const state = { chunks: [{ id: "c1", type: "AGENT", role: "user", content: "hi" }] }
 *   return yield* builder.build(state, { maxTokens: 8000 })
 * }).pipe(Effect.provide(ContextBuilderService.layer.pipe(Layer.provide(Tokenizer.layer("gpt-4o")))))
 * ```
 */
export class ContextBuilderService extends Context.Service<ContextBuilderService, ContextBuilderShape>()(
  "@strata/core/ContextBuilder"
) {
  /** Default renderers, counting with the session's `Tokenizer`. */
  static readonly layer: Layer.Layer<ContextBuilderService, never, Tokenizer> = Layer.effect(
    ContextBuilderService,
    Effect.gen(function* () {
      const tokenizer = yield* Tokenizer
      return makeContextBuilderService(new ContextBuilder(tokenizer))
    })
  )

  /** Custom renderers (ahead of the defaults, first listed first), counting with the `Tokenizer`. */
  static readonly layerWith = (renderers: ReadonlyArray<IChunkRenderer>): Layer.Layer<ContextBuilderService, never, Tokenizer> =>
    Layer.effect(
      ContextBuilderService,
      Effect.gen(function* () {
        const builder = new ContextBuilder(yield* Tokenizer)
        for (const renderer of [...renderers].reverse()) builder.registerRenderer(renderer)
        return makeContextBuilderService(builder)
      })
    )

  /** Wrap an existing builder (its renderers and default tokenizer as they are). */
  static readonly layerFrom = (builder: ContextBuilder): Layer.Layer<ContextBuilderService> =>
    Layer.succeed(ContextBuilderService, makeContextBuilderService(builder))
}
