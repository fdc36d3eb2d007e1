/**
 * The dashboard page: the sessions list, one session (tokens by billing and by content per
 * request, cumulative cost, blocks and breakpoints, misses, the cleared ledger) and one
 * request's blocks. It reads the JSON endpoints and refetches when the server's event
 * stream says a session changed. Every string goes through Preact's text nodes, so content
 * (a tool result holding `<script>`) is shown, never run.
 */
import { render, type JSX } from "preact"
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks"
import type { RequestDetail, RequestRow, RequestRowPage, SessionSummary, SessionView } from "../src/views.ts"
import { Lines, StackedBars } from "./charts.tsx"
import { BILLING, CONTENT } from "./colors.ts"
import { percent, time, tokens, usd } from "./format.ts"
import { API, parseRoute, routePath, type Route } from "./route.ts"
import "uplot/dist/uPlot.min.css"
import "./styles.css"


const sessionHref = (id: string): string => `#/s/${encodeURIComponent(id)}`
const requestHref = (id: string, index: number): string => `${sessionHref(id)}/r/${index}`

/**
 * The first view's JSON: requested by boot.js before the bundle loaded (or now, when it did
 * not run), so it arrives sooner. Taken once, by the first read of it.
 */
const first = routePath(parseRoute(location.hash))
const early = new Map<string, Promise<Response>>([[first, window.strataEarly?.path === first ? window.strataEarly.response : fetch(API + first)]])

/** A fetched value, refetched whenever `version` changes; no request while `path` is undefined. */
const useJson = <A,>(path: string | undefined, version: number): { readonly data: A | undefined; readonly error: string | undefined } => {
  const [state, setState] = useState<{ readonly path: string | undefined; readonly data: A | undefined; readonly error: string | undefined }>({ path, data: undefined, error: undefined })
  useEffect(() => {
    if (path === undefined) return
    let live = true
    const started = early.get(path)
    early.delete(path)
    ;(version === 0 && started !== undefined ? started : fetch(API + path))
      .then(async (r) => {
        const body: unknown = await r.json()
        if (!live) return
        if (!r.ok) setState({ path, data: undefined, error: typeof body === "object" && body !== null && "error" in body ? String(body.error) : r.statusText })
        // The server's Schemas define these shapes; the page trusts its own server.
        else setState({ path, data: body as A, error: undefined })
      })
      .catch((e: unknown) => live && setState({ path, data: undefined, error: String(e) }))
    return () => {
      live = false
    }
  }, [path, version])
  return state.path === path ? state : { data: undefined, error: undefined }
}

/** A number cell: the figure as text, the raw value in `data-value` (the tests compare both with the endpoints). */
const Num = ({ value, format }: { readonly value: number | null; readonly format: (v: number) => string }) => (
  <td class="num" data-value={value === null ? "" : String(value)}>{value === null ? "—" : format(value)}</td>
)

const Status = ({ error }: { readonly error: string | undefined }) =>
  error === undefined ? <p class="muted" role="status">Loading…</p> : <p class="error" role="alert">{error}</p>

// ---------------------------------------------------------------------------------

const SessionsList = ({ version }: { readonly version: number }) => {
  const { data, error } = useJson<{ readonly store: string; readonly sessions: ReadonlyArray<SessionSummary> }>("sessions", version)
  useEffect(() => {
    document.title = "Sessions · Strata"
  }, [])
  if (data === undefined) return <Status error={error} />
  return (
    <section aria-labelledby="sessions-heading">
      <h1 tabIndex={-1} id="sessions-heading">Sessions</h1>
      <p class="muted">Store: {data.store}</p>
      {data.sessions.length === 0 ? (
        <p>No session has committed a request yet.</p>
      ) : (
        <table class="data" id="sessions">
          <caption class="sr-only">Sessions, most recent first</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Source</th>
              <th scope="col" class="num">Requests</th>
              <th scope="col" class="num">Cost</th>
              <th scope="col" class="num">Without caching</th>
              <th scope="col" class="num">Saved</th>
              <th scope="col" class="num">Hit rate</th>
              <th scope="col">Last request (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {data.sessions.map((s) => (
              <tr key={s.id} data-session={s.id}>
                <th scope="row"><a href={sessionHref(s.id)}>{s.name}</a><span class="repo">{s.repository}</span></th>
                <td class="nowrap">{s.source} · {s.provider}</td>
                <Num value={s.requests} format={tokens} />
                <Num value={s.cost} format={usd} />
                <Num value={s.uncachedCost} format={usd} />
                <Num value={s.saved} format={usd} />
                <Num value={s.hitRate} format={percent} />
                <td class="nowrap">{time(s.lastAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

// ---------------------------------------------------------------------------------

const Blocks = ({ row }: { readonly row: RequestRow }) => (
  <span class="blocks">
    {row.blocks.map((b, i) => (
      <span key={i} class={`block tier-${b.tier} ${b.changed ? "changed" : ""}`} title={`${b.tier}: ${tokens(b.tokens)} tokens, ${b.changed ? "changed" : "unchanged"}${b.breakpoint === null ? "" : `, breakpoint ${b.breakpoint}`}`}>
        {b.tier}
        {b.breakpoint === null ? "" : `·${b.breakpoint}`}
        {b.changed ? "*" : ""}
      </span>
    ))}
  </span>
)

/** A requests-table row's height in CSS pixels: styles.css keeps every row to one line of this height. */
const ROW_PX = 30
/** Rows rendered beyond the visible ones, above and below. */
const OVERSCAN = 10
/** Rows one read of `GET .../requests` asks for at least. */
const PAGE_ROWS = 100
/** The table region's height until it is measured (its CSS max-height, 32rem). */
const REGION_PX = 512

const NO_ROWS: ReadonlyMap<number, RequestRow> = new Map()

const RequestRowView = ({ id, r, position }: { readonly id: string; readonly r: RequestRow; readonly position: number }) => (
  <tr data-request={r.index} aria-rowindex={position} class={r.miss === null ? "" : "missed"}>
    <th scope="row"><a href={requestHref(id, r.index)}>{r.index}</a></th>
    <td>{time(r.at)}</td>
    <td>{r.model}</td>
    <Num value={r.tokens.read} format={tokens} />
    <Num value={r.tokens.write5m} format={tokens} />
    <Num value={r.tokens.write1h} format={tokens} />
    <Num value={r.tokens.uncached} format={tokens} />
    <Num value={r.tokens.output} format={tokens} />
    <Num value={r.cost} format={usd} />
    <Num value={r.uncachedCost} format={usd} />
    <td><Blocks row={r} /></td>
  </tr>
)

/**
 * Every request of the session in one scrolling region, oldest first, starting at the
 * latest (and following new ones while scrolled to the bottom). Only the rows in view
 * (and `OVERSCAN` either side) are in the DOM: padding stands in for the others, so a
 * 1,000-request session lays out a few dozen rows. The view carries the latest rows;
 * earlier ones are read a page at a time as they scroll into view.
 */
const RequestsTable = ({ id, view }: { readonly id: string; readonly view: SessionView }) => {
  const region = useRef<HTMLDivElement>(null)
  // undefined: scrolled to the bottom (follow the latest); else the region's scrollTop.
  const [scroll, setScroll] = useState<{ readonly top: number | undefined; readonly height: number }>({ top: undefined, height: REGION_PX })
  const latest = useMemo(() => new Map(view.requests.map((r) => [r.index, r])), [view])
  // Rows read earlier stay valid across commits (a commit only adds requests), while the
  // session and its first kept request stay the same.
  const scope = `${id}\u0000${view.omitted}`
  const [read, setRead] = useState<{ readonly scope: string; readonly rows: ReadonlyMap<number, RequestRow> }>({ scope, rows: NO_ROWS })
  const earlier = read.scope === scope ? read.rows : NO_ROWS
  const loading = useRef(new Set<string>())
  const total = view.total
  const top = scroll.top ?? Math.max(0, (total + 1) * ROW_PX - scroll.height)
  const start = Math.max(0, Math.min(total, Math.floor(top / ROW_PX) - OVERSCAN))
  const end = Math.min(total, start + Math.ceil(scroll.height / ROW_PX) + 2 * OVERSCAN)
  const rowAt = (k: number): RequestRow | undefined => latest.get(view.omitted + k) ?? earlier.get(view.omitted + k)
  // The region is a reversed flex column (styles.css): it starts scrolled to the bottom and stays
  // there as rows arrive, with no script reading the layout; its scrollTop runs from minus the
  // scrollable height (the top) to 0 (the bottom).
  const onScroll = useCallback(() => {
    const el = region.current
    if (el === null) return
    const fromTop = el.scrollHeight - el.clientHeight + el.scrollTop
    const atBottom = el.scrollTop >= -2
    setScroll((s) => {
      const next = atBottom ? undefined : fromTop
      return s.top === next && s.height === el.clientHeight ? s : { top: next, height: el.clientHeight }
    })
  }, [])
  // Rows in the window that neither the view nor an earlier read holds: read them.
  useEffect(() => {
    let lo = -1
    let hi = -1
    for (let k = start; k < end; k++) {
      if (rowAt(k) !== undefined) continue
      if (lo < 0) lo = k
      hi = k
    }
    if (lo < 0) return
    const from = Math.max(0, Math.min(lo, hi + 1 - PAGE_ROWS))
    const key = `${view.summary.version}:${from}:${hi}`
    if (loading.current.has(key)) return
    loading.current.add(key)
    fetch(`${API}sessions/${encodeURIComponent(id)}/requests?from=${view.omitted + from}&limit=${hi + 1 - from}`)
      .then(async (r) => {
        // A failed read leaves its rows "Loading…" until they scroll into view again.
        if (!r.ok) return
        // The server's Schema defines this shape; the page trusts its own server.
        const page = (await r.json()) as RequestRowPage
        setRead((prev) => {
          const rows = new Map(prev.scope === scope ? prev.rows : NO_ROWS)
          for (const row of page.requests) rows.set(row.index, row)
          return { scope, rows }
        })
      })
      .catch(() => undefined)
      .finally(() => loading.current.delete(key))
  }, [id, view, scope, start, end, earlier])
  const shown: Array<JSX.Element> = []
  for (let k = start; k < end; k++) {
    const r = rowAt(k)
    shown.push(r === undefined
      ? <tr key={`loading-${k}`} aria-rowindex={k + 2} aria-busy="true"><td colSpan={11} class="muted">Loading request {view.omitted + k}…</td></tr>
      : <RequestRowView key={r.index} id={id} r={r} position={k + 2} />)
  }
  return (
    <div class="scroll follow" tabIndex={0} role="region" aria-labelledby="requests-heading" ref={region} onScroll={onScroll}>
      <div style={{ paddingTop: `${start * ROW_PX}px`, paddingBottom: `${(total - end) * ROW_PX}px` }}>
        <table class="data" id="requests" aria-rowcount={total + 1}>
          <thead>
            <tr aria-rowindex={1}>
              <th scope="col">#</th>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Model</th>
              <th scope="col" class="num">Read</th>
              <th scope="col" class="num">5m write</th>
              <th scope="col" class="num">1h write</th>
              <th scope="col" class="num">Uncached</th>
              <th scope="col" class="num">Output</th>
              <th scope="col" class="num">Cost</th>
              <th scope="col" class="num">No caching</th>
              <th scope="col">Blocks (tier·breakpoint, * changed)</th>
            </tr>
          </thead>
          <tbody>{shown}</tbody>
        </table>
      </div>
    </div>
  )
}

const SessionPage = ({ id, version }: { readonly id: string; readonly version: number }) => {
  const { data, error } = useJson<SessionView>(`sessions/${encodeURIComponent(id)}`, version)
  useEffect(() => {
    if (data !== undefined) document.title = `${data.summary.name} · Strata`
  }, [data])
  // The server computes the bars (means of consecutive requests) and the running totals; the page draws them.
  const charts = useMemo(() => {
    if (data === undefined) return undefined
    const c = data.charts
    return {
      billing: BILLING.map((b) => ({ label: b.label, color: b.color, values: c.billing[b.key] })),
      content: CONTENT.map((k) => ({ label: k.label, color: k.color, values: c.content[k.key] })),
      cost: [
        { label: "with Strata", color: "#2b6cb0", values: c.cost.cost },
        { label: "no caching", color: "#c53030", values: c.cost.uncached },
        ...(c.cost.asSent === null ? [] : [{ label: "as the agent sent it", color: "#6b46c1", values: c.cost.asSent }])
      ]
    }
  }, [data])
  const pick = useCallback((bar: number) => {
    const index = data?.charts.x[bar]
    if (index !== undefined) location.hash = requestHref(id, index)
  }, [data, id])
  if (data === undefined || charts === undefined) return <Status error={error} />
  const s = data.summary
  const size = data.charts.bucket
  return (
    <section aria-labelledby="session-heading">
      <nav aria-label="Breadcrumb"><a href="#/">Sessions</a> / {s.name}</nav>
      <h1 tabIndex={-1} id="session-heading">{s.name}</h1>
      <dl class="facts" id="session-facts">
        <div><dt>Requests</dt><dd data-value={s.requests}>{tokens(s.requests)}</dd></div>
        <div><dt>Cost</dt><dd data-value={s.cost ?? ""}>{usd(s.cost)}</dd></div>
        <div><dt>Without caching</dt><dd data-value={s.uncachedCost ?? ""}>{usd(s.uncachedCost)}</dd></div>
        <div><dt>Saved</dt><dd data-value={s.saved ?? ""}>{usd(s.saved)}</dd></div>
        <div><dt>Hit rate</dt><dd data-value={s.hitRate}>{percent(s.hitRate)}</dd></div>
        {s.asSentCost !== null && <div><dt>As the agent sent it</dt><dd data-value={s.asSentCost}>{usd(s.asSentCost)}</dd></div>}
        <div><dt>Source</dt><dd>{s.source} · {s.provider}</dd></div>
      </dl>
      {data.warnings.map((w, i) => <p key={i} class="warning" role="note">{w}</p>)}
      {data.omitted > 0 && <p class="muted">The {tokens(data.omitted)} oldest requests are counted in the totals only.</p>}
      <div class="grid">
        <StackedBars title={`Input tokens per request by billing${size > 1 ? ` (mean of ${size} requests per bar)` : ""}`} x={data.charts.x} bands={charts.billing} yLabel="tokens" onPick={pick} />
        <StackedBars title={`Input tokens per request by content${size > 1 ? ` (mean of ${size} requests per bar)` : ""}`} x={data.charts.x} bands={charts.content} yLabel="tokens" onPick={pick} />
        <Lines title="Cumulative cost" x={data.charts.x} xLabel="request" lines={charts.cost} yLabel="USD" />
      </div>
      {data.misses.length > 0 && (
        <section aria-labelledby="misses-heading">
          <h2 id="misses-heading">Misses</h2>
          <ul class="misses">
            {data.misses.map((r) => <li key={r.index}><a href={requestHref(id, r.index)}>Request {r.index}</a>: {r.miss}</li>)}
          </ul>
        </section>
      )}
      <h2 id="requests-heading">Requests</h2>
      <RequestsTable id={id} view={data} />
      {data.ledger.length > 0 && (
        <section aria-labelledby="ledger-heading">
          <h2 id="ledger-heading">Cleared tool results</h2>
          <table class="data" id="ledger">
            <thead>
              <tr><th scope="col">Tool call</th><th scope="col">Tool</th><th scope="col" class="num">Tokens (est.)</th><th scope="col">Placeholder</th></tr>
            </thead>
            <tbody>
              {data.ledger.map((e) => (
                <tr key={e.toolCallId}>
                  <td><code>{e.toolCallId}</code></td>
                  <td>{e.toolName}</td>
                  <Num value={e.tokens} format={tokens} />
                  <td>{e.placeholder}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </section>
  )
}

// ---------------------------------------------------------------------------------

const RequestPage = ({ id, index, version }: { readonly id: string; readonly index: number; readonly version: number }) => {
  const { data, error } = useJson<RequestDetail>(`sessions/${encodeURIComponent(id)}/requests/${index}`, version)
  useEffect(() => {
    document.title = `Request ${index} · Strata`
  }, [index])
  if (data === undefined) return <Status error={error} />
  const r = data.request
  return (
    <section aria-labelledby="request-heading">
      <nav aria-label="Breadcrumb"><a href="#/">Sessions</a> / <a href={sessionHref(id)}>{id.slice(0, id.lastIndexOf("@"))}</a> / request {index}</nav>
      <h1 tabIndex={-1} id="request-heading">Request {index}</h1>
      <dl class="facts" id="request-facts">
        <div><dt>Model</dt><dd>{r.model}</dd></div>
        <div><dt>Time (UTC)</dt><dd>{time(r.at)}</dd></div>
        <div><dt>Prompt tokens</dt><dd data-value={r.promptTokens}>{tokens(r.promptTokens)}</dd></div>
        <div><dt>Cache read</dt><dd data-value={r.tokens.read}>{tokens(r.tokens.read)}</dd></div>
        <div><dt>Cache write</dt><dd data-value={r.tokens.write5m + r.tokens.write1h}>{tokens(r.tokens.write5m + r.tokens.write1h)}</dd></div>
        <div><dt>Uncached</dt><dd data-value={r.tokens.uncached}>{tokens(r.tokens.uncached)}</dd></div>
        <div><dt>Cost</dt><dd data-value={r.cost ?? ""}>{usd(r.cost)}</dd></div>
        <div><dt>Usage from</dt><dd>{r.usageSource}</dd></div>
      </dl>
      {r.miss !== null && <p class="warning" role="note">Miss: {r.miss}</p>}
      {r.newlyCleared > 0 && <p>Context editing cleared {r.newlyCleared} tool results ({tokens(r.newlyClearedTokens)} tokens) in this request.</p>}
      <h2>Blocks in prefix order</h2>
      <ol class="block-list" id="blocks">
        {data.blocks.map((b, i) => (
          <li key={i} data-block={i}>
            <details open={b.changed && b.text !== null}>
              <summary>
                <span class={`block tier-${b.tier} ${b.changed ? "changed" : ""}`}>{b.tier}</span>{" "}
                <span data-value={b.tokens}>{tokens(b.tokens)} tokens</span>, {b.items} items, {b.changed ? "changed" : "unchanged"}
                {b.breakpoint === null ? ", no breakpoint" : `, breakpoint ${b.breakpoint}`} <code class="muted">{b.hash}</code>
              </summary>
              {b.text === null ? <p class="muted">Only the session's last request keeps its blocks' text.</p> : <pre class="body" tabIndex={0}>{b.text}</pre>}
            </details>
          </li>
        ))}
      </ol>
    </section>
  )
}

// ---------------------------------------------------------------------------------

const App = () => {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash))
  const [version, setVersion] = useState(0)
  const [live, setLive] = useState(false)
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", onHash)
    return () => removeEventListener("hashchange", onHash)
  }, [])
  useEffect(() => {
    const source = new EventSource(`${API}events`)
    source.addEventListener("open", () => setLive(true))
    source.addEventListener("error", () => setLive(false))
    source.addEventListener("change", () => setVersion((v) => v + 1))
    return () => source.close()
  }, [])
  useEffect(() => {
    // Move focus to the new view's heading, so keyboard and screen-reader users follow navigation.
    document.querySelector<HTMLElement>("main h1")?.focus()
  }, [route])
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">Strata</a>
        <span class={live ? "live on" : "live"} role="status" aria-live="polite">{live ? "live" : "offline"}</span>
      </header>
      <main id="main" data-version={version}>
        {route.view === "list" && <SessionsList version={version} />}
        {route.view === "session" && <SessionPage id={route.id} version={version} />}
        {route.view === "request" && <RequestPage id={route.id} index={route.index} version={version} />}
      </main>
    </>
  )
}

const root = document.getElementById("app")
if (root !== null) render(<App />, root)
