/**
 * How a replay is shown: the per-strategy table as text, and the per-turn cost plot as
 * a hand-written SVG (no dependency). Pure functions over the report.
 */
import type { StrategyRow } from "./score.ts"
import type { StrategyName } from "./strategies.ts"
import type { ReplayReport, TurnCost } from "./replay.ts"

const int = (n: number): string => Math.round(n).toLocaleString("en-US")
const ratio = (n: number | undefined): string => (n === undefined ? "-" : n.toFixed(2))
const pct = (n: number): string => `${(n * 100).toFixed(1)}%`
const money = (n: number): string => `$${n.toFixed(4)}`

/** The cost column of a row: USD when the model has a price, else input-equivalent tokens. */
const costOf = (row: StrategyRow): string => (row.usd === undefined ? int(row.equivalentTokens) : money(row.usd))

/**
 * The table of a replay, one row per strategy, columns right-aligned.
 *
 * @example
 * ```ts
 * console.log(formatTable(report.rows))
 * // strategy   input tokens  cache read  cache write  uncached  hit rate  cost  vs none  vs oracle
 * ```
 */
export const formatTable = (rows: ReadonlyArray<StrategyRow>): string => {
  const priced = rows.every((r) => r.usd !== undefined)
  const header = ["strategy", "input tokens", "cache read", "cache write", "uncached", "hit rate", priced ? "cost (USD)" : "cost (tokens)", "vs none", "vs oracle"]
  const lines = rows.map((r) => [
    r.strategy,
    int(r.inputTokens),
    int(r.cacheRead),
    int(r.cacheWrite),
    int(r.uncached),
    pct(r.hitRate),
    costOf(r),
    ratio(r.vsNone),
    ratio(r.vsOracle)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const render = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd()
  return [render(header), ...lines.map(render)].join("\n")
}

/** One line describing what was replayed. */
export const formatHeading = (report: ReplayReport): string =>
  `${report.turns} turns of ${report.repo} from ${report.start.slice(0, 12)}, ${report.provider} ${report.model}, ${report.gapSeconds} s apart`

/** The text output of `strata replay`: heading, settings and table. */
export const formatReport = (report: ReplayReport): string => {
  const s = report.settings
  return [
    formatHeading(report),
    `strata-<policy> in the ${s.layout} layout; compaction at ${int(s.compactionTokens)} history tokens; tracker cacheTargetTokens ${int(s.cacheTargetTokens)}; transcript window ${int(s.transcriptWindowTokens)} tokens; tokenizer ${s.tokenizer}; input costs only`,
    "",
    formatTable(report.rows)
  ].join("\n")
}

// ---------------------------------------------------------------------------------------
// SVG

/** A fixed colour per strategy, so plots of different runs compare at a glance. */
export const STRATEGY_COLORS: Readonly<Record<StrategyName, string>> = {
  none: "#9e9e9e",
  trailing: "#795548",
  transcript: "#ff9800",
  segments: "#9c27b0",
  "strata-threshold": "#90caf9",
  "strata-gated": "#1565c0",
  "strata-flux": "#26a69a",
  "strata-seed": "#8e24aa",
  oracle: "#212121"
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** A round step for about `count` axis ticks up to `max`. */
const niceStep = (max: number, count: number): number => {
  if (max <= 0) return 1
  const raw = max / count
  const power = 10 ** Math.floor(Math.log10(raw))
  const unit = raw / power
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power
}

const num = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1))

/**
 * The per-turn cost of every strategy as an SVG line chart (x: turn, y: cost of that
 * turn's request), with a legend giving each strategy's total relative to `oracle`.
 * Deterministic text: the same report gives the same bytes.
 *
 * @example
 * ```ts
 * writeFileSync("replay.svg", plotSvg(report))
 * ```
 */
export const plotSvg = (report: Pick<ReplayReport, "perTurn" | "rows" | "costUnit" | "provider" | "model" | "turns"> & { readonly title?: string }): string => {
  const width = 960
  const height = 480
  const left = 80
  const right = 220
  const top = 48
  const bottom = 56
  const plotW = width - left - right
  const plotH = height - top - bottom
  const strategies = report.rows.map((r) => r.strategy)
  const turns: ReadonlyArray<TurnCost> = report.perTurn
  const max = Math.max(0, ...turns.flatMap((t) => strategies.map((s) => t.cost[s] ?? 0)))
  const step = niceStep(max, 5)
  const top$ = Math.max(step, Math.ceil(max / step) * step)
  const usd = report.costUnit === "usd"
  const x = (i: number) => left + (turns.length <= 1 ? plotW / 2 : (i / (turns.length - 1)) * plotW)
  const y = (v: number) => top + plotH - (v / top$) * plotH
  const label = (v: number) => (usd ? `$${v < 0.01 ? v.toFixed(4) : v.toFixed(3)}` : Math.round(v).toLocaleString("en-US"))
  const out: Array<string> = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  const title = report.title ?? `Input cost per turn: ${report.turns} turns, ${report.provider} ${report.model}`
  out.push(`<text x="${left}" y="28" font-size="15" font-weight="600">${escapeXml(title)}</text>`)
  for (let v = 0; v <= top$ + step / 2; v += step) {
    const yy = num(y(v))
    out.push(`<line x1="${left}" y1="${yy}" x2="${left + plotW}" y2="${yy}" stroke="#e0e0e0"/>`)
    out.push(`<text x="${left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle" fill="#555">${escapeXml(label(v))}</text>`)
  }
  const xStep = Math.max(1, Math.ceil(turns.length / 10))
  for (let i = 0; i < turns.length; i += xStep) {
    out.push(`<text x="${num(x(i))}" y="${top + plotH + 18}" text-anchor="middle" fill="#555">${turns[i]!.index + 1}</text>`)
  }
  out.push(`<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#555"/>`)
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#555"/>`)
  out.push(`<text x="${left + plotW / 2}" y="${height - 16}" text-anchor="middle" fill="#333">turn (one commit each)</text>`)
  out.push(`<text transform="translate(20 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#333">${usd ? "input cost (USD)" : "input cost (base-input tokens)"}</text>`)
  for (const s of strategies) {
    const points = turns.map((t, i) => `${num(x(i))},${num(y(t.cost[s] ?? 0))}`).join(" ")
    const dash = s === "oracle" ? ` stroke-dasharray="5 4"` : ""
    const w = s.startsWith("strata-") ? 2.2 : 1.4
    out.push(`<polyline fill="none" stroke="${STRATEGY_COLORS[s]}" stroke-width="${w}"${dash} points="${points}"/>`)
  }
  strategies.forEach((s, i) => {
    const ly = top + 10 + i * 22
    const lx = left + plotW + 16
    const row = report.rows.find((r) => r.strategy === s)
    const dash = s === "oracle" ? ` stroke-dasharray="5 4"` : ""
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 22}" y2="${ly}" stroke="${STRATEGY_COLORS[s]}" stroke-width="2.5"${dash}/>`)
    const suffix = row?.vsOracle === undefined ? "" : ` (${row.vsOracle.toFixed(2)}x oracle)`
    out.push(`<text x="${lx + 28}" y="${ly}" dominant-baseline="middle">${escapeXml(s + suffix)}</text>`)
  })
  out.push("</svg>")
  return out.join("\n") + "\n"
}
