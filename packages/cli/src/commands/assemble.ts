/**
 * `strata assemble`: run one request through the pipeline and print the provider's
 * request body (`--json`) or a readable summary. The turn is recorded in the session
 * unless `--dry-run`.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { dryRunFlag, modelFlag, policyFlag, providerFlag } from "../support/flags.ts"

export const assembleCommand = Command.make(
  "assemble",
  {
    prompt: Flag.String("prompt").pipe(Flag.withAlias("p"), Flag.withDescription("The user's prompt for this request")),
    file: Flag.String("file").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("A file to put in context, relative to the repository root (repeat for more; default: the session's selection)"),
      Flag.atLeast(0)
    ),
    noFiles: Flag.Boolean("no-files").pipe(Flag.withDescription("Clear the session's file selection"), Flag.withDefault(false)),
    noTools: Flag.Boolean("no-tools").pipe(
      Flag.withDescription("Leave out the repository tools `strata chat` offers (read_file, search, list_files); the tools lead the prefix, so the request then shares no cache with chat's"),
      Flag.withDefault(false)
    ),
    reply: Flag.String("reply").pipe(Flag.withDescription("Record this assistant reply with the prompt in the session's history"), Flag.optional),
    provider: providerFlag,
    model: modelFlag,
    policy: policyFlag,
    dryRun: dryRunFlag
  },
  (flags) => Effect.flatMap(Effect.promise(() => import("../run/assemble.ts")), (m) => m.runAssemble(flags))
).pipe(
  Command.withDescription(
    "Assemble one request through the pipeline (symbol map, tiers, placement for the provider) and print a summary, or the provider's request body with --json. The request offers the repository tools chat offers (--no-tools leaves them out), so it has chat's prefix and the next chat reads its cache. The turn advances the stability tracker and is recorded in .strata/ unless --dry-run."
  ),
  Command.withShortDescription("Build one request, as the provider receives it"),
  Command.withExamples([
    { command: "strata assemble --prompt 'Where is pricing done?' --file src/services/pricing.ts", description: "A summary of the request: tiers, breakpoints, simulated cache usage" },
    { command: "strata assemble --prompt 'Explain' --provider bedrock --json > request.json", description: "The exact Bedrock Converse body" },
    { command: "strata assemble --prompt 'Fix it' --reply 'Done: ...'", description: "Record an exchange in the session's history" },
    { command: "strata assemble --prompt 'Try' --dry-run", description: "Leave .strata/ untouched" },
    { command: "strata assemble --prompt 'Summarize' --no-tools --json", description: "A body without the chat's tool definitions" }
  ])
)
