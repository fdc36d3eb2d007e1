/**
 * The `SymbolIndex` service: the contract between assembly (in core) and the
 * tree-sitter symbol map (in `@strata/symbols`).
 */
import { Context, Schema, type Effect } from "effect"

/** A file the index could not fully use, and why. */
export interface IndexProblem {
  readonly path: string
  readonly reason: string
}

/** The symbol map of a repository at one moment. */
export interface SymbolMapSnapshot {
  /** Every file in the file tree, sorted (git-tracked plus untracked-not-ignored). */
  readonly files: ReadonlyArray<string>
  /** Files with a symbol block, sorted. */
  readonly symbolFiles: ReadonlyArray<string>
  /** The rendered block of one file (ends with a newline), using the legend's aliases. */
  readonly block: (path: string) => string | undefined
  /** Hash of everything the file's block renders (stable across line moves and whitespace). */
  readonly blockHash: (path: string) => string | undefined
  /** Legend: abbreviation key and path aliases; fixed for the session. */
  readonly legend: string
  /**
   * The flat sorted file tree, rendered: one path per line, each line ending with a
   * newline ("" for no files), and no header. The pipeline puts it under
   * `FILE_TREE_HEADER` ("# Repository Files …", docs/pipeline.md), so the v1 count line
   * `# File Tree (N files)` is not part of it.
   */
  readonly fileTree: string
  /** SHA-256 of the rendered file tree (a pure function of the file list). */
  readonly fileTreeHash: string
  /**
   * Connected components of mutually referencing files (paths), for initial placement.
   * Every file with a block appears once (isolated files as singletons); members are
   * sorted, components largest first.
   */
  readonly components: ReadonlyArray<ReadonlyArray<string>>
  /** Incoming reference count per file: the number of distinct other files referencing it. */
  readonly refCounts: ReadonlyMap<string, number>
  /** Files skipped or partly parsed, with reasons. */
  readonly problems: ReadonlyArray<IndexProblem>
  /**
   * The path aliases the legend and blocks use (`@1/` = `src/components/`...), when the
   * index has them. A session records them, so every process renders the same legend.
   */
  readonly aliases?: ReadonlyArray<PathAlias> | undefined
  /**
   * This snapshot's identity, when the index tracks its snapshots: a fresh object per
   * snapshot, so a consumer can tell "the same map" from "a new map" without comparing
   * files. Optional.
   */
  readonly revision?: object | undefined
  /**
   * What changed since an earlier snapshot of the same index, when the index knows: the
   * `revision` of that snapshot and every path whose block was added, removed or whose
   * `blockHash` changed since then (it may name more, never fewer). `refCounts` change
   * only with a block (a block shows its count), so a consumer that keeps per-file state
   * from the earlier snapshot updates these paths and nothing else. Optional: without it
   * a consumer compares every file.
   */
  readonly delta?: SymbolMapDelta | undefined
}

/** The paths whose blocks differ between two snapshots of one index (`SymbolMapSnapshot.delta`). */
export interface SymbolMapDelta {
  /** The `revision` of the snapshot this one is compared with. */
  readonly from: object
  /** Paths whose block was added, removed or changed its hash since that snapshot. */
  readonly paths: ReadonlySet<string>
}

/** A path alias of the symbol map's legend: `token` stands for the directory `prefix`. */
export interface PathAlias {
  readonly token: string
  readonly prefix: string
}

/** Indexing failed as a whole (the repository root is unreadable, for example). */
export class SymbolIndexError extends Schema.TaggedError<SymbolIndexError>()("SymbolIndexError", {
  root: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not index the repository at ${this.root}: ${this.reason}`
  }
}

/** Indexes the repository incrementally and serves its symbol map. */
export class SymbolIndex extends Context.Service<SymbolIndex, {
  /** Bring the index up to date with the working tree and return its map. */
  readonly snapshot: Effect.Effect<SymbolMapSnapshot, SymbolIndexError>
  /**
   * Render with these path aliases from now on (a session's recorded ones), so the legend
   * is byte-identical to the one an earlier process cached. Optional: an index without it
   * computes its own.
   */
  readonly useAliases?: ((aliases: ReadonlyArray<PathAlias>) => Effect.Effect<void>) | undefined
}>()("@strata/core/SymbolIndex") {}
