/**
 * `strata mcp`: serve the repository's symbol index to agents over MCP (stdio, or
 * streamable HTTP on 127.0.0.1). Parses flags and calls `runMcpServer` of `@strata/mcp`.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { resolveRepo } from "../support/context.ts"
import { UsageError } from "../support/errors.ts"
import { RepoFlag } from "../support/flags.ts"

export const mcp = Command.make(
  "mcp",
  {
    http: Flag.Boolean("http").pipe(Flag.withDescription("Serve streamable HTTP on 127.0.0.1 (POST /mcp) instead of stdio"), Flag.withDefault(false)),
    port: Flag.Int("port").pipe(Flag.withDescription("Port for --http (default 8765; 0 picks a free one)"), Flag.optional)
  },
  (flags) =>
    Effect.gen(function* () {
      const port = Option.getOrUndefined(flags.port)
      if (port !== undefined && !flags.http) return yield* new UsageError({ reason: "--port needs --http (stdio is the default transport)" })
      if (port !== undefined && (port < 0 || port > 65535)) return yield* new UsageError({ reason: `--port must be between 0 and 65535, got ${port}` })
      const root = yield* resolveRepo(Option.getOrUndefined(yield* RepoFlag))
      const { runMcpServer } = yield* Effect.promise(() => import("@strata/mcp"))
      return yield* runMcpServer({
        root,
        http: flags.http ? { port: port ?? 8765 } : undefined,
        // stdout carries the protocol over stdio; the endpoint goes to stderr either way.
        onListening: (endpoint) => process.stderr.write(`strata mcp: serving ${endpoint.url}\n`)
      })
    })
).pipe(
  Command.withDescription(
    "Serve the repository's symbol index to agents over MCP: tools repo_map (ranked by the agent's focus files and identifiers), find_symbol, find_references, file_outline, repo_tree, and cache_report when a Strata session exists; resources strata://map and strata://tree. Stdio by default (what agents start as a subprocess); --http serves streamable HTTP on 127.0.0.1."
  ),
  Command.withShortDescription("Serve the symbol index to agents over MCP"),
  Command.withExamples([
    { command: "claude mcp add strata -- strata mcp --repo .", description: "Give Claude Code the tools (stdio)" },
    { command: "strata mcp --http --port 8765", description: "Streamable HTTP at http://127.0.0.1:8765/mcp" }
  ])
)
