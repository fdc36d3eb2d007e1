// Temporary directories for tests: made under the OS temp dir with a recognisable prefix,
// removed by an explicit cleanup or, for `tempDirs`, after the test file.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

export interface TempDir {
  readonly path: string
  /** Remove the directory and everything in it (idempotent). */
  readonly cleanup: () => void
}

/** A fresh temporary directory `<tmp>/<prefix>XXXXXX`, removed by `cleanup`. */
export const tempDir = (prefix = "strata-test-"): TempDir => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * A maker of temporary directories that are all removed after the current test file
 * (registers one `afterAll`; call it at module level).
 */
export const tempDirs = (prefix = "strata-test-"): ((suffix?: string) => string) => {
  const made: Array<TempDir> = []
  afterAll(() => {
    for (const dir of made) dir.cleanup()
  })
  return (suffix = "") => {
    const dir = tempDir(`${prefix}${suffix}`)
    made.push(dir)
    return dir.path
  }
}
