// `mapRanking: "focus"`: a map over its budget keeps the blocks the index ranks around the
// files in context (`SymbolMapSnapshot.rankFor`), in the tiered stage and in flat
// assembly; the default keeps the most referenced ones; an index without `rankFor` falls
// back to the default.
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { assemble, requestLimits, SymbolIndex, type AssemblyInput, type MapFocus } from "../src/effect.ts"
import { stubMap, stubTrackerLayer, testLayer, type StubRepo } from "./pipeline-stubs.ts"
import { it } from "@strata/test-support"

const path = (i: number) => `src/m${String(i).padStart(3, "0")}.ts`
// 40 blocks of ~200 characters; m000-m009 are the most referenced, m030-m039 the least.
const REPO: StubRepo = {
  files: Array.from({ length: 40 }, (_, i) => path(i)),
  blocks: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [path(i), `${path(i)}:\n${"x".repeat(190)}\n`])),
  refCounts: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [path(i), 40 - i])),
  legend: "# legend"
}
// An index whose focus ranking puts the least referenced files first.
const asked: Array<MapFocus> = []
const focusIndex = (withRankFor: boolean) =>
  Layer.succeed(SymbolIndex, {
    snapshot: Effect.sync(() => ({
      ...stubMap(REPO),
      ...(withRankFor ? { rankFor: (focus: MapFocus) => (asked.push(focus), [...REPO.files].reverse()) } : {})
    }))
  })

const input: AssemblyInput = { model: "gpt-4o", prompt: "Fix it.", systemPrompt: "You are careful.", files: [{ path: "src/m035.ts", content: "export const x = 1\n" }] }
const mapText = (messages: ReadonlyArray<unknown>) => JSON.stringify(messages)

describe("mapRanking", () => {
  for (const tracked of [true, false]) {
    const tracker = tracked ? [stubTrackerLayer({ initialized: true })] : []
    it.effect(`"focus" keeps the blocks ranked around the files in context (${tracked ? "tiered" : "flat"})`, () =>
      Effect.gen(function* () {
        asked.length = 0
        const run = (settings: Parameters<typeof requestLimits>[0], withRankFor = true) =>
          assemble(input).pipe(Effect.provide(Layer.mergeAll(testLayer(...tracker, focusIndex(withRankFor)), requestLimits(settings))))
        const focus = mapText((yield* run({ mapTokens: 1_500, mapRanking: "focus" })).request.messages)
        expect(asked.at(-1)).toEqual({ files: ["src/m035.ts"] })
        expect(focus).toContain("src/m039.ts:")
        expect(focus).not.toContain("src/m000.ts:")
        const byReferences = mapText((yield* run({ mapTokens: 1_500 })).request.messages)
        expect(byReferences).toContain("src/m000.ts:")
        expect(byReferences).not.toContain("src/m039.ts:")
        // Without rankFor the default ranking stands.
        expect(mapText((yield* run({ mapTokens: 1_500, mapRanking: "focus" }, false)).request.messages)).toBe(byReferences)
      }))
  }
})
