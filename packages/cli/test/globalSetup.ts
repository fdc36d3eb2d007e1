// Vitest global setup: the end-to-end tests spawn the built binary (dist/bin.js), which
// imports the other packages' dist/. Build this package when its dist/ is missing or older
// than its sources, and any dependency whose dist/ is missing (a stale one only gets a
// warning: `pnpm build` refreshes it). Under turbo every `test` depends on the root
// compile, which builds every dist/, so this is only a check there.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build, isStale } from "@strata/test-support/build"

const here = dirname(fileURLToPath(import.meta.url))
const cliDir = resolve(here, "..")
const packagesDir = resolve(cliDir, "..")

export default function setup(): void {
  // core first: the leaves' declarations import it.
  for (const name of ["core", "tiers", "symbols", "providers", "store", "replay", "mcp", "proxy", "ui"]) {
    const pkg = join(packagesDir, name)
    if (!existsSync(join(pkg, "dist", "index.js"))) build(pkg)
    else if (isStale(pkg)) console.warn(`[strata e2e] packages/${name}/dist is older than its sources; run \`pnpm build\` to test against them`)
  }
  // The dashboard's page bundle (`strata ui`), written by its own build step.
  if (isStale(join(packagesDir, "ui"), "page/app.js", "page")) execFileSync(process.execPath, [join(packagesDir, "ui", "scripts", "bundle.mjs")], { stdio: "inherit" })
  if (isStale(cliDir) || isStale(cliDir, "bin.js")) build(cliDir)
}
