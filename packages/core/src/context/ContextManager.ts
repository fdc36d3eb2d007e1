/**
 * The `ContextManager` service: the files in context and the engine's budgets. It reads
 * files safely (`RepoFiles`), counts them, and sheds the largest when a flat request
 * would pass 90% of the input limit (pre-request shedding, docs/configuration.md).
 * The history is not here: it lives in the session's `StateStore`, behind the turn API
 * (`turn/`), which the Promise engine, the CLI and the proxy share.
 */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { type CompactionConfig, DEFAULT_COMPACTION_CONFIG } from "../compaction/algorithm.ts"
import { HistoryCompactor } from "../compaction/HistoryCompactor.ts"
import { FILES_ACTIVE_HEADER } from "../assembly/headers.ts"
import type { Message } from "../domain/Message.ts"
import { modelInfo } from "../models/modelTable.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { type ShedFile, shedFiles } from "./requestBudget.ts"
import { FileContext, type FileError, RepoFiles } from "./FileContext.ts"

/** The engine's state as immutable values: the stored history and the files in context. */
export interface EngineState {
  readonly history: ReadonlyArray<Message>
  readonly files: FileContext
}

/** The outcome of emergency truncation. */
export interface TruncationResult {
  /** Messages dropped from the front of the history (0 when nothing was done). */
  readonly dropped: number
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly history: ReadonlyArray<Message>
}

/** The outcome of pre-request shedding (the files are already removed from context). */
export interface ShedReport {
  readonly dropped: ReadonlyArray<ShedFile>
  readonly estimatedTokens: number
  readonly finalTokens: number
  readonly limitTokens: number
  readonly warning?: string | undefined
}

export interface ContextManagerOptions {
  /** Override the model's input limit (default: `modelInfo(model).maxInputTokens`). */
  readonly maxInputTokens?: number | undefined
  /**
   * Compaction settings, used for the budget, the status and emergency truncation when no
   * `HistoryCompactor` is provided (a provided compactor's own config wins).
   */
  readonly compaction?: Partial<CompactionConfig> | undefined
}

const make = (options: ContextManagerOptions) =>
  Effect.gen(function* () {
    const counter: TokenCounter = yield* Tokenizer
    const repoFiles = yield* RepoFiles
    const compactor = yield* Effect.serviceOption(HistoryCompactor)
    const maxInputTokens = options.maxInputTokens ?? modelInfo(counter.model).maxInputTokens
    const state = yield* Ref.make(FileContext.empty)
    const files = Ref.get(state)

    const addFile = Effect.fn("ContextManager.addFile")(function* (path: string, content?: string) {
      const file = content === undefined ? yield* repoFiles.read(path) : { path: yield* repoFiles.normalize(path), content }
      yield* Ref.update(state, (fc) => fc.addFile(file.path, file.content))
      return file.path
    })

    const removeFile = Effect.fn("ContextManager.removeFile")(function* (path: string) {
      const relative = yield* repoFiles.normalize(path)
      return yield* Ref.modify(state, (fc) => [fc.hasFile(relative), fc.removeFile(relative)] as const)
    })

    const withFiles = <A>(f: (fc: FileContext, relative: string) => A) => (path: string) =>
      Effect.flatMap(repoFiles.normalize(path), (relative) => Effect.map(files, (fc) => f(fc, relative)))

    const shedFilesIfNeeded = Effect.fn("ContextManager.shedFilesIfNeeded")(function* (otherTokens: number) {
      const result = shedFiles({ files: yield* files, otherTokens, maxInputTokens, counter })
      // The warning is returned, not logged: callers such as a CLI printing JSON decide where it goes.
      if (result.dropped.length > 0) yield* Ref.update(state, (fc) => result.dropped.reduce((next, f) => next.removeFile(f.path), fc))
      const { dropped, estimatedTokens, finalTokens, limitTokens, warning } = result
      return { dropped, estimatedTokens, finalTokens, limitTokens, warning } satisfies ShedReport
    })

    return {
      model: counter.model,
      counter,
      maxInputTokens,
      compactionConfig: Option.isSome(compactor) ? compactor.value.config : { ...DEFAULT_COMPACTION_CONFIG, ...options.compaction },
      root: repoFiles.root,
      files,
      addFile,
      removeFile,
      getFiles: Effect.map(files, (fc) => [...fc.getFiles()]),
      getFileContent: withFiles((fc, p) => fc.getContent(p)),
      hasFile: withFiles((fc, p) => fc.hasFile(p)),
      clearFiles: Ref.set(state, FileContext.empty),
      formatFilesForPrompt: Effect.map(files, (fc) => fc.formatForPrompt(FILES_ACTIVE_HEADER)),
      countFileTokens: Effect.map(files, (fc) => fc.countTokens(counter)),
      getTokensByFile: Effect.map(files, (fc) => Object.fromEntries(fc.getTokensByFile(counter)) as Readonly<Record<string, number>>),
      shedFilesIfNeeded
    } satisfies ContextManagerShape
  })

/** The manager's interface (see the README for each operation). */
export interface ContextManagerShape {
  readonly model: string
  readonly counter: TokenCounter
  readonly maxInputTokens: number
  readonly compactionConfig: CompactionConfig
  /** The absolute repository root. */
  readonly root: string
  /** The files in context (an immutable value; safe to keep). */
  readonly files: Effect.Effect<FileContext>
  /** Add a file (read from disk when `content` is omitted); returns its repo-relative path. */
  readonly addFile: (path: string, content?: string) => Effect.Effect<string, FileError>
  /** Remove a file; false when it was not in context. */
  readonly removeFile: (path: string) => Effect.Effect<boolean, FileError>
  readonly getFiles: Effect.Effect<ReadonlyArray<string>>
  readonly getFileContent: (path: string) => Effect.Effect<string | undefined, FileError>
  readonly hasFile: (path: string) => Effect.Effect<boolean, FileError>
  readonly clearFiles: Effect.Effect<void>
  /** The Working Files section for the files in context ("" when none). */
  readonly formatFilesForPrompt: Effect.Effect<string>
  readonly countFileTokens: Effect.Effect<number>
  readonly getTokensByFile: Effect.Effect<Readonly<Record<string, number>>>
  /** Drop the largest files when files + `otherTokens` (history, prompts, map) exceed 90% of the input limit. */
  readonly shedFilesIfNeeded: (otherTokens: number) => Effect.Effect<ShedReport>
}

/**
 * The files in context and the budgets. Needs `Tokenizer` and `RepoFiles`; takes the
 * compaction settings of a provided `HistoryCompactor`.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextManager, RepoFiles, Tokenizer } from "@strata/core/effect"
 * const layer = ContextManager.layer().pipe(
 *   Layer.provide(Layer.mergeAll(Tokenizer.layer("gpt-4o"), RepoFiles.layer({ root: "." })))
 * )
 * const program = Effect.gen(function* () {
 *   const manager = yield* ContextManager
 *   yield* manager.addFile("notes.md", "Ship on Friday.")
 *   return yield* manager.getTokensByFile
 * }).pipe(Effect.provide(layer))
 * ```
 */
export class ContextManager extends Context.Service<ContextManager, ContextManagerShape>()("@strata/core/ContextManager") {
  static readonly layer = (options: ContextManagerOptions = {}): Layer.Layer<ContextManager, never, Tokenizer | RepoFiles> =>
    Layer.effect(ContextManager, make(options))
}
