/**
 * The dashboard's HTTP side: a node:http request handler (the page, its bundled assets,
 * the JSON endpoints, server-sent events on each commit) that `strata ui` serves alone and
 * `strata proxy` mounts at `/` beside its forwarding routes. It is a plain node handler
 * rather than an Effect HTTP router so the proxy can put it in front of its own routes
 * with one `if`; the data it serves comes from Effects over `StateStore`.
 */
import * as http from "node:http"
import { formatSessionKey, type LoadedState, type RecordedRequest, type RequestPage, type StateStore, type StoredRequest } from "@strata/core/effect"
import { Effect } from "effect"
import type { ListedSession, SessionCatalog } from "./catalog.ts"
import { asset } from "./internal/assets.ts"
import {
  decodeStoredRequests,
  requestDetail,
  requestRowPage,
  requestRows,
  sessionId,
  sessionRequests,
  sessionView,
  summaryOf,
  type RequestRow,
  type SessionRequests,
  type SessionSummary
} from "./views.ts"

/** Every path the dashboard serves starts with this, except the page itself at `/`. */
export const DASHBOARD_PREFIX = "/_strata/"

/** Options of `dashboardHandler`. */
export interface DashboardOptions {
  readonly store: StateStore["Service"]
  readonly catalog: SessionCatalog
  /** How often the catalog is polled for commits while a page listens. Default 400 ms. */
  readonly pollMs?: number | undefined
  /**
   * Host names (without port) a request may name in its `Host` header. Default: loopback
   * names only (`127.0.0.1`, `localhost`, `::1`), which keeps a web page elsewhere from
   * reading the dashboard through DNS rebinding.
   */
  readonly hosts?: ReadonlyArray<string> | undefined
}

/**
 * A node:http handler: returns true when the request was the dashboard's (it answers it),
 * false otherwise (the caller handles it). `close()` ends its event streams and polling.
 */
export interface DashboardHandler {
  (req: http.IncomingMessage, res: http.ServerResponse): boolean
  readonly close: () => void
}

const LOOPBACK = ["127.0.0.1", "localhost", "::1", "[::1]"]

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Strata dashboard</title>
<link rel="icon" href="data:,">
<script src="${DASHBOARD_PREFIX}assets/boot.js"></script>
<link rel="stylesheet" href="${DASHBOARD_PREFIX}assets/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="${DASHBOARD_PREFIX}assets/app.js"></script>
</body>
</html>
`

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const send = (res: http.ServerResponse, status: number, type: string, body: string): void => {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const sendJson = (res: http.ServerResponse, status: number, value: unknown): void => send(res, status, "application/json; charset=utf-8", JSON.stringify(value))

/** A query parameter as a whole number: undefined when absent, null when not a whole number. */
const whole = (value: string | null): number | undefined | null => (value === null ? undefined : /^\d{1,9}$/.test(value) ? Number(value) : null)

const hostName = (header: string | undefined): string => {
  if (header === undefined) return ""
  if (header.startsWith("[")) return header.slice(0, header.indexOf("]") + 1)
  const colon = header.lastIndexOf(":")
  return colon < 0 ? header : header.slice(0, colon)
}

/**
 * The dashboard as a request handler over a store and its catalog.
 *
 * @example
 * ```ts no-run
 * import * as http from "node:http"
 * import { dashboardHandler } from "@strata/ui"
 * declare const options: import("@strata/ui").DashboardOptions
 * const dashboard = dashboardHandler(options)
 * http.createServer((req, res) => {
 *   if (dashboard(req, res)) return
 *   res.writeHead(404).end() // ... the proxy's own routes ...
 * }).listen(0, "127.0.0.1")
 * ```
 */
export const dashboardHandler = (options: DashboardOptions): DashboardHandler => {
  const { store, catalog } = options
  const pollMs = options.pollMs ?? 400
  const hosts = new Set([...LOOPBACK, ...(options.hosts ?? [])])
  const listeners = new Set<http.ServerResponse>()
  let versions = new Map<string, number>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const list = () => Effect.runPromise(catalog.list)

  // A session's state and views change only with its version: keep the latest of each,
  // and its request summaries, read on from where the last read stopped.
  interface Cached {
    readonly version: number
    readonly loaded: LoadedState
    readonly stored: ReadonlyArray<RecordedRequest>
    readonly skipped: number
    /** The version the next read of request summaries starts from. */
    readonly from: number
    readonly session: SessionRequests
    readonly rows: ReadonlyArray<RequestRow>
    summary?: SessionSummary
    view?: string
  }
  const cache = new Map<string, Cached>()
  const REQUESTS_PER_READ = 500

  const cached = async (listed: ListedSession): Promise<Cached> => {
    const id = sessionId(listed.key)
    const hit = cache.get(id)
    if (hit !== undefined && hit.version === listed.version) return hit
    const loaded = await Effect.runPromise(store.load(listed.key))
    const fresh: Array<StoredRequest> = []
    let from: number | undefined = hit?.from ?? 1
    let nextFrom = from
    while (from !== undefined) {
      const page: RequestPage = await Effect.runPromise(store.requests(listed.key, { from, limit: REQUESTS_PER_READ }))
      fresh.push(...page.requests)
      nextFrom = (page.requests.at(-1)?.version ?? nextFrom - 1) + 1
      from = page.next
    }
    const decoded = decodeStoredRequests(fresh)
    const stored = hit === undefined ? decoded.requests : [...hit.stored, ...decoded.requests]
    const skipped = (hit?.skipped ?? 0) + decoded.skipped
    const session = sessionRequests(loaded.snapshot, stored, skipped)
    // Rows carry running totals: extend the previous ones when nothing before them moved.
    const extend = hit !== undefined && hit.session.omitted === session.omitted && hit.session.requests.length + decoded.requests.length === session.requests.length
    const rows = extend
      ? [...hit.rows, ...requestRows(decoded.requests, session.omitted + hit.rows.length, hit.rows.at(-1))]
      : requestRows(session.requests, session.omitted)
    const entry: Cached = { version: loaded.snapshot.version, loaded, stored, skipped, from: nextFrom, session, rows }
    cache.set(id, entry)
    return entry
  }

  const findSession = async (id: string) => {
    const listed = (await list()).find((s) => sessionId(s.key) === id)
    return listed === undefined ? undefined : cached(listed)
  }

  const poll = async (): Promise<void> => {
    timer = undefined
    if (closed || listeners.size === 0) return
    try {
      const now = new Map((await list()).map((s) => [sessionId(s.key), s.version]))
      const changed = [...now].filter(([id, v]) => versions.get(id) !== v).map(([id, version]) => ({ id, version }))
      const removed = [...versions.keys()].filter((id) => !now.has(id))
      versions = now
      if (changed.length > 0 || removed.length > 0) {
        const data = `event: change\ndata: ${JSON.stringify({ changed, removed })}\n\n`
        for (const res of listeners) res.write(data)
      }
    } catch {
      // A failed listing (a store that is down) is retried on the next tick.
    }
    if (!closed && listeners.size > 0) timer = setTimeout(() => void poll(), pollMs)
  }

  const events = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" })
    res.write(": connected\n\n")
    listeners.add(res)
    const heartbeat = setInterval(() => res.write(": ping\n\n"), 15_000)
    req.on("close", () => {
      clearInterval(heartbeat)
      listeners.delete(res)
    })
    if (timer === undefined) {
      // Start from the current versions, so the first event is a real change.
      void list().then((all) => {
        versions = new Map(all.map((s) => [sessionId(s.key), s.version]))
        if (timer === undefined && !closed) timer = setTimeout(() => void poll(), pollMs)
      }, () => {
        if (timer === undefined && !closed) timer = setTimeout(() => void poll(), pollMs)
      })
    }
  }

  const api = async (path: string, query: URLSearchParams, res: http.ServerResponse): Promise<void> => {
    if (path === "sessions") {
      const listed = await list()
      const sessions = await Promise.all(listed.map(async (s) => {
        const entry = await cached(s)
        entry.summary ??= summaryOf(entry.loaded.snapshot, entry.session, entry.rows)
        return entry.summary
      }))
      sessions.sort((a, b) => (b.lastAt ?? 0) - (a.lastAt ?? 0) || a.name.localeCompare(b.name))
      return sendJson(res, 200, { store: catalog.describe, sessions })
    }
    const m = /^sessions\/([^/]+)(\/requests(?:\/(\d+))?)?$/.exec(path)
    if (m === null) return sendJson(res, 404, { error: `No endpoint /_strata/api/${path}` })
    const id = decodeURIComponent(m[1] ?? "")
    const entry = await findSession(id)
    if (entry === undefined) return sendJson(res, 404, { error: `No session ${id} in ${catalog.describe}` })
    const loaded = entry.loaded
    if (m[2] === undefined) {
      entry.view ??= JSON.stringify(sessionView(loaded.snapshot, entry.session, loaded.warnings, entry.rows))
      return send(res, 200, "application/json; charset=utf-8", entry.view)
    }
    if (m[3] === undefined) {
      const from = whole(query.get("from"))
      const limit = whole(query.get("limit"))
      if (from === null || limit === null) return sendJson(res, 400, { error: "from and limit are whole numbers (request indexes and a count)" })
      return sendJson(res, 200, requestRowPage(entry.rows, entry.session.omitted, from, limit))
    }
    const detail = requestDetail(loaded.snapshot, entry.session, Number(m[3]), entry.rows)
    if (detail === undefined) return sendJson(res, 404, { error: `Session ${formatSessionKey(loaded.snapshot.session)} keeps no request ${m[3]}` })
    return sendJson(res, 200, detail)
  }

  const handler = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const url = new URL(req.url ?? "/", "http://localhost")
    const path = url.pathname
    if (path !== "/" && path !== "/index.html" && !path.startsWith(DASHBOARD_PREFIX)) return false
    if (!hosts.has(hostName(req.headers.host))) {
      sendJson(res, 403, { error: `The dashboard answers requests for ${[...hosts].join(", ")} only (Host: ${req.headers.host ?? "none"})` })
      return true
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(res, 405, { error: "The dashboard is read-only: GET only" })
      return true
    }
    try {
      if (path === "/" || path === "/index.html") send(res, 200, "text/html; charset=utf-8", PAGE)
      else if (path === `${DASHBOARD_PREFIX}assets/boot.js`) send(res, 200, "text/javascript; charset=utf-8", asset("boot.js"))
      else if (path === `${DASHBOARD_PREFIX}assets/app.js`) send(res, 200, "text/javascript; charset=utf-8", asset("app.js"))
      else if (path === `${DASHBOARD_PREFIX}assets/app.css`) send(res, 200, "text/css; charset=utf-8", asset("app.css"))
      else if (path === `${DASHBOARD_PREFIX}api/events`) events(req, res)
      else if (path.startsWith(`${DASHBOARD_PREFIX}api/`)) {
        api(path.slice(`${DASHBOARD_PREFIX}api/`.length), url.searchParams, res).catch((error: unknown) => {
          if (!res.headersSent) sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) })
        })
      } else sendJson(res, 404, { error: `No dashboard path ${path}` })
    } catch (error) {
      sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) })
    }
    return true
  }

  return Object.assign(handler, {
    close: () => {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      for (const res of listeners) res.end()
      listeners.clear()
    }
  })
}

/** A running dashboard server. */
export interface DashboardServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * Serve the dashboard alone on `host:port` (port 0: any free port).
 *
 * @example
 * ```ts no-run
 * import { serveDashboard } from "@strata/ui"
 * declare const options: import("@strata/ui").DashboardOptions
 * const server = await serveDashboard({ ...options, port: 0 })
 * console.log(server.url)
 * await server.close()
 * ```
 */
export const serveDashboard = (options: DashboardOptions & { readonly port?: number | undefined; readonly host?: string | undefined }): Promise<DashboardServer> => {
  const host = options.host ?? "127.0.0.1"
  const handler = dashboardHandler({ ...options, hosts: [...(options.hosts ?? []), host] })
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) sendJson(res, 404, { error: `No dashboard path ${req.url ?? ""}` })
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const shown = host.includes(":") ? `[${host}]` : host
      resolve({
        url: `http://${shown}:${port}/`,
        port,
        close: () =>
          new Promise<void>((done) => {
            handler.close()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
