/**
 * The session record the proxy stores (core's `StateStore`, `record` field of the session
 * `{ repository: "strata-proxy", name: <session id> }`) and serves at `GET /strata/sessions`.
 * A dashboard reads this shape; it is decoded with `SessionRecord` at every boundary.
 */
import { Schema } from "effect"

/** Usage of one reply as the provider reported it, split the way it bills. */
export const ExchangeUsage = Schema.Struct({
  /** Uncached input tokens. */
  input: Schema.Number,
  cacheRead: Schema.Number,
  /** Cache writes at the 5-minute lifetime (OpenAI: every write). */
  write5m: Schema.Number,
  write1h: Schema.Number,
  output: Schema.Number
})
export type ExchangeUsage = typeof ExchangeUsage.Type

/** One request of a session, after its reply ended. */
export const ExchangeRecord = Schema.Struct({
  /** Unix seconds when the request arrived. */
  at: Schema.Number,
  /** Request number in the session, from 1. */
  n: Schema.Number,
  path: Schema.String,
  model: Schema.String,
  /** HTTP status the provider answered. */
  status: Schema.Number,
  stream: Schema.Boolean,
  /** Undefined when the reply carried no usage (an error, a cut stream). */
  usage: Schema.optionalKey(ExchangeUsage),
  /** USD from the dated price table; undefined when the model has no price. */
  costUsd: Schema.optionalKey(Schema.Number),
  /** What the proxy changed (empty: forwarded as sent). */
  changed: Schema.Array(Schema.String),
  /** The marker lifetime chosen (Anthropic). */
  ttl: Schema.optionalKey(Schema.String),
  /** Why the cache missed, when it read less than the previous request's prompt. */
  miss: Schema.optionalKey(Schema.String),
  /** The provider's stop reason (`tool_use`, `end_turn`, ...), when it said. */
  stop: Schema.optionalKey(Schema.String),
  /** Planning failed and the original bytes were forwarded: why. */
  failOpen: Schema.optionalKey(Schema.String)
})
export type ExchangeRecord = typeof ExchangeRecord.Type

/** Totals over a session's finished exchanges. */
export const SessionTotals = Schema.Struct({
  requests: Schema.Number,
  input: Schema.Number,
  cacheRead: Schema.Number,
  write5m: Schema.Number,
  write1h: Schema.Number,
  output: Schema.Number,
  costUsd: Schema.Number
})
export type SessionTotals = typeof SessionTotals.Type

/** The transform's own state for the session's next request (`SessionLedger` of transform.ts). */
export const SessionLedgerRecord = Schema.Struct({
  credit: Schema.Number,
  lastTokens: Schema.Number,
  lastBet: Schema.Boolean,
  lastSteps: Schema.optionalKey(Schema.Number),
  tasks: Schema.optionalKey(Schema.Array(Schema.Number)),
  answers: Schema.optionalKey(Schema.Number),
  pauses: Schema.optionalKey(Schema.Number),
  /** Edit mode: tool results cleared so far (tool-use id -> the placeholder sent), oldest first. */
  cleared: Schema.optionalKey(Schema.Array(Schema.Tuple([Schema.String, Schema.String]))),
  /** Edit mode: cache entries known in the messages (block, seconds since written or read, lifetime, fingerprint). */
  entries: Schema.optionalKey(Schema.Array(Schema.Tuple([Schema.Number, Schema.Number, Schema.Number, Schema.String])))
})
export type SessionLedgerRecord = typeof SessionLedgerRecord.Type

/** A proxied session without its exchanges (the proxy encodes only a commit's new exchange). */
export const SessionHeader = Schema.Struct({
  kind: Schema.Literal("strata-proxy-session"),
  id: Schema.String,
  protocol: Schema.Literals(["anthropic", "openai-responses", "openai-chat"]),
  model: Schema.String,
  /** The session this one forked from (same start, another continuation), if any. */
  parent: Schema.optionalKey(Schema.String),
  /** Unix seconds of the first and the latest request. */
  startedAt: Schema.Number,
  lastAt: Schema.Number,
  /** Hashes of the latest request's conversation, one per message (16 hex digits each). */
  chain: Schema.Array(Schema.String),
  /** Message content blocks of the latest request (Anthropic's lookback counts them). */
  lastBlocks: Schema.Number,
  /** Prompt tokens the latest reply reported (read + write + uncached). */
  lastPrompt: Schema.Number,
  /** Seconds between consecutive requests (the latest 64). */
  gaps: Schema.Array(Schema.Number),
  totals: SessionTotals,
  /** The transform's state for the next request (absent in records written before it existed). */
  ledger: Schema.optionalKey(SessionLedgerRecord)
})

/** A proxied session. */
export const SessionRecord = Schema.Struct({
  ...SessionHeader.fields,
  /** The latest 200 exchanges, oldest first. */
  exchanges: Schema.Array(ExchangeRecord)
})
export type SessionRecord = typeof SessionRecord.Type

export const MAX_EXCHANGES = 200

export const emptyTotals: SessionTotals = { requests: 0, input: 0, cacheRead: 0, write5m: 0, write1h: 0, output: 0, costUsd: 0 }
