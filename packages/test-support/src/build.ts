// For vitest global setups whose tests spawn real processes: those import the packages'
// dist/ (Node 20 runs no TypeScript), so a package's dist/ must exist and, ideally, be as
// new as its sources. `pnpm build` (turbo) keeps them so; these helpers cover a lone
// `vitest run`.
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/** Is `dist/<entry>` of the package at `pkg` missing, or older than a file of its `sources` folder (default `src`)? */
export const isStale = (pkg: string, entry = "index.js", sources = "src"): boolean => {
  const built = join(pkg, "dist", entry)
  return !existsSync(built) || statSync(built).mtimeMs < newestMtime(join(pkg, sources))
}

/**
 * Build the package at `pkg` and the packages it references (`tsc -b tsconfig.build.json
 * --noCheck`, as its `build` script does; the typecheck is the root's business), output
 * inherited.
 */
export const build = (pkg: string): void => {
  execFileSync(process.execPath, [tsc, "-b", "tsconfig.build.json", "--noCheck"], { cwd: pkg, stdio: "inherit" })
}

/** Build the package at `pkg` when its dist/ is missing or older than its sources. */
export const buildIfStale = (pkg: string, entry = "index.js"): void => {
  if (isStale(pkg, entry)) build(pkg)
}
