// A turn's `request` is typed by the engine's provider plugin, so it goes into each
// official SDK's non-streaming create parameters with no cast, and spreads into the AI
// SDK's generateText / streamText. `tsc` over test/ checks the assignments; the runtime
// part only makes sure the engines are built the way a user builds them.
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages"
import type { ConverseCommandInput } from "@aws-sdk/client-bedrock-runtime"
import type { GenerateContentParameters } from "@google/genai"
import { createContextEngine, type EngineTurn, type SeedBody } from "@strata/core"
import {
  AiSdkPlacement,
  AnthropicPlacement,
  BedrockPlacement,
  GeminiPlacement,
  OpenAICompatiblePlacement,
  OpenAIPlacement,
  OpenAIResponsesPlacement,
  type AiSdkBody,
  type AnthropicBody
} from "@strata/providers"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import { generateText, streamText, type LanguageModel } from "ai"
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions"
import type { ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses"
import { describe, expect, expectTypeOf, it } from "vitest"

const base = { repoRoot: ".", tracker: TrackerLayer.memory(), symbols: symbolIndexLayer(".") }

// The engines as a user writes them; each turn's request type comes from the plugin value.
const anthropic = createContextEngine({ ...base, model: "claude-sonnet-4-5", provider: AnthropicPlacement({ ttl: "1h" }) })
const chat = createContextEngine({ ...base, model: "gpt-4.1", provider: OpenAIPlacement({ promptCacheKey: "user-42" }) })
const responses = createContextEngine({ ...base, model: "gpt-5.6", provider: OpenAIResponsesPlacement })
const responsesViaChat = createContextEngine({ ...base, model: "gpt-5.6", provider: OpenAIPlacement.responses })
const compat = createContextEngine({ ...base, model: "anthropic/claude-sonnet-4.5", provider: OpenAICompatiblePlacement })
const bedrock = createContextEngine({ ...base, model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", provider: BedrockPlacement })
const gemini = createContextEngine({ ...base, model: "gemini-2.5-flash", provider: GeminiPlacement({ model: "gemini-2.5-flash" }) })
const aiSdk = createContextEngine({ ...base, model: "claude-sonnet-4-5", provider: AiSdkPlacement({ target: "anthropic" }) })
const seeds = createContextEngine({ ...base, model: "gpt-4o" })

type RequestOf<E> = E extends { readonly assemble: (...args: never) => Promise<EngineTurn<infer Body>> } ? Body : never

describe("a turn's request is the SDK's parameter type", () => {
  it("is assignable, with no cast, to each official SDK's non-streaming create parameters", () => {
    expectTypeOf<RequestOf<typeof anthropic>>().toEqualTypeOf<AnthropicBody>()
    expectTypeOf<RequestOf<typeof anthropic>>().toExtend<MessageCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof chat>>().toExtend<ChatCompletionCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof compat>>().toExtend<ChatCompletionCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof responses>>().toExtend<ResponseCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof responsesViaChat>>().toExtend<ResponseCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof bedrock>>().toExtend<ConverseCommandInput>()
    expectTypeOf<RequestOf<typeof gemini>>().toExtend<GenerateContentParameters>()
    expectTypeOf<RequestOf<typeof seeds>>().toEqualTypeOf<SeedBody>()
    // And not to another provider's: the type carries the plugin, not `unknown`.
    expectTypeOf<RequestOf<typeof anthropic>>().not.toExtend<ChatCompletionCreateParamsNonStreaming>()
    expectTypeOf<RequestOf<typeof chat>>().not.toExtend<ConverseCommandInput>()
  })

  it("assigns as a user writes it", () => {
    const toAnthropic = (turn: EngineTurn<RequestOf<typeof anthropic>>): MessageCreateParamsNonStreaming => turn.request
    const toChat = (turn: EngineTurn<RequestOf<typeof chat>>): ChatCompletionCreateParamsNonStreaming => turn.request
    const toResponses = (turn: EngineTurn<RequestOf<typeof responses>>): ResponseCreateParamsNonStreaming => turn.request
    const toConverse = (turn: EngineTurn<RequestOf<typeof bedrock>>): ConverseCommandInput => turn.request
    const toGemini = (turn: EngineTurn<RequestOf<typeof gemini>>): GenerateContentParameters => turn.request
    expect([toAnthropic, toChat, toResponses, toConverse, toGemini].every((f) => typeof f === "function")).toBe(true)
  })

  it("spreads into the AI SDK's generateText and streamText", () => {
    expectTypeOf<RequestOf<typeof aiSdk>>().toEqualTypeOf<AiSdkBody>()
    // Functions that only typecheck: what a user writes after `await engine.assemble(...)`.
    const send = (model: LanguageModel, turn: EngineTurn<AiSdkBody>) => generateText({ model, ...turn.request })
    const stream = (model: LanguageModel, turn: EngineTurn<AiSdkBody>) => streamText({ model, ...turn.request })
    expect(typeof send).toBe("function")
    expect(typeof stream).toBe("function")
  })

  it("the plugin values keep their body type when configured", () => {
    expectTypeOf(AnthropicPlacement({ ttl: "1h" })({ maxTokens: 100 }).place).returns.toHaveProperty("body").toEqualTypeOf<AnthropicBody>()
    expect(AnthropicPlacement({ ttl: "1h" }).options).toEqual({ ttl: "1h" })
  })
})

// Cleanup: the engines own runtimes (nothing was built: no method was called).
await Promise.all([anthropic, chat, responses, responsesViaChat, compat, bedrock, gemini, aiSdk, seeds].map((e) => e.dispose()))
