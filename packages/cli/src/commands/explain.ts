/**
 * `strata explain`: why the session's last request read less from the provider's prompt
 * cache than the request before it left there (or the same for two request files).
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"

export const explain = Command.make(
  "explain",
  {
    before: Flag.String("before").pipe(Flag.withMetavar("FILE"), Flag.withDescription("The earlier request: a body (`strata assemble --json`) or a stored request; with --after"), Flag.optional),
    after: Flag.String("after").pipe(Flag.withMetavar("FILE"), Flag.withDescription("The later request, compared with --before"), Flag.optional)
  },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/explain.ts")), (m) => m.runExplain(flags))
).pipe(
  Command.withDescription(
    "Compare the session's last two requests (or --before and --after) block by block and say why the second read less from the provider's prompt cache than the first cached: the first block that differs (tools, system, message N and which part, settings, model), an expired TTL, a prefix under the model's minimum, a breakpoint beyond the lookback window, or no breakpoint. Shows the read the provider's cache simulator expects, and what the provider reported when the last request was sent for real."
  ),
  Command.withShortDescription("Why the last request missed the cache"),
  Command.withExamples([
    { command: "strata explain", description: "After two `strata assemble` or `strata chat` turns" },
    { command: "strata explain --before a.json --after b.json --json", description: "Two saved request bodies, as JSON" }
  ])
)
