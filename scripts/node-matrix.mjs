#!/usr/bin/env node
// Runs the packed-install smoke test (scripts/pack-smoke.mjs) and the end-to-end tests
// (packages/e2e) on the other supported Node.js lines, next to the machine's own Node that
// runs the full suite. Each runtime comes from npm's `node` package (its binary ships in a
// registry package), installed once into .cache/node/<major>/; the machine's Node is not
// touched. Needs the build the tests made. Prints each step's time; exits non-zero on the
// first failure.
//
//   node scripts/node-matrix.mjs            every line in RUNTIMES
//   node scripts/node-matrix.mjs 24         one line
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The Node.js lines we support besides the machine's, pinned (npm package `node`). */
export const RUNTIMES = { 22: "22.23.3", 24: "24.21.0" }

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..")
const started = performance.now()

const runtime = (major) => {
  const version = RUNTIMES[major]
  if (version === undefined) throw new Error(`no pinned runtime for Node ${major}; known: ${Object.keys(RUNTIMES).join(", ")}`)
  const dir = join(ROOT, ".cache", "node", String(major))
  const bin = join(dir, "node_modules", "node", "bin")
  if (!existsSync(join(bin, "node"))) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `strata-node-${major}`, private: true }) + "\n")
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--save-exact", `node@${version}`], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] })
  }
  const printed = execFileSync(join(bin, "node"), ["--version"], { encoding: "utf8" }).trim()
  if (printed !== `v${version}`) throw new Error(`.cache/node/${major} runs ${printed}, expected v${version}; delete the folder and run again`)
  return bin
}

const step = (name, fn) => {
  const t = performance.now()
  fn()
  console.log(`node-matrix: ${name} (${((performance.now() - t) / 1000).toFixed(1)} s)`)
}

const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(RUNTIMES)
try {
  for (const major of majors) {
    let bin = ""
    step(`Node ${major}: runtime`, () => { bin = runtime(major) })
    // Everything below resolves `node` through PATH, so npm, npx, tsc and the installed
    // `strata` binary all run on this line's runtime.
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` }
    step(`Node ${major}: packed install (npm and pnpm)`, () =>
      execFileSync("node", [join(ROOT, "scripts", "pack-smoke.mjs")], { cwd: ROOT, env, stdio: "inherit" }))
    step(`Node ${major}: end-to-end tests`, () =>
      execFileSync("npx", ["vitest", "run"], { cwd: join(ROOT, "packages", "e2e"), env, stdio: "inherit" }))
  }
  console.log(`node-matrix: passed in ${((performance.now() - started) / 1000).toFixed(1)} s`)
} catch (error) {
  console.error(`node-matrix: FAILED: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
}
