/**
 * The `SymbolIndex` service of `@strata/core`, implemented by a `SymbolIndexer`
 * over one repository. The layer is the session: its legend and path aliases stay
 * fixed for as long as the layer lives.
 */
import { SymbolIndex, SymbolIndexError } from "@strata/core"
import { Effect, Layer } from "effect"
import { type IndexOptions, SymbolIndexer } from "./indexer.ts"

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
export const symbolIndexLayer = (root: string, options: IndexOptions = {}): Layer.Layer<SymbolIndex> =>
  Layer.effect(
    SymbolIndex,
    Effect.gen(function* () {
      const indexer = yield* Effect.promise(() => SymbolIndexer.create(root, options))
      return {
        snapshot: Effect.tryPromise({
          try: () => indexer.refresh(),
          catch: (error) => new SymbolIndexError({ root: indexer.root, reason: error instanceof Error ? error.message : String(error) })
        }).pipe(Effect.withSpan("SymbolIndex.snapshot")),
        useAliases: (aliases) => Effect.promise(() => indexer.useAliases(aliases))
      }
    })
  )
