// Concurrent `strata assemble --reply` processes on one session, through the built CLI:
// each turn is one atomic store commit (re-assembled and retried on a conflict), so no
// exchange is lost or stored twice, with the file store and with a real PostgreSQL
// (STRATA_TEST_PG_URL, or a throwaway cluster on 127.0.0.1 started here).
import { execFileSync } from "node:child_process"
import { writeFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeSessionRecord, StateStore, type Message, type PathOutsideRepo, type StateStoreError } from "@strata/core/effect"
import { FileStateStore, PostgresStateStore, sessionKeyFor } from "@strata/store"
import { tempDir } from "@strata/test-support"
import { startCluster, type Cluster } from "../../store/scripts/pgCluster.mjs"
import { runBin, runProcess } from "./support.ts"

// Each process costs a Node start and a module load (2-3 CPU-seconds on the 2-core CI
// machine), so six rather than ten. The engine's own conflict path, with a check that
// conflicts happened, is e2e's engine-concurrency test.
const PROCESSES = 6
const dirs: Array<{ cleanup: () => void }> = []
let cluster: Cluster | undefined
let pgUrl = ""

beforeAll(async () => {
  const given = process.env["STRATA_TEST_PG_URL"]
  if (given !== undefined && given !== "") pgUrl = given
  else {
    cluster = await startCluster()
    pgUrl = cluster.url
  }
}, 120_000)
afterAll(() => {
  cluster?.stop()
  dirs.forEach((d) => d.cleanup())
})

/** A small git repository with a config file. */
const repository = (): string => {
  const d = tempDir("strata-conc-")
  dirs.push(d)
  const repo = d.path
  writeFileSync(join(repo, "a.ts"), "export const answer = (): number => 42\n")
  execFileSync("git", ["init", "-q"], { cwd: repo })
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "add", "."], { cwd: repo })
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"], { cwd: repo })
  mkdirSync(join(repo, ".strata"), { recursive: true })
  writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "anthropic" }))
  return repo
}

/** The session's history and record, read from the store the way the CLI keys it. */
const stored = (repo: string, session: string, layer: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const key = yield* sessionKeyFor(repo, { name: session })
      const { snapshot } = yield* (yield* StateStore).load(key)
      return { history: snapshot.history, record: decodeSessionRecord(snapshot.record).record, version: snapshot.version }
    }).pipe(Effect.provide(layer))
  )

const textOf = (m: Message): string => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))

/** Every exchange exactly once, each reply right after its own prompt. */
const expectEveryExchangeOnce = (history: ReadonlyArray<Message>) => {
  expect(history).toHaveLength(2 * PROCESSES)
  const prompts = new Map<string, number>()
  for (let i = 0; i < history.length; i += 2) {
    const user = history[i]!
    const assistant = history[i + 1]!
    expect(user.role).toBe("user")
    expect(assistant.role).toBe("assistant")
    const n = /^prompt (\d+)$/.exec(textOf(user))?.[1]
    expect(n).toBeDefined()
    expect(textOf(assistant)).toBe(`reply ${n}`)
    prompts.set(n!, (prompts.get(n!) ?? 0) + 1)
  }
  expect([...prompts.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: PROCESSES }, (_, i) => String(i)))
  expect([...prompts.values()].every((c) => c === 1)).toBe(true)
}

const runConcurrently = (repo: string, env: Record<string, string>) =>
  Promise.all(
    Array.from({ length: PROCESSES }, (_, i) =>
      runProcess(["assemble", "--repo", repo, "--prompt", `prompt ${i}`, "--file", "a.ts", "--reply", `reply ${i}`], { env, timeoutMs: 180_000 })
    )
  )

describe(`${PROCESSES} concurrent strata assemble --reply on one session`, () => {
  it("file store: every exchange exactly once, one turn each", async () => {
    const repo = repository()
    const results = await runConcurrently(repo, {})
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    const state = await stored(repo, "cli", FileStateStore.layer({ repoRoot: repo }))
    expectEveryExchangeOnce(state.history)
    expect(state.record.turns).toBe(PROCESSES)
    expect(state.version).toBe(PROCESSES)
  }, 240_000)

  it("PostgreSQL (STRATA_STORE=postgres://...): every exchange exactly once, one turn each", async () => {
    const repo = repository()
    const session = `conc-${process.pid}-${Date.now()}`
    const results = await runConcurrently(repo, { STRATA_STORE: pgUrl, STRATA_SESSION: session })
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    const state = await stored(repo, session, PostgresStateStore.layer({ url: pgUrl }))
    expectEveryExchangeOnce(state.history)
    expect(state.record.turns).toBe(PROCESSES)
    // Nothing of the session went to files: the database holds it.
    const hud = await runBin(["hud", "--repo", repo, "--json"], { env: { STRATA_STORE: pgUrl, STRATA_SESSION: session } })
    expect(hud.code, hud.stderr).toBe(0)
    expect(JSON.parse(hud.stdout).session.turns).toBe(PROCESSES)
  }, 240_000)
})
