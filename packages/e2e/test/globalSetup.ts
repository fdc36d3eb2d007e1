// Vitest global setup. The concurrency tests run real child processes, which import the
// packages' dist/ (Node 20 runs no TypeScript): build each, in dependency order, when it
// is missing or older than its sources. Then provide a PostgreSQL URL: STRATA_TEST_PG_URL
// when set, otherwise a throwaway cluster on 127.0.0.1 (the store's own script), stopped
// at the end.
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { startCluster } from "../../store/scripts/pgCluster.mjs"

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server the tests use. */
    readonly pgUrl: string
  }
}

const packages = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

const buildIfStale = (name: string): void => {
  const pkg = join(packages, name)
  const entry = join(pkg, "dist", "index.js")
  if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime(join(pkg, "src"))) return
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: pkg, stdio: "inherit" })
}

export default async function setup(project: TestProject): Promise<() => void> {
  for (const name of ["core", "tiers", "symbols", "providers", "store"]) buildIfStale(name)
  const given = process.env.STRATA_TEST_PG_URL
  if (given !== undefined && given !== "") {
    project.provide("pgUrl", given)
    return () => {}
  }
  const cluster = await startCluster()
  project.provide("pgUrl", cluster.url)
  return () => cluster.stop()
}
