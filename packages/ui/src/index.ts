/**
 * `@strata/ui`: the Strata dashboard. JSON endpoints over the state store (sessions,
 * requests, blocks, cleared tool results), server-sent events on each commit, and a page
 * bundled at build time (Preact, uPlot) served from the package; `strata ui` serves it
 * alone, `strata proxy` mounts `dashboardHandler` at `/`. `renderReplayHtml` turns a replay
 * report into one self-contained page with the same charts.
 */
export { storeSessionCatalog, type ListedSession, type SessionCatalog } from "./catalog.ts"
export {
  DASHBOARD_PREFIX,
  dashboardHandler,
  serveDashboard,
  type DashboardHandler,
  type DashboardOptions,
  type DashboardServer
} from "./server.ts"
export {
  renderReplayHtml,
  ReplayReportInput,
  ReplayRow,
  ReplayTurn,
  type ReplayPageData,
  type ReplayPrices
} from "./replayHtml.ts"
export {
  BlockDetail,
  BlockRow,
  clearedLedger,
  CHART_BARS,
  ContentSplit,
  decodeStoredRequests,
  LedgerEntry,
  MissRow,
  requestDetail,
  RequestDetail,
  RequestRow,
  requestRowPage,
  RequestRowPage,
  requestRows,
  SessionCharts,
  sessionCharts,
  sessionId,
  sessionRequests,
  type SessionRequests,
  SessionSummary as DashboardSessionSummary,
  sessionSummary,
  SessionView,
  sessionView,
  TABLE_ROWS,
  TokenSplit,
  tokenSplit
} from "./views.ts"
export { openInBrowser, PROXY_REPOSITORY, runUi, UiError, type UiOptions } from "./runUi.ts"
