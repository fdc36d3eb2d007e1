/**
 * The `Tracker` service: the contract between assembly (in core) and the stability
 * tracker (in `@strata/tiers`). Snapshots are immutable; `update` and `initialize`
 * are pure and return new, uncommitted snapshots. Only `commit` changes what the
 * service holds, so a failed request never advances N.
 */
import { Context, Schema, type Effect } from "effect"
import type { Item, TierChange, TrackedItem } from "../domain/Item.ts"
import type { CachedTier, Tier } from "../domain/Tier.ts"

/** One request's items, and optionally the files that still exist on disk. */
export interface TrackerUpdateInput {
  readonly items: ReadonlyArray<Item>
  /** Paths (repo-relative) that exist; `file:`/`symbol:` entries for other paths are removed as stale. */
  readonly existingFiles?: ReadonlySet<string> | undefined
}

/** Input for the first request's placement of items across L1-L3. */
export interface InitialPlacementInput {
  /** Items to place (symbol entries, the file tree, selected files...). */
  readonly items: ReadonlyArray<Item>
  /** Clusters of mutually referencing items (item keys), from the reference graph. */
  readonly components?: ReadonlyArray<ReadonlyArray<string>> | undefined
  /** Incoming reference counts by item key, for the percentile fallback. */
  readonly refCounts?: Readonly<Record<string, number>> | undefined
}

/** An immutable view of tracker state, with pure transitions. */
export interface TrackerSnapshot {
  /** Increments with every committed change. */
  readonly version: number
  /** The version this snapshot was derived from (equal to `version` for a committed snapshot). */
  readonly baseVersion: number
  /** False until the first request's initial placement. */
  readonly initialized: boolean
  readonly thresholds: Readonly<Record<CachedTier, number>>
  readonly get: (key: string) => TrackedItem | undefined
  readonly tierOf: (key: string) => Tier | undefined
  /** Items in a tier, in a stable order (by key). */
  readonly itemsIn: (tier: Tier) => ReadonlyArray<TrackedItem>
  /** Place items on the first request; a no-op on an initialized snapshot. */
  readonly initialize: (input: InitialPlacementInput) => { readonly snapshot: TrackerSnapshot; readonly changes: ReadonlyArray<TierChange> }
  /** This request's update, as a new uncommitted snapshot and the changes it makes. */
  readonly update: (input: TrackerUpdateInput) => { readonly snapshot: TrackerSnapshot; readonly changes: ReadonlyArray<TierChange> }
}

/** A commit raced with another: the snapshot was derived from an older version. */
export class TrackerConflict extends Schema.TaggedError<TrackerConflict>()("TrackerConflict", {
  expected: Schema.Number,
  actual: Schema.Number
}) {
  override get message(): string {
    return `Tracker state changed underneath this update (based on version ${this.expected}, now ${this.actual}); assemble the request again.`
  }
}

/** Tracker state could not be persisted. */
export class TrackerPersistError extends Schema.TaggedError<TrackerPersistError>()("TrackerPersistError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not save tracker state to ${this.path}: ${this.reason}`
  }
}

/**
 * Holds the session's tracker state.
 */
export class Tracker extends Context.Service<Tracker, {
  /** The committed state. */
  readonly current: Effect.Effect<TrackerSnapshot>
  /** Make `next` the committed state; fails if another commit happened since `next.baseVersion`. */
  readonly commit: (next: TrackerSnapshot) => Effect.Effect<void, TrackerConflict | TrackerPersistError>
  /** Remove items now (file deselection); returns the removals. */
  readonly remove: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TierChange>, TrackerPersistError>
  /** Remove every `history:` entry now (clear or compaction); returns the removals. */
  readonly purgeHistory: Effect.Effect<ReadonlyArray<TierChange>, TrackerPersistError>
}>()("@strata/core/Tracker") {}

/** A tracker started from a stored state: the service, and its committed state as a JSON value. */
export interface SeededTracker {
  readonly tracker: Tracker["Service"]
  /** The committed state, encoded for the `StateStore` (the `tracker` of a `StatePatch`). */
  readonly state: Effect.Effect<Schema.Json>
  /** The stored state could not be used (another format, damaged): the tracker started empty. */
  readonly warnings: ReadonlyArray<string>
}

/**
 * Trackers whose state lives elsewhere (in a `StateStore` snapshot): `seed` starts an
 * in-memory tracker from a stored JSON value (`null`: a new session) and exposes its state
 * to commit back. It writes nothing itself. `@strata/tiers` provides it with its
 * `TrackerLayer`s; the turn API seeds one tracker per turn.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TrackerState } from "@strata/core/effect"
 * const fresh = Effect.gen(function* () {
 *   const seeded = yield* (yield* TrackerState).seed(null)
 *   return yield* seeded.state // the empty tracker's JSON
 * })
 * ```
 */
export class TrackerState extends Context.Service<TrackerState, {
  readonly seed: (state: Schema.Json | null) => Effect.Effect<SeededTracker>
}>()("@strata/core/TrackerState") {}
