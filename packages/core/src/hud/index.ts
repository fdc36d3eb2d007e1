/**
 * The terminal HUD as a pure function: the cache-block box, the token
 * breakdown (categories, model limits, last request and session usage) and the
 * promotion/demotion lines. Plain text with no colour codes, so NO_COLOR and pipes are
 * served as is; `ascii` swaps box drawing and emoji for ASCII; `width` fits the box to a
 * terminal. Two shares are kept apart by name: "in cached blocks" is Strata's layout (the
 * prompt's tokens that sit in L0-L3), "cache hit rate" is what the provider billed as
 * cache reads.
 */
import type { TierChange } from "../domain/Item.ts"
import { CACHED_TIERS, TIERS, tierRank, type Tier } from "../domain/Tier.ts"
import type { LeftOut, TierReport } from "../breakdown/report.ts"
import { modelInfo } from "../models/modelTable.ts"
import type { SessionRecord } from "../turn/record.ts"

/**
 * Provider-reported usage of one request, or summed over a session, split as the
 * providers' neutral usage is: `input` is the uncached input only, so the prompt is
 * `input + cacheRead + cacheWrite`.
 */
export interface HudUsage {
  /** Input tokens neither read from nor written to the cache. */
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

export interface HudInput {
  readonly report: TierReport
  /** Model limits; default `modelInfo(report.model)`. */
  readonly maxInputTokens?: number
  readonly maxOutputTokens?: number
  /** The last request's usage as the provider reported it. */
  readonly lastRequest?: HudUsage
  /** Usage summed over the session. */
  readonly session?: HudUsage & { readonly requests?: number }
  /** Why the last request read less from the cache than the one before left there (`describeMissReason`). */
  readonly lastMiss?: string | undefined
}

export interface HudOptions {
  /** ASCII box and markers instead of box drawing and emoji. */
  readonly ascii?: boolean
  /** At most this many item keys per change line (default 8). */
  readonly maxNames?: number
  /**
   * The widest the cache-block box may be, in columns (a terminal's width): a narrower
   * terminal gets a narrower box whose rows wrap inside it. Values under
   * `MIN_HUD_WIDTH` count as that. Default: as wide as its rows, at least 52 columns.
   */
  readonly width?: number
}

/** The narrowest box `width` can ask for; below it rows would wrap to a word each. */
export const MIN_HUD_WIDTH = 32

/**
 * The share of a prompt the provider billed as cache reads: `cacheRead / (input +
 * cacheRead + cacheWrite)`, or undefined for an empty prompt. This is the HUD's cache hit
 * rate; the share of tokens in cached blocks is the layout's, not a hit.
 *
 * @example
 * ```ts
 * import { cacheHitShare } from "@strata/core"
 * cacheHitShare({ input: 1000, cacheRead: 3000, cacheWrite: 0, output: 5 }) // 0.75
 * ```
 */
export const cacheHitShare = (u: HudUsage): number | undefined => {
  const prompt = promptTokens(u)
  return prompt > 0 ? u.cacheRead / prompt : undefined
}

/** Split a row into lines of at most `max` columns at spaces; continuation lines are indented under the text. */
const wrapRow = (row: string, max: number): Array<string> => {
  if (row.length <= max) return [row]
  const lead = /^\s*(?:└─|`-)?\s*/.exec(row)?.[0].length ?? 0
  const indent = " ".repeat(Math.min(lead > 0 ? lead : 2, Math.floor(max / 2)))
  const out: Array<string> = []
  let rest = row
  let prefix = ""
  while (prefix.length + rest.length > max) {
    const room = max - prefix.length
    const cut = rest.lastIndexOf(" ", room)
    // Cut at the last space that fits, past the row's own indentation; a longer word is split.
    const at = cut > (out.length === 0 ? lead : 0) ? cut : room
    out.push(prefix + rest.slice(0, at).trimEnd())
    rest = rest.slice(at).trimStart()
    prefix = indent
  }
  out.push(prefix + rest)
  return out
}

const promptTokens = (u: HudUsage): number => u.input + u.cacheRead + u.cacheWrite

export const formatTokens = (n: number): string => {
  const sign = n < 0 ? "-" : ""
  return sign + String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
}


const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

const GLYPHS = {
  unicode: { tl: "╭", tr: "╮", bl: "╰", br: "╯", h: "─", v: "│", ml: "├", mr: "┤", branch: "└─", up: "📈", down: "📉", placed: "🧭", removed: "➖" },
  ascii: { tl: "+", tr: "+", bl: "+", br: "+", h: "-", v: "|", ml: "+", mr: "+", branch: "`-", up: "^", down: "v", placed: "*", removed: "-" }
} as const

/** What a tier's block holds (docs/tiers.md): `system + legend + 12 symbols + 2 files + tree`. */
const describe = (report: TierReport, tier: Tier): string => {
  const info = report.tiers[tier]
  const parts: Array<string> = []
  if (tier === "L0" && report.categories.tools > 0) parts.push("tools")
  if (tier === "L0" && report.tiers.L0.hasSystem) parts.push("system")
  if (tier === "L0" && report.tiers.L0.hasLegend) parts.push("legend")
  if (info.symbols > 0) parts.push(plural(info.symbols, "symbol"))
  if (info.files > 0) parts.push(plural(info.files, "file"))
  if (info.hasTree) parts.push("tree")
  if (tier === "active" && report.tiers.active.hasUrls) parts.push("urls")
  if (tier === "active" && report.categories.review > 0) parts.push("review")
  if (info.history > 0) parts.push(`history (${plural(info.history, "msg")})`)
  if (tier === "active") parts.push("prompt")
  return parts.join(" + ")
}

/**
 * The cache-block box (docs/tiers.md): one row per non-empty tier with its tokens and
 * contents, then the total, the share of tokens in cached blocks and the empty-tier
 * counts. With `width`, the box is at most that wide and its rows wrap.
 *
 * @example
 * ```ts
 * import { renderCacheBlocks } from "@strata/core"
 * // console.log(renderCacheBlocks(result.report).join("\n"))
 * ```
 */
export const renderCacheBlocks = (report: TierReport, options: HudOptions = {}): ReadonlyArray<string> => {
  const g = options.ascii === true ? GLYPHS.ascii : GLYPHS.unicode
  const rows: Array<string | "rule"> = []
  for (const tier of TIERS) {
    const info = report.tiers[tier]
    if (info.tokens === 0) continue
    const label = tier === "active" ? "active:" : `${tier} (${report.thresholds[tier]}+):`
    rows.push(`${label.padEnd(10)}${formatTokens(info.tokens).padStart(9)} tokens${tier === "active" ? "" : " [cached]"}`)
    rows.push(`  ${g.branch} ${describe(report, tier)}`)
  }
  const inCached = report.totalTokens === 0 ? 0 : Math.round((100 * report.cachedTokens) / report.totalTokens)
  rows.push("rule")
  rows.push(`Total: ${formatTokens(report.totalTokens)} tokens | In cached blocks: ${inCached}%`)
  rows.push(`Empty tiers skipped: ${report.emptyTiers} (session total: ${report.emptyTiersSession})`)
  const title = " Cache Blocks "
  // `span` is the box's width inside its two corner glyphs; a row gets one space each side.
  const natural = Math.max(50, title.length + 4, ...rows.map((r) => (r === "rule" ? 0 : r.length + 2)))
  const span = options.width === undefined ? natural : Math.min(natural, Math.max(MIN_HUD_WIDTH, Math.floor(options.width)) - 2)
  const line = (r: string) => `${g.v} ${r.padEnd(span - 2)} ${g.v}`
  return [
    `${g.tl}${g.h}${title}${g.h.repeat(span - title.length - 1)}${g.tr}`,
    ...rows.flatMap((r) => (r === "rule" ? [`${g.ml}${g.h.repeat(span)}${g.mr}`] : wrapRow(r, span - 2).map(line))),
    `${g.bl}${g.h.repeat(span)}${g.br}`
  ]
}

/**
 * The token breakdown: tokens per category (they add up to the total), the
 * model's limits, and the last request's and the session's usage when given. "Prompt
 * tokens" are the whole input (uncached + read + written); the cache hit rate is the share
 * of that prompt the provider billed as cache reads (`cacheHitShare`).
 */
export const renderTokenBreakdown = (input: HudInput): ReadonlyArray<string> => {
  const { report } = input
  const info = modelInfo(report.model)
  const maxIn = input.maxInputTokens ?? info.maxInputTokens
  const maxOut = input.maxOutputTokens ?? info.maxOutputTokens
  const c = report.categories
  const rows: ReadonlyArray<readonly [string, number, boolean]> = [
    ["Tools", c.tools, false],
    ["System", c.system, true],
    ["Symbol Map", c.legend + c.symbols, true],
    ["File Tree", c.tree, false],
    ["Files", c.files, true],
    ["URLs", c.urls, false],
    ["Review", c.review, false],
    ["History", c.history, true],
    ["Prompt", c.prompt, false],
    ["Other", c.other, false],
    ["Framing", c.framing, false]
  ]
  const lines = [`Model: ${report.model || "(unknown)"} (input limit ${formatTokens(maxIn)}, output limit ${formatTokens(maxOut)})`]
  for (const [name, tokens, always] of rows) {
    if (always || tokens !== 0) lines.push(`${`${name}:`.padEnd(12)}${formatTokens(tokens).padStart(10)}`)
  }
  const share = maxIn > 0 ? ` (${Math.round((100 * report.totalTokens) / maxIn)}%)` : ""
  const over = report.totalTokens > maxIn ? " over the input limit" : ""
  lines.push(`${"Total:".padEnd(12)}${formatTokens(report.totalTokens).padStart(10)} / ${formatTokens(maxIn)}${share}${over}`)
  const edits = report.contextEditing
  if (edits !== undefined && edits.clearedResults > 0) {
    const fresh = edits.newlyClearedResults > 0 ? `, ${formatTokens(edits.newlyClearedTokens)} of them just now` : ""
    lines.push(`${"Cleared:".padEnd(12)}${formatTokens(edits.clearedTokens).padStart(10)} (${plural(edits.clearedResults, "tool result")} of ${edits.toolResults} shown as placeholders${fresh})`)
  }
  if (report.leftOut !== undefined) lines.push(...renderLeftOut(report.leftOut))
  // The prompt is the whole input (the number `assemble` and the breakdown show for the
  // request); the cache line splits it: read + write + uncached (the record's `input`).
  const usage = (u: HudUsage) => `${formatTokens(promptTokens(u))} prompt tokens, ${formatTokens(u.output)} output`
  const cache = (u: HudUsage) => {
    const share = cacheHitShare(u)
    return `${share === undefined ? "" : `hit rate ${Math.round(100 * share)}% `}(read ${formatTokens(u.cacheRead)}, write ${formatTokens(u.cacheWrite)}, uncached ${formatTokens(u.input)})`
  }
  if (input.lastRequest !== undefined) {
    lines.push(`Last request: ${usage(input.lastRequest)}`)
    lines.push(`  Cache ${cache(input.lastRequest)}`)
  }
  if (input.lastMiss !== undefined) lines.push(`Last miss: ${input.lastMiss}`)
  if (input.session !== undefined) {
    const n = input.session.requests === undefined ? "" : ` over ${plural(input.session.requests, "request")}`
    lines.push(`Session total: ${usage(input.session)}${n}`)
    lines.push(`  Cache ${cache(input.session)}`)
  }
  return lines
}

/**
 * What the request left out to stay within its budgets, one line per cause: the map
 * budget's cut, then what shedding left out. Nothing when nothing was left out.
 */
export const renderLeftOut = (leftOut: LeftOut): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const map = leftOut.map
  if (map !== undefined && (map.files > 0 || map.treeTokens > 0)) {
    const what = [
      ...(map.treeTokens > 0 ? [`file tree ${formatTokens(map.treeTokens)}`] : []),
      ...(map.files > 0 ? [`blocks of ${plural(map.files, "file")} ${formatTokens(map.fileTokens)}`] : [])
    ]
    const from = map.budget === "model" ? "from the model's limit" : "configured"
    lines.push(`${"Map budget:".padEnd(12)}${formatTokens(map.budgetTokens).padStart(10)} (${from}); left out: ${what.join(", ")}`)
  }
  const shed = [
    ...(leftOut.files.length > 0 ? [`${plural(leftOut.files.length, "file")} ${leftOut.files.map((f) => `${f.path} ${formatTokens(f.tokens)}`).slice(0, 3).join(", ")}${leftOut.files.length > 3 ? ", …" : ""}`] : []),
    ...(leftOut.symbols.length > 0 ? [`blocks of ${plural(leftOut.symbols.length, "file")} ${formatTokens(leftOut.symbols.reduce((n, i) => n + i.tokens, 0))}`] : []),
    ...(leftOut.treeTokens > 0 ? [`file tree ${formatTokens(leftOut.treeTokens)}`] : [])
  ]
  if (shed.length > 0) lines.push(`${"Shed:".padEnd(12)}${shed.join("; ")} (over 90% of the input limit)`)
  return lines
}

const names = (changes: ReadonlyArray<TierChange>, max: number): string => {
  const shown = changes.slice(0, max).map((c) => c.key).join(", ")
  return changes.length > max ? `${shown}, … +${changes.length - max} more` : shown
}

const groupBy = <K extends string>(changes: ReadonlyArray<TierChange>, key: (c: TierChange) => K): ReadonlyArray<readonly [K, ReadonlyArray<TierChange>]> => {
  const groups = new Map<K, Array<TierChange>>()
  for (const c of changes) {
    const k = key(c)
    const list = groups.get(k)
    if (list === undefined) groups.set(k, [c])
    else list.push(c)
  }
  return [...groups.entries()]
}

/**
 * Promotion and demotion lines (docs/tiers.md), then one line for the first request's initial
 * placement and one per removal reason:
 * `📈 Promoted to L2: symbol:src/a.ts, file:src/b.ts` / `📉 Demoted to active: file:src/c.ts (hash changed)`.
 */
export const renderTierChanges = (report: TierReport, options: HudOptions = {}): ReadonlyArray<string> => {
  const g = options.ascii === true ? GLYPHS.ascii : GLYPHS.unicode
  const max = options.maxNames ?? 8
  const lines: Array<string> = []
  for (const [to, list] of groupBy(report.promotions, (c) => c.to ?? "")) lines.push(`${g.up} Promoted to ${to}: ${names(list, max)}`)
  for (const [key, list] of groupBy(report.demotions, (c) => `${c.to ?? ""}\u0000${c.reason}`)) {
    const [to, reason] = key.split("\u0000")
    lines.push(`${g.down} Demoted to ${to}: ${names(list, max)} (${reason})`)
  }
  const placed = report.changes.filter((c) => c.from === null && c.to !== null && c.to !== "active")
  if (placed.length > 0) {
    const per = CACHED_TIERS.map((t) => [t, placed.filter((c) => c.to === t).length] as const).filter(([, n]) => n > 0)
    lines.push(`${g.placed} Initial placement: ${plural(placed.length, "item")} (${per.map(([t, n]) => `${t} ${n}`).join(", ")})`)
  }
  for (const [reason, list] of groupBy(report.changes.filter((c) => c.to === null), (c) => c.reason)) {
    lines.push(`${g.removed} Removed (${reason}): ${names(list, max)}`)
  }
  return lines
}

/**
 * The whole HUD: cache blocks, token breakdown, then tier changes.
 *
 * @example
 * ```ts
 * import { renderHud } from "@strata/core"
 * // process.stderr.write(renderHud({ report: result.report, lastRequest: usage }) + "\n")
 * ```
 */
export const renderHud = (input: HudInput, options: HudOptions = {}): string =>
  [...renderCacheBlocks(input.report, options), ...renderTokenBreakdown(input), ...renderTierChanges(input.report, options)].join("\n")

/**
 * The HUD of a session between requests: the next request's blocks (`report`, assembled
 * and not sent), with the tier changes, usage and totals of the last committed request
 * (the session `record`), and where that usage came from. Plain lines, as `renderHud`.
 *
 * @example
 * ```ts
 * import { sessionHudLines } from "@strata/core"
 * // console.log(sessionHudLines(preview.report, record, { width: process.stdout.columns }).join("\n"))
 * ```
 */
export const sessionHudLines = (
  report: TierReport,
  record: Pick<SessionRecord, "turns" | "totals" | "last">,
  options: HudOptions & {
    readonly lastMiss?: string | undefined
    /** The input limit to measure against; default the model's. */
    readonly maxInputTokens?: number | undefined
  } = {}
): ReadonlyArray<string> => {
  const last = record.last
  // The changes shown are the last committed request's, not this preview's.
  const shown: TierReport = last === null ? { ...report, promotions: [], demotions: [], changes: [] } : {
    ...report,
    changes: last.changes,
    promotions: last.changes.filter((c) => c.from !== null && c.to !== null && tierRank(c.to) < tierRank(c.from)),
    demotions: last.changes.filter((c) => c.from !== null && c.to !== null && tierRank(c.to) > tierRank(c.from))
  }
  const usage = last === null || last.usageSource === "none" ? undefined : last.usage
  const lastMiss = options.lastMiss ?? last?.lastMiss
  const source = last === null
    ? []
    : [`Usage source: ${last.usageSource === "provider" ? "reported by the provider" : last.usageSource === "simulated" ? `the ${last.provider} cache simulator (no request was sent)` : `none (no simulator for ${last.provider})`}`]
  return [
    ...renderCacheBlocks(shown, options),
    ...renderTokenBreakdown({
      report: shown,
      ...(options.maxInputTokens === undefined ? {} : { maxInputTokens: options.maxInputTokens }),
      ...(usage === undefined ? {} : { lastRequest: usage }),
      ...(record.turns === 0 ? {} : { session: { ...record.totals, requests: record.turns } }),
      lastMiss
    }),
    ...source,
    ...renderTierChanges(shown, options)
  ]
}
