// `pnpm test`: the compile, the check (typecheck + lint) and every package's tests, with the
// longest suites started first and no more tasks at once than the machine runs well.
//
// Why not `turbo run check test --concurrency=16`: turbo started all thirteen tasks at once
// on CI's two cores, in no particular order, each through its own pnpm process. Every suite
// paid for the time-slicing, and the CLI suite, the longest, ended alone on the machine.
// Two clean clones back to back: 861 CPU-s and 8:03 under turbo, 783 CPU-s and 7:07 here.
// Here the compile runs first (the tests spawn the built dist/), the check and the tests
// that need no dist/ beside it, then the suites by their cost, heaviest first, at most
// `--concurrency` tasks at a time.
//
// Like `turbo --continue --output-logs=errors-only`: every task runs whatever fails, a
// failed task's output is printed in full, the others' only as one line, and the exit code
// is 1 when any task failed. Each task's output is kept in <package>/.turbo/turbo-<task>.log.
//
//   node scripts/test.mjs [--concurrency=N] [task ...]   (tasks: compile, check, or a package
//                                                         folder name such as cli; default all)
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { delimiter, join } from "node:path"
import process from "node:process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

// CPU-seconds of each task alone (`/usr/bin/time` around one package's `vitest run`, or the
// check, on the 2-core machine, with the real agents installed). Only the order matters:
// heaviest first, so that the last minutes are shared by short suites. A package missing
// here (a new one) starts right after the heavy ones.
const COST = {
  cli: 217,
  check: 65,
  store: 62,
  replay: 55,
  proxy: 47,
  e2e: 40,
  "test-support": 30,
  core: 27,
  ui: 23,
  symbols: 16,
  providers: 14,
  mcp: 11,
  tiers: 10
}
const UNKNOWN_COST = 35

const USAGE = "usage: node scripts/test.mjs [--concurrency=N] [task ...]"
const args = process.argv.slice(2)
if (args.includes("--help")) {
  console.log(USAGE)
  process.exit(0)
}
const unknown = args.find((a) => a.startsWith("-") && !a.startsWith("--concurrency="))
if (unknown !== undefined) {
  console.error(`scripts/test.mjs: unknown option ${unknown}\n${USAGE}`)
  process.exit(2)
}
const flag = args.find((a) => a.startsWith("--concurrency="))
const concurrency = flag === undefined ? availableParallelism() + 1 : Number(flag.slice("--concurrency=".length))
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`scripts/test.mjs: --concurrency must be a positive integer, got ${flag}`)
  process.exit(2)
}
const only = args.filter((a) => !a.startsWith("-"))

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"))

/** A package's `test` waits for the compile unless its turbo.json says `"dependsOn": []`. */
const needsCompile = (dir) => {
  const turbo = join(dir, "turbo.json")
  if (!existsSync(turbo)) return true
  const dependsOn = readJson(turbo).tasks?.test?.dependsOn
  return !(Array.isArray(dependsOn) && dependsOn.length === 0)
}

const rootScripts = readJson(join(ROOT, "package.json")).scripts
const tasks = [
  { name: "compile", label: "//#compile", dir: ROOT, script: rootScripts.compile, log: join(ROOT, ".turbo", "turbo-compile.log"), cost: Infinity, afterCompile: false },
  { name: "check", label: "//#check", dir: ROOT, script: rootScripts.check, log: join(ROOT, ".turbo", "turbo-check.log"), cost: COST.check, afterCompile: false }
]
for (const name of readdirSync(join(ROOT, "packages")).sort()) {
  const dir = join(ROOT, "packages", name)
  if (!existsSync(join(dir, "package.json"))) continue
  const pkg = readJson(join(dir, "package.json"))
  if (pkg.scripts?.test === undefined) continue
  tasks.push({ name, label: `${pkg.name}#test`, dir, script: pkg.scripts.test, log: join(dir, ".turbo", "turbo-test.log"), cost: COST[name] ?? UNKNOWN_COST, afterCompile: needsCompile(dir) })
}
for (const name of only) {
  if (!tasks.some((t) => t.name === name)) {
    console.error(`scripts/test.mjs: no task ${name} (tasks: ${tasks.map((t) => t.name).join(", ")})`)
    process.exit(2)
  }
}
const selected = only.length === 0 ? tasks : tasks.filter((t) => only.includes(t.name))
// Heaviest first; the sort is stable, so equal costs keep the folder order.
const queue = [...selected].sort((a, b) => b.cost - a.cost)

const started = performance.now()
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`
const clock = (ms) => {
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
}

// CPU-seconds of the runner's reaped children (Linux; USER_HZ is 100): read when a task
// exits, the growth since the last exit is that task's whole tree, its child processes
// included (two tasks ending in the same instant would share one figure).
const reapedCpu = () => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}
let lastReaped = reapedCpu()
const cpuOf = () => {
  const now = reapedCpu()
  const cpu = now === undefined || lastReaped === undefined ? undefined : now - lastReaped
  lastReaped = now
  return cpu
}

// What `pnpm run` gives a script: the package's and the workspace's node_modules/.bin on PATH.
// The whole environment passes (turbo's strict mode kept only a few variables, so that
// FC_SEED or STRATA_AGENTS_DIR never reached the tests).
const envFor = (dir) => ({
  ...process.env,
  PATH: [join(dir, "node_modules", ".bin"), join(ROOT, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter)
})

const running = new Map()
const results = []
/** Tasks not run because the compile they need failed. */
const skipped = []
let compileDone = !selected.some((t) => t.name === "compile")
let interrupted = false

console.log(`scripts/test.mjs: ${selected.length} tasks, at most ${concurrency} at a time: ${queue.map((t) => t.name).join(", ")}`)

const runTask = (task) =>
  new Promise((resolve) => {
    const from = performance.now()
    const chunks = []
    // Its own process group, so that an interrupt reaches the task's whole tree.
    const child = spawn("sh", ["-c", task.script], { cwd: task.dir, env: envFor(task.dir), stdio: ["ignore", "pipe", "pipe"], detached: true })
    running.set(task, child)
    child.stdout.on("data", (d) => chunks.push(d))
    child.stderr.on("data", (d) => chunks.push(d))
    let cpu
    child.on("exit", () => {
      cpu = cpuOf()
    })
    let finished = false
    const finish = (code, error) => {
      if (finished) return
      finished = true
      running.delete(task)
      const output = Buffer.concat(chunks).toString("utf8") + (error === undefined ? "" : `\n${error.message}\n`)
      mkdirSync(join(task.log, ".."), { recursive: true })
      writeFileSync(task.log, output)
      const ok = code === 0
      const ms = performance.now() - from
      results.push({ task, ok, ms, cpu })
      const took = `${seconds(ms)}${cpu === undefined ? "" : `, ${cpu.toFixed(0)} CPU-s`}`
      if (ok) console.log(`✓ ${task.label} ${took}`)
      else {
        console.log(`✗ ${task.label} failed (${error === undefined ? `exit ${code}` : error.message}) after ${took}; its output:`)
        process.stdout.write(output.endsWith("\n") ? output : `${output}\n`)
        console.log(`✗ end of ${task.label}`)
      }
      resolve()
    }
    child.on("error", (error) => finish(null, error))
    child.on("close", (code, signal) => finish(signal === null ? code : 128, signal === null ? undefined : new Error(`killed by ${signal}`)))
  })

// A task never outlives the runner (an interrupt, a crash, a closed stdout).
const stopAll = (signal) => {
  for (const child of running.values()) {
    try {
      process.kill(-child.pid, signal)
    } catch {
      // already gone
    }
  }
}
process.on("exit", () => stopAll("SIGTERM"))

await new Promise((resolveAll) => {
  const pump = () => {
    if (interrupted) return
    while (running.size < concurrency) {
      const next = queue.findIndex((t) => !t.afterCompile || compileDone)
      if (next === -1) break
      const [task] = queue.splice(next, 1)
      void runTask(task).then(() => {
        if (task.name === "compile") {
          compileDone = true
          // Without a compile the suites would test a stale or missing dist/: they are not run.
          if (results.find((r) => r.task === task)?.ok !== true) {
            for (const t of queue.filter((q) => q.afterCompile)) {
              queue.splice(queue.indexOf(t), 1)
              skipped.push(t)
              console.log(`✗ ${t.label} not run: the compile failed`)
            }
          }
        }
        if (running.size === 0 && (queue.length === 0 || interrupted)) resolveAll()
        else pump()
      })
    }
  }
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      interrupted = true
      stopAll(signal)
      process.exitCode = signal === "SIGINT" ? 130 : 143
    })
  }
  if (queue.length === 0) resolveAll()
  else pump()
})

const failed = results.filter((r) => !r.ok)
console.log("")
console.log(` Tasks:    ${results.length - failed.length} successful, ${selected.length} total${failed.length === 0 ? "" : ` (failed: ${failed.map((r) => r.task.label).join(", ")})`}${skipped.length === 0 ? "" : ` (not run: ${skipped.map((t) => t.label).join(", ")})`}`)
const cpus = results.map((r) => r.cpu)
const totalCpu = cpus.every((c) => c !== undefined) ? `, ${cpus.reduce((a, c) => a + c, 0).toFixed(0)} CPU-s` : ""
console.log(`  Time:    ${clock(performance.now() - started)}${totalCpu}`)
if (process.exitCode === undefined) process.exitCode = failed.length === 0 && results.length === selected.length ? 0 : 1
