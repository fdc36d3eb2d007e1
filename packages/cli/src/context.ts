/**
 * What every command starts from: the resolved repository root, the merged configuration
 * (flags > `STRATA_*` env > `.strata/config.json` > defaults) and the global output flags.
 */
import { realpath, stat } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect, Option } from "effect"
import { parseConfigFile, resolveConfig, ENV_VARS, type ConfigFile, type ConfigOverrides, type ResolvedConfig } from "./config.ts"
import { ConfigInvalid, ModelNotServed, RepoNotFound, type StateError } from "./errors.ts"
import { JsonFlag, RepoFlag, VerboseFlag } from "./flags.ts"
import { readTextIfExists } from "./fsutil.ts"

/** `.strata/` inside a repository: the CLI's config and session state. */
export const STRATA_DIR = ".strata"
export const CONFIG_PATH = join(STRATA_DIR, "config.json")

export interface CommandContext {
  /** Absolute, symlink-resolved repository root. */
  readonly root: string
  readonly config: ResolvedConfig
  /** The parsed config file, when there is one. */
  readonly file: ConfigFile | undefined
  readonly json: boolean
  readonly verbose: boolean
  /** `<root>/.strata` */
  readonly stateDir: string
}

/** Resolve `--repo` (or `$STRATA_REPO`, or the current directory) to a real directory. */
export const resolveRepo = (given: string | undefined): Effect.Effect<string, RepoNotFound> =>
  Effect.tryPromise({
    try: async () => {
      const path = resolve(given ?? process.env[ENV_VARS.repo] ?? ".")
      const info = await stat(path)
      if (!info.isDirectory()) throw Object.assign(new Error("is not a directory"), { code: "ENOTDIR" })
      return realpath(path)
    },
    catch: (error) =>
      new RepoNotFound({
        path: given ?? process.env[ENV_VARS.repo] ?? ".",
        reason: (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (error as NodeJS.ErrnoException).code === "ENOTDIR" ? "is not a directory" : `cannot be read (${String(error)})`
      })
  })

/** Read and validate `.strata/config.json`; `undefined` when there is none. */
export const readConfigFile = (root: string): Effect.Effect<ConfigFile | undefined, ConfigInvalid | StateError> =>
  Effect.gen(function* () {
    const text = yield* readTextIfExists(join(root, CONFIG_PATH))
    if (text === undefined) return undefined
    return yield* Effect.try({
      try: () => parseConfigFile(text, CONFIG_PATH),
      catch: (e) => (e instanceof ConfigInvalid ? e : new ConfigInvalid({ path: CONFIG_PATH, issue: String(e) }))
    })
  })

/**
 * Build the context of a command from its config overrides and the global flags.
 * `ignoreBrokenFile` treats a corrupt config file as absent (`strata init --force`).
 */
export const commandContext = (overrides: ConfigOverrides = {}, options: { readonly ignoreBrokenFile?: boolean } = {}) =>
  Effect.gen(function* () {
    const repo = yield* RepoFlag
    const json = yield* JsonFlag
    const verbose = yield* VerboseFlag
    const root = yield* resolveRepo(Option.getOrUndefined(repo))
    const file = yield* readConfigFile(root).pipe(
      Effect.catchTag("ConfigInvalid", (e) => (options.ignoreBrokenFile === true ? Effect.succeed(undefined) : Effect.fail(e)))
    )
    const config = yield* Effect.try({
      try: () => resolveConfig({ flags: overrides, env: process.env, file }),
      catch: (e) => (e instanceof ConfigInvalid || e instanceof ModelNotServed ? e : new ConfigInvalid({ path: "environment", issue: String(e) }))
    })
    return { root, config, file, json, verbose, stateDir: join(root, STRATA_DIR) } satisfies CommandContext
  })
