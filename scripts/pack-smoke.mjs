#!/usr/bin/env node
// Install the packages as a user would: pack every published package, install the
// tarballs into a scratch project outside the monorepo with npm (the @strata packages
// come from the tarballs only; effect, the Anthropic SDK and TypeScript from the
// registry), typecheck scripts/pack-smoke/sample.ts under strict settings, run it against
// a loopback server, and run the installed `strata` binary. Then the same tarballs with
// pnpm in a second scratch project. Needs the packages built (`pnpm build`); CI runs it
// after the tests, and scripts/node-matrix.mjs runs it again on Node 22 and 24. Prints each
// step's time; exits non-zero on the first failure.
import { execFileSync, spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const PNPM = ["--yes", "pnpm@10.34.9"]
const PACKAGES = ["core", "tiers", "symbols", "providers", "store", "replay", "mcp", "proxy", "ui", "cli"]
const started = performance.now()
const work = mkdtempSync(join(tmpdir(), "strata-pack-smoke-"))

const manifest = (path) => JSON.parse(readFileSync(join(ROOT, path), "utf8"))
const step = (name, fn) => {
  const t = performance.now()
  const out = fn()
  console.log(`pack-smoke: ${name} (${((performance.now() - t) / 1000).toFixed(1)} s)`)
  return out
}
const run = (cmd, args, cwd, env = {}) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } })

// The versions a user would install next to Strata: the peer range's floor of effect
// (the tested end of it), and the SDK and compiler versions this repository tests with.
const floor = (range) => /(\d+\.\d+\.\d+)/.exec(range)[1]
const effect = floor(manifest("packages/core/package.json").peerDependencies.effect)
const anthropic = floor(manifest("packages/providers/package.json").devDependencies["@anthropic-ai/sdk"])
const root = manifest("package.json").devDependencies

try {
  const tarballs = step("pack every package", () => {
    const dir = join(work, "tarballs")
    // The published packages only: private workspace packages (test helpers) are never packed.
    run("npx", [...PNPM, "-r", ...PACKAGES.flatMap((p) => ["--filter", `@strata/${p}`]), "pack", "--pack-destination", dir], ROOT)
    const files = readdirSync(dir).filter((f) => f.endsWith(".tgz"))
    if (files.length !== PACKAGES.length) throw new Error(`expected ${PACKAGES.length} tarballs, got ${files.join(", ")}`)
    for (const f of files) {
      const listing = run("tar", ["-tzf", join(dir, f)], dir)
      for (const required of ["package/LICENSE", "package/README.md", "package/package.json", "package/dist/index.d.ts"]) {
        if (!listing.split("\n").includes(required)) throw new Error(`${f} lacks ${required}`)
      }
    }
    return Object.fromEntries(files.map((f) => [f.replace(/^strata-(.*)-\d+\.\d+\.\d+\.tgz$/, "@strata/$1"), join(dir, f)]))
  })

  const scratch = (name, extra) => {
    const dir = join(work, name)
    mkdirSync(dir)
    const dependencies = { ...Object.fromEntries(Object.entries(tarballs).map(([n, path]) => [n, `file:${path}`])), effect, "@anthropic-ai/sdk": anthropic, ...extra }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `strata-smoke-${name}`, private: true, type: "module", dependencies }, null, 2))
    return dir
  }

  const npmProject = scratch("npm", { typescript: root.typescript, "@types/node": root["@types/node"] })
  step("npm install the tarballs", () => {
    // npm prints EBADENGINE warnings at the default log level; on a Node line we support
    // (package.json `engines`: 22.19+ for the CLI) there must be none.
    const out = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: npmProject, encoding: "utf8" })
    if (out.status !== 0) throw Object.assign(new Error(`npm install exited ${out.status}`), { stdout: out.stdout, stderr: out.stderr })
    const [major, minor] = process.versions.node.split(".").map(Number)
    const supported = major > 22 || (major === 22 && minor >= 19)
    const warnings = `${out.stdout}${out.stderr}`.split("\n").filter((l) => l.includes("EBADENGINE"))
    if (supported && warnings.length > 0) throw new Error(`npm install on Node ${process.versions.node} warned:\n${warnings.join("\n")}`)
    if (!supported && warnings.length > 0) console.log(`pack-smoke: Node ${process.versions.node} is below what the CLI supports; npm warned (as expected): ${warnings.length} EBADENGINE line(s)`)
  })
  step("typecheck the strict sample", () => {
    mkdirSync(join(npmProject, "src"))
    copyFileSync(join(ROOT, "scripts", "pack-smoke", "sample.ts"), join(npmProject, "src", "sample.ts"))
    writeFileSync(
      join(npmProject, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true, verbatimModuleSyntax: true, skipLibCheck: false, types: ["node"], outDir: "dist", rootDir: "src"
        },
        include: ["src"]
      }, null, 2)
    )
    run(join(npmProject, "node_modules", ".bin", "tsc"), ["-p", "."], npmProject)
  })
  step("run the sample against a loopback server", () => process.stdout.write(run("node", [join("dist", "sample.js")], npmProject)))
  step("run the installed strata binary", () => {
    const version = run(join(npmProject, "node_modules", ".bin", "strata"), ["--version"], npmProject).trim()
    if (!/^strata \d+\.\d+\.\d+/.test(version)) throw new Error(`strata --version printed ${JSON.stringify(version)}`)
    const tree = JSON.parse(run(join(npmProject, "node_modules", ".bin", "strata"), ["tree", "--json", "--repo", join(npmProject, "src")], npmProject))
    if (tree.schemaVersion !== 1 || !tree.files.includes("sample.ts")) throw new Error(`strata tree --json printed ${JSON.stringify(tree)}`)
  })

  // pnpm resolves each dependency on its own; the @strata packages are peers of each
  // other, so the tarballs the project lists satisfy them and nothing asks the registry.
  const pnpmProject = scratch("pnpm", {})
  step("pnpm install the tarballs", () => run("npx", [...PNPM, "install", "--prefer-offline", "--reporter=silent", "--config.confirmModulesPurge=false"], pnpmProject))
  step("run the sample and strata under pnpm", () => {
    mkdirSync(join(pnpmProject, "dist"))
    copyFileSync(join(npmProject, "dist", "sample.js"), join(pnpmProject, "dist", "sample.js"))
    process.stdout.write(run("node", [join("dist", "sample.js")], pnpmProject))
    run(join(pnpmProject, "node_modules", ".bin", "strata"), ["--version"], pnpmProject)
  })
  step("remove the scratch projects", () => rmSync(work, { recursive: true, force: true }))
  console.log(`pack-smoke: passed in ${((performance.now() - started) / 1000).toFixed(1)} s`)
} catch (error) {
  const detail = error && typeof error === "object" && "stderr" in error ? `\n${error.stdout ?? ""}${error.stderr ?? ""}` : ""
  console.error(`pack-smoke: FAILED: ${error instanceof Error ? error.message : String(error)}${detail}`)
  process.exitCode = 1
} finally {
  rmSync(work, { recursive: true, force: true })
}
