/**
 * Replay reports as one self-contained HTML page (`strata replay --html FILE`): the report
 * (`strata replay --json`) decoded at the boundary, the model's dated price table added, and
 * the bundled replay view (the dashboard's charts) inlined with its styles, so the file
 * opens offline, anywhere, with a Content-Security-Policy that allows only its own code.
 */
import { createHash } from "node:crypto"
import { lookupModel, PROVIDER_IDS } from "@strata/providers"
import { Schema } from "effect"
import { asset } from "./internal/assets.ts"

const Num = Schema.Number
const OptNum = Schema.optionalKey(Schema.UndefinedOr(Schema.NullOr(Num)))

/** One strategy's totals, as `strata replay --json` writes them. */
export const ReplayRow = Schema.Struct({
  strategy: Schema.String,
  requests: Num,
  inputTokens: Num,
  cacheRead: Num,
  cacheWrite: Num,
  uncached: Num,
  hitRate: Num,
  equivalentTokens: Num,
  usd: OptNum,
  vsNone: OptNum,
  vsOracle: OptNum,
  clearedTokens: Schema.optionalKey(Num),
  supersededTokens: Schema.optionalKey(Num)
})
export type ReplayRow = typeof ReplayRow.Type

/** One turn's (or task's) cost per strategy. */
export const ReplayTurn = Schema.Struct({
  index: Num,
  t: Num,
  commit: Schema.String,
  subject: Schema.String,
  cost: Schema.Record(Schema.String, Num)
})
export type ReplayTurn = typeof ReplayTurn.Type

/** The parts of a replay report the page draws; other fields are ignored. */
export const ReplayReportInput = Schema.Struct({
  session: Schema.String,
  repo: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  turns: Num,
  requests: Num,
  costUnit: Schema.Literals(["usd", "tokens"]),
  rows: Schema.Array(ReplayRow),
  perTurn: Schema.Array(ReplayTurn)
})
export type ReplayReportInput = typeof ReplayReportInput.Type

/** A price row of the page: the model's base prices and each cache lifetime's multipliers. */
export interface ReplayPrices {
  readonly family: string
  readonly inputPerMTok: number | null
  readonly outputPerMTok: number | null
  readonly asOf: string | null
  readonly source: string | null
  readonly ttls: ReadonlyArray<{ readonly name: string; readonly write: number; readonly read: number; readonly seconds: number }>
}

/** What the replay view reads from the page. */
export interface ReplayPageData {
  readonly title: string
  readonly report: ReplayReportInput
  readonly prices: ReplayPrices | null
}

const decodeReport = Schema.decodeUnknownSync(ReplayReportInput)

const pricesOf = (provider: string, model: string): ReplayPrices | null => {
  const id = PROVIDER_IDS.find((p) => p === provider)
  if (id === undefined) return null
  const limits = lookupModel(id, model)
  return {
    family: limits.family,
    inputPerMTok: limits.price?.inputPerMTok ?? null,
    outputPerMTok: limits.price?.outputPerMTok ?? null,
    asOf: limits.provenance.price?.asOf ?? null,
    source: limits.provenance.price?.source ?? null,
    ttls: limits.ttls.map((t) => ({ name: t.name, write: t.write, read: t.read, seconds: t.seconds }))
  }
}

/** JSON that can sit inside a `<script>` element: `<`, `>`, `&` and line separators escaped. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c)

const sha256 = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/**
 * One self-contained HTML page for a replay report (the value `strata replay --json`
 * prints, or its parsed JSON): cumulative and per-turn cost per strategy (log scale, and
 * each strategy against the cheapest so small gaps show), the read/write/uncached split,
 * the price table. Throws a decode error naming the bad field for a value that is not a
 * report.
 *
 * @example
 * ```ts no-run
 * import { writeFileSync } from "node:fs"
 * import { renderReplayHtml } from "@strata/ui"
 * declare const report: unknown // JSON.parse of `strata replay --json`
 * writeFileSync("replay.html", renderReplayHtml(report))
 * ```
 */
export const renderReplayHtml = (report: unknown, options: { readonly title?: string | undefined } = {}): string => {
  const decoded = decodeReport(report)
  const title = options.title ?? `Replay: ${decoded.session} session, ${decoded.model}`
  const data: ReplayPageData = { title, report: decoded, prices: pricesOf(decoded.provider, decoded.model) }
  const json = scriptJson(data)
  // An end tag inside the inlined code would close its element early.
  const script = asset("replay.js").replace(/<\/script/gi, "<\\/script")
  const css = asset("replay.css").replace(/<\/style/gi, "<\\/style")
  const csp = `default-src 'none'; script-src ${sha256(script)}; style-src ${sha256(css)}; img-src data:; base-uri 'none'; form-action 'none'`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<div id="app"></div>
<script type="application/json" id="report">${json}</script>
<script type="module">${script}</script>
</body>
</html>
`
}
