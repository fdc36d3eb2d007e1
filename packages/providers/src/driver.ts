/**
 * The contract between the generic LLM client and one provider's SDK: the driver, its
 * replies, the failures it classifies and the tool-call pieces it reads off a stream.
 * Kept free of SDK types so the public declarations never need the optional peer
 * dependencies.
 */
import type { UsageFormat } from "./usage.ts"

/** Providers with an LLM client. `openai` also covers OpenAI-compatible gateways. */
export type LlmProvider = "anthropic" | "openai" | "bedrock"

/** What the generic client needs from one provider's SDK. */
export interface Driver {
  readonly provider: LlmProvider
  readonly format: UsageFormat
  /** For error messages: where requests go. */
  readonly baseUrl: string
  /** Send a streaming request; resolves when the response headers arrived. */
  readonly open: (body: Record<string, unknown>, signal: AbortSignal, timeoutMs: number) => Promise<DriverReply>
  readonly classify: (error: unknown) => Failure
  readonly textOf: (event: unknown) => string | undefined
  readonly stopOf: (event: unknown) => string | undefined
  /** The pieces of tool calls this event carries (empty for most events). */
  readonly toolCallDeltasOf: (event: unknown) => ReadonlyArray<ToolCallDelta>
  /** An error reported inside the stream, if this event is one. */
  readonly errorOf: (event: unknown) => string | undefined
  /**
   * Whether this event is the provider saying the reply is complete (Anthropic
   * `message_stop`, OpenAI a `finish_reason`, Bedrock `messageStop`). A stream that ends
   * without one is incomplete, however much text it carried.
   */
  readonly finishedBy: (event: unknown) => boolean
  /** The name of that event, for messages ("message_stop"). */
  readonly finishEvent: string
  /**
   * A complete non-streaming reply (the JSON body of a 200 that was not an event
   * stream: some gateways ignore `stream: true`) as the stream events it stands for;
   * undefined when the body does not decode as one.
   */
  readonly eventsOfReply: (body: unknown) => ReadonlyArray<unknown> | undefined
}

/** What a request opened to: an event stream, or (a gateway ignoring `stream`) a whole body. */
export type DriverReply =
  | { readonly _tag: "Stream"; readonly events: AsyncIterable<unknown>; readonly contentType: string }
  | { readonly _tag: "Body"; readonly contentType: string; readonly text: string }

/** A failed attempt, classified from whatever the SDK threw. */
export interface Failure {
  readonly kind: "http" | "timeout" | "connection" | "credentials" | "aborted" | "other"
  readonly status?: number
  readonly detail: string
  /** Raw `retry-after-ms` / `retry-after` header values, when the response had them. */
  readonly retryAfterMsHeader?: string
  readonly retryAfterHeader?: string
  readonly requestId?: string
}

/**
 * One piece of a streamed tool call. `index` keys the call within the reply (Anthropic
 * and Bedrock: the content block; OpenAI: the `tool_calls` index); `arguments` is a
 * fragment of its JSON input text; `input` is a whole input object (a non-streamed
 * reply, or the empty object a stream opens the call with).
 */
export interface ToolCallDelta {
  readonly index: number
  readonly id?: string | undefined
  readonly name?: string | undefined
  readonly arguments?: string | undefined
  readonly input?: unknown
}
