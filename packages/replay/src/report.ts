/**
 * How a replay is shown: the per-strategy table as text, and the per-turn cost plot as
 * a hand-written SVG (no dependency). Pure functions over the report.
 */
import type { StrategyRow } from "./score.ts"
import { reducesContent, type StrategyName } from "./strategies.ts"
import type { ReplayReport, TurnCost } from "./replay.ts"

const int = (n: number): string => Math.round(n).toLocaleString("en-US")
const ratio = (n: number | undefined): string => (n === undefined ? "-" : n.toFixed(2))
const pct = (n: number): string => `${(n * 100).toFixed(1)}%`
const money = (n: number): string => `$${n.toFixed(4)}`

/** The cost column of a row: USD when the model has a price, else input-equivalent tokens. */
const costOf = (row: StrategyRow): string => (row.usd === undefined ? int(row.equivalentTokens) : money(row.usd))

/**
 * The table of a replay, one row per strategy, columns right-aligned: requests, input
 * tokens, cache reads, writes and uncached tokens, hit rate, cost, cost relative to
 * `none`, to the content bound (the `oracle` row) and to the content bound over the
 * strategy's own requests, tokens cleared by context editing, superseded tokens
 * carried and the tokens of synthetic turns (context acknowledgements such as "Ok.").
 * A note under the table names the strategies that can go under the content bound
 * (they can send less content than the oracle).
 *
 * @example
 * ```ts no-run
 * import { formatTable, runReplay } from "@strata/replay"
 * const report = await runReplay({ repo: "examples/demo-repo", turns: 10 })
 * console.log(formatTable(report.rows))
 * // strategy  requests  input  read  write  uncached  hit rate  cost (USD)  vs none  vs bound  vs own bound  cleared  superseded  synthetic
 * ```
 */
export const formatTable = (rows: ReadonlyArray<StrategyRow>): string => {
  const priced = rows.every((r) => r.usd !== undefined)
  const header = ["strategy", "requests", "input", "read", "write", "uncached", "hit rate", priced ? "cost (USD)" : "cost (tokens)", "vs none", "vs bound", "vs own bound", "cleared", "superseded", "synthetic"]
  const lines = rows.map((r) => [
    r.strategy,
    int(r.requests),
    int(r.inputTokens),
    int(r.cacheRead),
    int(r.cacheWrite),
    int(r.uncached),
    pct(r.hitRate),
    costOf(r),
    ratio(r.vsNone),
    ratio(r.vsOracle),
    ratio(r.vsOwnBound),
    int(r.clearedTokens),
    int(r.supersededTokens),
    int(r.syntheticTokens)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const render = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd()
  return [render(header), ...lines.map(render), ...boundNote(rows)].join("\n")
}

/**
 * The note under a table: what the bound columns compare, and which of its strategies
 * can go under the content bound because they can send less content than the oracle.
 */
const boundNote = (rows: ReadonlyArray<StrategyRow>): ReadonlyArray<string> => {
  if (!rows.some((r) => r.strategy === "oracle")) return []
  const under = rows.filter((r) => reducesContent(r.strategy)).map((r) => r.strategy)
  return [
    "vs bound: cost / the content bound (the oracle row: the least any cache charges for the session's content as the oracle sends it).",
    ...(under.length === 0 ? [] : [`${under.join(", ")} can send less content (symbol diffs, cleared tool results) and so go under 1.`]),
    "vs own bound: cost / the content bound over the strategy's own requests, the fair comparison.",
    "synthetic: tokens of assistant turns no model wrote (context acknowledgements such as \"Ok.\"), summed over requests."
  ]
}

/** One line describing what was replayed. */
export const formatHeading = (report: ReplayReport): string => {
  const who = `${report.provider} ${report.model}`
  switch (report.session) {
    case "chat":
      return `${report.turns} turns of ${report.repo} from ${report.start.slice(0, 12)}, ${who}, ${report.gapSeconds} s apart`
    case "agent":
      return `${report.turns} agent tasks (${int(report.requests)} requests) of ${report.repo} from ${report.start.slice(0, 12)}, ${who}, steps ${report.stepSeconds ?? 0} s apart, tasks ${report.gapSeconds} s apart`
    case "recorded":
      return `${int(report.requests)} recorded requests (${report.turns} tasks) of ${report.repo}, ${who}`
  }
}

/** The settings line of a report. */
const formatSettings = (report: ReplayReport): string => {
  const s = report.settings
  const strata = `strata-<policy> in the ${s.layout} layout`
  const tracker = `tracker cacheTargetTokens ${int(s.cacheTargetTokens)}`
  const tail = `tokenizer ${s.tokenizer}; input costs only`
  if (report.session === "chat") {
    return `${strata}; compaction at ${int(s.compactionTokens)} history tokens; ${tracker}; transcript window ${int(s.transcriptWindowTokens)} tokens; ${tail}`
  }
  const clearing = `transcript-clear clears tool results past ${int(s.clearTriggerTokens ?? 0)} input tokens, keeping the last ${s.clearKeepToolUses ?? 0} tool uses`
  const compaction = report.session === "agent" ? `history compacted between tasks at ${int(s.compactionTokens)} tokens; ` : "the recorded conversation as sent; "
  return `${strata}; ${compaction}${tracker}; transcripts compact at ${int(s.transcriptWindowTokens)} input tokens; ${clearing}; ${tail}`
}

/** Skipped lines and notes of a recorded session, and strategies that stopped, one line each. */
const formatProblems = (report: ReplayReport): ReadonlyArray<string> => [
  ...(report.problems ?? []).map((p) => `line ${p.line}: ${p.skipped ? "skipped: " : ""}${p.reason}`),
  ...(report.failures ?? []).map((f) => `${f.strategy} stopped at request ${f.request + 1} (task ${f.task + 1}) and is left out: ${f.reason}`)
]

/** The text output of `strata replay`: heading, settings and table (and a recorded session's skipped lines). */
export const formatReport = (report: ReplayReport): string => {
  const problems = formatProblems(report)
  return [
    formatHeading(report),
    formatSettings(report),
    ...(problems.length === 0 ? [] : ["", ...problems]),
    "",
    formatTable(report.rows)
  ].join("\n")
}

// ---------------------------------------------------------------------------------------
// SVG

/**
 * A fixed colour per strategy (the Tableau 10 palette, told apart also by readers with
 * red-green colour blindness), so plots of different runs compare at a glance. The
 * oracle is black and dashed.
 */
export const STRATEGY_COLORS: Readonly<Record<StrategyName, string>> = {
  none: "#7f7f7f",
  trailing: "#8c564b",
  transcript: "#ff7f0e",
  "transcript-clear": "#d62728",
  middleware: "#bcbd22",
  proxy: "#aec7e8",
  "proxy-edit": "#ff9896",
  segments: "#9467bd",
  "strata-threshold": "#17becf",
  "strata-gated": "#2ca02c",
  "strata-flux": "#1f77b4",
  "strata-seed": "#e377c2",
  oracle: "#000000"
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

/** Width of `text` at 12 px in a sans-serif font, generously (so a legend never clips). */
const textWidth = (text: string): number => Math.ceil(text.length * 7.2)

interface Panel {
  readonly top: number
  readonly height: number
  readonly title: string
  /** The value plotted for strategy `s` at turn `i`. */
  readonly value: (s: StrategyName, i: number) => number
}

/**
 * The replay's cost as an SVG chart, two panels over the turns: the cumulative input
 * cost of every strategy (where the totals of the table come from), and the cost of each
 * turn (which turns cost what). The legend lists the strategies from the most to the
 * least expensive, each with its total relative to the content bound (the `oracle` row). Deterministic
 * text: the same report gives the same bytes.
 *
 * @example
 * ```ts no-run
 * import { writeFileSync } from "node:fs"
 * import { plotSvg, runReplay } from "@strata/replay"
 * const report = await runReplay({ repo: "examples/demo-repo", turns: 10 })
 * writeFileSync("replay.svg", plotSvg(report))
 * ```
 */
export const plotSvg = (report: Pick<ReplayReport, "perTurn" | "rows" | "costUnit" | "provider" | "model" | "turns"> & { readonly session?: ReplayReport["session"]; readonly title?: string }): string => {
  // Chat replays plot per turn; agent and recorded sessions per task.
  const unit = report.session === undefined || report.session === "chat" ? "turn" : "task"
  const turns: ReadonlyArray<TurnCost> = report.perTurn
  const table = report.rows.map((r) => r.strategy)
  const costAt = (s: StrategyName, i: number): number => turns[i]?.cost[s] ?? 0
  const cumulative = new Map<StrategyName, ReadonlyArray<number>>(table.map((s) => {
    let sum = 0
    return [s, turns.map((_, i) => (sum += costAt(s, i)))]
  }))
  const total = (s: StrategyName): number => cumulative.get(s)?.at(-1) ?? 0
  // Legend order follows the lines' ends in the cumulative panel, top to bottom.
  const strategies = [...table].sort((a, b) => total(b) - total(a) || table.indexOf(a) - table.indexOf(b))
  const usd = report.costUnit === "usd"
  const labelOf = (s: StrategyName): string => {
    const row = report.rows.find((r) => r.strategy === s)
    return row?.vsOracle === undefined ? s : `${s}  ${row.vsOracle.toFixed(2)}x bound`
  }
  const legendTitle = "Strategy, total vs content bound"
  const legendWidth = 16 + Math.max(Math.ceil(textWidth(legendTitle) * 1.15), 32 + Math.max(...strategies.map((s) => textWidth(labelOf(s))), 0)) + 16
  const left = 84
  const plotW = 700
  const width = left + plotW + legendWidth
  const panels: ReadonlyArray<Panel> = [
    { top: 64, height: 300, title: "Cumulative input cost", value: (s, i) => cumulative.get(s)?.[i] ?? 0 },
    { top: 424, height: 170, title: `Input cost of each ${unit}`, value: costAt }
  ]
  const height = Math.max(panels.at(-1)!.top + panels.at(-1)!.height + 60, 64 + strategies.length * 22 + 40)
  const x = (i: number) => left + (turns.length <= 1 ? plotW / 2 : (i / (turns.length - 1)) * plotW)
  const dashOf = (s: StrategyName) => (s === "oracle" ? ` stroke-dasharray="6 4"` : "")
  const widthOf = (s: StrategyName) => (s.startsWith("strata-") || s === "oracle" ? 2.2 : 1.6)
  const out: Array<string> = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  const title = report.title ?? `Input cost by strategy: ${report.turns} ${unit}s, ${report.provider} ${report.model}`
  out.push(`<text x="${left}" y="28" font-size="15" font-weight="600">${escapeXml(title)}</text>`)
  const xStep = Math.max(1, Math.ceil(turns.length / 12))
  for (const panel of panels) {
    const max = Math.max(0, ...table.flatMap((s) => turns.map((_, i) => panel.value(s, i))))
    const step = niceStep(max, 5)
    const ceiling = Math.max(step, Math.ceil(max / step) * step)
    const y = (v: number) => panel.top + panel.height - (v / ceiling) * panel.height
    // Dollars with as many decimals as the step needs (at least cents); tokens as integers.
    const decimals = Math.max(2, Math.ceil(-Math.log10(step) - 1e-9))
    const label = (v: number) => (usd ? `$${v.toFixed(decimals)}` : Math.round(v).toLocaleString("en-US"))
    out.push(`<text x="${left}" y="${panel.top - 12}" font-size="13" font-weight="600" fill="#333">${escapeXml(`${panel.title} (${usd ? "USD" : "base-input tokens"})`)}</text>`)
    for (let v = 0; v <= ceiling + step / 2; v += step) {
      const yy = num(y(v))
      out.push(`<line x1="${left}" y1="${yy}" x2="${left + plotW}" y2="${yy}" stroke="#e6e6e6"/>`)
      out.push(`<text x="${left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle" fill="#555">${escapeXml(label(v))}</text>`)
    }
    const bottom = panel.top + panel.height
    for (let i = 0; i < turns.length; i += xStep) {
      out.push(`<text x="${num(x(i))}" y="${bottom + 16}" text-anchor="middle" fill="#555">${turns[i]!.index + 1}</text>`)
    }
    out.push(`<line x1="${left}" y1="${bottom}" x2="${left + plotW}" y2="${bottom}" stroke="#555"/>`)
    out.push(`<line x1="${left}" y1="${panel.top}" x2="${left}" y2="${bottom}" stroke="#555"/>`)
    // The most expensive first, so cheaper lines (Strata's, the oracle's) are drawn on top.
    for (const s of strategies) {
      const points = turns.map((_, i) => `${num(x(i))},${num(y(panel.value(s, i)))}`).join(" ")
      out.push(`<polyline fill="none" stroke="${STRATEGY_COLORS[s]}" stroke-width="${widthOf(s)}" stroke-linejoin="round"${dashOf(s)} points="${points}"><title>${escapeXml(s)}</title></polyline>`)
    }
  }
  const last = panels.at(-1)!
  out.push(`<text x="${left + plotW / 2}" y="${last.top + last.height + 40}" text-anchor="middle" fill="#333">${unit}</text>`)
  const lx = left + plotW + 16
  out.push(`<text x="${lx}" y="${panels[0]!.top - 12}" font-size="13" font-weight="600" fill="#333">${legendTitle}</text>`)
  strategies.forEach((s, i) => {
    const ly = panels[0]!.top + 8 + i * 22
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${STRATEGY_COLORS[s]}" stroke-width="3"${dashOf(s)}/>`)
    out.push(`<text x="${lx + 32}" y="${ly}" dominant-baseline="middle">${escapeXml(labelOf(s))}</text>`)
  })
  out.push("</svg>")
  return out.join("\n") + "\n"
}
