/**
 * `strata map` and `strata tree`: the symbol map and the file tree exactly as the model
 * sees them (legend, per-file blocks with incoming-reference counts; the flat sorted
 * file list), optionally cut to a token budget.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { UsageError } from "../support/errors.ts"
import { opt } from "../support/flags.ts"

export const map = Command.make(
  "map",
  {
    budget: Flag.Int("budget").pipe(
      Flag.withDescription("Print a map of at most N tokens: the legend and the most referenced files' blocks that fit (default: the map a request carries, cut to budgets.mapTokens or the budget derived from the model)"),
      Flag.optional
    )
  },
  (flags) =>
    Effect.gen(function* () {
      const budget = opt(flags.budget)
      if (budget !== undefined && budget <= 0) return yield* new UsageError({ reason: `--budget must be a positive number of tokens, got ${budget}` })
      return yield* (yield* Effect.promise(() => import("../run/map.ts"))).runMap(budget)
    })
).pipe(
  Command.withDescription(
    "Print the repository's symbol map as the model sees it: a legend, then one block per file with its classes, functions, imports and incoming-reference counts. A map larger than its budget (budgets.mapTokens, by default derived from the model's input limit) keeps its most referenced files, as requests do."
  ),
  Command.withShortDescription("The symbol map the model sees"),
  Command.withExamples([
    { command: "strata map", description: "The map a request carries" },
    { command: "strata map --budget 2000", description: "Cut to 2,000 tokens, most referenced files first" },
    { command: "strata map --json | jq '.files[0]'", description: "Blocks as JSON" }
  ])
)

export const tree = Command.make("tree", {}, () =>
  Effect.gen(function* () {
    return yield* (yield* Effect.promise(() => import("../run/map.ts"))).runTree
  })
).pipe(
  Command.withDescription(
    "Print the repository's file tree as the model sees it: every git-tracked and untracked-but-not-ignored file, one per line, sorted."
  ),
  Command.withShortDescription("The file tree the model sees"),
  Command.withExamples([
    { command: "strata tree", description: "The flat sorted file list" },
    { command: "strata tree --json", description: "As a JSON array" }
  ])
)
