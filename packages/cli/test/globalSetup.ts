// Vitest global setup: the end-to-end tests spawn the built binary (dist/bin.js), which
// imports the other packages' dist/. Build this package when its dist/ is missing or older
// than its sources, and any dependency whose dist/ is missing (a stale one only gets a
// warning: `pnpm build` refreshes it). Under turbo, packages/cli/turbo.json makes `test`
// depend on this package's own `build` and `^build`, so this is only a check there.
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const cliDir = resolve(here, "..")
const packagesDir = resolve(cliDir, "..")
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

const stale = (pkg: string): boolean => {
  const entry = join(pkg, "dist", "index.js")
  return !existsSync(entry) || statSync(entry).mtimeMs < newestMtime(join(pkg, "src"))
}

const build = (pkg: string): void => {
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: pkg, stdio: "inherit" })
}

export default function setup(): void {
  // core first: the leaves' declarations import it.
  for (const name of ["core", "tiers", "symbols", "providers"]) {
    const pkg = join(packagesDir, name)
    if (!existsSync(join(pkg, "dist", "index.js"))) build(pkg)
    else if (stale(pkg)) console.warn(`[strata e2e] packages/${name}/dist is older than its sources; run \`pnpm build\` to test against them`)
  }
  if (stale(cliDir) || !existsSync(join(cliDir, "dist", "bin.js"))) build(cliDir)
}
