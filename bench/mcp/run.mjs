// MCP call latency on a generated repository of 5,000 TypeScript files (the shape
// bench/assemble uses: 50 packages of 100 modules that import and call siblings). The
// server is the real one (`makeStrataMcp`), reached through the SDK's own client over a
// linked in-memory transport, so a call includes JSON-RPC encoding and the index's
// freshness check (mtime and size of every file). Cold: the first index. Warm: the median
// of each tool's calls on the unchanged repository (wall and this process's CPU time, which
// other processes' load disturbs less), and a call after one file was edited.
// Target: a warm call < 50 ms.
//
// Run: npx --yes pnpm@10.34.9 turbo run build --filter=@strata/mcp... && node bench/mcp/run.mjs
// Options: --files=5000 --calls=20 --json
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Client } from "../../packages/mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js"
import { InMemoryTransport } from "../../packages/mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/inMemory.js"
import { Effect, Exit, Scope } from "../../packages/core/node_modules/effect/dist/index.js"
import { makeStrataMcp } from "../../packages/mcp/dist/index.js"
import { arg, median, rng } from "../support.mjs"

const FILES = Number(arg("files", "5000"))
const CALLS = Number(arg("calls", "20"))
const JSON_OUT = process.argv.includes("--json")
const TARGET_MS = 50

const random = rng(42)
const pick = (xs) => xs[Math.floor(random() * xs.length)]
const WORDS = "parse token tree node visit walk emit cache prefix block tier symbol file import export value key hash index range line error retry stream usage".split(" ")
const name = () => pick(WORDS) + pick(WORDS).replace(/^./, (c) => c.toUpperCase())
const PER_PACKAGE = 100
const pathOf = (i) => `packages/pkg${Math.floor(i / PER_PACKAGE)}/src/mod${i % PER_PACKAGE}.ts`
const exportsOf = new Map()
const moduleText = (i, edit = 0) => {
  const pkg = Math.floor(i / PER_PACKAGE)
  const imports = []
  for (let k = 0; k < 2 + (i % 2); k++) {
    const j = pkg * PER_PACKAGE + Math.floor(random() * PER_PACKAGE)
    if (j < i && !imports.includes(j)) imports.push(j)
  }
  const lines = imports.map((j) => `import { ${exportsOf.get(j)[0]} } from "./mod${j % PER_PACKAGE}"`)
  const names = exportsOf.get(i) ?? Array.from({ length: 2 + Math.floor(random() * 4) }, (_, k) => `${name()}${i}_${k}`)
  exportsOf.set(i, names)
  for (const fn of names) {
    const callee = imports.length > 0 ? exportsOf.get(imports[0])[0] : undefined
    lines.push(`export function ${fn}(input: string, limit?: number): string {`, `  return ${callee ? `${callee}(input, limit)` : "input.trim()"}`, "}", "")
  }
  for (let e = 0; e < edit; e++) lines.push(`export const edit${e} = ${e}`)
  return lines.join("\n") + "\n"
}

const root = mkdtempSync(join(os.tmpdir(), "strata-bench-mcp-"))
try {
  for (let i = 0; i < FILES; i++) {
    const path = join(root, pathOf(i))
    mkdirSync(join(path, ".."), { recursive: true })
    writeFileSync(path, moduleText(i))
  }
  const scope = await Effect.runPromise(Scope.make())
  let t = performance.now()
  const mcp = await Effect.runPromise(makeStrataMcp({ root, cache: false }).pipe(Scope.provide(scope)))
  const coldMs = performance.now() - t
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await mcp.server().connect(serverSide)
  const client = new Client({ name: "bench", version: "0" })
  await client.connect(clientSide)
  const focus = pathOf(2550)
  const calls = {
    "repo_map (global, 2,048 tokens)": { name: "repo_map", arguments: {} },
    // A different focus on every call: nothing of the ranking is reused.
    "repo_map (new focus file + identifier)": (k) => ({ name: "repo_map", arguments: { focus_files: [pathOf(2550 + k)], identifiers: [exportsOf.get(1000 + k)[0]] } }),
    find_symbol: { name: "find_symbol", arguments: { name: exportsOf.get(1234)[0] } },
    find_references: { name: "find_references", arguments: { name: exportsOf.get(1200)[0] } },
    file_outline: { name: "file_outline", arguments: { path: focus } },
    "repo_tree (4,096 tokens)": { name: "repo_tree", arguments: {} }
  }
  const rows = []
  for (const [label, call] of Object.entries(calls)) {
    const callOf = typeof call === "function" ? call : () => call
    await client.callTool(callOf(-1)) // the first call of a kind warms what later ones reuse
    const samples = []
    const cpu = []
    for (let k = 0; k < CALLS; k++) {
      const c = process.cpuUsage()
      t = performance.now()
      await client.callTool(callOf(k))
      samples.push(performance.now() - t)
      const used = process.cpuUsage(c)
      cpu.push((used.user + used.system) / 1000)
    }
    rows.push({ call: label, medianMs: median(samples), maxMs: Math.max(...samples), cpuMedianMs: median(cpu) })
  }
  // One edited file: the next call re-parses it and rebuilds what depends on it.
  const edits = []
  for (let k = 0; k < 5; k++) {
    writeFileSync(join(root, focus), moduleText(2550, k + 1))
    t = performance.now()
    await client.callTool(calls["repo_map (new focus file + identifier)"](k))
    edits.push(performance.now() - t)
  }
  await client.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  const worst = Math.max(...rows.map((r) => r.medianMs))
  const result = { files: FILES, coldIndexMs: coldMs, rows, afterEditMedianMs: median(edits), targetMs: TARGET_MS, met: worst < TARGET_MS }
  if (JSON_OUT) console.log(JSON.stringify(result, null, 2))
  else {
    console.log(`MCP calls on ${FILES} files (SDK client, in-memory transport); cold index ${(coldMs / 1000).toFixed(1)} s`)
    for (const r of rows) console.log(`  ${r.call.padEnd(40)} median ${r.medianMs.toFixed(2).padStart(7)} ms   max ${r.maxMs.toFixed(2).padStart(7)} ms   CPU median ${r.cpuMedianMs.toFixed(2).padStart(7)} ms`)
    console.log(`  ${"repo_map (focus) after a file edit".padEnd(40)} median ${result.afterEditMedianMs.toFixed(2).padStart(7)} ms`)
    console.log(result.met ? `target met: every warm call's median < ${TARGET_MS} ms` : `TARGET MISSED: slowest warm median ${worst.toFixed(2)} ms >= ${TARGET_MS} ms`)
    if (!result.met) process.exitCode = 1
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
