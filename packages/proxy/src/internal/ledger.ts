// The transform's session state, declared below everything that reads it (transform.ts
// re-exports it; the in-memory heads and the record hold it).

/**
 * The transform's own session state, returned with every request and handed back with the
 * next one (the proxy keeps it in the session record; the replay in memory).
 */
export interface SessionLedger {
  /**
   * Base-input tokens the proxy's changes are estimated to have saved this session so far
   * (bridged reads, 1h entries read after an idle gap), net of what its 1h lifetimes cost.
   * A 1h lifetime is only bought when this credit covers its worst case: the rent-or-buy
   * bet is paid from savings already made, so the session is never dearer than sent.
   */
  readonly credit: number
  /** Rough tokens of the previous request. */
  readonly lastTokens: number
  /** The previous request went out with a 1h lifetime the client did not ask for. */
  readonly lastBet: boolean
  /** Tool rounds since the person's prompt in the previous request. */
  readonly lastSteps?: number
  /** The session's rhythm: tool rounds of its latest finished tasks (at most 16). */
  readonly tasks?: ReadonlyArray<number>
  /** Answers seen (a person's prompt followed them), and how many the person answered 5-60 minutes later. */
  readonly answers?: number
  readonly pauses?: number
  /** Edit mode: tool results cleared so far, `[tool-use id, placeholder sent]`, oldest first. */
  readonly cleared?: ReadonlyArray<readonly [string, string]>
  /**
   * Edit mode: cache entries the session's forwarded requests are known to have left in its
   * messages (see `CacheEntry` in internal/edit.ts), lowest block first.
   */
  readonly entries?: ReadonlyArray<CacheEntry>
}

/**
 * A cache entry a forwarded request wrote (or read, which restarts its lifetime) at a
 * marker in the messages: `[message block, seconds since then, lifetime in seconds,
 * fingerprint of the block]`. The block counts message content blocks as Anthropic's
 * lookback does (a string content is one).
 */
export type CacheEntry = readonly [block: number, age: number, lifetime: number, fingerprint: string]
