// Running the built `strata` binary as a real process (the shared helpers, `it.effect`
// and temporary directories, are in @strata/test-support).
import { spawn } from "node:child_process"
import { constants, cpSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { Effect, type Layer } from "effect"
import { appendHistory, decodeSessionRecord, StateStore, type Message, type PathOutsideRepo, type StateStoreError } from "@strata/core/effect"
import { FileStateStore, sessionKeyFor } from "@strata/store"
import { fileURLToPath } from "node:url"
import { runCli } from "../src/cli.ts"
import { makeCapturedOutput } from "../src/support/output.ts"

/** packages/cli/dist/bin.js, built by test/globalSetup.ts. */
export const BIN = resolve(fileURLToPath(new URL("..", import.meta.url)), "dist", "bin.js")
export const REPO_ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)))

export interface BinResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The process's environment without API keys, `STRATA_*` and colour settings: what a test's run starts from. */
const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("STRATA_") || /API_KEY|AWS_|NO_COLOR|FORCE_COLOR/.test(k)) continue
    env[k] = v
  }
  return env
}

export interface RunOptions {
  readonly cwd?: string
  readonly env?: Record<string, string>
  readonly input?: string
  readonly timeoutMs?: number
}

/**
 * Run `strata ...args` in this process, as `bin.js` would with pipes (no TTY, colour only
 * under FORCE_COLOR), through the same `runCli`: `env` is added to a clean environment (no
 * API keys, no STRATA_* variables), `cwd` is the run's working directory, `input` its
 * stdin. The real process (`runProcess`) costs a Node start and a module load per call;
 * tests use it where the process itself is under test (signals, pipes, exit codes of bin.js,
 * several processes sharing a store).
 */
export const runBin = async (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<BinResult> => {
  const output = makeCapturedOutput({ env: { ...cleanEnv(), ...options.env }, ...(options.input === undefined ? {} : { input: options.input }) })
  const signal = AbortSignal.timeout(options.timeoutMs ?? 60_000)
  const code = await runCli(args, { env: { ...cleanEnv(), ...options.env }, cwd: options.cwd ?? REPO_ROOT, output: output.layer, signal })
  if (signal.aborted) throw new Error(`strata ${args.join(" ")} timed out\nstdout: ${output.stdout()}\nstderr: ${output.stderr()}`)
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

/**
 * Run `node dist/bin.js ...args` as a real process with pipes (so: no TTY, no colour).
 * `env` is added to a clean environment that has no API keys and no STRATA_* variables.
 */
export const runProcess = (
  args: ReadonlyArray<string>,
  options: RunOptions = {}
): Promise<BinResult> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? REPO_ROOT, env: { ...cleanEnv(), ...options.env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`strata ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolvePromise({ code, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

/**
 * Index `repo` once with the built binary (`strata map` writes the symbol cache under
 * `.strata/symbols/`), so that copies made with `copyIndexed` start warm: a command on a
 * copy re-reads and re-parses no file, where a cold copy parses the whole repository in
 * every spawn. One indexed template per test file.
 */
export const indexTemplate = async (repo: string): Promise<string> => {
  const r = await runBin(["map", "--repo", repo], { timeoutMs: 120_000 })
  if (r.code !== 0) throw new Error(`strata map --repo ${repo} exited ${r.code}: ${r.stderr}`)
  return repo
}

/**
 * A copy of a repository (an indexed template, or one with recorded state): copy-on-write
 * where the file system can (`COPYFILE_FICLONE`), file times kept so the symbol cache's
 * index (path, mtime, size) matches the copy.
 */
export const copyIndexed = (from: string, to: string): void => {
  cpSync(from, to, { recursive: true, preserveTimestamps: true, mode: constants.COPYFILE_FICLONE })
}

/**
 * A session's state as the CLI stored it (the file store under `.strata/state/` unless
 * `layer` says otherwise): history, decoded record, tracker and journal JSON, version.
 */
export const storedSession = (repo: string, options: { readonly name?: string; readonly layer?: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo> } = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const key = yield* sessionKeyFor(repo, { name: options.name ?? "cli", create: false })
      const { snapshot } = yield* (yield* StateStore).load(key)
      return { ...snapshot, decodedRecord: decodeSessionRecord(snapshot.record).record }
    }).pipe(Effect.provide(options.layer ?? FileStateStore.layer({ repoRoot: repo })))
  )

/** Every file under `<repo>/.strata/state/`, relative to it, with its text: byte-identical when no turn was committed. */
export const stateFiles = (repo: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string, prefix: string) => {
    if (!existsSync(dir)) return
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name), `${prefix}${e.name}/`)
      else out[`${prefix}${e.name}`] = readFileSync(join(dir, e.name), "utf8")
    }
  }
  walk(join(repo, ".strata", "state"), "")
  return out
}

/** Append messages to the CLI's session in the file store, as one commit (a test's way to grow a history). */
export const appendStored = (repo: string, messages: ReadonlyArray<Message>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const key = yield* sessionKeyFor(repo, { name: "cli", create: false })
      return yield* appendHistory(key, messages)
    }).pipe(Effect.provide(FileStateStore.layer({ repoRoot: repo })))
  )

/**
 * Every file under `<repo>/.strata/`, relative to it, with its bytes (and its mtime unless
 * `mtimes: false`): equal before and after a command that may write nothing. `skip` leaves
 * out top-level entries (the symbol cache is a cache, not state).
 */
export const strataFiles = (repo: string, options: { readonly skip?: ReadonlyArray<string>; readonly mtimes?: boolean } = {}): Record<string, string> => {
  const root = join(repo, ".strata")
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    if (!existsSync(dir)) return
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      const name = relative(root, p)
      if (options.skip?.includes(name) === true) continue
      if (e.isDirectory()) walk(p)
      else out[name] = `${options.mtimes === false ? "" : `${statSync(p).mtimeMs}:`}${readFileSync(p).toString("base64")}`
    }
  }
  walk(root)
  return out
}
