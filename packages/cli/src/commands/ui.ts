/**
 * `strata ui`: the live dashboard of the repository's sessions (`@strata/ui`), on loopback
 * unless `--host` says otherwise. The command resolves the store and calls `runUi`.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { commandContext } from "../support/context.ts"
import { Output } from "../support/output.ts"
import { storeChoice } from "../support/sessionState.ts"

export const ui = Command.make(
  "ui",
  {
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (default 0: any free port)"), Flag.withDefault(0)),
    host: Flag.String("host").pipe(Flag.withDescription("Address to listen on (default 127.0.0.1; anything else exposes your sessions to the network)"), Flag.withDefault("127.0.0.1")),
    open: Flag.Boolean("open").pipe(Flag.withDescription("Open the page in the system's browser"), Flag.withDefault(false))
  },
  (flags) =>
    Effect.gen(function* () {
      const ctx = yield* commandContext()
      const output = yield* Output
      const { runUi } = yield* Effect.promise(() => import("@strata/ui"))
      yield* runUi({
        repoRoot: ctx.root,
        store: storeChoice(ctx).layer,
        port: flags.port,
        host: flags.host,
        open: flags.open,
        announce: (url) => output.err(`Strata dashboard: ${url} (Ctrl-C to stop)`)
      })
    })
).pipe(
  Command.withDescription(
    "Serve a live dashboard of the repository's sessions: per request, tokens read from the cache, written (5m, 1h) and uncached, split by content; cumulative cost against no caching; blocks, breakpoints, misses and cleared tool results. Updates as requests are committed (CLI, Promise API and proxy sessions alike). Listens on 127.0.0.1 by default; the page is bundled in the package and works offline."
  ),
  Command.withShortDescription("Live dashboard of sessions and cache spend"),
  Command.withExamples([
    { command: "strata ui --open", description: "Serve on a free port and open the browser" },
    { command: "strata ui --port 4777", description: "A fixed port" }
  ])
)
