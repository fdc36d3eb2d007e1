// `it.effect` and `layer(...)` for vitest 4: the Effect test idiom of `@effect/vitest`
// (which needs Node 22) in a few lines. A test is an Effect; a failure or defect fails the
// test with the error itself (tagged errors keep their `_tag` and message).
import { Cause, Effect, Exit, type Layer, ManagedRuntime } from "effect"
import { afterAll, describe, it as vitestIt } from "vitest"

/** The body of an Effect test: an Effect that needs nothing (or only `R`, inside `layer`). */
export type EffectTest<R = never> = () => Effect.Effect<unknown, unknown, R>

/** Fail with the squashed cause: the error a test author threw or failed with. */
const orThrow = (exit: Exit.Exit<unknown, unknown>): void => {
  if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
}

/** Run an Effect test's body: resolves when it succeeds, rejects with its error or defect. */
export const runEffectTest = async (body: EffectTest): Promise<void> => orThrow(await Effect.runPromiseExit(body()))

/** `it.effect(name, body, timeout?)`, or a runner bound to a shared layer. */
export interface EffectIt<R> {
  readonly effect: (name: string, body: EffectTest<R>, timeout?: number) => void
}

/**
 * vitest's `it`, plus `it.effect(name, () => Effect..., timeout?)`.
 *
 * @example
 * ```ts no-run
 * import { Tokenizer } from "@strata/core/effect"
 * import { it } from "@strata/test-support"
 * import { Effect } from "effect"
 * import { expect } from "vitest"
 * it.effect("counts tokens", () =>
 *   Effect.gen(function* () {
 *     const tokenizer = yield* Tokenizer
 *     expect(tokenizer.count("hello")).toBe(1)
 *   }).pipe(Effect.provide(Tokenizer.layer("gpt-4o"))))
 * ```
 */
export const it: typeof vitestIt & EffectIt<never> = Object.assign(vitestIt, {
  effect: (name: string, body: EffectTest, timeout?: number) =>
    vitestIt(name, () => runEffectTest(body), timeout)
})

/**
 * Shared setup: a `describe` block whose Effect tests all run against one `Layer`, built
 * once on the first test and released after the last (`@effect/vitest`'s `layer`). Use it
 * for layers whose state the tests may share; a test that needs a fresh service provides
 * its own layer.
 *
 * @example
 * ```ts no-run
 * import { Tokenizer } from "@strata/core/effect"
 * import { layer } from "@strata/test-support"
 * import { Effect } from "effect"
 * import { expect } from "vitest"
 * layer(Tokenizer.layer("gpt-4o"))("the gpt-4o tokenizer", (it) => {
 *   it.effect("counts", () => Effect.map(Tokenizer, (t) => expect(t.count("hello")).toBe(1)))
 * })
 * ```
 */
export const layer =
  <R, E>(shared: Layer.Layer<R, E>) =>
  (name: string, tests: (it: EffectIt<R>) => void): void => {
    describe(name, () => {
      const runtime = ManagedRuntime.make(shared)
      afterAll(() => runtime.dispose())
      tests({
        effect: (test, body, timeout) => vitestIt(test, async () => orThrow(await runtime.runPromiseExit(body())), timeout)
      })
    })
  }
