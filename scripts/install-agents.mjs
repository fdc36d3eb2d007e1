#!/usr/bin/env node
// Installs the real coding agents the end-to-end tests drive (Claude Code and Codex CLI, from
// the npm registry, pinned) into .cache/agents/ at the repository root, once. Both ship their
// native binary inside a registry package (an optional dependency), so nothing else is fetched.
// Prints one JSON line: { "claude": "<path>", "codex": "<path>" }.
//
//   node scripts/install-agents.mjs            install when missing, print the paths
//   node scripts/install-agents.mjs --check    print the paths, exit 1 when missing
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const AGENTS = {
  claude: { pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.171.0", bin: "codex" }
}

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
/** STRATA_AGENTS_DIR overrides the folder (several checkouts can share one install). */
export const agentsDir = process.env.STRATA_AGENTS_DIR ?? join(root, ".cache", "agents")

/** Where each agent's command is, installed or not. */
export const agentPaths = () =>
  Object.fromEntries(Object.entries(AGENTS).map(([name, a]) => [name, join(agentsDir, "node_modules", ".bin", a.bin)]))

const missing = () => Object.values(agentPaths()).filter((p) => !existsSync(p))

const main = () => {
  const check = process.argv.includes("--check")
  if (missing().length > 0 && !check) {
    mkdirSync(agentsDir, { recursive: true })
    const manifest = join(agentsDir, "package.json")
    if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "strata-agents", private: true }, null, 2) + "\n")
    const specs = Object.values(AGENTS).map((a) => `${a.pkg}@${a.version}`)
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--save-exact", ...specs], {
      cwd: agentsDir,
      stdio: ["ignore", "inherit", "inherit"]
    })
  }
  const still = missing()
  if (still.length > 0) {
    process.stderr.write(`install-agents: missing after install: ${still.join(", ")}\n`)
    process.exit(1)
  }
  process.stdout.write(JSON.stringify(agentPaths()) + "\n")
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()
