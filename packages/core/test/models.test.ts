import fc from "fast-check"
import { describe, expect } from "vitest"
import { DEFAULT_MODEL_LIMITS, encodingForModel, modelFacts, modelInfo, normalizeModelId } from "../src/index.ts"
import { it } from "./support.ts"

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
