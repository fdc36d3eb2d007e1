// N processes, each with its own engine, commit turns to ONE session at the same time.
// Every turn that returned is in the history exactly once, in one piece (its question
// directly followed by its answer), the record counts every turn and sums every usage,
// and conflicts happened (the retry path ran). Against the file store and PostgreSQL.
import { createContextEngine, type Message } from "@strata/core"
import { stateStore } from "@strata/store"
import { TrackerLayer } from "@strata/tiers"
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest"

const WORKER = fileURLToPath(new URL("./engine-worker.mjs", import.meta.url))
const PROCESSES = 5
const TURNS = 8

let repo: string
beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), "strata-e2e-concurrency-"))
  mkdirSync(join(repo, "src"))
  writeFileSync(join(repo, "src/a.ts"), "export const a = 1\n")
})
afterEach(() => rmSync(repo, { recursive: true, force: true }))

interface Stats {
  readonly committed: number
  readonly duplicates: number
  readonly conflicts: number
}

const run = (task: Record<string, unknown>): Promise<Stats> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [WORKER, JSON.stringify(task)], { cwd: fileURLToPath(new URL("..", import.meta.url)), timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`worker ${String(task["worker"])} failed: ${stderr || error.message}`))
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Stats)
    })
  })

const textOf = (m: Message | undefined): string => (m === undefined || typeof m.content !== "string" ? "" : m.content)

const commitTogether = async (store: string, schema?: string) => {
  const stats = await Promise.all(
    Array.from({ length: PROCESSES }, (_, worker) => run({ repo, store, schema, worker, turns: TURNS }))
  )
  await using engine = createContextEngine({
    repoRoot: repo,
    model: "gpt-4o",
    tracker: TrackerLayer.memory(),
    session: "shared",
    store: stateStore(store, schema === undefined ? {} : { postgres: { schema } })
  })
  const history = await engine.getHistory()
  const record = await engine.getSessionRecord()
  const total = PROCESSES * TURNS
  expect(stats.reduce((n, s) => n + s.committed, 0)).toBe(total)
  expect(stats.reduce((n, s) => n + s.duplicates, 0)).toBe(0)
  // Nothing lost, nothing twice, every exchange whole.
  expect(history).toHaveLength(2 * total)
  const questions = new Set<string>()
  for (let i = 0; i < history.length; i += 2) {
    const question = textOf(history[i])
    expect(history[i]?.role).toBe("user")
    expect(textOf(history[i + 1])).toBe(question.replace("question", "answer"))
    questions.add(question)
  }
  expect(questions.size).toBe(total)
  expect(record.turns).toBe(total)
  expect(record.totals).toEqual({ input: total, cacheRead: 10 * total, cacheWrite: 2 * total, output: 3 * total })
  return stats.reduce((n, s) => n + s.conflicts, 0)
}

describe(`${PROCESSES} processes x ${TURNS} turns on one session`, () => {
  it("the file store loses and duplicates nothing", async () => {
    const conflicts = await commitTogether("file")
    expect(conflicts).toBeGreaterThan(0)
  }, 180_000)

  it("PostgreSQL loses and duplicates nothing", async () => {
    const conflicts = await commitTogether(inject("pgUrl"), `strata_e2e_c${process.pid}_${Date.now() % 100000}`)
    expect(conflicts).toBeGreaterThan(0)
  }, 180_000)
})
