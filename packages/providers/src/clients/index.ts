/**
 * LLM clients for chat and compaction: the `LlmClient` service with a layer per
 * provider, its typed errors, retry policy and plain request bodies.
 */
export * from "./LlmClient.ts"
export * from "./errors.ts"
export * from "./bodies.ts"
export * from "./compaction.ts"
export { DEFAULT_RETRY, backoffMs, isRetryable, nextDelayMs, retryAfterMs, type Failure, type RetryOptions } from "./retry.ts"
