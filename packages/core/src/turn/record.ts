/**
 * The session record: what a session keeps between turns besides its history, tracker and
 * journal: usage totals, the last request (its usage, tier changes, what sent it), the
 * turn count, the selected files and the symbol map's path aliases. The turn API writes
 * it in every commit; the HUD and the CLI read it. One Schema for the Promise API, the
 * Effect API and the CLI, stored as the `record` of a `StateStore` snapshot.
 */
import { Schema } from "effect"
import { TierChange } from "../domain/Item.ts"
import { sumUsage, Usage, ZERO_USAGE } from "../domain/Usage.ts"

const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/** Where a request's usage came from: the provider's reply, a cache simulator, or nowhere (not sent). */
export const UsageSource = Schema.Literals(["provider", "simulated", "none"])
export type UsageSource = typeof UsageSource.Type

/**
 * The last committed request of a session, for the HUD.
 *
 * @example
 * ```ts
 * import type { LastRequest } from "@strata/core"
 * const last: LastRequest = {
 *   provider: "anthropic", model: "claude-sonnet-4-5", at: 1767225600000, promptTokens: 18250,
 *   usage: { input: 250, cacheRead: 18000, cacheWrite: 0, output: 120 }, usageSource: "provider",
 *   changes: [], emptyTiers: 1
 * }
 * ```
 */
export const LastRequest = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  /** When the turn was committed, in milliseconds since the epoch. */
  at: Schema.Number,
  /** Prompt tokens Strata counted for the request. */
  promptTokens: Schema.Number,
  usage: Usage,
  usageSource: UsageSource,
  /** The request's tier changes (promotions, demotions, initial placement). */
  changes: Schema.Array(TierChange),
  /** Cached tiers the request left empty. */
  emptyTiers: Schema.Number,
  /** Why the request read less from the cache than the one before left there, when known. */
  lastMiss: Schema.optionalKey(Schema.String)
})
export type LastRequest = typeof LastRequest.Type

/** A path alias of the symbol map's legend, as recorded. */
export const RecordedAlias = Schema.Struct({ token: Schema.String, prefix: Schema.String })
export type RecordedAlias = typeof RecordedAlias.Type

/**
 * A session's record. Its fields are the ones `.strata/session.json` had, so a session
 * imported from the files earlier versions kept decodes as is.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SessionRecord } from "@strata/core"
 * const record = Schema.decodeUnknownSync(SessionRecord)({
 *   selected: ["src/a.ts"], turns: 2, emptyTiersTotal: 1,
 *   totals: { input: 900, cacheRead: 36000, cacheWrite: 18000, output: 400 }, last: null, aliases: null
 * })
 * ```
 */
export const SessionRecord = Schema.Struct({
  /** Files in context at the last turn, repository-relative, sorted. */
  selected: Schema.Array(Schema.String),
  /** Turns committed (requests sent or recorded). */
  turns: Count,
  /** Cached tiers left empty, summed over the session's requests. */
  emptyTiersTotal: Schema.Number,
  /** Usage summed over the session. */
  totals: Usage,
  last: Schema.NullOr(LastRequest),
  /** The symbol map's path aliases, fixed at the session's first turn so the legend never changes. */
  aliases: Schema.NullOr(Schema.Array(RecordedAlias))
})
export type SessionRecord = typeof SessionRecord.Type

/** The record of a session nothing was committed to. */
export const EMPTY_RECORD: SessionRecord = {
  selected: [],
  turns: 0,
  emptyTiersTotal: 0,
  totals: ZERO_USAGE,
  last: null,
  aliases: null
}

const decodeRecordResult = Schema.decodeUnknownResult(SessionRecord)

/**
 * A stored record back from JSON: the empty record for `null` (a new session), and for a
 * value that does not decode the empty record with a warning (usage totals restart; the
 * history, tracker and journal are not affected). Pure.
 *
 * @example
 * ```ts
 * import { decodeSessionRecord } from "@strata/core"
 * decodeSessionRecord(null).record.turns // 0
 * decodeSessionRecord({ turns: "many" }).warning // "The session record is unusable (...); its totals start over."
 * ```
 */
export const decodeSessionRecord = (json: unknown): { readonly record: SessionRecord; readonly warning: string | undefined } => {
  if (json === null || json === undefined) return { record: EMPTY_RECORD, warning: undefined }
  const decoded = decodeRecordResult(json)
  return decoded._tag === "Success"
    ? { record: decoded.success, warning: undefined }
    : { record: EMPTY_RECORD, warning: `The session record is unusable (${decoded.failure.message}); its totals start over.` }
}

/** What one committed turn adds to the record. */
export interface RecordedTurn {
  readonly provider: string
  readonly model: string
  readonly at: number
  readonly promptTokens: number
  /** The request's usage; undefined when it was not sent (nothing is added to the totals). */
  readonly usage: Usage | undefined
  readonly usageSource: UsageSource
  readonly changes: ReadonlyArray<TierChange>
  readonly emptyTiers: number
  readonly selected: ReadonlyArray<string>
  /** The symbol map's aliases this turn rendered with; kept only when the record has none yet. */
  readonly aliases: ReadonlyArray<RecordedAlias> | undefined
  readonly lastMiss?: string | undefined
}

/**
 * The record after one more turn. Pure.
 *
 * @example
 * ```ts
 * import { EMPTY_RECORD, recordTurn } from "@strata/core"
 * const next = recordTurn(EMPTY_RECORD, {
 *   provider: "openai", model: "gpt-4o", at: Date.now(), promptTokens: 1200,
 *   usage: { input: 1200, cacheRead: 0, cacheWrite: 0, output: 80 }, usageSource: "provider",
 *   changes: [], emptyTiers: 0, selected: [], aliases: undefined
 * })
 * next.turns // 1
 * ```
 */
export const recordTurn = (record: SessionRecord, turn: RecordedTurn): SessionRecord => ({
  selected: [...turn.selected],
  turns: record.turns + 1,
  emptyTiersTotal: record.emptyTiersTotal + turn.emptyTiers,
  totals: turn.usage === undefined ? record.totals : sumUsage(record.totals, turn.usage),
  last: {
    provider: turn.provider,
    model: turn.model,
    at: turn.at,
    promptTokens: turn.promptTokens,
    usage: turn.usage ?? ZERO_USAGE,
    usageSource: turn.usage === undefined ? "none" : turn.usageSource,
    changes: [...turn.changes],
    emptyTiers: turn.emptyTiers,
    ...(turn.lastMiss === undefined ? {} : { lastMiss: turn.lastMiss })
  },
  aliases: record.aliases ?? (turn.aliases === undefined ? null : turn.aliases.map((a) => ({ token: a.token, prefix: a.prefix })))
})
