/**
 * LLM clients for chat and compaction: the `LlmClient` service with a layer per
 * provider, its typed errors, retry policy, plain request bodies and streamed tool calls.
 */
export * from "./LlmClient.ts"
export * from "./errors.ts"
export * from "./bodies.ts"
export * from "./compaction.ts"
export { collectToolCalls, type ToolCallDelta } from "./toolCalls.ts"
export { DEFAULT_RETRY, backoffMs, isRetryable, nextDelayMs, retryAfterMs, type Failure, type RetryOptions } from "./retry.ts"
