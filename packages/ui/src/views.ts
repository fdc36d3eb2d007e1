/**
 * What the dashboard's JSON endpoints return, as Schemas, and the pure functions that
 * build each view from a session's stored state (its record and, for the ledger, its
 * journal memory and history). The page draws these values and computes nothing of its own,
 * so a number on the page is a number of the endpoint.
 */
import { createHash } from "node:crypto"
import {
  decodeSessionRecord,
  estimateTokens,
  messageParts,
  partText,
  RecordedRequest,
  type Message,
  type SessionRecord,
  type StateSnapshot,
  type StoredRequest,
  type Usage
} from "@strata/core/effect"
import { computeCost, lookupModel, PROVIDER_IDS, type ModelLimits, type ProviderId } from "@strata/providers"
import { Schema } from "effect"

const Nullable = Schema.NullOr(Schema.Number)

/** A request's input tokens by how they were billed (they add up to the prompt). */
export const TokenSplit = Schema.Struct({
  read: Schema.Number,
  write5m: Schema.Number,
  write1h: Schema.Number,
  uncached: Schema.Number,
  output: Schema.Number
})
export type TokenSplit = typeof TokenSplit.Type

/** A request's tokens by kind of content, as the assembly counted them. */
export const ContentSplit = Schema.Struct({
  system: Schema.Number,
  tools: Schema.Number,
  map: Schema.Number,
  files: Schema.Number,
  history: Schema.Number,
  prompt: Schema.Number,
  other: Schema.Number,
  /** Tokens of tool results context editing replaced by placeholders (not sent). */
  cleared: Schema.Number
})
export type ContentSplit = typeof ContentSplit.Type

/** One row of `GET /_strata/api/sessions`. */
export const SessionSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  repository: Schema.String,
  /** What sent the requests: `cli`, `api` or `proxy` (`unknown` for requests recorded before it was). */
  source: Schema.String,
  /** The provider and where usage came from (`anthropic · provider`, `openai · simulated`). */
  provider: Schema.String,
  version: Schema.Number,
  requests: Schema.Number,
  /** USD; null when no request of the session has a price in the table. */
  cost: Nullable,
  /** What the same prompts cost with no caching at all. */
  uncachedCost: Nullable,
  /** `uncachedCost - cost`. */
  saved: Nullable,
  /** Proxy sessions: what the requests as the agent sent them would have cost (simulated); null otherwise. */
  asSentCost: Nullable,
  /** Cache reads over prompt tokens, 0..1. */
  hitRate: Schema.Number,
  lastAt: Nullable
})
export type SessionSummary = typeof SessionSummary.Type

/** A block of a request, without its text. */
export const BlockRow = Schema.Struct({
  tier: Schema.String,
  tokens: Schema.Number,
  items: Schema.Number,
  changed: Schema.Boolean,
  /** The lifetime of the breakpoint ending the block; null: no breakpoint. */
  breakpoint: Schema.NullOr(Schema.String)
})
export type BlockRow = typeof BlockRow.Type

/** One request of a session view. */
export const RequestRow = Schema.Struct({
  index: Schema.Number,
  at: Schema.Number,
  model: Schema.String,
  provider: Schema.String,
  usageSource: Schema.String,
  promptTokens: Schema.Number,
  tokens: TokenSplit,
  content: ContentSplit,
  cost: Nullable,
  uncachedCost: Nullable,
  cumulativeCost: Nullable,
  cumulativeUncachedCost: Nullable,
  /** Proxy requests: the cost of the request as the agent sent it (simulated), and its running total. */
  asSentCost: Nullable,
  cumulativeAsSentCost: Nullable,
  blocks: Schema.Array(BlockRow),
  miss: Schema.NullOr(Schema.String),
  /** Tool results this request newly replaced by placeholders, and their tokens. */
  newlyCleared: Schema.Number,
  newlyClearedTokens: Schema.Number
})
export type RequestRow = typeof RequestRow.Type

/** One tool result context editing replaced by a placeholder. */
export const LedgerEntry = Schema.Struct({
  toolCallId: Schema.String,
  toolName: Schema.String,
  /** Estimated tokens of the original result (characters / 4); null when the history no longer holds it. */
  tokens: Nullable,
  placeholder: Schema.String,
  reasoningDropped: Schema.Boolean
})
export type LedgerEntry = typeof LedgerEntry.Type

const Series = Schema.Array(Schema.Number)

/**
 * A session's charts, computed by the server over every request it keeps a summary of:
 * at most `CHART_BARS` bars, each the mean request of `bucket` consecutive requests (token
 * series, rounded to whole tokens) or the running total at the bucket's last request (cost
 * series). `x` holds each bar's last request index.
 */
export const SessionCharts = Schema.Struct({
  /** Requests per bar (1: one bar per request). */
  bucket: Schema.Number,
  x: Series,
  billing: Schema.Struct({ read: Series, write5m: Series, write1h: Series, uncached: Series }),
  content: Schema.Struct({ system: Series, tools: Series, map: Series, files: Series, history: Series, prompt: Series, other: Series }),
  /** Running cost in USD (rounded to millionths; 0 until the first priced request) with Strata and with no caching; as the agent sent it for proxy sessions, else null. */
  cost: Schema.Struct({ cost: Series, uncached: Series, asSent: Schema.NullOr(Series) })
})
export type SessionCharts = typeof SessionCharts.Type

/** A request that missed the cache, and why. */
export const MissRow = Schema.Struct({ index: Schema.Number, miss: Schema.String })
export type MissRow = typeof MissRow.Type

/** `GET /_strata/api/sessions/:id`. */
export const SessionView = Schema.Struct({
  summary: SessionSummary,
  /** How many requests the store keeps a summary of; `omitted` older ones (before summaries were kept) count only in the totals. */
  total: Schema.Number,
  /** The latest `TABLE_ROWS` (50) of them, all when fewer; `GET .../requests?from=&limit=` reads any others. */
  requests: Schema.Array(RequestRow),
  omitted: Schema.Number,
  charts: SessionCharts,
  /** Every request that missed, with its explanation. */
  misses: Schema.Array(MissRow),
  ledger: Schema.Array(LedgerEntry),
  warnings: Schema.Array(Schema.String)
})
export type SessionView = typeof SessionView.Type

/** `GET /_strata/api/sessions/:id/requests?from=&limit=`: rows by request index. */
export const RequestRowPage = Schema.Struct({
  /** Requests kept in all (indexes run from `omitted` to `omitted + total - 1`). */
  total: Schema.Number,
  omitted: Schema.Number,
  requests: Schema.Array(RequestRow)
})
export type RequestRowPage = typeof RequestRowPage.Type

/** Rows a session view carries: the latest requests, more than the page's table shows at first (it reads others as they scroll into view). */
export const TABLE_ROWS = 50
/** Bars a chart has at most. */
export const CHART_BARS = 250

/** A block of a request's detail, with its text when the record kept it. */
export const BlockDetail = Schema.Struct({
  ...BlockRow.fields,
  hash: Schema.String,
  /** The rendered block; null when not kept (only the session's last request keeps its texts). */
  text: Schema.NullOr(Schema.String)
})
export type BlockDetail = typeof BlockDetail.Type

/** `GET /_strata/api/sessions/:id/requests/:index`. */
export const RequestDetail = Schema.Struct({
  sessionId: Schema.String,
  request: RequestRow,
  blocks: Schema.Array(BlockDetail)
})
export type RequestDetail = typeof RequestDetail.Type

/**
 * A session's id in URLs: its name and a short hash of its repository identity (the file
 * store's directory name). Pure.
 *
 * @example
 * ```ts
 * import { sessionId } from "@strata/ui"
 * sessionId({ repository: "git:4b825dc6", name: "default" }) // "default@…"
 * ```
 */
export const sessionId = (key: { readonly repository: string; readonly name: string }): string =>
  `${key.name}@${createHash("sha256").update(key.repository).digest("hex").slice(0, 12)}`

// ---------------------------------------------------------------------------------

/** The price table's provider for a record's provider name (gateways: guessed from the model id). */
const priceProvider = (provider: string, model: string): ProviderId | undefined => {
  const known = PROVIDER_IDS.find((p) => p === provider)
  if (known !== undefined) return known
  const m = model.toLowerCase()
  if (m.includes("claude")) return "anthropic"
  if (m.includes("gemini")) return "gemini"
  if (/^(openai\/)?(gpt|o\d|chatgpt)/.test(m)) return "openai"
  return undefined
}

/** A model's limits, looked up once per provider and model (a session rarely has more than one). */
const limitsOf = (cache: Map<string, ModelLimits | undefined>, provider: string, model: string): ModelLimits | undefined => {
  const key = `${provider}\u0000${model}`
  if (cache.has(key)) return cache.get(key)
  const id = priceProvider(provider, model)
  const limits = id === undefined ? undefined : lookupModel(id, model)
  cache.set(key, limits)
  return limits
}

const priced = (usage: Usage | undefined, limits: ModelLimits | undefined): { readonly cost: number | null; readonly uncached: number | null } => {
  if (usage === undefined || limits === undefined) return { cost: null, uncached: null }
  const c = computeCost(usage, limits)
  return c === undefined ? { cost: null, uncached: null } : { cost: c.total, uncached: c.uncachedTotal }
}
/** Input tokens by billing: reads, writes by lifetime (unsplit writes count as 5m), the rest. Pure. */
export const tokenSplit = (usage: Usage | undefined): TokenSplit => {
  if (usage === undefined) return { read: 0, write5m: 0, write1h: 0, uncached: 0, output: 0 }
  const write1h = Math.min(usage.cacheWrite, usage.cacheWriteByTtl?.["1h"] ?? 0)
  return { read: usage.cacheRead, write5m: usage.cacheWrite - write1h, write1h, uncached: usage.input, output: usage.output }
}

const contentSplit = (r: RecordedRequest): ContentSplit => {
  const c = r.content
  return {
    system: c.system,
    tools: c.tools,
    map: c.legend + c.symbols + c.tree,
    files: c.files + c.urls + c.review,
    history: c.history,
    prompt: c.prompt,
    other: c.other + c.framing,
    cleared: r.cleared?.clearedTokens ?? 0
  }
}

const addNullable = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b)

/** The rows of a session view from its recorded requests, with running totals. Pure. */
export const requestRows = (requests: ReadonlyArray<RecordedRequest>, firstIndex = 0, before?: RequestRow): ReadonlyArray<RequestRow> => {
  let cumulative: number | null = before?.cumulativeCost ?? null
  let cumulativeUncached: number | null = before?.cumulativeUncachedCost ?? null
  let cumulativeAsSent: number | null = before?.cumulativeAsSentCost ?? null
  const limits = new Map<string, ModelLimits | undefined>()
  return requests.map((r, i) => {
    const model = limitsOf(limits, r.provider, r.model)
    const { cost, uncached } = priced(r.usage, model)
    const asSent = r.asSent === undefined ? null : priced(r.asSent, model).cost
    cumulative = addNullable(cumulative, cost)
    cumulativeUncached = addNullable(cumulativeUncached, uncached)
    cumulativeAsSent = addNullable(cumulativeAsSent, asSent)
    return {
      index: firstIndex + i,
      at: r.at,
      model: r.model,
      provider: r.provider,
      usageSource: r.usageSource,
      promptTokens: r.promptTokens,
      tokens: tokenSplit(r.usage),
      content: contentSplit(r),
      cost,
      uncachedCost: uncached,
      cumulativeCost: cumulative,
      cumulativeUncachedCost: cumulativeUncached,
      asSentCost: asSent,
      cumulativeAsSentCost: cumulativeAsSent,
      blocks: r.blocks.map((b) => ({ tier: b.tier, tokens: b.tokens, items: b.items, changed: b.changed, breakpoint: b.breakpoint ?? null })),
      miss: r.miss ?? null,
      newlyCleared: r.cleared?.newlyClearedResults ?? 0,
      newlyClearedTokens: r.cleared?.newlyClearedTokens ?? 0
    }
  })
}

/**
 * A session's requests as the dashboard reads them: those older records kept in the
 * session record, then the summaries the store keeps with each turn (decoded; `skipped`
 * did not decode), and how many earlier requests are known only by the totals.
 */
export interface SessionRequests {
  readonly record: SessionRecord | undefined
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly omitted: number
  readonly skipped: number
  readonly warnings: ReadonlyArray<string>
}

const decodeRecorded = Schema.decodeUnknownResult(RecordedRequest)
const ProxyRecordKind = Schema.Struct({ kind: Schema.Literal("strata-proxy-session") })
const isProxyRecord = Schema.is(ProxyRecordKind)

/** Summaries read from the store, decoded; those that do not decode are counted, not shown. Pure. */
export const decodeStoredRequests = (stored: ReadonlyArray<StoredRequest>): { readonly requests: ReadonlyArray<RecordedRequest>; readonly skipped: number } => {
  const requests: Array<RecordedRequest> = []
  let skipped = 0
  for (const s of stored) {
    const d = decodeRecorded(s.request)
    if (d._tag === "Success") requests.push(d.success)
    else skipped++
  }
  return { requests, skipped }
}

/**
 * A session's requests from its snapshot (its record: totals, and the requests older
 * records kept) and the store's summaries (already decoded). Pure.
 */
export const sessionRequests = (snapshot: StateSnapshot, stored: ReadonlyArray<RecordedRequest>, skipped = 0): SessionRequests => {
  // The proxy keeps its own record; its requests are all in the store.
  const own = snapshot.record === null || isProxyRecord(snapshot.record) ? undefined : decodeSessionRecord(snapshot.record)
  const record = own?.warning === undefined ? own?.record : undefined
  const legacy = record?.requests ?? []
  const requests = legacy.length === 0 ? stored : [...legacy, ...stored]
  const omitted = record === undefined ? 0 : Math.max(0, record.turns - requests.length - skipped)
  return {
    record,
    requests,
    omitted,
    skipped,
    warnings: [
      ...(own?.warning === undefined ? [] : [own.warning]),
      ...(skipped > 0 ? [`${skipped} request summaries did not decode (written by another version of Strata?) and are not shown.`] : []),
      ...(omitted > 0 ? [`${omitted} earlier requests were recorded before per-request summaries existed: they count in the hit rate only.`] : [])
    ]
  }
}

/** A session's summary from its rows (the list's row; `sessionView` carries it too). Pure. */
export const summaryOf = (snapshot: StateSnapshot, session: SessionRequests, rows: ReadonlyArray<RequestRow>): SessionSummary => {
  const last = session.requests.at(-1)
  const fromRows = rows.reduce((t, r) => ({ read: t.read + r.tokens.read, prompt: t.prompt + r.tokens.read + r.tokens.write5m + r.tokens.write1h + r.tokens.uncached }), { read: 0, prompt: 0 })
  const totals = session.record?.totals
  const read = totals === undefined ? fromRows.read : totals.cacheRead
  const prompt = totals === undefined ? fromRows.prompt : totals.input + totals.cacheRead + totals.cacheWrite
  const final = rows.at(-1)
  const cost = final?.cumulativeCost ?? null
  const uncachedCost = final?.cumulativeUncachedCost ?? null
  return {
    id: sessionId(snapshot.session),
    name: snapshot.session.name,
    repository: snapshot.session.repository,
    source: last === undefined ? "none" : last.source ?? "unknown",
    provider: last === undefined ? "no requests yet" : `${last.provider} · ${last.usageSource}`,
    version: snapshot.version,
    requests: session.record?.turns ?? rows.length,
    cost,
    uncachedCost,
    saved: cost === null || uncachedCost === null ? null : uncachedCost - cost,
    asSentCost: final?.cumulativeAsSentCost ?? null,
    hitRate: prompt === 0 ? 0 : read / prompt,
    lastAt: last?.at ?? null
  }
}

/**
 * A session's row of the sessions list. Cost figures cover the requests with summaries
 * (every request of sessions recorded with this version); hit rate covers all. Pure.
 */
export const sessionSummary = (snapshot: StateSnapshot, stored: ReadonlyArray<RecordedRequest> = []): SessionSummary => {
  const session = sessionRequests(snapshot, stored)
  return summaryOf(snapshot, session, requestRows(session.requests))
}

const ClearedJson = Schema.Struct({
  edits: Schema.optionalKey(Schema.Struct({ cleared: Schema.Array(Schema.Tuple([Schema.String, Schema.String, Schema.Boolean])) }))
})
const decodeCleared = Schema.decodeUnknownResult(ClearedJson)

/** The tool results of a history by call id: their tool's name and text. */
const toolResults = (history: ReadonlyArray<Message>): ReadonlyMap<string, { readonly toolName: string; readonly text: string }> => {
  const out = new Map<string, { readonly toolName: string; readonly text: string }>()
  for (const m of history) {
    if (m.role !== "tool") continue
    for (const p of messageParts(m)) if (p.type === "tool-result") out.set(p.toolCallId, { toolName: p.toolName, text: partText(p) })
  }
  return out
}

/** The ledger of cleared tool results, from the journal memory's context edits and the history. Pure. */
export const clearedLedger = (snapshot: StateSnapshot): ReadonlyArray<LedgerEntry> => {
  const decoded = decodeCleared(snapshot.journal)
  if (decoded._tag === "Failure") return []
  const cleared = decoded.success.edits?.cleared ?? []
  if (cleared.length === 0) return []
  const results = toolResults(snapshot.history)
  return cleared.map(([toolCallId, placeholder, reasoning]) => {
    const original = results.get(toolCallId)
    return {
      toolCallId,
      toolName: original?.toolName ?? "",
      tokens: original === undefined ? null : estimateTokens(original.text),
      placeholder,
      reasoningDropped: reasoning
    }
  })
}

/** Per-bucket means of `value` over consecutive `size` rows, rounded to whole numbers. */
const bucketMeans = (rows: ReadonlyArray<RequestRow>, size: number, value: (r: RequestRow) => number): ReadonlyArray<number> => {
  const out: Array<number> = []
  let sum = 0
  let n = 0
  for (const r of rows) {
    sum += value(r)
    n++
    if (n === size) {
      out.push(Math.round(sum / n))
      sum = 0
      n = 0
    }
  }
  if (n > 0) out.push(Math.round(sum / n))
  return out
}

/** Each bucket's last value (running totals, request indexes). */
const bucketEnds = (rows: ReadonlyArray<RequestRow>, size: number, value: (r: RequestRow) => number): ReadonlyArray<number> => {
  const out: Array<number> = []
  rows.forEach((r, i) => {
    if ((i + 1) % size === 0 || i === rows.length - 1) out.push(value(r))
  })
  return out
}

/** USD rounded to millionths for a chart (0 for no price yet). */
const micro = (usd: number | null): number => (usd === null ? 0 : Math.round(usd * 1e6) / 1e6)

/** A session's charts from its rows: at most `bars` bars of `ceil(rows / bars)` requests each. Pure. */
export const sessionCharts = (rows: ReadonlyArray<RequestRow>, bars = CHART_BARS): SessionCharts => {
  const size = Math.max(1, Math.ceil(rows.length / Math.max(1, bars)))
  const means = (value: (r: RequestRow) => number) => bucketMeans(rows, size, value)
  const ends = (value: (r: RequestRow) => number) => bucketEnds(rows, size, value)
  return {
    bucket: size,
    x: ends((r) => r.index),
    billing: { read: means((r) => r.tokens.read), write5m: means((r) => r.tokens.write5m), write1h: means((r) => r.tokens.write1h), uncached: means((r) => r.tokens.uncached) },
    content: {
      system: means((r) => r.content.system),
      tools: means((r) => r.content.tools),
      map: means((r) => r.content.map),
      files: means((r) => r.content.files),
      history: means((r) => r.content.history),
      prompt: means((r) => r.content.prompt),
      other: means((r) => r.content.other)
    },
    cost: {
      cost: ends((r) => micro(r.cumulativeCost)),
      uncached: ends((r) => micro(r.cumulativeUncachedCost)),
      asSent: rows.some((r) => r.asSentCost !== null) ? ends((r) => micro(r.cumulativeAsSentCost)) : null
    }
  }
}

/** Rows `from` (a request index) on, at most `limit`, of a session's rows. Pure. */
export const requestRowPage = (rows: ReadonlyArray<RequestRow>, omitted: number, from = omitted, limit = rows.length): RequestRowPage => {
  const start = Math.max(0, from - omitted)
  return { total: rows.length, omitted, requests: rows.slice(start, start + Math.max(0, limit)) }
}

/**
 * The session view: summary, the charts over every request, the latest `tableRows` rows
 * with running costs, the misses, the cleared ledger. Pure.
 */
export const sessionView = (snapshot: StateSnapshot, session: SessionRequests, warnings: ReadonlyArray<string> = [], rows?: ReadonlyArray<RequestRow>, tableRows = TABLE_ROWS): SessionView => {
  const all = rows ?? requestRows(session.requests, session.omitted)
  const misses: Array<MissRow> = []
  for (const r of all) if (r.miss !== null) misses.push({ index: r.index, miss: r.miss })
  return {
    summary: summaryOf(snapshot, session, all),
    total: all.length,
    requests: all.length <= tableRows ? all : all.slice(-tableRows),
    omitted: session.omitted,
    charts: sessionCharts(all),
    misses,
    ledger: clearedLedger(snapshot),
    warnings: [...warnings, ...session.warnings]
  }
}

/** One request's detail (index counts every request of the session), or undefined when no summary of it is kept. Pure. */
export const requestDetail = (snapshot: StateSnapshot, session: SessionRequests, index: number, rows?: ReadonlyArray<RequestRow>): RequestDetail | undefined => {
  const all = rows ?? requestRows(session.requests, session.omitted)
  const row = all[index - session.omitted]
  const recorded = session.requests[index - session.omitted]
  if (row === undefined || recorded === undefined) return undefined
  // The last request's texts are in the record (`lastBlocks`), when its blocks are the ones shown.
  const isLast = index - session.omitted === session.requests.length - 1
  const texts = isLast ? session.record?.lastBlocks : undefined
  return {
    sessionId: sessionId(snapshot.session),
    request: row,
    blocks: recorded.blocks.map((b, i) => {
      const kept = texts?.[i]
      return {
        tier: b.tier,
        tokens: b.tokens,
        items: b.items,
        changed: b.changed,
        breakpoint: b.breakpoint ?? null,
        hash: b.hash,
        text: b.text ?? (kept !== undefined && kept.hash === b.hash ? kept.text ?? null : null)
      }
    })
  }
}
