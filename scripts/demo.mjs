#!/usr/bin/env node
// `pnpm demo` (after `turbo run build`): build the example repository, index it, run a few
// assembled turns through the pipeline with the real `strata` binary, and print the HUD.
// Offline and deterministic apart from timings; the session it leaves in
// examples/demo-repo/.strata/ can be continued with `pnpm strata ... --repo examples/demo-repo`.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { DEFAULT_OUT, makeDemoRepo } from "./make-demo-repo.mjs"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const BIN = join(ROOT, "packages", "cli", "dist", "bin.js")
const REPO = relative(ROOT, DEFAULT_OUT)

const color = process.stdout.isTTY === true && !process.env.NO_COLOR
const bold = (s) => (color ? `\x1b[1m${s}\x1b[22m` : s)
const dim = (s) => (color ? `\x1b[2m${s}\x1b[22m` : s)

const quote = (a) => (/^[\w./@=:-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)

/** Run `strata ...args --repo examples/demo-repo`, echoing the command first. */
function strata(args, { filter } = {}) {
  const full = [...args, "--repo", REPO]
  console.log(bold(`\n$ pnpm strata ${full.map(quote).join(" ")}`))
  const r = spawnSync(process.execPath, [BIN, ...full], { cwd: ROOT, encoding: "utf8", env: process.env, stdio: ["ignore", "pipe", "pipe"] })
  const out = filter ? filter(r.stdout) : r.stdout
  if (out) process.stdout.write(out.endsWith("\n") ? out : `${out}\n`)
  if (r.stderr) process.stderr.write(r.stderr)
  if (r.status !== 0) {
    console.error(`\nstrata exited with ${r.status}; the demo stops here.`)
    process.exit(r.status ?? 1)
  }
  return r.stdout
}

/** The first `n` lines of a text, with a note of how many were left out. */
const head = (n) => (text) => {
  const lines = text.replace(/\n$/, "").split("\n")
  return lines.length <= n ? text : `${lines.slice(0, n).join("\n")}\n${dim(`... ${lines.length - n} more lines`)}\n`
}

/** From an assemble summary keep the headline, the block totals, usage and tier changes. */
const turnSummary = (text) =>
  text
    .split("\n")
    .filter((l) => /request for|Total:|simulated|cache:|Promoted|Demoted|Initial|Removed/.test(l))
    .map((l) => l.replace(/^│\s*|\s*│$/g, ""))
    .join("\n")

if (!existsSync(BIN)) {
  console.error(`${relative(ROOT, BIN)} is missing: run \`npx --yes pnpm@10.34.9 build\` first (\`pnpm demo\` does).`)
  process.exit(1)
}

const built = makeDemoRepo({ replace: true })
console.log(bold("Strata demo"))
console.log(
  built.git
    ? `Built ${REPO}/: Harbor, a TypeScript + Python + Go project with ${built.commits} commits (HEAD ${built.head.slice(0, 12)}).`
    : `Built ${REPO}/ without history (git was not found; the demo does not need it).`
)

strata(["init", "--yes"])
strata(["map", "--budget", "700"], { filter: head(40) })

const turns = [
  { prompt: "Where is the price of a shipment computed?", files: ["src/services/pricing.ts"], reply: "In quote() in src/services/pricing.ts: the carrier's base rate plus a per-kg rate, with a weekend surcharge." },
  { prompt: "Which carriers can take a 25 kg parcel?", files: ["src/services/pricing.ts", "src/models/carrier.ts"], reply: "Swift Couriers (up to 30 kg) and Bulk Freight; National Post stops at 20 kg." },
  { prompt: "Add a quote endpoint that compares all carriers.", files: ["src/services/pricing.ts", "src/models/carrier.ts", "src/api/routes.ts"], reply: "POST /quotes/cheapest already does; it calls cheapestQuote()." },
  { prompt: "How does the worker retry a failed label job?", files: ["src/services/pricing.ts", "src/models/carrier.ts", "src/api/routes.ts"], reply: "queue.Retry re-queues it until Policy.MaxAttempts, waiting Policy.Delay between attempts." },
  { prompt: "Summarise what we looked at.", files: ["src/services/pricing.ts", "src/models/carrier.ts", "src/api/routes.ts"], reply: "Pricing, carriers and the routes that expose them." }
]
for (const [i, t] of turns.entries()) {
  console.log(dim(`\nTurn ${i + 1} of ${turns.length}`))
  strata(["assemble", "--prompt", t.prompt, ...t.files.flatMap((f) => ["--file", f]), "--reply", t.reply], { filter: turnSummary })
}

strata(["hud"])

const next = [
  [`pnpm strata breakdown --repo ${REPO}`, "every block, item and token (--json for the JSON a UI reads)"],
  [`pnpm strata chat --repo ${REPO} --dry-run`, "chat without an API key: each request and its HUD"],
  ["pnpm strata init --repo /path/to/your/repo --yes", "then map, assemble and hud on your own code"]
]
const width = Math.max(...next.map(([c]) => c.length))
console.log(`\n${bold("Next")}`)
for (const [command, what] of next) console.log(`  ${command.padEnd(width)}  ${dim(`# ${what}`)}`)
console.log("Docs: docs/getting-started.md")
