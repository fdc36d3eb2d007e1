/**
 * The CLI's own state files under `.strata/` (config, session, journal, last request),
 * read and written through core's `insideRepo` helpers: every path resolves inside the
 * repository or fails with `PathOutsideRepo`, a FIFO or device fails with `SpecialFile`,
 * reads tell "missing" from "broken", and writes are atomic (a temporary file in the real
 * directory, then a rename) and never follow a link.
 */
import { readInsideRepo, writeInsideRepo, type PathOutsideRepo, type SpecialFile } from "@strata/core"
import { Effect } from "effect"
import { StateError } from "./errors.ts"

/** Everything using a state file can fail with: I/O (`StateError`), a link out of the repository, a FIFO or device. */
export type StateFileError = StateError | PathOutsideRepo | SpecialFile

/** The text of `path` (absolute inside `root`, or relative to it), or `undefined` when it does not exist. */
export const readTextIfExists = (root: string, path: string): Effect.Effect<string | undefined, StateFileError> =>
  readInsideRepo(root, path).pipe(Effect.catchTag("FileReadError", (error) => Effect.fail(new StateError({ path, reason: error.reason }))))

/** Write `text` to `path` inside `root` atomically, creating parent folders inside the repository. */
export const writeTextAtomic = (root: string, path: string, text: string): Effect.Effect<void, StateFileError> =>
  writeInsideRepo(root, path, text).pipe(Effect.catchTag("FileWriteError", (error) => Effect.fail(new StateError({ path, reason: error.reason }))))
