/**
 * The `strata` command tree and its runner: parses arguments with `effect/cli`, runs the
 * command, and turns the outcome into output and an exit code (0 ok, 1 failure, 2 usage,
 * 130 interrupted). Usage errors print one line and a hint instead of the whole help.
 */
import { createRequire } from "node:module"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { CliConfig, CliError, CliOutput, Command, GlobalFlag } from "effect/cli"
import { redactSecrets } from "@strata/store"
import { COMMANDS } from "./commands/index.ts"
import { diagnose, ExitCode, primaryError } from "./support/errors.ts"
import { CliEnvironment } from "./support/environment.ts"
import { GLOBAL_FLAGS } from "./support/flags.ts"
import { closeInput, terminalSafe, jsonDocument, Output, stderrLoggerLayer } from "./support/output.ts"

const VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version

/** The root command: `strata <command> [flags]`. */
export const strata = Command.make("strata").pipe(
  Command.withDescription(
    "Strata assembles LLM requests so provider prompt caches bill most input tokens at the cache-read price. Every command works on one repository (--repo, default: the current directory) and keeps its session state in .strata/."
  ),
  Command.withSubcommands(COMMANDS),
  Command.withGlobalFlags(GLOBAL_FLAGS),
  Command.withExamples([
    { command: "strata init --yes", description: "Write .strata/config.json and ignore .strata/ in git" },
    { command: "strata map --budget 2000", description: "The symbol map the model sees, capped at 2,000 tokens" },
    { command: "strata assemble --prompt 'Add retries' --file src/api.ts", description: "One request, as the provider receives it" },
    { command: "strata hud", description: "Cache tiers and token breakdown of the session" },
    { command: "strata chat --dry-run", description: "Chat without an API key: see each request and its HUD" }
  ])
)

/** How a run ended, for tests that call `runCli` in-process. */
export interface RunResult {
  readonly exitCode: ExitCode
}

/** Options for `runCli`; the defaults are the real process's. */
export interface RunOptions {
  /** The environment variables the run sees (keys, `STRATA_*`, colour); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The directory relative paths and the default `--repo` resolve against; default `process.cwd()`. */
  readonly cwd?: string
  readonly signal?: AbortSignal
  /** Layer providing `Output`; default the process's streams. */
  readonly output?: Layer.Layer<Output>
}

// Our presenter: full help when asked for, and for a bad command line one line plus a hint.
const presenter = (outputLayer: Layer.Layer<Output>, json: boolean): CliOutput.Presenter => ({
  present: (event) =>
    Effect.gen(function* () {
      const output = yield* Output
      const formatter = CliOutput.defaultFormatter({ colors: output.style.enabled, globalFlags: "full" })
      switch (event._tag) {
        case "Help":
          return yield* output.out(formatter.formatHelpDoc(event.helpDoc))
        case "Version":
          return yield* output.out(`strata ${event.version}`)
        case "InvalidInvocation": {
          const first = event.errors[0]
          const message = first === undefined ? "invalid command line" : first.message
          const hint = `run \`${event.commandPath.join(" ")} --help\` for usage`
          if (json) return yield* output.err(jsonDocument({ error: { tag: first?._tag ?? "CliError", message, hint, exitCode: ExitCode.usage } }))
          const s = output.errStyle
          yield* output.err(`${s.red("strata:")} ${message}`)
          yield* output.err(s.dim(`hint: ${hint}`))
        }
      }
    }).pipe(Effect.provide(outputLayer))
})

/**
 * Run `strata` with `args` (without the node and script paths) and return the exit code.
 *
 * @example
 * ```ts
 * import { runCli } from "@strata/cli"
 * const code = await runCli(["config", "--json"]) // prints the configuration, returns 0
 * ```
 */
export const runCli = async (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<ExitCode> => {
  const env = options.env ?? process.env
  const json = args.includes("--json")
  const verbose = args.includes("--verbose")
  // One output for the whole run (the warnings it has shown are remembered there).
  const output = Effect.runSync(Effect.provide(Output.useSync((o) => o), options.output ?? Output.layerFor(env)))
  const outputLayer = Layer.succeed(Output, output)
  const layer = Layer.mergeAll(
    NodeServices.layer,
    outputLayer,
    CliEnvironment.layer({ env, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) }),
    // Effect `Config` reads (API keys, AWS settings) see the run's environment too.
    ConfigProvider.layer(ConfigProvider.fromEnvRecord({ ...env })),
    CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions] }),
    CliOutput.layerPresenter(presenter(outputLayer, json)),
    stderrLoggerLayer(output, verbose)
  )
  const program = Command.runWith(strata, { version: VERSION })(args)
  const exit = await Effect.runPromiseExit(Effect.provide(program, layer), options.signal ? { signal: options.signal } : {})
  closeInput()
  if (Exit.isSuccess(exit)) return ExitCode.ok
  if (Cause.hasInterruptsOnly(exit.cause)) return ExitCode.interrupted
  const error = primaryError(exit.cause)
  if (CliError.isCliError(error)) {
    // ShowHelp without errors is `strata` with no command: help was printed, nothing failed.
    if (error._tag === "ShowHelp") return error.errors.length === 0 ? ExitCode.ok : ExitCode.usage
    return ExitCode.usage
  }
  const diagnosed = diagnose(error)
  // No message shows a credential, whatever echoed it (a driver, a mistyped URL).
  const d = {
    ...diagnosed,
    message: terminalSafe(redactSecrets(diagnosed.message)),
    hint: diagnosed.hint === undefined ? undefined : terminalSafe(redactSecrets(diagnosed.hint))
  }
  const errStyle = output.errStyle
  const report = Effect.gen(function* () {
    const output = yield* Output
    if (json) {
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
      yield* output.err(jsonDocument({ error: { tag, message: d.message, hint: d.hint ?? null, exitCode: d.exitCode } }))
    } else {
      yield* output.err(`${errStyle.red("strata:")} ${d.message}`)
      if (d.hint !== undefined) yield* output.err(errStyle.dim(`hint: ${d.hint}`))
    }
    if (verbose) yield* output.err(redactSecrets(Cause.pretty(exit.cause)))
    else if (!json && d.hint === undefined) yield* output.err(errStyle.dim("hint: run again with --verbose for the full cause"))
  })
  await Effect.runPromise(Effect.provide(report, outputLayer))
  return d.exitCode
}
