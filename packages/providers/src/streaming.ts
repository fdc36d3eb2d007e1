/**
 * Streaming with the engine: the reply streams to the caller as the SDK delivers it, and
 * the final message is committed to the session once the stream ends (never a partial
 * one: a stream that fails commits nothing). One helper per SDK shape: the Anthropic
 * SDK's `messages.stream` with `finalMessage`, and the AI SDK's `streamText`.
 */
import type { EngineTurn, TurnCommitted } from "@strata/core"

/** What the helpers need of a turn from `engine.assemble`. */
export type StreamedTurn = Pick<EngineTurn, "commit">

/** Options of the streaming helpers. */
export interface StreamOptions {
  /** Called with each text delta as it arrives. */
  readonly onText?: ((delta: string) => void) | undefined
  /** Passed to the commit (the stream itself takes the signal where you create it). */
  readonly signal?: AbortSignal | undefined
}

/** The part of the Anthropic SDK's `MessageStream` the helper uses. */
export interface AnthropicMessageStream<Message> {
  on(event: "text", listener: (delta: string) => void): unknown
  finalMessage(): Promise<Message>
}

/**
 * Stream an Anthropic reply and commit its final message: pass the stream of
 * `client.messages.stream(turn.request)`. Resolves with the SDK's `Message` and the commit.
 *
 * @example
 * ```ts no-run
 * import Anthropic from "@anthropic-ai/sdk"
 * import { createContextEngine } from "@strata/core"
 * import { AnthropicPlacement, streamAnthropicTurn } from "@strata/providers"
 *
 * const client = new Anthropic()
 * await using engine = createContextEngine({ model: "claude-sonnet-4-6", provider: AnthropicPlacement })
 * const turn = await engine.assemble({ prompt: "What does src/a.ts do?" })
 * const { message } = await streamAnthropicTurn(turn, client.messages.stream(turn.request), {
 *   onText: (delta) => process.stdout.write(delta)
 * })
 * ```
 */
export const streamAnthropicTurn = async <Message>(
  turn: StreamedTurn,
  stream: AnthropicMessageStream<Message>,
  options: StreamOptions = {}
): Promise<{ readonly message: Message; readonly committed: TurnCommitted }> => {
  const { onText } = options
  if (onText !== undefined) stream.on("text", onText)
  const message = await stream.finalMessage()
  const committed = await turn.commit({ reply: message }, { signal: options.signal })
  return { message, committed }
}

/** The part of the AI SDK's `streamText` result the helper uses. */
export interface AiSdkTextStream {
  readonly textStream: AsyncIterable<string>
  readonly response: PromiseLike<unknown>
  readonly totalUsage: PromiseLike<unknown>
  readonly providerMetadata: PromiseLike<unknown>
  readonly text: PromiseLike<string>
}

/**
 * Stream an AI SDK reply and commit it: pass the result of
 * `streamText({ model, ...turn.request })`. Every step's messages (tool calls the SDK ran
 * included) and the total usage are committed once the stream ends.
 *
 * @example
 * ```ts no-run
 * import { anthropic } from "@ai-sdk/anthropic"
 * import { streamText } from "ai"
 * import { createContextEngine } from "@strata/core"
 * import { AiSdkPlacement, streamAiSdkTurn } from "@strata/providers"
 *
 * await using engine = createContextEngine({ model: "claude-sonnet-4-6", provider: AiSdkPlacement })
 * const turn = await engine.assemble({ prompt: "What does src/a.ts do?" })
 * const { text } = await streamAiSdkTurn(turn, streamText({ model: anthropic("claude-sonnet-4-6"), ...turn.request }), {
 *   onText: (delta) => process.stdout.write(delta)
 * })
 * ```
 */
export const streamAiSdkTurn = async (
  turn: StreamedTurn,
  result: AiSdkTextStream,
  options: StreamOptions = {}
): Promise<{ readonly text: string; readonly committed: TurnCommitted }> => {
  for await (const delta of result.textStream) options.onText?.(delta)
  const [response, totalUsage, providerMetadata, text] = await Promise.all([result.response, result.totalUsage, result.providerMetadata, result.text])
  const committed = await turn.commit({ reply: { response, totalUsage, providerMetadata, text } }, { signal: options.signal })
  return { text, committed }
}
