/**
 * Minimal native request bodies for calls that need no cache placement (compaction,
 * one-off questions): a system prompt, a few messages and a token limit.
 */
import type { LlmProvider } from "../driver.ts"

/** A plain chat request. */
export interface SimpleChat {
  readonly model: string
  readonly system?: string
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly maxTokens: number
}

// OpenAI's reasoning models reject `max_tokens`; gateways accept it everywhere.
const usesCompletionTokens = (model: string): boolean => /^(?:openai\/)?(?:o\d|gpt-5)/.test(model)

/**
 * The provider's native body for a plain chat request.
 *
 * @example
 * ```ts
 * import { simpleBody } from "@strata/providers"
 * simpleBody("anthropic", { model: "claude-haiku-4-5", system: "Be brief.", messages: [{ role: "user", content: "hi" }], maxTokens: 64 })
 * // { model: "claude-haiku-4-5", max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "hi" }] }
 * ```
 */
export const simpleBody = (provider: LlmProvider, chat: SimpleChat): Record<string, unknown> => {
  const hasSystem = chat.system !== undefined && chat.system.length > 0
  switch (provider) {
    case "anthropic":
      return {
        model: chat.model,
        max_tokens: chat.maxTokens,
        ...(hasSystem ? { system: chat.system } : {}),
        messages: chat.messages.map((m) => ({ role: m.role, content: m.content }))
      }
    case "openai":
      return {
        model: chat.model,
        [usesCompletionTokens(chat.model) ? "max_completion_tokens" : "max_tokens"]: chat.maxTokens,
        messages: [
          ...(hasSystem ? [{ role: "system", content: chat.system }] : []),
          ...chat.messages.map((m) => ({ role: m.role, content: m.content }))
        ]
      }
    case "bedrock":
      return {
        modelId: chat.model,
        ...(hasSystem ? { system: [{ text: chat.system }] } : {}),
        messages: chat.messages.map((m) => ({ role: m.role, content: [{ text: m.content }] })),
        inferenceConfig: { maxTokens: chat.maxTokens }
      }
  }
}
