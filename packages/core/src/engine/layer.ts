/**
 * The Layer behind `createContextEngine`: tokenizer, repository files, prompts,
 * history compactor and context manager, plus any layers the caller adds (a
 * `Tracker` from `@strata/tiers`, a `CompactionModel`, a `SymbolIndex`...).
 */
import { Effect, Layer, Result, Schema } from "effect"
import { InvalidInput } from "../domain/errors.ts"
import type { CompactionConfig } from "../compaction/algorithm.ts"
import { HistoryCompactor } from "../compaction/HistoryCompactor.ts"
import { compactionModelFromFunction, type CompactionModelFunction } from "../compaction/promiseModel.ts"
import { ContextManager } from "../context/ContextManager.ts"
import { Pipeline, type StageServices } from "../pipeline/index.ts"
import { requestLimits } from "../pipeline/requestLimits.ts"
import type { AssemblySession } from "../pipeline/assemblySession.ts"
import { RepoFiles } from "../context/FileContext.ts"
import { Prompts } from "../prompts/Prompts.ts"
import { SessionStore } from "../session/SessionStore.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"

/** Options of `createContextEngine` and `makeEngineLayer`. */
export interface ContextEngineOptions {
  /** Model id; picks the tokenizer and the input limit (`gpt-4o`, `claude-sonnet-4-5`...). */
  readonly model: string
  /** Repository root; file paths are relative to it. Default: the current directory. */
  readonly repoRoot?: string | undefined
  /** Largest file `addFile` reads from disk, in bytes. Default 1 MiB. */
  readonly maxFileBytes?: number | undefined
  /** Override the model's input limit used for budgets, shedding and the refusal of requests over it. */
  readonly maxInputTokens?: number | undefined
  /**
   * Token budget of the repository map (legend, file tree, symbol blocks) in assembled
   * requests. Default: derived from the input limit (`defaultMapTokens`).
   */
  readonly mapTokens?: number | undefined
  /** Tokens kept free for the reply when checking a request against the input limit. Default: 8,192 (less for a model with a small output limit or input limit). */
  readonly outputReserveTokens?: number | undefined
  /** Folder with `system.md`, `system_extra.md`, `system_reminder.md`, `compaction.md`; bundled defaults otherwise. */
  readonly promptsDir?: string | undefined
  /** Compaction settings (trigger, verbatim window, ...); defaults as in `DEFAULT_COMPACTION_CONFIG`. */
  readonly compaction?: Partial<CompactionConfig> | undefined
  /**
   * The compaction detection model as an async function from the prompt to the model's
   * text; its signal aborts at the compaction timeout. Takes precedence over a
   * `CompactionModel` in `layers`. Without a model, compaction drops old messages unsummarized.
   */
  readonly compactionModel?: CompactionModelFunction | undefined
  /**
   * Record every message in a JSONL session store: `true` for `<repoRoot>/.strata/sessions/`,
   * or a directory. Enables `resumeSession` and `listSessions`. Default: off.
   */
  readonly sessions?: boolean | string | undefined
  /** Count tokens with this counter instead of the model's tokenizer. */
  readonly tokenCounter?: TokenCounter | undefined
  /**
   * More services for the engine: `Tracker`, `CompactionModel`, `SymbolIndex`, stage
   * overrides. They are visible to the engine's own services (the manager purges the
   * tracker's history entries; the compactor asks the compaction model).
   */
  readonly layers?: ReadonlyArray<Layer.Layer<never, unknown>> | undefined
}

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonBlank = Schema.String.check(Schema.makeFilter((s: string) => s.trim() !== "" || "Expected a non-empty string"))

/** The plain-data fields of `ContextEngineOptions`, checked before anything is built. */
const EngineOptionsFields = Schema.Struct({
  model: NonBlank,
  repoRoot: Schema.optional(NonBlank),
  maxFileBytes: Schema.optional(PositiveInt),
  maxInputTokens: Schema.optional(PositiveInt),
  mapTokens: Schema.optional(PositiveInt),
  outputReserveTokens: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  promptsDir: Schema.optional(NonBlank),
  sessions: Schema.optional(Schema.Union([Schema.Boolean, NonBlank]))
})
const decodeOptions = Schema.decodeUnknownResult(EngineOptionsFields)

/** "field: problem" from a Schema error message (`Expected ...\n  at ["field"]`). */
const fieldIssue = (message: string): string => {
  const lines = message.split("\n").map((l) => l.trim()).filter((l) => l !== "")
  const at = lines.find((l) => l.startsWith("at "))
  const what = lines.filter((l) => !l.startsWith("at ")).join("; ")
  const field = at === undefined ? undefined : [...at.matchAll(/\["([^"]+)"\]/g)].map((m) => m[1]).join(".")
  return field === undefined || field === "" ? what : `${field}: ${what}`
}

/**
 * Check the options of `createContextEngine` / `makeEngineLayer`: a non-empty `model`,
 * positive integer limits, non-empty paths. Fails with `InvalidInput` naming the field.
 *
 * @example
 * ```ts
 * import { validateEngineOptions } from "@strata/core"
 * validateEngineOptions({ model: "gpt-4o", maxInputTokens: -5 }) // Result.fail(InvalidInput: "maxInputTokens: Expected a value greater than 0")
 * ```
 */
export const validateEngineOptions = (options: ContextEngineOptions): Result.Result<ContextEngineOptions, InvalidInput> => {
  const decoded = decodeOptions(options)
  return Result.isSuccess(decoded)
    ? Result.succeed(options)
    : Result.fail(new InvalidInput({ what: "createContextEngine options", issue: fieldIssue(decoded.failure.message) }))
}

/** Services every engine runtime provides. */
export type EngineServices = ContextManager | HistoryCompactor | Tokenizer | RepoFiles | Prompts | StageServices | AssemblySession

/**
 * Build the engine's Layer. Effect users can provide it directly instead of using the
 * Promise facade.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ContextManager, makeEngineLayer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const manager = yield* ContextManager
 *   yield* manager.addFile("README.md")
 *   return yield* manager.getFiles
 * }).pipe(Effect.provide(makeEngineLayer({ model: "gpt-4o", repoRoot: "." })))
 * ```
 */
export const makeEngineLayer = (options: ContextEngineOptions): Layer.Layer<EngineServices, unknown> => {
  const valid = validateEngineOptions(options)
  if (Result.isFailure(valid)) return Layer.unwrap(Effect.fail(valid.failure))
  const tokenizer = options.tokenCounter === undefined
    ? Tokenizer.layer(options.model)
    : Tokenizer.layerFrom(options.tokenCounter)
  const extras = options.layers ?? []
  const root = options.repoRoot ?? process.cwd()
  const sessions = options.sessions === true
    ? [SessionStore.layer(root)]
    : typeof options.sessions === "string" ? [SessionStore.layerDirectory(options.sessions)] : []
  const base = Layer.mergeAll(
    tokenizer,
    RepoFiles.layer({ root, maxFileBytes: options.maxFileBytes }),
    // Prompt files must resolve inside the repository (or inside a folder outside it chosen here).
    Prompts.layer({ dir: options.promptsDir, root }),
    // The assembly pipeline's default stages; extras (stage overrides) come later and win.
    Pipeline.layer,
    requestLimits({ maxInputTokens: options.maxInputTokens, mapTokens: options.mapTokens, outputReserveTokens: options.outputReserveTokens }),
    ...sessions,
    ...extras,
    ...(options.compactionModel === undefined ? [] : [compactionModelFromFunction(options.compactionModel)])
  )
  const compactor = HistoryCompactor.layer({ config: options.compaction ?? {} }).pipe(Layer.provideMerge(base))
  return ContextManager.layer({ maxInputTokens: options.maxInputTokens, compaction: options.compaction }).pipe(
    Layer.provideMerge(compactor)
  )
}
