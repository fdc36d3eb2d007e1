/**
 * The page's first script, a few hundred bytes loaded before the stylesheet and the bundle:
 * it requests the JSON of the view the address names, so the server answers while the
 * bundle is still loading and starting. app.tsx takes the response from `window.strataEarly`.
 */
import { API, parseRoute, routePath } from "./route.ts"

const path = routePath(parseRoute(location.hash))
const response = fetch(API + path)
// The page reports a failed request when it reads it; this only keeps an unread failure from being "unhandled".
response.catch(() => undefined)
window.strataEarly = { path, response }
