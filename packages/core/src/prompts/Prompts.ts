/**
 * Prompt files (docs/promise-api.md#prompts): `system.md` (how the context is organized),
 * `workflow.md` (how the model acts: with tools, with edit blocks, read-only),
 * optional `system_extra.md` and `system_reminder.md`, read from a user prompts folder
 * on every call so edits apply to the next request without a restart. A missing file
 * falls back to the chosen prompt pack's (a folder under `packages/core/prompts/`), then
 * to the default pack's; an empty file drops that prompt.
 */
import { readFile } from "node:fs/promises"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Effect, Layer } from "effect"
import { InvalidInput, PromptNotFound, type PathOutsideRepo, type SpecialFile } from "../domain/errors.ts"
import { isWithin, readInsideRepo } from "../files/insideRepo.ts"

/**
 * The bundled prompts folder. This module sits at `src/prompts/` and, built, at
 * `dist/prompts/`; both are two levels below the package root.
 */
export const BUNDLED_PROMPTS_DIR: string = fileURLToPath(new URL("../../prompts/", import.meta.url))

export const SYSTEM_PROMPT_FILE = "system.md"
export const WORKFLOW_FILE = "workflow.md"
export const SYSTEM_EXTRA_FILE = "system_extra.md"
export const SYSTEM_REMINDER_FILE = "system_reminder.md"

/**
 * The bundled prompt packs: `default` (neutral: the model acts through the tools it is
 * given, no reminder), `edit-blocks` (a chat without tools whose replies carry
 * SEARCH/REPLACE-style edit blocks the application applies, with a reminder after each
 * prompt), `read-only` (the model reads, through tools, and proposes changes as diffs).
 */
export const PROMPT_PACKS = ["default", "edit-blocks", "read-only"] as const
export type PromptPack = (typeof PROMPT_PACKS)[number]

/** Whether `name` is a bundled prompt pack (for a name given as data, such as a CLI flag). */
export const isPromptPack = (name: string): name is PromptPack => (PROMPT_PACKS as ReadonlyArray<string>).includes(name)

/** A prompt's text and the warnings produced while loading it (returned, never logged). */
export interface PromptText {
  readonly text: string
  /** One line per fallback to a bundled default. */
  readonly warnings: ReadonlyArray<string>
}

const isMissing = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && (error.code === "ENOENT" || error.code === "ENOTDIR" || error.code === "EISDIR")

// Prompt files end with a newline in an editor; the texts are joined by the loader.
const trimEnd = (text: string): string => text.replace(/\s+$/u, "")

/** A bundled file's text, or undefined when it does not exist; other I/O errors are defects. */
const readOptional = (path: string): Effect.Effect<string | undefined> =>
  Effect.tryPromise({ try: () => readFile(path, "utf8"), catch: (error) => error }).pipe(
    Effect.map(trimEnd),
    Effect.catch((error) => (isMissing(error) ? Effect.succeed(undefined) : Effect.die(error)))
  )

/** What reading a prompt can fail with: missing everywhere, a link out of `root`, a FIFO or device. */
export type PromptError = PromptNotFound | PathOutsideRepo | SpecialFile

/**
 * A file of the user's prompts folder, read only if it resolves inside `root` (a link
 * out is refused with `PathOutsideRepo`) and is a regular file (`SpecialFile`);
 * undefined when it does not exist. Other I/O errors are defects.
 */
const readUserPrompt = (root: string, path: string): Effect.Effect<string | undefined, PathOutsideRepo | SpecialFile> =>
  readInsideRepo(root, path).pipe(
    Effect.map((text) => (text === undefined ? undefined : trimEnd(text))),
    Effect.catchTag("FileReadError", (error) => Effect.die(error)),
    // A folder named like a prompt is no prompt: the bundled default applies.
    Effect.catchIf((error): error is SpecialFile => error._tag === "SpecialFile" && error.kind === "directory", () => Effect.succeed(undefined))
  )

const validName = (name: string): Effect.Effect<string, InvalidInput> =>
  name === "" || name !== NodePath.basename(name) || name === "." || name === ".." || name.includes("\\")
    ? Effect.fail(new InvalidInput({ what: "prompt name", issue: `${JSON.stringify(name)} must be a plain file name such as "system.md"` }))
    : Effect.succeed(name)

export interface PromptsOptions {
  /** The user's prompts folder; when unset only the bundled defaults are used. */
  readonly dir?: string | undefined
  /** The bundled pack a file missing from `dir` comes from (default `default`). */
  readonly pack?: PromptPack | undefined
  /** Where the defaults live; default `BUNDLED_PROMPTS_DIR`. */
  readonly bundledDir?: string | undefined
  /**
   * The repository the prompts folder belongs to: prompt files must resolve inside it
   * (a link out fails with `PathOutsideRepo`). Default: the folder itself.
   */
  readonly root?: string | undefined
}

const make = (options: PromptsOptions) => {
  const dir = options.dir === undefined ? undefined : NodePath.resolve(options.dir)
  const bundledDir = options.bundledDir ?? BUNDLED_PROMPTS_DIR
  // A folder outside the given root was chosen in code: links in it must stay in it.
  const root = dir === undefined ? undefined : options.root !== undefined && isWithin(NodePath.resolve(options.root), dir) ? NodePath.resolve(options.root) : dir
  const readOwn = (name: string) => (dir === undefined || root === undefined ? Effect.succeed(undefined) : readUserPrompt(root, NodePath.join(dir, name)))

  const pack = options.pack ?? "default"
  // The pack's folder first, then the default pack's (the bundled folder itself).
  const bundledDirs = pack === "default" ? [bundledDir] : [NodePath.join(bundledDir, pack), bundledDir]

  /** The user's file, else the pack's; `optional` prompts found nowhere are empty. */
  const loadNamed = Effect.fnUntraced(function* (name: string, optional = false) {
    const warnings: Array<string> = []
    if (dir !== undefined) {
      const own = yield* readOwn(name)
      if (own !== undefined) return { text: own, warnings } satisfies PromptText
    }
    for (const folder of bundledDirs) {
      const bundled = yield* readOptional(NodePath.join(folder, name))
      if (bundled === undefined) continue
      if (dir !== undefined) warnings.push(`Prompt ${name} is missing from ${dir}; using the bundled ${pack} pack's.`)
      return { text: bundled, warnings } satisfies PromptText
    }
    if (optional) return { text: "", warnings } satisfies PromptText
    return yield* new PromptNotFound({ name, searched: dir === undefined ? bundledDirs : [dir, ...bundledDirs] })
  })

  const load = (name: string) => Effect.flatMap(validName(name), (valid) => loadNamed(valid))

  const systemPrompt = Effect.gen(function* () {
    const main = yield* loadNamed(SYSTEM_PROMPT_FILE)
    const workflow = yield* loadNamed(WORKFLOW_FILE, true)
    // system_extra.md is optional: project instructions, only ever in the user's folder.
    const extra = yield* readOwn(SYSTEM_EXTRA_FILE)
    const text = [main.text, workflow.text, extra ?? ""].filter((t) => t.trim() !== "").join("\n\n")
    return { text, warnings: [...main.warnings, ...workflow.warnings] } satisfies PromptText
  })

  return { dir, bundledDir, pack, load, systemPrompt, systemReminder: loadNamed(SYSTEM_REMINDER_FILE, true) }
}

/**
 * Loads prompt files. Nothing is cached: every access reads the files again.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Prompts } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const prompts = yield* Prompts
 *   const system = yield* prompts.systemPrompt // system.md + "\n\n" + system_extra.md
 *   return system.text
 * }).pipe(Effect.provide(Prompts.layer({ dir: ".strata/prompts" })))
 * ```
 */
export class Prompts extends Context.Service<Prompts, {
  /** The user's prompts folder (absolute), if any. */
  readonly dir: string | undefined
  readonly bundledDir: string
  /** The bundled pack missing files come from. */
  readonly pack: PromptPack
  /** `system.md`, `workflow.md` and `system_extra.md`, each after a blank line, the empty ones left out. */
  readonly systemPrompt: Effect.Effect<PromptText, PromptError>
  /** `system_reminder.md`, to append to the user's prompt with `withReminder` ("" when no pack has one: the default pack has none). */
  readonly systemReminder: Effect.Effect<PromptText, PromptError>
  /** Any prompt file by name (`compaction.md`, ...), user folder first, then bundled. */
  readonly load: (name: string) => Effect.Effect<PromptText, PromptError | InvalidInput>
}>()("@strata/core/Prompts") {
  static readonly layer = (options: PromptsOptions = {}): Layer.Layer<Prompts> => Layer.sync(Prompts, () => make(options))
}
