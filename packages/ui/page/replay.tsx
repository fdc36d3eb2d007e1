/**
 * The replay report page, with the dashboard's charts: cumulative cost per strategy (log
 * scale), each strategy against the cheapest (so 4% gaps show), cost per turn in one panel
 * per strategy, tokens by billing per strategy, the totals table and the price table. Its
 * data sit in the page as JSON (`renderReplayHtml`), so the file works offline.
 */
import { render } from "preact"
import { useMemo, useState } from "preact/hooks"
import type { ReplayPageData } from "../src/replayHtml.ts"
import { Lines, StackedBars } from "./charts.tsx"
import { SERIES } from "./colors.ts"
import { percent, tokens, usd } from "./format.ts"
import "uplot/dist/uPlot.min.css"
import "./styles.css"

/** Strategies more than this many percent above the cheapest are left out of the relative chart. */
const RELATIVE_LIMIT = 50

const readData = (): ReplayPageData | undefined => {
  const text = document.getElementById("report")?.textContent
  // The page's own generator wrote this JSON from a decoded report.
  return text === undefined || text === null ? undefined : (JSON.parse(text) as ReplayPageData)
}

const Replay = ({ data }: { readonly data: ReplayPageData }) => {
  const { report, prices } = data
  const [log, setLog] = useState(true)
  const money = report.costUnit === "usd" ? usd : (v: number) => `${tokens(v)} eq. tokens`
  const unit = report.costUnit === "usd" ? "USD" : "input-equivalent tokens"
  const series = useMemo(() => {
    const names = report.rows.map((r) => r.strategy)
    const x = report.perTurn.map((t) => t.index)
    const perTurn = names.map((n, i) => ({ label: n, color: SERIES[i % SERIES.length] ?? "#000", values: report.perTurn.map((t) => t.cost[n] ?? 0) }))
    const cumulative = perTurn.map((s) => {
      let sum = 0
      return { ...s, values: s.values.map((v) => (sum += v)) }
    })
    const cheapest = x.map((_, i) => Math.min(...cumulative.map((s) => s.values[i] ?? Infinity)))
    const gaps = cumulative.map((s) => ({ ...s, values: s.values.map((v, i) => ((cheapest[i] ?? 0) > 0 ? (v / (cheapest[i] ?? 1) - 1) * 100 : 0)) }))
    // Strategies far above the rest (no caching) would flatten the few-percent gaps this chart is for.
    const final = (s: { readonly values: ReadonlyArray<number> }) => s.values.at(-1) ?? 0
    const relative = gaps.filter((s) => final(s) <= RELATIVE_LIMIT)
    const far = gaps.filter((s) => final(s) > RELATIVE_LIMIT).map((s) => `${s.label} (+${final(s).toFixed(0)}%)`)
    const strategyX = names.map((_, i) => i)
    const split = [
      { label: "cache read", color: "#2f855a", values: report.rows.map((r) => r.cacheRead) },
      { label: "cache write", color: "#d69e2e", values: report.rows.map((r) => r.cacheWrite) },
      { label: "uncached", color: "#c53030", values: report.rows.map((r) => r.uncached) }
    ]
    return { names, x, perTurn, cumulative, relative, far, strategyX, split }
  }, [report])
  return (
    <main id="main">
      <h1>{data.title}</h1>
      <p class="muted">
        {report.session} session over {report.repo}: {tokens(report.turns)} turns, {tokens(report.requests)} requests per strategy, {report.provider} {report.model}; cost in {unit}.
      </p>
      <h2>Totals per strategy</h2>
      <div class="scroll" tabIndex={0} role="region" aria-label="Totals per strategy">
        <table class="data" id="totals">
          <thead>
            <tr>
              <th scope="col">Strategy</th>
              <th scope="col" class="num">Cost</th>
              <th scope="col" class="num">vs none</th>
              <th scope="col" class="num">vs bound</th>
              <th scope="col" class="num">Hit rate</th>
              <th scope="col" class="num">Read</th>
              <th scope="col" class="num">Write</th>
              <th scope="col" class="num">Uncached</th>
            </tr>
          </thead>
          <tbody>
            {report.rows.map((r) => {
              const cost = report.costUnit === "usd" ? (r.usd ?? null) : r.equivalentTokens
              return (
                <tr key={r.strategy} data-strategy={r.strategy}>
                  <th scope="row">{r.strategy}</th>
                  <td class="num" data-value={cost ?? ""}>{cost === null ? "—" : money(cost)}</td>
                  <td class="num">{r.vsNone === undefined || r.vsNone === null ? "—" : `${r.vsNone.toFixed(3)}×`}</td>
                  <td class="num">{r.vsOracle === undefined || r.vsOracle === null ? "—" : `${r.vsOracle.toFixed(3)}×`}</td>
                  <td class="num" data-value={r.hitRate}>{percent(r.hitRate)}</td>
                  <td class="num" data-value={r.cacheRead}>{tokens(r.cacheRead)}</td>
                  <td class="num" data-value={r.cacheWrite}>{tokens(r.cacheWrite)}</td>
                  <td class="num" data-value={r.uncached}>{tokens(r.uncached)}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      <div class="toggle">
        <label><input type="checkbox" checked={log} onChange={(e) => setLog(e.currentTarget.checked)} /> Log scale for cumulative cost</label>
      </div>
      <div class="grid">
        <Lines title="Cumulative cost per strategy" x={series.x} xLabel="turn" lines={series.cumulative} yLabel={unit} log={log} />
        <Lines
          title={`Cumulative cost above the cheapest strategy (%)${series.far.length === 0 ? "" : `; not drawn: ${series.far.join(", ")}`}`}
          x={series.x}
          xLabel="turn"
          lines={series.relative}
          yLabel="% above cheapest"
        />
        <StackedBars title="Input tokens by billing, per strategy" x={series.strategyX} xNames={series.names} xLabel="strategy" bands={series.split} yLabel="tokens" height={300} />
      </div>
      <h2>Cost per turn, one panel per strategy</h2>
      <div class="panels">
        {series.perTurn.map((s) => (
          <Lines key={s.label} title={s.label} x={series.x} xLabel="turn" lines={[s]} yLabel={unit} height={160} />
        ))}
      </div>
      <h2>Prices used</h2>
      {prices === null ? (
        <p>No price table row for {report.provider}; costs are in input-equivalent tokens.</p>
      ) : (
        <table class="data" id="prices">
          <caption class="sr-only">Price table</caption>
          <thead>
            <tr><th scope="col">Lifetime</th><th scope="col" class="num">Seconds</th><th scope="col" class="num">Write ×</th><th scope="col" class="num">Read ×</th></tr>
          </thead>
          <tbody>
            {prices.ttls.map((t) => (
              <tr key={t.name}><th scope="row">{t.name}</th><td class="num">{t.seconds}</td><td class="num">{t.write}</td><td class="num">{t.read}</td></tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <td colSpan={4}>
                {prices.family}: input {prices.inputPerMTok === null ? "—" : `$${prices.inputPerMTok}`}/MTok, output {prices.outputPerMTok === null ? "—" : `$${prices.outputPerMTok}`}/MTok
                {prices.asOf === null ? "" : ` (as of ${prices.asOf}, source ${prices.source ?? "?"})`}
              </td>
            </tr>
          </tfoot>
        </table>
      )}
    </main>
  )
}

const root = document.getElementById("app")
const data = readData()
if (root !== null && data !== undefined) render(<Replay data={data} />, root)
