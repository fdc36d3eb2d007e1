/**
 * `@strata/mcp`: an MCP server over Strata's symbol index, for any agent that loads MCP
 * servers. Tools `repo_map` (ranked by the agent's focus), `find_symbol`,
 * `find_references`, `file_outline`, `repo_tree` and, with a session, `cache_report`;
 * resources `strata://map` and `strata://tree`. See README.md.
 */
export { BudgetTooSmall, FileNotInMap, InvalidToolInput, RepositoryUnavailable, UnknownTool } from "./internal/errors.ts"
export { cacheReport, formatCacheReport } from "./session.ts"
export {
  CACHE_REPORT_TOOL,
  CacheReportArgs,
  FileOutlineArgs,
  FindReferencesArgs,
  FindSymbolArgs,
  RepoMapArgs,
  RepoTreeArgs,
  renderRepoMap,
  SYMBOL_TOOLS,
  toolEntry,
  type Tool,
  type ToolContext,
  type ToolEntry,
  type ToolError
} from "./tools.ts"
export {
  makeStrataMcp,
  MAP_RESOURCE_TOKENS,
  runMcpServer,
  serveHttp,
  serveStdio,
  type HttpEndpoint,
  type RunMcpOptions,
  type StrataMcp,
  type StrataMcpOptions
} from "./server.ts"
