/**
 * The `SymbolIndex` service of `@strata/core`, implemented by a `SymbolIndexer`
 * over one repository. The layer is the session: its legend and path aliases stay
 * fixed for as long as the layer lives.
 */
import { PathOutsideRepo, SymbolIndex, SymbolIndexError, type PathAlias } from "@strata/core"
import { Effect, Layer } from "effect"
import { type IndexOptions, type SymbolMap, SymbolIndexer } from "./indexer.ts"

/** Options of `makeSymbolIndex` and `symbolIndexLayer`: the indexer's, and when to write its cache index. */
export interface SymbolIndexOptions extends IndexOptions {
  /**
   * Write the disk cache's index after every refresh instead of lazily: for a
   * short-lived process (a CLI command) that may exit right after. Default false.
   */
  readonly flushEachRefresh?: boolean
}

/**
 * The `SymbolIndex` service over a `SymbolIndexer`, with what a program that shows the
 * map itself needs: an explicit `build` with progress, and the map built last.
 */
export interface RepoSymbolIndex {
  /** Bring the index up to date and return its map; reuses the map `build` just returned. */
  readonly snapshot: Effect.Effect<SymbolMap, SymbolIndexError>
  /** Render with these path aliases from now on (a session's recorded ones). */
  readonly useAliases: (aliases: ReadonlyArray<PathAlias>) => Effect.Effect<void>
  /**
   * Index the repository now and return the map; `onProgress` hears `(parsed, toParse)`
   * during a cold index. The next `snapshot` returns this map instead of indexing again
   * (later ones refresh). A symbol cache that links out of the repository fails with
   * its own `PathOutsideRepo`.
   */
  readonly build: (onProgress?: (parsed: number, toParse: number) => void) => Effect.Effect<SymbolMap, SymbolIndexError | PathOutsideRepo>
  /** The map of the last `snapshot` or `build`, if any ran. */
  readonly latest: () => SymbolMap | undefined
}

/**
 * Create the indexer for `root` (restoring `options.aliases`, if given) and serve it as
 * a `RepoSymbolIndex`; fails with `SymbolIndexError` if the tree-sitter runtime cannot load.
 *
 * @example
 * ```ts no-run
 * import { SymbolIndex } from "@strata/core"
 * import { makeSymbolIndex } from "@strata/symbols"
 * import { Effect, Layer } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const index = yield* makeSymbolIndex(".", { cache: false })
 *   const map = yield* index.build((parsed, toParse) => console.log(`${parsed}/${toParse}`))
 *   console.log(`${map.stats.files} files`)
 *   return Layer.succeed(SymbolIndex, index) // the next snapshot reuses `map`
 * })
 * ```
 */
export const makeSymbolIndex = (root: string, options: SymbolIndexOptions = {}): Effect.Effect<RepoSymbolIndex, SymbolIndexError> =>
  Effect.gen(function* () {
    const { flushEachRefresh = false, ...indexOptions } = options
    const failedAt = (at: string) => (error: unknown) => new SymbolIndexError({ root: at, reason: error instanceof Error ? error.message : String(error) })
    const indexer = yield* Effect.tryPromise({ try: () => SymbolIndexer.create(root, indexOptions), catch: failedAt(root) })
    const indexError = failedAt(indexer.root)
    let last: SymbolMap | undefined
    // Set by `build`: the next snapshot hands its map on instead of indexing twice.
    let fresh = false
    const refresh = (onProgress?: (parsed: number, toParse: number) => void) =>
      Effect.tryPromise({
        try: async () => {
          last = await indexer.refresh(onProgress === undefined ? {} : { onProgress })
          if (flushEachRefresh) indexer.flush()
          return last
        },
        // A symbol cache that links out of the repository keeps its own error (and exit code).
        catch: (error) => (error instanceof PathOutsideRepo ? error : indexError(error))
      })
    const snapshot = Effect.suspend(() => {
      if (fresh && last !== undefined) {
        fresh = false
        return Effect.succeed(last)
      }
      return refresh().pipe(Effect.mapError((error) => (error instanceof SymbolIndexError ? error : indexError(error))))
    }).pipe(Effect.withSpan("SymbolIndex.snapshot"))
    return {
      snapshot,
      useAliases: (aliases) => Effect.promise(() => indexer.useAliases(aliases)),
      build: (onProgress) => refresh(onProgress).pipe(Effect.tap(() => Effect.sync(() => (fresh = true)))),
      latest: () => last
    } satisfies RepoSymbolIndex
  })

/**
 * A `SymbolIndex` layer for the repository at `root`; `snapshot` re-indexes
 * incrementally and fails with `SymbolIndexError` only when the root itself cannot
 * be read (files that fail are listed in the snapshot's `problems`).
 *
 * @example
 * ```ts
 * import { SymbolIndex } from "@strata/core"
 * import { symbolIndexLayer } from "@strata/symbols"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const index = yield* SymbolIndex
 *   const map = yield* index.snapshot
 *   return map.legend + "\n" + map.symbolFiles.map((p) => map.block(p)).join("\n")
 * })
 * Effect.runPromise(program.pipe(Effect.provide(symbolIndexLayer(process.cwd()))))
 * ```
 */
export const symbolIndexLayer = (root: string, options: SymbolIndexOptions = {}): Layer.Layer<SymbolIndex, SymbolIndexError> =>
  Layer.effect(SymbolIndex, makeSymbolIndex(root, options))
