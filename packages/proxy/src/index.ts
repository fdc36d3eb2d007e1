/**
 * `@strata/proxy`: a local proxy in front of the Anthropic and OpenAI APIs for agents
 * nobody can rewrite (Claude Code, Codex CLI). It changes only the provider's cache
 * controls (`transformRequest`), finds sessions from content, reads every reply's usage
 * as it streams past and keeps a session record in core's `StateStore` (see README.md).
 */
export { chooseTtl, rhythmTtl, transformRequest, withoutCacheControls, anthropicBlockCount, type Protocol, type ProxyMode, type TransformInput, type TransformResult, type TransformSession, type SessionLedger, emptyLedger } from "./transform.ts"
export { DEFAULT_UPSTREAMS, PROXY_REPOSITORY, startProxy, type ProxyLogLine, type ProxyOptions, type ProxyServer } from "./server.ts"
export { formatExchange, runProxy, type RunProxyOptions } from "./run.ts"
export { PROXY_HEAP_FLAGS, tuneHeapForProxy } from "./heap.ts"
export { ExchangeRecord, ExchangeUsage, SessionLedgerRecord, SessionRecord as ProxySessionRecord, SessionTotals } from "./record.ts"
export { chainOf, sessionIdOf } from "./internal/sessions.ts"
export { priceTranscript, type TranscriptLine, type TranscriptPrice } from "./transcript.ts"
