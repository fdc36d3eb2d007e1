// Vitest global setup. The concurrency tests run real child processes, which import the
// packages' dist/ (Node 20 runs no TypeScript): build each, in dependency order, when it
// is missing or older than its sources. Then provide a PostgreSQL URL: STRATA_TEST_PG_URL
// when set, otherwise a throwaway cluster on 127.0.0.1 (the store's own script), stopped
// at the end.
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { buildIfStale } from "@strata/test-support/build"
import { startCluster } from "../../store/scripts/pgCluster.mjs"

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server the tests use. */
    readonly pgUrl: string
  }
}

const packages = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")

export default async function setup(project: TestProject): Promise<() => void> {
  for (const name of ["core", "tiers", "symbols", "providers", "store"]) buildIfStale(join(packages, name))
  const given = process.env.STRATA_TEST_PG_URL
  if (given !== undefined && given !== "") {
    project.provide("pgUrl", given)
    return () => {}
  }
  const cluster = await startCluster()
  project.provide("pgUrl", cluster.url)
  return () => cluster.stop()
}
