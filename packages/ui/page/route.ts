/** The dashboard's routes (in the address's hash) and the JSON each view reads first; shared by boot.ts and app.tsx. */

export const API = "/_strata/api/"

export type Route =
  | { readonly view: "list" }
  | { readonly view: "session"; readonly id: string }
  | { readonly view: "request"; readonly id: string; readonly index: number }

export const parseRoute = (hash: string): Route => {
  const m = /^#\/s\/([^/]+)(?:\/r\/(\d+))?$/.exec(hash)
  if (m === null) return { view: "list" }
  const id = decodeURIComponent(m[1] ?? "")
  return m[2] === undefined ? { view: "session", id } : { view: "request", id, index: Number(m[2]) }
}

/** The JSON a view reads first, relative to `API`. */
export const routePath = (route: Route): string =>
  route.view === "list" ? "sessions" : route.view === "session" ? `sessions/${encodeURIComponent(route.id)}` : `sessions/${encodeURIComponent(route.id)}/requests/${route.index}`

declare global {
  interface Window {
    /** The first view's JSON, requested by boot.js before the bundle loads. */
    strataEarly?: { readonly path: string; readonly response: Promise<Response> }
  }
}
