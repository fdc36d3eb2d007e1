// Fixture helpers: copy a fixture repository to a temporary directory and index it.
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { type IndexOptions, type SymbolMap, SymbolIndexer } from "../src/index.ts"

export const FIXTURES = join(import.meta.dirname, "..", "fixtures")

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the test file. */
export const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "strata-symbols-"))
  made.push(dir)
  return dir
}

/** A copy of fixture `name` in a temporary directory. */
export const copyFixture = (name: string): string => {
  const dir = tempDir()
  cpSync(join(FIXTURES, name), dir, { recursive: true })
  return dir
}

/** Index a copy of fixture `name` (walk mode, no cache unless asked). */
export const indexFixture = async (name: string, options: IndexOptions = {}): Promise<{ root: string; map: SymbolMap; indexer: SymbolIndexer }> => {
  const root = copyFixture(name)
  const indexer = await SymbolIndexer.create(root, { git: false, cache: false, ...options })
  return { root, map: await indexer.refresh(), indexer }
}
