/**
 * `strata init`: write a schema-validated `.strata/config.json` for the repository, and
 * (when the user agrees, or with `--yes`) add `.strata/` to its `.gitignore`.
 */
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { ENV_VARS, initialConfigFile, validateConfigFile } from "../support/config.ts"
import { CONFIG_PATH, commandContext, STRATA_DIR } from "../support/context.ts"
import { StateError, UsageError } from "../support/errors.ts"
import { modelFlag, opt, policyFlag, providerFlag } from "../support/flags.ts"
import { readTextIfExists, writeTextAtomic } from "../support/fsutil.ts"
import { CliEnvironment } from "../support/environment.ts"
import { jsonDocument, Output } from "../support/output.ts"

/** Whether a .gitignore already ignores `.strata/`. Pure. */
export const ignoresStrata = (gitignore: string): boolean =>
  gitignore.split(/\r?\n/).some((line) => ["/.strata/", ".strata/", "/.strata", ".strata", ".strata/*", "/.strata/*"].includes(line.trim()))

/** The .gitignore text with `.strata/` appended. Pure. */
export const withStrataIgnored = (gitignore: string): string =>
  `${gitignore}${gitignore === "" || gitignore.endsWith("\n") ? "" : "\n"}# Strata session state (strata init)\n.strata/\n`

type GitignoreOutcome = "present" | "added" | "declined" | "skipped"

/**
 * Give the user a prompts folder to edit: when it does not exist yet, create it with
 * copies of the bundled prompts, written inside the repository (never through a link).
 * An existing folder is left alone. Returns the files copied.
 */
const seedPrompts = (root: string, dir: string) =>
  Effect.gen(function* () {
    // Imported here: @strata/core takes a while to load and only this path needs it.
    const { BUNDLED_PROMPTS_DIR, statInsideRepo, writeInsideRepo } = yield* Effect.promise(() => import("@strata/core"))
    const exists = yield* statInsideRepo(root, dir).pipe(Effect.catchTag("FileReadError", (e) => Effect.fail(new StateError({ path: dir, reason: e.reason }))))
    if (exists !== undefined) return [] as ReadonlyArray<string>
    const read = Effect.tryPromise({
      try: async () => {
        const names = (await readdir(BUNDLED_PROMPTS_DIR)).filter((n) => n.endsWith(".md")).sort()
        return await Promise.all(names.map(async (name) => ({ name, text: await readFile(join(BUNDLED_PROMPTS_DIR, name), "utf8") })))
      },
      catch: (error) => new StateError({ path: BUNDLED_PROMPTS_DIR, reason: error instanceof Error ? error.message : String(error) })
    })
    const prompts = yield* read
    for (const p of prompts) {
      yield* writeInsideRepo(root, join(dir, p.name), p.text).pipe(Effect.catchTag("FileWriteError", (e) => Effect.fail(new StateError({ path: join(dir, p.name), reason: e.reason }))))
    }
    return prompts.map((p) => p.name)
  })

export const init = Command.make(
  "init",
  {
    provider: providerFlag,
    model: modelFlag,
    policy: policyFlag,
    mapTokens: Flag.Int("map-tokens").pipe(Flag.withDescription("Token budget of the repository map in requests (default: derived from the model's input limit)"), Flag.optional),
    prompts: Flag.String("prompts").pipe(Flag.withDescription("Prompts folder, relative to the repository (default: .strata/prompts)"), Flag.optional),
    yes: Flag.Boolean("yes").pipe(Flag.withAlias("y"), Flag.withDescription("Add .strata/ to .gitignore without asking"), Flag.withDefault(false)),
    force: Flag.Boolean("force").pipe(Flag.withDescription("Overwrite an existing .strata/config.json"), Flag.withDefault(false))
  },
  (flags) =>
    Effect.gen(function* () {
      const output = yield* Output
      const mapTokens = opt(flags.mapTokens)
      if (mapTokens !== undefined && mapTokens <= 0) {
        return yield* new UsageError({ reason: `--map-tokens must be a positive integer, got ${mapTokens}` })
      }
      const ctx = yield* commandContext(
        { provider: opt(flags.provider), model: opt(flags.model), policy: opt(flags.policy), mapTokens, prompts: opt(flags.prompts) },
        // A corrupt file must not stop the command that repairs it.
        { ignoreBrokenFile: flags.force }
      )
      const existing = yield* readTextIfExists(ctx.root, CONFIG_PATH)
      const configPath = join(ctx.root, CONFIG_PATH)
      if (existing !== undefined && !flags.force) {
        return yield* new UsageError({
          reason: `${CONFIG_PATH} already exists in ${ctx.root}`,
          hint: "pass --force to overwrite it, or edit it by hand (`strata config` shows the values in effect)"
        })
      }
      const fileValue = yield* validateConfigFile({ $schema: "https://strata.dev/schema/config-v1.json", ...initialConfigFile(ctx.config) })
      yield* writeTextAtomic(ctx.root, CONFIG_PATH, JSON.stringify(fileValue, null, 2) + "\n")
      const promptsCopied = fileValue.prompts === undefined ? [] : yield* seedPrompts(ctx.root, fileValue.prompts)

      const gitignore = (yield* readTextIfExists(ctx.root, ".gitignore")) ?? ""
      let outcome: GitignoreOutcome
      if (ignoresStrata(gitignore)) outcome = "present"
      else if (flags.yes) outcome = "added"
      else if (!output.interactive) outcome = "skipped"
      else {
        const answer = yield* output.ask(`Add ${STRATA_DIR}/ to ${gitignore === "" ? "a new " : ""}.gitignore? [Y/n] `)
        outcome = answer === undefined || /^(y|yes|)$/i.test(answer.trim()) ? "added" : "declined"
      }
      if (outcome === "added") yield* writeTextAtomic(ctx.root, ".gitignore", withStrataIgnored(gitignore))

      if (ctx.json) {
        yield* output.out(jsonDocument({ config: configPath, values: fileValue, gitignore: outcome, promptsCopied }, 2))
        return
      }
      const s = output.style
      yield* output.out(`${s.green("Wrote")} ${configPath}`)
      yield* output.out(`  provider ${fileValue.provider}, model ${fileValue.model}, policy ${fileValue.policy}`)
      if (promptsCopied.length > 0) yield* output.out(`  Copied the default prompts (${promptsCopied.join(", ")}) to ${fileValue.prompts}/ for you to edit`)
      const notes: Record<GitignoreOutcome, string> = {
        present: `.gitignore already ignores ${STRATA_DIR}/`,
        added: `Added ${STRATA_DIR}/ to .gitignore`,
        declined: `Left .gitignore alone; ${STRATA_DIR}/ holds session state you probably do not want to commit`,
        skipped: `Left .gitignore alone (not a terminal); pass --yes to add ${STRATA_DIR}/ to it`
      }
      yield* output.out(`  ${notes[outcome]}`)
      yield* output.out(s.dim(`Next: strata map${ctx.root === (yield* CliEnvironment).cwd ? "" : ` --repo ${ctx.root}`}`))
    })
).pipe(
  Command.withDescription(
    `Write .strata/config.json (provider, model, policy, budgets, prompts folder) for the repository. Values come from the flags, then ${ENV_VARS.provider}-style environment variables, then defaults.`
  ),
  Command.withShortDescription("Create .strata/config.json for a repository"),
  Command.withExamples([
    { command: "strata init", description: "Defaults (Anthropic, flux policy); asks before touching .gitignore" },
    { command: "strata init --provider openai --model gpt-4.1 --yes", description: "Non-interactive, for scripts" },
    { command: "strata init --repo ../service --force", description: "Overwrite an existing (or corrupt) config" }
  ])
)

