// A tiny `it.effect` for vitest 4 (`@effect/vitest` 4 needs Node 22).
import { Effect, Exit, Cause } from "effect"
import { it as vitestIt } from "vitest"

type EffectTest = () => Effect.Effect<unknown, unknown, never>

const run = async (body: EffectTest): Promise<void> => {
  const exit = await Effect.runPromiseExit(body())
  if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
}

export const it = Object.assign(vitestIt, {
  effect: (name: string, body: EffectTest, timeout?: number) => vitestIt(name, () => run(body), timeout)
})
