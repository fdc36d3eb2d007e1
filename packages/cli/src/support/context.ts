/**
 * What every command starts from: the resolved repository root, the merged configuration
 * (flags > `STRATA_*` env > `.strata/config.json` > defaults) and the global output flags.
 */
import { realpath, stat } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect, Option } from "effect"
import { BARE_REPOSITORY_REASON, isBareRepository, isWithin } from "@strata/core"
import { parseConfigFile, resolveConfig, ENV_VARS, type ConfigFile, type ConfigOverrides, type ResolvedConfig } from "./config.ts"
import { ConfigInvalid, ModelNotServed, RepoNotFound } from "./errors.ts"
import { JsonFlag, RepoFlag, VerboseFlag } from "./flags.ts"
import { CliEnvironment } from "./environment.ts"
import { readTextIfExists, type StateFileError } from "./fsutil.ts"

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

/** Resolve `--repo` (or `$STRATA_REPO`, or the working directory) to a real directory. */
export const resolveRepo = (given: string | undefined): Effect.Effect<string, RepoNotFound, CliEnvironment> =>
  Effect.gen(function* () {
    const { env, cwd } = yield* CliEnvironment
    const named = given ?? env[ENV_VARS.repo] ?? "."
    return yield* Effect.tryPromise({
      try: async () => {
        const path = resolve(cwd, named)
        const info = await stat(path)
        if (!info.isDirectory()) throw Object.assign(new Error("is not a directory"), { code: "ENOTDIR" })
        // A bare repository has git's own files (HEAD, hooks/...) where a checkout has the project's.
        if (isBareRepository(path)) throw Object.assign(new Error(BARE_REPOSITORY_REASON), { code: "EBARE" })
        return realpath(path)
      },
      catch: (error) => {
        const code = (error as NodeJS.ErrnoException).code
        return new RepoNotFound({
          path: named,
          reason: code === "ENOENT" ? "does not exist" : code === "ENOTDIR" ? "is not a directory" : code === "EBARE" ? BARE_REPOSITORY_REASON : `cannot be read (${String(error)})`
        })
      }
    })
  })

/** Read and validate `.strata/config.json`; `undefined` when there is none. */
export const readConfigFile = (root: string): Effect.Effect<ConfigFile | undefined, ConfigInvalid | StateFileError> =>
  Effect.gen(function* () {
    const text = yield* readTextIfExists(root, CONFIG_PATH)
    if (text === undefined) return undefined
    return yield* Effect.try({
      try: () => parseConfigFile(text, CONFIG_PATH),
      catch: (e) => (e instanceof ConfigInvalid ? e : new ConfigInvalid({ path: CONFIG_PATH, issue: String(e) }))
    })
  })

/** Where a config value came from, for messages: the file, `$VAR` or `--flag`. */
const sourceOf = (config: ResolvedConfig, key: keyof typeof ENV_VARS, flag: string): string => {
  const source = config.sources[key]
  return source === "env" ? `$${ENV_VARS[key]}` : source === "flag" ? flag : CONFIG_PATH
}

/** The prompts folder must lie inside the repository (links out of it are refused when its files are read). */
const checkPromptsInside = (root: string, config: ResolvedConfig): Effect.Effect<void, ConfigInvalid> =>
  config.prompts === null || isWithin(root, resolve(root, config.prompts))
    ? Effect.void
    : Effect.fail(new ConfigInvalid({
      path: sourceOf(config, "prompts", "--prompts"),
      issue: `prompts: ${JSON.stringify(config.prompts)} is outside the repository; Strata reads nothing outside it. Use a folder inside the repository, such as .strata/prompts`
    }))

/**
 * Build the context of a command from its config overrides and the global flags.
 * `ignoreBrokenFile` treats a corrupt config file as absent (`strata init --force`).
 */
export const commandContext = (overrides: ConfigOverrides = {}, options: { readonly ignoreBrokenFile?: boolean } = {}) =>
  Effect.gen(function* () {
    const repo = yield* RepoFlag
    const json = yield* JsonFlag
    const verbose = yield* VerboseFlag
    const { env } = yield* CliEnvironment
    const root = yield* resolveRepo(Option.getOrUndefined(repo))
    const file = yield* readConfigFile(root).pipe(
      Effect.catchTag("ConfigInvalid", (e) => (options.ignoreBrokenFile === true ? Effect.succeed(undefined) : Effect.fail(e)))
    )
    const config = yield* Effect.try({
      try: () => resolveConfig({ flags: overrides, env, file }),
      catch: (e) => (e instanceof ConfigInvalid || e instanceof ModelNotServed ? e : new ConfigInvalid({ path: "environment", issue: String(e) }))
    })
    yield* checkPromptsInside(root, config)
    return { root, config, file, json, verbose, stateDir: join(root, STRATA_DIR) } satisfies CommandContext
  })
