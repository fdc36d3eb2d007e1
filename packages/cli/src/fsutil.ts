/**
 * Small file helpers for the CLI's own state under `.strata/`: reads that tell "missing"
 * from "broken", and atomic writes (temp file + rename) so a crash never leaves half a file.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect } from "effect"
import { StateError } from "./errors.ts"

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The file's text, or `undefined` when it does not exist. */
export const readTextIfExists = (path: string): Effect.Effect<string | undefined, StateError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8").catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))),
    catch: (error) => new StateError({ path, reason: reasonOf(error) })
  })

/** Write `text` to `path` atomically, creating parent folders. */
export const writeTextAtomic = (path: string, text: string): Effect.Effect<void, StateError> =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      const tmp = `${path}.${process.pid}.tmp`
      try {
        await writeFile(tmp, text, "utf8")
        await rename(tmp, path)
      } catch (error) {
        await rm(tmp, { force: true })
        throw error
      }
    },
    catch: (error) => new StateError({ path, reason: reasonOf(error) })
  })
