import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { createContextEngine, encodingForModel, makeEstimatingCounter, modelFacts, modelInfo, normalizeModelId, unknownModelWarning } from "../src/index.ts"
import { DEFAULT_MODEL_LIMITS } from "../src/models/modelTable.ts"
import { assemble, Pipeline, Tokenizer } from "../src/effect.ts"
import { it } from "@strata/test-support"

describe("normalizeModelId", () => {
  it.each([
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
    ["openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4.5"],
    ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
    ["models/gemini-2.5-pro", "gemini-2.5-pro"],
    ["openai/gpt-4o-2024-08-06", "gpt-4o"],
    ["  GPT-4o-Latest ", "gpt-4o"],
    ["openai.gpt-oss-120b-1:0", "gpt-oss-120b-1"]
  ] as const)("%s -> %s", (model, id) => {
    expect(normalizeModelId(model)).toBe(id)
  })

  it("is idempotent", () => {
    fc.assert(fc.property(fc.string(), (model) => normalizeModelId(normalizeModelId(model)) === normalizeModelId(model)))
  })
})

describe("modelFacts", () => {
  it("reads a routed, dated id as its family", () => {
    expect(modelFacts("openrouter/openai/gpt-4o-2024-08-06")).toEqual({
      model: "openrouter/openai/gpt-4o-2024-08-06",
      id: "gpt-4o",
      family: "GPT-4o",
      encoding: "o200k_base",
      exact: true,
      maxInputTokens: 128_000,
      maxOutputTokens: 16_384,
      known: true
    })
    expect(modelFacts("us.anthropic.claude-opus-4-5-20251101-v1:0")).toMatchObject({ family: "Claude Opus 4.5+", exact: false, maxOutputTokens: 128_000 })
  })

  it("gives an unknown id the defaults, flagged", () => {
    expect(modelFacts("llama-3.3-70b")).toMatchObject({ family: "unknown", known: false, encoding: "cl100k_base", exact: false, ...DEFAULT_MODEL_LIMITS })
    // The encoding is known, the limits are not.
    expect(modelFacts("gpt-35-turbo")).toMatchObject({ encoding: "cl100k_base", exact: true, known: false, ...DEFAULT_MODEL_LIMITS })
  })

  it("is what encodingForModel and modelInfo answer", () => {
    fc.assert(fc.property(
      fc.oneof(fc.constantFrom("gpt-4o", "gpt-4.5-preview", "o3-mini", "claude-haiku-4-5", "gemini-2.5-flash", "gpt-35-turbo", "mystery"), fc.string()),
      (model) => {
        const facts = modelFacts(model)
        expect(encodingForModel(model)).toEqual({ encoding: facts.encoding, exact: facts.exact })
        expect(modelInfo(model)).toEqual({ model, maxInputTokens: facts.maxInputTokens, maxOutputTokens: facts.maxOutputTokens })
      }
    ))
  })
})

describe("unknownModelWarning", () => {
  it("names the model and the defaults assumed; none for a known model", () => {
    expect(unknownModelWarning("gpt-4o")).toBeUndefined()
    expect(unknownModelWarning("claude-sonnet-4-5")).toBeUndefined()
    expect(unknownModelWarning("llama-3.3-70b")).toBe(
      'Model "llama-3.3-70b" is not in the model table; assumed an input limit of 128000 tokens, 4096 output tokens and approximate token counts (cl100k_base).'
    )
    // Exact counts are not an assumption, so they are not mentioned.
    expect(unknownModelWarning("gpt-35-turbo")).toBe('Model "gpt-35-turbo" is not in the model table; assumed an input limit of 128000 tokens, 4096 output tokens.')
  })

  it.effect("every pipeline result carries it (the Effect API is stateless)", () =>
    Effect.gen(function* () {
      const layer = Layer.mergeAll(Pipeline.layer, Tokenizer.layerEstimate)
      const run = (model: string) => assemble({ model, prompt: "Hi", systemPrompt: "S" }).pipe(Effect.provide(layer))
      const warning = unknownModelWarning("llama-3.3-70b")
      expect((yield* run("llama-3.3-70b")).warnings).toEqual([warning])
      expect((yield* run("llama-3.3-70b")).warnings).toEqual([warning])
      expect((yield* run("gpt-4o")).warnings).toEqual([])
    }))
})

describe("an engine with an unknown model", () => {
  let root: string
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "strata-models-"))
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("warns once, on the first assembly, flat or tiered", async () => {
    const counter = makeEstimatingCounter("llama-3.3-70b")
    await using engine = createContextEngine({ model: "llama-3.3-70b", repoRoot: root, tokenCounter: counter })
    const warning = unknownModelWarning("llama-3.3-70b")
    expect((await engine.assembleFlat({ prompt: "Hi" })).warnings).toEqual([warning])
    expect((await engine.assembleFlat({ prompt: "Again" })).warnings).toEqual([])
    expect((await engine.assemble({ prompt: "Tiered" })).warnings).toEqual([])
    expect((await engine.getTokenBudget()).maxInputTokens).toBe(DEFAULT_MODEL_LIMITS.maxInputTokens)

    // Each engine says it once.
    await using other = createContextEngine({ model: "llama-3.3-70b", repoRoot: root, tokenCounter: counter })
    expect((await other.assemble({ prompt: "Tiered" })).warnings).toEqual([warning])
    expect((await other.assembleFlat({ prompt: "Flat" })).warnings).toEqual([])
  })

  it("does not warn when the caller set the input limit, nor for a known model", async () => {
    await using limited = createContextEngine({ model: "llama-3.3-70b", repoRoot: root, tokenCounter: makeEstimatingCounter("llama-3.3-70b"), maxInputTokens: 32_000 })
    expect((await limited.assembleFlat({ prompt: "Hi" })).warnings).toEqual([])
    await using known = createContextEngine({ model: "gpt-4o", repoRoot: root, tokenCounter: makeEstimatingCounter("gpt-4o") })
    expect((await known.assembleFlat({ prompt: "Hi" })).warnings).toEqual([])
  })
})
