// Vitest global setup: the stdio test spawns test/serve.mjs, which imports this package's
// dist/ (Node 20 runs no TypeScript). Build the packages it imports when their dist/ is
// missing, and this one when it is older than its sources.
import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build, isStale } from "@strata/test-support/build"

const here = dirname(fileURLToPath(import.meta.url))
const mcpDir = resolve(here, "..")
const packagesDir = resolve(mcpDir, "..")

export default function setup(): void {
  for (const name of ["core", "symbols", "providers", "store"]) {
    const pkg = join(packagesDir, name)
    if (!existsSync(join(pkg, "dist", "index.js"))) build(pkg)
    else if (isStale(pkg)) console.warn(`[strata mcp] packages/${name}/dist is older than its sources; run \`pnpm build\` to test against them`)
  }
  if (isStale(mcpDir)) build(mcpDir)
}
