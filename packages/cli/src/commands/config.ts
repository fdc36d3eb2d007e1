/**
 * `strata config`: the configuration a command would run with, and where each value
 * came from (flag, env, file or default). Takes the same overrides as `assemble`.
 */
import { Effect } from "effect"
import { Command } from "effect/cli"
import { resolveRequestLimits } from "@strata/core"
import { redactStoreSetting } from "../support/config.ts"
import { CONFIG_PATH, commandContext } from "../support/context.ts"
import { modelFlag, opt, policyFlag, providerFlag } from "../support/flags.ts"
import { jsonDocument, Output } from "../support/output.ts"

/** Flatten the resolved config into `key = value` rows, in a fixed order; derived budgets show their value. Pure. */
export const configRows = (config: import("../support/config.ts").ResolvedConfig): ReadonlyArray<readonly [string, string]> => {
  const { budgets } = config
  const limits = resolveRequestLimits(config.model, budgets.maxInputTokens === null ? {} : { maxInputTokens: budgets.maxInputTokens })
  return [
    ["provider", config.provider],
    ["model", config.model],
    ["policy", config.policy],
    ["budgets.mapTokens", budgets.mapTokens === null ? `${limits.mapTokens} (from the model's input limit)` : String(budgets.mapTokens)],
    ["budgets.maxInputTokens", budgets.maxInputTokens === null ? `${limits.maxInputTokens} (the model's)` : String(budgets.maxInputTokens)],
    ["budgets.maxFileBytes", String(budgets.maxFileBytes)],
    ["budgets.compactionTokens", String(budgets.compactionTokens)],
    ["budgets.cacheTargetTokens", String(budgets.cacheTargetTokens)],
    ["map.include", config.map.include.length === 0 ? "(every file)" : config.map.include.join(", ")],
    ["map.exclude", config.map.exclude.length === 0 ? "(none)" : config.map.exclude.join(", ")],
    ["map.ranking", config.map.ranking],
    ["prompts", config.prompts ?? "(bundled defaults)"],
    ["timeoutMs", String(config.timeoutMs)],
    // A URL's password never reaches the terminal.
    ["store", redactStoreSetting(config.store)],
    ["session", config.session]
  ]
}

export const config = Command.make(
  "config",
  { provider: providerFlag, model: modelFlag, policy: policyFlag },
  (flags) =>
    Effect.gen(function* () {
      const output = yield* Output
      const ctx = yield* commandContext({ provider: opt(flags.provider), model: opt(flags.model), policy: opt(flags.policy) })
      if (ctx.json) {
        const { sources, ...values } = ctx.config
        // A URL's password never reaches the terminal, in JSON either.
        const shown = { ...values, store: redactStoreSetting(values.store) }
        yield* output.out(jsonDocument({ repo: ctx.root, file: ctx.file === undefined ? null : CONFIG_PATH, values: shown, sources }, 2))
        return
      }
      const s = output.style
      yield* output.out(s.bold(`Configuration for ${ctx.root}`) + s.dim(ctx.file === undefined ? ` (no ${CONFIG_PATH}; run strata init)` : ` (${CONFIG_PATH})`))
      const rows = configRows(ctx.config)
      const width = Math.max(...rows.map(([k]) => k.length))
      for (const [key, value] of rows) yield* output.out(`  ${key.padEnd(width)}  ${value}  ${s.dim(`[${ctx.config.sources[key] ?? "default"}]`)}`)
    })
).pipe(
  Command.withDescription("Show the configuration in effect and where each value came from: flag > STRATA_* environment variable > .strata/config.json > default."),
  Command.withShortDescription("Show the configuration in effect"),
  Command.withExamples([
    { command: "strata config", description: "Values and their sources" },
    { command: "STRATA_MODEL=gpt-4.1 strata config --provider openai --json", description: "Check precedence as JSON" }
  ])
)
