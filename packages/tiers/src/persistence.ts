/**
 * The tracker's state as schema-versioned JSON, decoded with `effect/Schema`: the content
 * of `<repo>/.strata/tracker.json`, and the same value as a `StateStore` snapshot's
 * `tracker`. Decoding never throws: state that is not ours, not whole or from another
 * schema version comes back as a reason the caller reports before rebuilding.
 */
import { TrackedItem } from "@strata/core"
import { Schema } from "effect"
import { PolicyName } from "./model/config.ts"
import type { StabilityTracker } from "./StabilityTracker.ts"
import { compareKeys } from "./model/order.ts"

/** The `format` marker of a tracker file. */
export const TRACKER_FILE_FORMAT = "strata-tracker"
/** The schema version this build reads and writes. */
export const TRACKER_SCHEMA_VERSION = 1

const BreakCause = Schema.Literals(["history", "other"])

/**
 * A tracker file, schema version 1.
 *
 * @example
 * ```json
 * { "format": "strata-tracker", "schemaVersion": 1, "version": 7, "policy": "gated",
 *   "initialized": true, "pending": {},
 *   "items": [{ "key": "tree", "tier": "L2", "n": 6, "hash": "3f…", "tokens": 812 }] }
 * ```
 */
export const TrackerFile = Schema.Struct({
  format: Schema.Literal(TRACKER_FILE_FORMAT),
  schemaVersion: Schema.Literal(TRACKER_SCHEMA_VERSION),
  /** Increments with every commit; the compare-and-set token between processes. */
  version: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
  /** The policy that wrote the file (informational; the running configuration wins). */
  policy: PolicyName,
  initialized: Schema.Boolean,
  /** Tiers rewritten by removals since the last update. */
  pending: Schema.Struct({
    L0: Schema.optionalKey(BreakCause),
    L1: Schema.optionalKey(BreakCause),
    L2: Schema.optionalKey(BreakCause),
    L3: Schema.optionalKey(BreakCause)
  }),
  items: Schema.Array(TrackedItem)
})
export type TrackerFile = typeof TrackerFile.Type

/** Why a tracker file could not be used. */
export type TrackerFileProblem =
  | { readonly kind: "corrupt"; readonly detail: string }
  | { readonly kind: "foreign-version"; readonly detail: string }

const Header = Schema.Struct({ format: Schema.Literal(TRACKER_FILE_FORMAT), schemaVersion: Schema.Number })
const decodeHeader = Schema.decodeUnknownResult(Header)
const decodeFile = Schema.decodeUnknownResult(TrackerFile)

/** A decoded tracker state, or why it cannot be used. */
export type TrackerStateDecoded =
  | { readonly _tag: "File"; readonly file: TrackerFile }
  | { readonly _tag: "Problem"; readonly problem: TrackerFileProblem }

/**
 * Decode a tracker state from a JSON value: the content of a tracker file, or the
 * `tracker` of a `StateStore` snapshot (the same value). Never throws.
 *
 * @example
 * ```ts
 * import { decodeTrackerState } from "@strata/tiers"
 * decodeTrackerState({ format: "strata-tracker", schemaVersion: 9 })._tag // "Problem" (foreign-version)
 * ```
 */
export const decodeTrackerState = (json: unknown): TrackerStateDecoded => {
  const header = decodeHeader(json)
  if (header._tag === "Failure") {
    return { _tag: "Problem", problem: { kind: "corrupt", detail: `not a Strata tracker state: ${header.failure.message}` } }
  }
  if (header.success.schemaVersion !== TRACKER_SCHEMA_VERSION) {
    return {
      _tag: "Problem",
      problem: {
        kind: "foreign-version",
        detail: `schema version ${header.success.schemaVersion}, this Strata reads version ${TRACKER_SCHEMA_VERSION}`
      }
    }
  }
  const file = decodeFile(json)
  if (file._tag === "Failure") return { _tag: "Problem", problem: { kind: "corrupt", detail: file.failure.message } }
  const seen = new Set<string>()
  for (const item of file.success.items) {
    if (seen.has(item.key)) return { _tag: "Problem", problem: { kind: "corrupt", detail: `item ${item.key} appears twice` } }
    seen.add(item.key)
  }
  return { _tag: "File", file: file.success }
}

/**
 * Decode a tracker file's text.
 *
 * @example
 * ```ts
 * import { decodeTrackerFile } from "@strata/tiers"
 * decodeTrackerFile('{"format":"strata-tracker","schemaVersion":') // { _tag: "Problem", problem: { kind: "corrupt", ... } }
 * ```
 */
export const decodeTrackerFile = (text: string): TrackerStateDecoded => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    return { _tag: "Problem", problem: { kind: "corrupt", detail: `not valid JSON (truncated?): ${detail}` } }
  }
  return decodeTrackerState(json)
}

/**
 * A tracker state at `version` as a JSON value (what a tracker file holds, and what a
 * `StateStore` keeps as the snapshot's `tracker`); items sorted by key so diffs stay small.
 *
 * @example
 * ```ts
 * import { decodeTrackerState, encodeTrackerState, StabilityTracker } from "@strata/tiers"
 * decodeTrackerState(encodeTrackerState(StabilityTracker.make(), 0))._tag // "File"
 * ```
 */
export const encodeTrackerState = (tracker: StabilityTracker, version: number): TrackerFile => ({
  format: TRACKER_FILE_FORMAT,
  schemaVersion: TRACKER_SCHEMA_VERSION,
  version,
  policy: tracker.config.policy,
  initialized: tracker.initialized,
  pending: { ...tracker.pending },
  items: [...tracker.items.values()].sort((a, b) => compareKeys(a.key, b.key))
})

/**
 * The file form of a tracker state at `version` (`encodeTrackerState` as JSON text).
 *
 * @example
 * ```ts
 * import { decodeTrackerFile, encodeTrackerFile, StabilityTracker } from "@strata/tiers"
 * decodeTrackerFile(encodeTrackerFile(StabilityTracker.make(), 1))._tag // "File"
 * ```
 */
export const encodeTrackerFile = (tracker: StabilityTracker, version: number): string =>
  JSON.stringify(encodeTrackerState(tracker, version)) + "\n"
