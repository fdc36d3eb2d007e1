/**
 * The MCP server over one repository's symbol index, on the official SDK: stdio (what
 * agents start as a subprocess) or streamable HTTP on 127.0.0.1. The index stays warm
 * between calls and re-indexes changed files (an mtime and size check) before each
 * answer, so a call never returns symbols of a deleted file.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option, type Scope } from "effect"
import { realpathSync } from "node:fs"
import { resolve } from "node:path"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { RepositoryUnavailable, UnknownTool } from "./internal/errors.ts"
import { makeFreshIndex } from "./internal/freshIndex.ts"
import { cacheReport } from "./session.ts"
import { CACHE_REPORT_TOOL, renderRepoMap, SYMBOL_TOOLS, type ToolContext, type ToolEntry } from "./tools.ts"

const VERSION = "0.1.0"

/** The map resource's budget: the map an agent reads whole, cut like `repo_map`'s. */
export const MAP_RESOURCE_TOKENS = 8192

/** Options of `makeStrataMcp`. */
export interface StrataMcpOptions {
  /** Repository root (an absolute path, or relative to the working directory). */
  readonly root: string
  /** The session store spec for `cache_report` (`file`, `memory`, `postgres://...`); default `STRATA_STORE`, else files. */
  readonly store?: string | undefined
  /** Keep the symbol cache under `.strata/symbols/` (default true). */
  readonly cache?: boolean
}

/** A warm index and the tools over it: what each MCP connection serves. */
export interface StrataMcp {
  readonly root: string
  readonly context: ToolContext
  /** The tools to list: the symbol tools, plus `cache_report` when the repository has a session. */
  readonly tools: Effect.Effect<ReadonlyArray<ToolEntry>>
  /** A new SDK `Server` with every handler installed, for one transport. */
  readonly server: () => Server
}

const text = (body: string, isError = false): CallToolResult => ({ content: [{ type: "text", text: body }], ...(isError ? { isError: true } : {}) })

/**
 * Index the repository (once; later calls re-index only what changed, seen by directory
 * watchers that live as long as the scope) and return the MCP handlers over it.
 *
 * @example
 * ```ts no-run
 * import { makeStrataMcp } from "@strata/mcp"
 * import { Effect } from "effect"
 * const names = await Effect.runPromise(
 *   Effect.scoped(Effect.flatMap(makeStrataMcp({ root: "." }), (mcp) => mcp.tools)).pipe(Effect.map((tools) => tools.map((t) => t.name)))
 * )
 * names // ["repo_map", "find_symbol", "find_references", "file_outline", "repo_tree"]
 * ```
 */
export const makeStrataMcp = (options: StrataMcpOptions): Effect.Effect<StrataMcp, RepositoryUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const root = realpathSync(resolve(options.root))
    const index = yield* makeFreshIndex(root, { cache: options.cache ?? true })
    const snapshot = index.snapshot
    const context: ToolContext = { root, snapshot, cacheReport: (name) => cacheReport(root, name, options.store) }
    const tools = context.cacheReport(undefined).pipe(
      Effect.map((report) => (report === undefined ? SYMBOL_TOOLS : [...SYMBOL_TOOLS, CACHE_REPORT_TOOL])),
      Effect.orElseSucceed(() => SYMBOL_TOOLS)
    )
    const callTool = (name: string, args: unknown): Promise<CallToolResult> =>
      Effect.runPromiseExit(
        Effect.gen(function* () {
          const all = [...SYMBOL_TOOLS, CACHE_REPORT_TOOL]
          const tool = all.find((t) => t.name === name)
          if (tool === undefined) return yield* new UnknownTool({ tool: name, available: (yield* tools).map((t) => t.name) })
          return yield* tool.call(context, args)
        })
      ).then((exit) => {
        if (Exit.isSuccess(exit)) return text(exit.value)
        const error = Cause.findErrorOption(exit.cause)
        if (Option.isNone(error)) throw new McpError(ErrorCode.InternalError, Cause.pretty(exit.cause))
        // The call itself was wrong: a protocol error. The tool ran and failed: a tool error the model reads.
        if (error.value._tag === "UnknownTool" || error.value._tag === "InvalidToolInput") throw new McpError(ErrorCode.InvalidParams, error.value.message)
        return text(error.value.message, true)
      })
    const readResource = (uri: string): Promise<string> =>
      Effect.runPromise(
        Effect.gen(function* () {
          const map = yield* snapshot
          if (uri === "strata://map") return yield* renderRepoMap(map, { budget: MAP_RESOURCE_TOKENS, files: [], identifiers: [] })
          if (uri === "strata://tree") return map.fileTree
          return yield* Effect.fail(new McpError(ErrorCode.InvalidParams, `Unknown resource ${uri}; this server has strata://map and strata://tree`))
        })
      )
    const server = (): Server => {
      const s = new Server({ name: "strata", version: VERSION }, { capabilities: { tools: {}, resources: {} } })
      s.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: (await Effect.runPromise(tools)).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))
      }))
      s.setRequestHandler(CallToolRequestSchema, (request) => callTool(request.params.name, request.params.arguments))
      s.setRequestHandler(ListResourcesRequestSchema, () => ({
        resources: [
          { uri: "strata://map", name: "map", title: "Repository symbol map", description: `The symbol map, most referenced files first, cut to ${MAP_RESOURCE_TOKENS} tokens`, mimeType: "text/plain" },
          { uri: "strata://tree", name: "tree", title: "Repository file tree", description: "Every file of the repository, one path per line, sorted", mimeType: "text/plain" }
        ]
      }))
      s.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
        contents: [{ uri: request.params.uri, mimeType: "text/plain", text: await readResource(request.params.uri) }]
      }))
      return s
    }
    return { root, context, tools, server }
  })

/**
 * Serve over stdio until the client closes the stream. Nothing but protocol messages is
 * written to stdout.
 */
export const serveStdio = (mcp: StrataMcp): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const server = mcp.server()
    const transport = new StdioServerTransport()
    transport.onclose = () => resume(Effect.void)
    process.stdin.once("end", () => void server.close())
    server.connect(transport).catch(() => resume(Effect.void))
    return Effect.promise(() => server.close())
  })

/** A running HTTP endpoint. */
export interface HttpEndpoint {
  /** `http://127.0.0.1:PORT/mcp` */
  readonly url: string
  readonly port: number
}

/**
 * Serve streamable HTTP on 127.0.0.1 (POST `/mcp`, stateless: every request gets its own
 * SDK server and transport over the shared index) for as long as the scope lives. Plain
 * `node:http` because the SDK's transport is written against its request and response.
 */
export const serveHttp = (mcp: StrataMcp, port = 0): Effect.Effect<HttpEndpoint, RepositoryUnavailable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly http: HttpServer; readonly endpoint: HttpEndpoint }, RepositoryUnavailable>((resume) => {
      const http = createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0]
        if (path !== "/mcp") {
          res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the MCP endpoint is POST /mcp\n")
          return
        }
        if (req.method !== "POST") {
          res.writeHead(405, { "content-type": "application/json", allow: "POST" })
          res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: ErrorCode.InvalidRequest, message: "This server is stateless: send requests with POST /mcp" }, id: null }))
          return
        }
        const server = mcp.server()
        const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
        res.on("close", () => {
          void transport.close()
          void server.close()
        })
        server
          .connect(transport)
          .then(() => transport.handleRequest(req, res))
          .catch((error: unknown) => {
            if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
            res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: ErrorCode.InternalError, message: String(error) }, id: null }))
          })
      })
      http.once("error", (error) => resume(Effect.fail(new RepositoryUnavailable({ root: mcp.root, reason: `cannot listen on 127.0.0.1:${port}: ${error.message}` }))))
      http.listen(port, "127.0.0.1", () => {
        const bound = (http.address() as AddressInfo).port
        resume(Effect.succeed({ http, endpoint: { url: `http://127.0.0.1:${bound}/mcp`, port: bound } }))
      })
    }),
    ({ http }) =>
      Effect.callback<void>((resume) => {
        http.closeAllConnections()
        http.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ endpoint }) => endpoint))

/** Options of `runMcpServer`, the `strata mcp` command. */
export interface RunMcpOptions extends StrataMcpOptions {
  /** Serve streamable HTTP on this port of 127.0.0.1 instead of stdio (0: any free port). */
  readonly http?: { readonly port: number } | undefined
  /** Hears the HTTP endpoint once it listens (the CLI prints it on stderr). */
  readonly onListening?: (endpoint: HttpEndpoint) => void
}

/**
 * Index the repository and serve MCP: over stdio until the client closes it, or over
 * HTTP until interrupted.
 *
 * @example
 * ```ts no-run
 * import { runMcpServer } from "@strata/mcp"
 * import { Effect } from "effect"
 * Effect.runFork(runMcpServer({ root: ".", http: { port: 8765 }, onListening: (e) => console.error(e.url) }))
 * ```
 */
export const runMcpServer = (options: RunMcpOptions): Effect.Effect<void, RepositoryUnavailable> =>
  Effect.gen(function* () {
    const mcp = yield* makeStrataMcp(options)
    if (options.http === undefined) return yield* serveStdio(mcp)
    const endpoint = yield* serveHttp(mcp, options.http.port)
    options.onListening?.(endpoint)
    return yield* Effect.never
  }).pipe(Effect.scoped)
