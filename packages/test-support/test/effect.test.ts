// The shared Effect test helpers: a failing Effect fails its test with the error itself,
// and `layer(...)` builds its layer once for all the tests of its block.
import { Context, Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { it, layer, runEffectTest } from "../src/index.ts"

class Boom extends Schema.TaggedError<Boom>()("Boom", { reason: Schema.String }) {}

describe("it.effect", () => {
  it.effect("runs an Effect as a test", () => Effect.sync(() => expect(1 + 1).toBe(2)))

  it("rejects with the tagged error an Effect fails with, and with a defect", async () => {
    await expect(runEffectTest(() => Effect.fail(new Boom({ reason: "no" })))).rejects.toMatchObject({ _tag: "Boom", reason: "no" })
    await expect(runEffectTest(() => Effect.die(new Error("bug")))).rejects.toThrow("bug")
    await expect(runEffectTest(() => Effect.void)).resolves.toBeUndefined()
  })
})

class Counter extends Context.Service<Counter, { readonly next: Effect.Effect<number> }>()("test-support/Counter") {}
let builds = 0
const counter = Layer.effect(
  Counter,
  Effect.sync(() => {
    builds++
    let n = 0
    return { next: Effect.sync(() => ++n) }
  })
)

layer(counter)("layer(...)", (it) => {
  it.effect("provides the layer to each test", () => Effect.flatMap(Counter, (c) => c.next).pipe(Effect.map((n) => expect(n).toBe(1))))
  it.effect("shares one build of it across the block", () =>
    Effect.gen(function* () {
      expect(yield* (yield* Counter).next).toBe(2)
      expect(builds).toBe(1)
    }))
})
