/**
 * `strata hud` and `strata breakdown`: the session's current state as the cache-block
 * diagram with the token breakdown, or as the context breakdown JSON. Neither changes
 * anything.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { modelFlag, providerFlag } from "../support/flags.ts"

export const hud = Command.make(
  "hud",
  {
    provider: providerFlag,
    model: modelFlag,
    ascii: Flag.Boolean("ascii").pipe(Flag.withDescription("ASCII box and markers instead of box drawing and emoji"), Flag.withDefault(false))
  },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/hud.ts")), (m) => m.runHud(flags))
).pipe(
  Command.withDescription(
    "Show the session's cache blocks (tokens and contents per tier), the token breakdown by category against the model's limits, the last request's cache read/write and the session totals, and the last request's promotions and demotions."
  ),
  Command.withShortDescription("The cache-block diagram and token breakdown"),
  Command.withExamples([
    { command: "strata hud", description: "After a few `strata assemble` or `strata chat` turns" },
    { command: "strata hud --ascii", description: "For terminals without box drawing" }
  ])
)

export const breakdown = Command.make(
  "breakdown",
  { provider: providerFlag, model: modelFlag },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/hud.ts")), (m) => m.runBreakdown(flags))
).pipe(
  Command.withDescription(
    "The context breakdown of the session's next request: every block with its tier, tokens, whether it is cached, its promotion threshold and its contents (system, legend, symbols, files, tree, history), the totals and the estimated cache hit rate. --json prints the context breakdown JSON a UI reads."
  ),
  Command.withShortDescription("Tiers, their items and tokens (JSON for UIs)"),
  Command.withExamples([
    { command: "strata breakdown", description: "A table of blocks and contents" },
    { command: "strata breakdown --json | jq '.cached_share'", description: "The same as JSON" }
  ])
)
