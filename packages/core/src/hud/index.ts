/**
 * The terminal HUD as a pure function: the seed 003 cache-block box, the seed 000 token
 * breakdown (categories, model limits, last request and session usage) and the
 * promotion/demotion lines. Plain text with no colour codes, so NO_COLOR and pipes are
 * served as is; `ascii` swaps box drawing and emoji for ASCII.
 */
import type { TierChange } from "../domain/Item.ts"
import { CACHED_TIERS, TIERS, type Tier } from "../domain/Tier.ts"
import type { TierReport } from "../pipeline/report.ts"
import { modelInfo } from "../tokens/encoding.ts"

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
}

/** `12345` as `12,345`, independent of the locale. */
export const formatTokens = (n: number): string => {
  const sign = n < 0 ? "-" : ""
  return sign + String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
}

const promptTokens = (u: HudUsage): number => u.input + u.cacheRead + u.cacheWrite

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

const GLYPHS = {
  unicode: { tl: "╭", tr: "╮", bl: "╰", br: "╯", h: "─", v: "│", ml: "├", mr: "┤", branch: "└─", up: "📈", down: "📉", placed: "🧭", removed: "➖" },
  ascii: { tl: "+", tr: "+", bl: "+", br: "+", h: "-", v: "|", ml: "+", mr: "+", branch: "`-", up: "^", down: "v", placed: "*", removed: "-" }
} as const

/** What a tier's block holds, as in seed 003: `system + legend + 12 symbols + 2 files + tree`. */
const describe = (report: TierReport, tier: Tier): string => {
  const info = report.tiers[tier]
  const parts: Array<string> = []
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
 * The cache-block box of seed 003: one row per non-empty tier with its tokens and
 * contents, then the total, the share in cached blocks and the empty-tier counts.
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
  const hit = report.totalTokens === 0 ? 0 : Math.round((100 * report.cachedTokens) / report.totalTokens)
  rows.push("rule")
  rows.push(`Total: ${formatTokens(report.totalTokens)} tokens | Cache hit: ${hit}%`)
  rows.push(`Empty tiers skipped: ${report.emptyTiers} (session total: ${report.emptyTiersSession})`)
  const title = " Cache Blocks "
  const width = Math.max(50, title.length + 4, ...rows.map((r) => (r === "rule" ? 0 : r.length + 2)))
  const line = (r: string) => `${g.v} ${r.padEnd(width - 2)} ${g.v}`
  return [
    `${g.tl}${g.h}${title}${g.h.repeat(width - title.length - 1)}${g.tr}`,
    ...rows.map((r) => (r === "rule" ? `${g.ml}${g.h.repeat(width)}${g.mr}` : line(r))),
    `${g.bl}${g.h.repeat(width)}${g.br}`
  ]
}

/**
 * The seed 000 token breakdown: tokens per category (they add up to the total), the
 * model's limits, and the last request's and the session's usage when given. Usage "in"
 * is the whole prompt (uncached + read + written); the session's cache rate is the share
 * of that prompt read from the cache.
 */
export const renderTokenBreakdown = (input: HudInput): ReadonlyArray<string> => {
  const { report } = input
  const info = modelInfo(report.model)
  const maxIn = input.maxInputTokens ?? info.maxInputTokens
  const maxOut = input.maxOutputTokens ?? info.maxOutputTokens
  const c = report.categories
  const rows: ReadonlyArray<readonly [string, number, boolean]> = [
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
  lines.push(`${"Total:".padEnd(12)}${formatTokens(report.totalTokens).padStart(10)} / ${formatTokens(maxIn)}${share}`)
  // "in" is the whole prompt, as in the reference HUD; the cache line gives its split.
  const usage = (u: HudUsage) => `${formatTokens(promptTokens(u))} in, ${formatTokens(u.output)} out`
  const cache = (u: HudUsage) => `read: ${formatTokens(u.cacheRead)}, write: ${formatTokens(u.cacheWrite)}`
  if (input.lastRequest !== undefined) {
    lines.push(`Last request: ${usage(input.lastRequest)}`)
    lines.push(`Cache: ${cache(input.lastRequest)}`)
  }
  if (input.lastMiss !== undefined) lines.push(`Last miss: ${input.lastMiss}`)
  if (input.session !== undefined) {
    const n = input.session.requests === undefined ? "" : ` over ${plural(input.session.requests, "request")}`
    const prompt = promptTokens(input.session)
    const rate = prompt > 0 ? `, ${Math.round((100 * input.session.cacheRead) / prompt)}% read from cache` : ""
    lines.push(`Session total: ${usage(input.session)}${n}; cache ${cache(input.session)}${rate}`)
  }
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
 * Promotion and demotion lines (seed 003), then one line for the first request's initial
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
