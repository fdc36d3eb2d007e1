/**
 * `strata proxy`: a local proxy in front of the Anthropic and OpenAI APIs that changes only
 * the cache controls of the requests it forwards. The flags go to `@strata/proxy`'s
 * `runProxy`, loaded only when the command runs.
 */
import { resolve } from "node:path"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { CliEnvironment } from "../support/environment.ts"
import { JsonFlag, opt } from "../support/flags.ts"
import { JSON_SCHEMA_VERSION } from "../support/output.ts"

const MODES = ["observe", "cache", "edit"] as const

export const proxy = Command.make(
  "proxy",
  {
    host: Flag.String("host").pipe(Flag.withDescription("Address to listen on (default 127.0.0.1; anything else is reachable from other hosts and prints a warning)"), Flag.withDefault("127.0.0.1")),
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on; 0 picks a free one"), Flag.withDefault(8787)),
    upstream: Flag.String("upstream").pipe(Flag.withMetavar("URL"), Flag.withDescription("Send every provider path to this base URL (a gateway, a test server)"), Flag.optional),
    anthropicUpstream: Flag.String("anthropic-upstream").pipe(Flag.withMetavar("URL"), Flag.withDescription("Base URL for Anthropic paths (default https://api.anthropic.com)"), Flag.optional),
    openaiUpstream: Flag.String("openai-upstream").pipe(Flag.withMetavar("URL"), Flag.withDescription("Base URL for OpenAI paths (default https://api.openai.com)"), Flag.optional),
    mode: Flag.Literals("mode", MODES).pipe(Flag.withDescription("observe: change nothing, measure everything; cache (default): change only cache controls; edit: cache, and replace superseded tool results (a file read again or edited since, a command run again) by a placeholder (Anthropic Messages, OpenAI Responses)"), Flag.withDefault("cache" as const)),
    record: Flag.String("record").pipe(Flag.withMetavar("DIR"), Flag.withDescription("Write each session's requests as a recorded transcript DIR/<session>.jsonl (for strata replay --transcript)"), Flag.optional),
    quiet: Flag.Boolean("quiet").pipe(Flag.withDescription("No line per request"), Flag.withDefault(false))
  },
  (flags) =>
    // Uninterruptible: Ctrl-C (and SIGTERM) are the proxy's own way to stop: it lets the
    // streams in flight finish and commits, then the command exits 0, not 130.
    Effect.uninterruptible(Effect.gen(function* () {
      const json = yield* JsonFlag
      const { runProxyWithDashboard } = yield* Effect.promise(() => import("../run/proxy.ts"))
      const { env, cwd } = yield* CliEnvironment
      const record = opt(flags.record)
      yield* Effect.promise(() =>
        runProxyWithDashboard({
          host: flags.host,
          port: flags.port,
          upstream: opt(flags.upstream),
          anthropicUpstream: opt(flags.anthropicUpstream),
          openaiUpstream: opt(flags.openaiUpstream),
          mode: flags.mode,
          recordDir: record === undefined ? undefined : resolve(cwd, record),
          quiet: flags.quiet,
          json,
          jsonHead: { schemaVersion: JSON_SCHEMA_VERSION },
          store: env["STRATA_STORE"],
          stateRoot: cwd
        })
      )
      yield* Effect.sync(() => process.exit(0))
    }))
).pipe(
  Command.withDescription(
    "Run a local proxy in front of the Anthropic and OpenAI APIs for agents you cannot change (Claude Code, Codex CLI, SDK programs). It forwards every request, changing only the provider's cache controls (marker lifetimes from the session's rhythm, a marker where a step outgrows the lookback window, OpenAI's prompt_cache_key), reads each reply's usage as it streams past, keeps sessions (found from content) in the state store (STRATA_STORE) and prints one line per request. GET /strata/sessions lists them as JSON; the dashboard of strata ui is at the proxy's own address (/)."
  ),
  Command.withShortDescription("A caching proxy for coding agents"),
  Command.withExamples([
    { command: "strata proxy", description: "Then: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude" },
    { command: "strata proxy --mode observe --json", description: "Change nothing, one JSON line per request" },
    { command: "strata proxy --port 0 --upstream http://127.0.0.1:9000 --record sessions/", description: "Against a local server, recording transcripts" }
  ])
)
