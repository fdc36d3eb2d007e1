// Vitest global setup. The conformance tests run real child processes, which import this
// package's dist/ (Node 20 runs no TypeScript): build it, and core's, when missing or
// older than the sources. Then provide a PostgreSQL URL: STRATA_TEST_PG_URL when set,
// otherwise a throwaway cluster on 127.0.0.1 in a temporary directory, stopped at the end.
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { buildIfStale } from "@strata/test-support/build"
import type { TestProject } from "vitest/node"
import { startCluster } from "../scripts/pgCluster.mjs"

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server the tests use. */
    readonly pgUrl: string
  }
}

const here = dirname(fileURLToPath(import.meta.url))
const storeDir = resolve(here, "..")

export default async function setup(project: TestProject): Promise<() => void> {
  buildIfStale(resolve(storeDir, "..", "core"))
  buildIfStale(storeDir)
  const given = process.env.STRATA_TEST_PG_URL
  if (given !== undefined && given !== "") {
    project.provide("pgUrl", given)
    return () => {}
  }
  const cluster = await startCluster()
  project.provide("pgUrl", cluster.url)
  return () => cluster.stop()
}
