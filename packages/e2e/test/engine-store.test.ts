// The Promise API over a real store: a session started in one engine continues in another
// (another process, another host for PostgreSQL) as if nothing happened. Three turns in
// engine A, then engine B (same store, fresh memory) assembles the fourth: its request is
// byte-identical to the fourth request of one engine that ran all four turns, which holds
// only if the history, the tracker, the journal memory and the legend's aliases all came
// through the store. Against the file store and a real PostgreSQL.
import { createContextEngine, type StateStorePlugin } from "@strata/core"
import { AnthropicPlacement } from "@strata/providers"
import { stateStore } from "@strata/store"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest"

let repo: string
beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), "strata-e2e-store-"))
  // Long shared prefixes, so the legend has path aliases to keep.
  for (const name of ["alpha", "beta", "gamma", "delta", "epsilon"]) {
    const dir = join(repo, "packages/app/src/features", name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "index.ts"), `import { shared } from "../../shared/util"\nexport const ${name} = (n: number): number => shared(n) + ${name.length}\n`)
  }
  mkdirSync(join(repo, "packages/app/src/shared"), { recursive: true })
  writeFileSync(join(repo, "packages/app/src/shared/util.ts"), "export function shared(n: number): number {\n  return n * 2\n}\n")
})
afterEach(() => rmSync(repo, { recursive: true, force: true }))

/** Files under a new long prefix: a fresh index would alias it first, renumbering the legend. */
const VENDOR = "vendor/generated/protocol/buffers/v2"
const addVendor = () => {
  mkdirSync(join(repo, VENDOR), { recursive: true })
  for (let i = 0; i < 8; i++) writeFileSync(join(repo, VENDOR, `message${i}.ts`), `export interface Message${i} {\n  id: number\n}\n`)
}
const removeVendor = () => rmSync(join(repo, "vendor"), { recursive: true, force: true })

const engine = (store: StateStorePlugin | undefined) =>
  createContextEngine({
    repoRoot: repo,
    model: "claude-sonnet-4-5",
    // The reference keeps its tracker in memory; with a store, even a persistent tracker's state is the store's.
    tracker: store === undefined ? TrackerLayer.memory({ config: { policy: "threshold" } }) : TrackerLayer.persistent({ repoRoot: repo, config: { policy: "threshold" } }),
    symbols: symbolIndexLayer(repo, { cache: false, git: false }),
    provider: AnthropicPlacement({ maxTokens: 512 }),
    // Engine B continues engine A's session: explicitly, by name (without it each starts its own).
    ...(store === undefined ? {} : { store, session: "e2e" })
  })

const prompts = ["What does alpha compute?", "And beta?", "Where is shared defined?", "Summarize the features."]
const usage = { input: 30, cacheRead: 900, cacheWrite: 100, output: 12 }

/** Run turns `from`..`to` (exclusive) on an engine; returns the last request's JSON. */
const turns = async (e: ReturnType<typeof engine>, from: number, to: number) => {
  let last = ""
  for (let i = from; i < to; i++) {
    await e.addFile("packages/app/src/shared/util.ts")
    const turn = await e.assemble({ prompt: prompts[i]! })
    last = JSON.stringify(turn.request)
    await turn.commit({ reply: `Answer ${i}.`, usage, at: 1_767_225_600_000 + i * 30_000 })
  }
  return last
}

const continuesAcrossEngines = async (store: () => StateStorePlugin) => {
  // One engine, four turns: the reference. Files arrive before the fourth; the session
  // keeps the legend of its first turn.
  const reference = engine(undefined)
  await turns(reference, 0, 3)
  addVendor()
  const expected = await turns(reference, 3, 4)
  removeVendor()
  const referenceRecord = await reference.getSessionRecord()
  await reference.dispose()

  // Three turns in A; a turn A assembles and never commits changes nothing.
  const a = engine(store())
  await turns(a, 0, 3)
  const key = await a.getSessionKey()
  const abandoned = await a.assemble({ prompt: "never sent" })
  expect(abandoned.version).toBe(3)
  await a.dispose()

  // B knows nothing but the store; its index alone would alias the new files first.
  addVendor()
  const b = engine(store())
  expect(await b.getSessionKey()).toEqual(key)
  expect((await b.getHistory()).length).toBe(6)
  const record = await b.getSessionRecord()
  expect(record).toMatchObject({ turns: 3, totals: { input: 90, cacheRead: 2700, cacheWrite: 300, output: 36 } })
  expect(record.aliases?.length).toBeGreaterThan(0)
  const fourth = await turns(b, 3, 4)
  expect(fourth).toBe(expected)
  expect(await b.getSessionRecord()).toEqual({ ...referenceRecord, last: { ...referenceRecord.last!, at: expect.any(Number) } })
  await b.dispose()
  // The store owns the tracker's state: the persistent tracker wrote no file of its own.
  expect(existsSync(join(repo, ".strata", "tracker.json"))).toBe(false)
}

describe("a session continues in another engine, through the store", () => {
  it("the file store", async () => {
    await continuesAcrossEngines(() => stateStore("file"))
    expect(existsSync(join(repo, ".strata", "state"))).toBe(true)
  })

  it("PostgreSQL", async () => {
    const schema = `strata_e2e_${process.pid}_${Date.now() % 100000}`
    await continuesAcrossEngines(() => stateStore(inject("pgUrl"), { postgres: { schema, poolSize: 2 } }))
  })

  it("a store spec that is not one fails with a message that says what is accepted", async () => {
    await using e = createContextEngine({ repoRoot: repo, model: "gpt-4o", store: stateStore("mysql://nope") })
    await expect(e.getHistory()).rejects.toMatchObject({ _tag: "StateStoreError", message: expect.stringContaining("use \"file\", \"memory\" or a postgres:// URL") })
  })
})
