// The Effect service around the pure builder: same results, the Tokenizer service's
// counter, custom renderers by layer, and bad input as a typed failure.
import { Cause, Effect, Exit, Layer } from "effect"
import { describe, expect } from "vitest"
import {
  ChunkType,
  ContextBuilderService,
  createContextBuilder,
  InvalidInput,
  makeCustomCounter,
  Tokenizer,
  type MemoryStateInput
} from "../src/effect.ts"
import { it, layer } from "@strata/test-support"

const state: MemoryStateInput = {
  chunks: [
    { id: "u1", type: ChunkType.AGENT, role: "user", content: "hello" },
    { id: "a1", type: ChunkType.AGENT, role: "assistant", content: "hi" }
  ]
}

const withEstimate = ContextBuilderService.layer.pipe(Layer.provide(Tokenizer.layerEstimate))

// The service is stateless: one build of its layer serves every test of the block.
layer(withEstimate)("ContextBuilderService (estimated counts)", (it) => {
  it.effect("builds what the pure builder builds", () =>
    Effect.gen(function* () {
      const builder = yield* ContextBuilderService
      const result = yield* builder.build(state, { maxTokens: 1000 })
      expect(result).toEqual(createContextBuilder().build(state, { maxTokens: 1000 }))
      const history = yield* builder.toHistory(state)
      expect(history.chunkIds).toEqual([["u1"], ["a1"]])
    }))

  it.effect("a malformed state fails with InvalidInput naming the field", () =>
    Effect.gen(function* () {
      const builder = yield* ContextBuilderService
      const error = yield* Effect.flip(builder.build({ chunks: [{ id: "", type: "AGENT", content: "x" }] }))
      expect(error).toBeInstanceOf(InvalidInput)
      expect(error._tag).toBe("InvalidInput")
      expect(error.message).toContain('at ["chunks"][0]["id"]')
    }))
})

describe("ContextBuilderService", () => {

  it.effect("counts with the Tokenizer service", () => {
    const words = makeCustomCounter("words", (t) => t.split(" ").length, { exact: true })
    return Effect.gen(function* () {
      const result = yield* (yield* ContextBuilderService).build(state)
      expect(result.tokenCountExact).toBe(true)
      expect(result.tokenCount).toBe(words.countMessages(result.messages))
    }).pipe(Effect.provide(ContextBuilderService.layer.pipe(Layer.provide(Tokenizer.layerFrom(words)))))
  })

  it.effect("a renderer that throws is a defect, not a typed failure", () =>
    Effect.gen(function* () {
      const builder = yield* ContextBuilderService
      const exit = yield* Effect.exit(builder.build(state))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause) && !Cause.hasFails(exit.cause)).toBe(true)
      expect(Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : "").toContain("boom")
    }).pipe(
      Effect.provide(
        ContextBuilderService.layerWith([{ canRender: () => true, getRole: () => "user", render: () => { throw new Error("boom") } }])
          .pipe(Layer.provide(Tokenizer.layerEstimate))
      )
    ))

  it.effect("layerWith puts renderers first, first listed first; layerFrom wraps a builder", () =>
    Effect.gen(function* () {
      const first = { canRender: () => true, getRole: () => "user" as const, render: () => "<first/>" }
      const second = { canRender: () => true, getRole: () => "user" as const, render: () => "<second/>" }
      const viaLayer = yield* Effect.provide(
        Effect.flatMap(ContextBuilderService, (b) => b.build(state)),
        ContextBuilderService.layerWith([first, second]).pipe(Layer.provide(Tokenizer.layerEstimate))
      )
      expect(viaLayer.messages[0]?.content).toBe("<first/>\n\n<first/>")
      const builder = createContextBuilder()
      builder.registerRenderer(second)
      const viaFrom = yield* Effect.provide(
        Effect.flatMap(ContextBuilderService, (b) => b.build(state)),
        ContextBuilderService.layerFrom(builder)
      )
      expect(viaFrom.messages[0]?.content).toBe("<second/>\n\n<second/>")
    }))
})
