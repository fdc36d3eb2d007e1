// Fixture helpers: copy a fixture repository to a temporary directory and index it.
import { cpSync } from "node:fs"
import { join } from "node:path"
import { tempDirs } from "@strata/test-support"
import { type IndexOptions, type SymbolMap, SymbolIndexer } from "../src/index.ts"

export const FIXTURES = join(import.meta.dirname, "..", "fixtures")

/** A fresh temporary directory, removed after the test file. */
export const tempDir = tempDirs("strata-symbols-")

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
