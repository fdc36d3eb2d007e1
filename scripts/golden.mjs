#!/usr/bin/env node
// Golden requests: a digest of every request body Strata builds on a fixed set of
// sessions, so a refactor can show that it changed no byte. Run it before and after a
// change and diff the two files:
//
//   npx --yes pnpm@10.34.9 build && node scripts/golden.mjs > /tmp/before.txt
//   ... change ...
//   npx --yes pnpm@10.34.9 build && node scripts/golden.mjs > /tmp/after.txt
//   diff /tmp/before.txt /tmp/after.txt
//
// Sessions: the demo repository's history replayed under every strategy, provider and
// layout; this repository's first 121 commits (Anthropic, both layouts); and a CLI
// session on a copy of the demo repository (init, assemble turns with replies,
// breakdown --json, per provider). One line per request: case, strategy, index, SHA-256
// of the body. Replay tables are digested too (every figure they print).
// `--quick` skips this repository's history (the slowest case).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { makeDemoRepo } from "./make-demo-repo.mjs"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const BIN = join(ROOT, "packages", "cli", "dist", "bin.js")
const quick = process.argv.includes("--quick")
const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 16)

const strata = (args, cwd = ROOT) =>
  execFileSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", maxBuffer: 1024 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } })

const work = mkdtempSync(join(tmpdir(), "strata-golden-"))
const out = []
try {
  const demo = makeDemoRepo({ out: join(work, "demo"), replace: true }).out
  const replays = [
    ...["anthropic", "bedrock", "openai", "gemini"].flatMap((provider) =>
      ["journal", "seed"].map((layout) => ({ name: `demo/${provider}/${layout}`, repo: demo, args: ["--provider", provider, "--layout", layout] }))
    ),
    ...(quick ? [] : ["journal", "seed"].map((layout) => ({ name: `self/anthropic/${layout}`, repo: ROOT, args: ["--turns", "121", "--layout", layout] })))
  ]
  for (const r of replays) {
    const dump = join(work, "dump.jsonl")
    const report = JSON.parse(strata(["replay", "--repo", r.repo, "--json", "--dump", dump, ...r.args]))
    out.push(`${r.name} table ${sha(JSON.stringify(report.rows))}`)
    const counts = new Map()
    for (const line of readFileSync(dump, "utf8").split("\n")) {
      if (line === "") continue
      const { strategy, request } = JSON.parse(line)
      const i = counts.get(strategy) ?? 0
      counts.set(strategy, i + 1)
      out.push(`${r.name} ${strategy} ${i} ${sha(JSON.stringify(request))}`)
    }
    rmSync(dump, { force: true })
  }
  // A CLI session per provider on a fresh copy of the demo repository.
  for (const provider of ["anthropic", "bedrock", "openai", "gemini", "openai-compatible", "ai-sdk"]) {
    const repo = join(work, `cli-${provider}`)
    cpSync(demo, repo, { recursive: true })
    strata(["init", "--repo", repo, "--yes"])
    const turns = [
      ["--prompt", "Where is pricing done?", "--file", "src/services/pricing.ts", "--reply", "In src/services/pricing.ts."],
      ["--prompt", "And tracking?", "--file", "src/services/pricing.ts", "--file", "src/services/tracking.ts", "--reply", "Tracking is next door."],
      ["--prompt", "Add retries", "--reply", "Done."],
      ["--prompt", "Summarize", "--no-files"]
    ]
    turns.forEach((turn, i) => {
      const body = strata(["assemble", "--repo", repo, "--provider", provider, "--json", ...turn])
      out.push(`cli/${provider} assemble ${i} ${sha(stripVolatile(body))}`)
    })
    out.push(`cli/${provider} breakdown - ${sha(stripVolatile(strata(["breakdown", "--repo", repo, "--provider", provider, "--json"])))}`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
process.stdout.write(out.join("\n") + "\n")

// Timings and temp paths differ from run to run; everything else must not.
function stripVolatile(text) {
  return text
    .replace(/"(ms|millis|elapsedMs|durationMs|at|createdAt|updatedAt|timestamp)":\s*[0-9.]+/g, '"$1":0')
    .replace(/"(createdAt|updatedAt|timestamp|at)":\s*"[^"]*"/g, '"$1":""')
    .replace(/strata-golden-[A-Za-z0-9]+/g, "TMP")
}
