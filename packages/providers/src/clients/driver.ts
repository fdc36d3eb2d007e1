/**
 * The contract between the generic LLM client and one provider's SDK. Kept free of SDK
 * types so the public declarations never need the optional peer dependencies.
 */
import type { UsageFormat } from "../usage.ts"
import type { Failure } from "./retry.ts"

/** Providers with an LLM client. `openai` also covers OpenAI-compatible gateways. */
export type LlmProvider = "anthropic" | "openai" | "bedrock"

/** What the generic client needs from one provider's SDK. */
export interface Driver {
  readonly provider: LlmProvider
  readonly format: UsageFormat
  /** For error messages: where requests go. */
  readonly baseUrl: string
  /** Send a streaming request; resolves when the response headers arrived. */
  readonly open: (body: Record<string, unknown>, signal: AbortSignal, timeoutMs: number) => Promise<AsyncIterable<unknown>>
  readonly classify: (error: unknown) => Failure
  readonly textOf: (event: unknown) => string | undefined
  readonly stopOf: (event: unknown) => string | undefined
  /** An error reported inside the stream, if this event is one. */
  readonly errorOf: (event: unknown) => string | undefined
}
