/**
 * The session record: what a session keeps between turns besides its history, tracker and
 * journal: usage totals, the last request (its usage, tier changes, what sent it), the
 * turn count, the selected files and the symbol map's path aliases. The turn API writes
 * it in every commit; the HUD and the CLI read it. One Schema for the Promise API, the
 * Effect API and the CLI, stored as the `record` of a `StateStore` snapshot.
 */
import { Schema } from "effect"
import { ContextEditReport, TokenCategories, type TierReport } from "../breakdown/report.ts"
import { CacheTtl, type NeutralRequest } from "../domain/Block.ts"
import { messageParts, partText, type Message } from "../domain/Message.ts"
import { TierChange } from "../domain/Item.ts"
import { Tier } from "../domain/Tier.ts"
import { sumUsage, Usage, ZERO_USAGE } from "../domain/Usage.ts"
import { sha256 } from "../tokens/TokenCounter.ts"

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
 *   provider: "anthropic", model: "claude-sonnet-4-6", at: 1767225600000, promptTokens: 18250,
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

/**
 * One block of a recorded request: its tier, tokens, how many items it renders, a short
 * hash of its messages (equal hashes: byte-identical block), whether it changed since the
 * previous request's block of the same tier, and the lifetime of the breakpoint that ends
 * it (absent: no breakpoint). `text` is the block as rendered, kept for the session's last
 * request only and cut at `RECORDED_TEXT_CHARS` characters.
 */
export const RecordedBlock = Schema.Struct({
  tier: Tier,
  tokens: Schema.Number,
  items: Count,
  hash: Schema.String,
  changed: Schema.Boolean,
  breakpoint: Schema.optionalKey(CacheTtl),
  text: Schema.optionalKey(Schema.String)
})
export type RecordedBlock = typeof RecordedBlock.Type

/** What sent a request. */
export const RequestSource = Schema.Literals(["cli", "api", "proxy"])
export type RequestSource = typeof RequestSource.Type

/**
 * One committed request, for the dashboard: when, which model, its usage, its tokens by
 * kind of content, its blocks in prefix order, what context editing cleared, and why it
 * missed the cache when it did.
 */
export const RecordedRequest = Schema.Struct({
  at: Schema.Number,
  provider: Schema.String,
  model: Schema.String,
  promptTokens: Schema.Number,
  /** Absent when the request was not sent. */
  usage: Schema.optionalKey(Usage),
  usageSource: UsageSource,
  content: TokenCategories,
  blocks: Schema.Array(RecordedBlock),
  cleared: Schema.optionalKey(ContextEditReport),
  miss: Schema.optionalKey(Schema.String),
  /** What sent it: the CLI, an application through the API, or the proxy (absent in older summaries). */
  source: Schema.optionalKey(RequestSource),
  /** The proxy: the usage the request as the agent sent it would have had (the provider's cache simulator, fed the original bodies). */
  asSent: Schema.optionalKey(Usage)
})
export type RecordedRequest = typeof RecordedRequest.Type

/**
 * How many requests records written before per-turn request summaries kept (the latest);
 * such records still decode, and their `requests` stay readable.
 */
export const RECORDED_REQUESTS = 1000
/** How many characters of each block's text the last request keeps. */
export const RECORDED_TEXT_CHARS = 16_000

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
  aliases: Schema.NullOr(Schema.Array(RecordedAlias)),
  /**
   * Records written before request summaries moved to the turns (`StateStore.requests`)
   * kept the latest `RECORDED_REQUESTS` requests here, oldest first; kept as they are, never
   * appended to any more.
   */
  requests: Schema.optionalKey(Schema.Array(RecordedRequest)),
  /** The last request's blocks, with their texts (cut at `RECORDED_TEXT_CHARS`): its detail, and what the next request's blocks are compared with. */
  lastBlocks: Schema.optionalKey(Schema.Array(RecordedBlock))
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
  /** The request's shape, for its request summary: its content split, blocks and context editing. */
  readonly shape?: RequestShape | undefined
  /** What sent the request; default `api`. */
  readonly source?: RequestSource | undefined
}

/** A block as a turn hands it to the record: `text` is cut and kept for the last request only. */
export interface RequestShapeBlock {
  readonly tier: Tier
  readonly tokens: number
  readonly items: number
  readonly hash: string
  readonly breakpoint: CacheTtl | undefined
  readonly text: string
}

/** What a turn knows of its request's shape. */
export interface RequestShape {
  readonly content: TokenCategories
  readonly blocks: ReadonlyArray<RequestShapeBlock>
  readonly cleared: ContextEditReport | undefined
}

/** A block's messages as text for people: a header line per message, then its parts. */
const blockText = (messages: ReadonlyArray<Message>): string =>
  messages.map((m) => {
    const parts = messageParts(m).map((p) => {
      switch (p.type) {
        case "text":
          return p.text
        case "image":
          return "[image]"
        case "reasoning":
          return `[reasoning]\n${p.text}`
        case "tool-call":
          return `[tool call ${p.toolName} ${p.toolCallId}]\n${partText(p)}`
        case "tool-result":
          return `[tool result ${p.toolName} ${p.toolCallId}]\n${partText(p)}`
      }
    })
    return `── ${m.role} ──\n${parts.join("\n\n")}`
  }).join("\n\n")

/**
 * A request's shape as the record keeps it: its blocks (hashed, with the lifetime of the
 * breakpoint that ends each), its content split and what context editing cleared. Pure.
 */
export const requestShape = (request: NeutralRequest, report: TierReport): RequestShape => {
  const lifetimes = new Map(request.breakpoints.map((b) => [b.tier, b.ttl ?? "5m"] as const))
  return {
    content: report.categories,
    blocks: request.blocks.map((b) => ({
      tier: b.tier,
      tokens: b.tokens,
      items: b.items.length,
      hash: sha256(JSON.stringify(b.messages)).slice(0, 16),
      breakpoint: b.tier === "active" ? undefined : lifetimes.get(b.tier),
      text: blockText(b.messages)
    })),
    cleared: report.contextEditing
  }
}

const cut = (text: string): string =>
  text.length <= RECORDED_TEXT_CHARS ? text : `${text.slice(0, RECORDED_TEXT_CHARS)}\n… ${text.length - RECORDED_TEXT_CHARS} more characters not kept`

/** The blocks a record compares the next request with: its `lastBlocks`, or the last of an older record's requests. */
const previousBlocks = (record: SessionRecord): ReadonlyArray<RecordedBlock> => record.lastBlocks ?? record.requests?.at(-1)?.blocks ?? []

const recordedBlocks = (record: SessionRecord, shape: RequestShape): ReadonlyArray<RecordedBlock> => {
  const before = new Map(previousBlocks(record).map((b) => [b.tier, b.hash]))
  return shape.blocks.map((b) => ({
    tier: b.tier,
    tokens: b.tokens,
    items: b.items,
    hash: b.hash,
    changed: before.get(b.tier) !== b.hash,
    ...(b.breakpoint === undefined ? {} : { breakpoint: b.breakpoint }),
    text: cut(b.text)
  }))
}

/**
 * A turn's request summary, for `TurnCommit.request` (the store keeps it with the turn):
 * its usage, content split, blocks (without texts; `changed` against `record`, the record
 * before the turn), context editing and miss. Undefined when the turn knows no shape. Pure.
 *
 * @example
 * ```ts
 * import { EMPTY_RECORD, recordedRequest } from "@strata/core"
 * recordedRequest(EMPTY_RECORD, {
 *   provider: "openai", model: "gpt-4o", at: 0, promptTokens: 10, usage: undefined, usageSource: "provider",
 *   changes: [], emptyTiers: 0, selected: [], aliases: undefined
 * }) // undefined: no shape
 * ```
 */
export const recordedRequest = (record: SessionRecord, turn: RecordedTurn): RecordedRequest | undefined => {
  const shape = turn.shape
  if (shape === undefined) return undefined
  return {
    at: turn.at,
    provider: turn.provider,
    model: turn.model,
    promptTokens: turn.promptTokens,
    ...(turn.usage === undefined ? {} : { usage: turn.usage }),
    usageSource: turn.usage === undefined ? "none" : turn.usageSource,
    content: shape.content,
    blocks: recordedBlocks(record, shape).map(({ text: _text, ...b }) => b),
    ...(shape.cleared === undefined ? {} : { cleared: shape.cleared }),
    ...(turn.lastMiss === undefined ? {} : { miss: turn.lastMiss }),
    source: turn.source ?? "api"
  }
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
  aliases: record.aliases ?? (turn.aliases === undefined ? null : turn.aliases.map((a) => ({ token: a.token, prefix: a.prefix }))),
  ...(record.requests === undefined ? {} : { requests: record.requests }),
  ...(turn.shape === undefined
    ? record.lastBlocks === undefined ? {} : { lastBlocks: record.lastBlocks }
    : { lastBlocks: recordedBlocks(record, turn.shape) })
})
