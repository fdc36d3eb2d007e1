// The StateStore conformance suite: every store runs it (file-store.test.ts,
// postgres-store.test.ts). Semantics against a pure model (property test), concurrent
// commits from real OS processes, kill -9 before every write of a commit, and the import
// of the old .strata/ files.
import { spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  applyRewrite,
  applyTurn,
  emptyState,
  StateStore,
  type Message,
  type SessionKey,
  type StateSnapshot,
  type StoredRequest
} from "@strata/core/effect"
import { Effect, Exit, Layer } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { loadOrImport } from "../src/index.ts"
import { it } from "@strata/test-support"

const workerPath = join(dirname(fileURLToPath(import.meta.url)), "worker.mjs")

/** How a suite reaches one store. */
export interface Harness {
  readonly name: string
  /** A layer on the store under test. */
  readonly layer: () => Layer.Layer<StateStore, unknown>
  /** How worker processes reach the store; absent for a store that lives in one process (memory). */
  readonly processes?: {
    /** The store as the worker process opens it (JSON). */
    readonly workerStore: () => Record<string, unknown>
    /** The store with every commit checkpointing (file store), for the kill test: in the worker, and here. */
    readonly workerStoreForKills: () => Record<string, unknown>
    readonly layerForKills: () => Layer.Layer<StateStore, unknown>
  }
}

export const freshKey = (): SessionKey => ({ repository: `test:${randomUUID()}`, name: "default" })

const exchange = (id: string): ReadonlyArray<Message> => [
  { role: "user", content: `question ${id}` },
  { role: "assistant", content: `answer ${id}` }
]

const runWorker = (task: Record<string, unknown>): Promise<{ readonly code: number | null; readonly signal: string | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [workerPath, JSON.stringify(task)], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

/** How often each turn id's question occurs in a history. */
const questionCounts = (history: ReadonlyArray<Message>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const m of history) {
    if (m.role === "user" && typeof m.content === "string" && m.content.startsWith("question ")) {
      const id = m.content.slice("question ".length)
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
  }
  return counts
}

/** Every question is directly followed by its own answer. */
const pairsIntact = (history: ReadonlyArray<Message>): boolean =>
  history.every((m, i) =>
    m.role === "user" && typeof m.content === "string" && m.content.startsWith("question ")
      ? history[i + 1]?.content === `answer ${m.content.slice("question ".length)}`
      : true
  )

type Op =
  | { readonly kind: "turn"; readonly stale: boolean; readonly reuse: boolean; readonly messages: number; readonly patch: number }
  | { readonly kind: "rewrite"; readonly stale: boolean; readonly keep: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("turn" as const), stale: fc.boolean(), reuse: fc.boolean(), messages: fc.integer({ min: 0, max: 3 }), patch: fc.integer({ min: 0, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rewrite" as const), stale: fc.boolean(), keep: fc.integer({ min: 0, max: 4 }) }) }
)

export const conformance = (h: Harness): void => {
  const run = <A, E>(body: Effect.Effect<A, E, StateStore>) => Effect.provide(body, Layer.fresh(h.layer()))

  describe(`${h.name}: StateStore conformance`, () => {
    it.effect("a session nobody committed to loads empty at version 0", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          const { snapshot, warnings } = yield* store.load(key)
          expect(snapshot).toEqual(emptyState(key))
          expect(warnings).toEqual([])
          expect(yield* store.version(key)).toBe(0)
        })
      )
    )

    it.effect("a turn appends to the history and patches the state; an absent key keeps its value, null clears it", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          const first = yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: { tracker: { n: 1 }, journal: { j: [1, "x"] }, record: { r: true } } })
          expect(first).toEqual({ version: 1, duplicate: false })
          yield* store.commit({ session: key, baseVersion: 1, turnId: "b", append: exchange("b"), patch: { journal: null } })
          const { snapshot } = yield* store.load(key)
          expect(snapshot.version).toBe(2)
          expect(snapshot.history).toEqual([...exchange("a"), ...exchange("b")])
          expect(snapshot.tracker).toEqual({ n: 1 })
          expect(snapshot.journal).toBeNull()
          expect(snapshot.record).toEqual({ r: true })
        })
      )
    )

    it.effect("request summaries come back page by page in commit order, past checkpoints; stale and retried commits add none", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          const expected: Array<StoredRequest> = []
          // Big records make the file store checkpoint and prune every few turns.
          const bulk = "x".repeat(1500)
          for (let i = 0; i < 30; i++) {
            const request = i % 3 === 2 ? undefined : { n: i, note: `req <${i}>` }
            yield* store.commit({ session: key, baseVersion: i, turnId: `t${i}`, append: exchange(`${i}`), patch: { record: { i, bulk } }, ...(request === undefined ? {} : { request }) })
            if (request !== undefined) expected.push({ version: i + 1, request })
            if (i === 10) {
              yield* Effect.exit(store.commit({ session: key, baseVersion: 3, turnId: "stale", append: [], patch: {}, request: { stale: true } }))
              yield* store.commit({ session: key, baseVersion: 11, turnId: `t${i}`, append: [], patch: {}, request: { retried: true } })
            }
          }
          const pages: Array<ReadonlyArray<StoredRequest>> = []
          let from: number | undefined = 1
          while (from !== undefined) {
            const page: { readonly requests: ReadonlyArray<StoredRequest>; readonly next: number | undefined } = yield* store.requests(key, { from, limit: 7 })
            pages.push(page.requests)
            from = page.next
          }
          expect(pages.map((p) => p.length)).toEqual([7, 7, 6])
          expect(pages.flat()).toEqual(expected)
          expect((yield* store.requests(key, { from: 16, limit: 3 })).requests.map((r) => r.version)).toEqual([16, 17, 19])
          expect(yield* store.requests(key, { from: 31, limit: 5 })).toEqual({ requests: [], next: undefined })
          expect(yield* store.requests(freshKey(), { from: 1, limit: 5 })).toEqual({ requests: [], next: undefined })
        })
      )
    )

    it.effect("sessions lists the committed sessions of a repository with their versions", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const a = freshKey()
          const b = { repository: a.repository, name: "second.one" }
          const other = freshKey()
          yield* store.commit({ session: a, baseVersion: 0, turnId: "a1", append: exchange("a1"), patch: {} })
          yield* store.commit({ session: a, baseVersion: 1, turnId: "a2", append: [], patch: {} })
          yield* store.rewriteHistory({ session: b, baseVersion: 0, turnId: "b1", history: [], patch: {} })
          yield* store.commit({ session: other, baseVersion: 0, turnId: "o1", append: [], patch: {} })
          yield* store.load({ repository: a.repository, name: "never" })
          expect(yield* store.sessions({ repository: a.repository })).toEqual([{ key: a, version: 2 }, { key: b, version: 1 }])
          const all = yield* store.sessions()
          expect(all).toEqual(expect.arrayContaining([{ key: a, version: 2 }, { key: b, version: 1 }, { key: other, version: 1 }]))
          expect(all.some((s) => s.key.name === "never")).toBe(false)
        })
      )
    )

    it.effect("a commit on a stale version fails with StateConflict and changes nothing", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: { record: 1 } })
          const exit = yield* Effect.exit(store.commit({ session: key, baseVersion: 0, turnId: "b", append: exchange("b"), patch: { record: 2 } }))
          expect(Exit.isFailure(exit)).toBe(true)
          const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          expect(error?._tag === "Fail" ? error.error : undefined).toMatchObject({ _tag: "StateConflict", expected: 0, actual: 1 })
          if (error?._tag === "Fail") expect(String(error.error.message)).toMatch(/re-assemble the request and retry/)
          const { snapshot } = yield* store.load(key)
          expect(snapshot.version).toBe(1)
          expect(snapshot.history).toEqual(exchange("a"))
          expect(snapshot.record).toBe(1)
        })
      )
    )

    it.effect("a retried turn id is reported as a duplicate and stored once", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: {} })
          const again = yield* store.commit({ session: key, baseVersion: 1, turnId: "a", append: exchange("a"), patch: {} })
          expect(again).toEqual({ version: 1, duplicate: true })
          const stale = yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: {} })
          expect(stale.duplicate).toBe(true)
          expect((yield* store.load(key)).snapshot.history).toEqual(exchange("a"))
        })
      )
    )

    it.effect("rewriteHistory replaces the history with the same compare-and-set", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          yield* store.commit({ session: key, baseVersion: 0, turnId: "a", append: exchange("a"), patch: {} })
          yield* store.commit({ session: key, baseVersion: 1, turnId: "b", append: exchange("b"), patch: {} })
          const summary: ReadonlyArray<Message> = [{ role: "user", content: "summary of a and b" }]
          const stale = yield* Effect.exit(store.rewriteHistory({ session: key, baseVersion: 1, turnId: "c", history: summary, patch: {} }))
          expect(Exit.isFailure(stale)).toBe(true)
          yield* store.rewriteHistory({ session: key, baseVersion: 2, turnId: "c", history: summary, patch: { tracker: { purged: true } } })
          yield* store.commit({ session: key, baseVersion: 3, turnId: "d", append: exchange("d"), patch: {} })
          const { snapshot } = yield* store.load(key)
          expect(snapshot.version).toBe(4)
          expect(snapshot.history).toEqual([...summary, ...exchange("d")])
          expect(snapshot.tracker).toEqual({ purged: true })
        })
      )
    )

    it.effect("messages and JSON values come back byte-identical (key order, unicode, multimodal parts)", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const key = freshKey()
          const history: ReadonlyArray<Message> = [
            { role: "user", content: [{ type: "text", text: "naïve \u2028 \"quoted\" 🎉" }, { type: "image", url: "https://example.com/a.png", mediaType: "image/png" }] },
            { role: "assistant", content: "line\nbreak\t\\" }
          ]
          const journal = { zeta: 1, alpha: { b: [3, 2, 1], a: "x" }, "": null }
          yield* store.commit({ session: key, baseVersion: 0, turnId: "u", append: history, patch: { journal } })
          const { snapshot } = yield* store.load(key)
          expect(JSON.stringify(snapshot.history)).toBe(JSON.stringify(history))
          expect(JSON.stringify(snapshot.journal)).toBe(JSON.stringify(journal))
        })
      )
    )

    it("any sequence of turns, stale commits, retries and rewrites matches the pure model", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), async (ops) => {
          const key = freshKey()
          const program = Effect.gen(function* () {
            const store = yield* StateStore
            let model: StateSnapshot = emptyState(key)
            const committed: Array<string> = []
            const requests: Array<StoredRequest> = []
            for (const [i, op] of ops.entries()) {
              const base = op.stale && model.version > 0 ? model.version - 1 : model.version
              if (op.kind === "turn") {
                const reused = op.reuse ? committed[committed.length - 1] : undefined
                const turnId = reused ?? `t${i}`
                const append = Array.from({ length: op.messages }, (_, k): Message => ({ role: k % 2 === 0 ? "user" : "assistant", content: `${i}.${k}` }))
                const patch = { ...(op.patch & 1 ? { tracker: { i } } : {}), ...(op.patch & 2 ? { journal: null } : {}), ...(op.patch & 4 ? { record: [i] } : {}) }
                const request = op.messages % 2 === 1 ? { turn: i, usage: { input: i * 10 } } : undefined
                const exit = yield* Effect.exit(store.commit({ session: key, baseVersion: base, turnId, append, patch, ...(request === undefined ? {} : { request }) }))
                if (reused !== undefined) {
                  expect(exit).toMatchObject({ _tag: "Success", value: { duplicate: true } })
                } else if (base !== model.version) {
                  expect(Exit.isFailure(exit)).toBe(true)
                } else {
                  expect(exit).toMatchObject({ _tag: "Success", value: { version: model.version + 1, duplicate: false } })
                  model = applyTurn(model, { append, patch })
                  committed.push(turnId)
                  if (request !== undefined) requests.push({ version: model.version, request })
                }
              } else {
                const history = model.history.slice(0, op.keep)
                const exit = yield* Effect.exit(store.rewriteHistory({ session: key, baseVersion: base, turnId: `r${i}`, history, patch: { tracker: null } }))
                if (base !== model.version) expect(Exit.isFailure(exit)).toBe(true)
                else {
                  expect(Exit.isSuccess(exit)).toBe(true)
                  model = applyRewrite(model, { history, patch: { tracker: null } })
                  committed.push(`r${i}`)
                }
              }
              expect((yield* store.load(key)).snapshot).toEqual(model)
              expect(yield* store.version(key)).toBe(model.version)
            }
            expect((yield* store.requests(key, { from: 1, limit: 100 })).requests).toEqual(requests)
          })
          await Effect.runPromise(run(program))
        }),
        { numRuns: 25 }
      )
    }, 180_000) // 25 random sequences against a real store: seconds alone, a minute beside the other suites on 2 cores

    const p = h.processes
    if (p !== undefined) it("concurrent commits from 6 OS processes: every turn stored exactly once, in whole exchanges", async () => {
      const keys = [freshKey(), freshKey(), freshKey()]
      const workers = 6
      const turns = 8
      const results = await Promise.all(
        Array.from({ length: workers }, (_, worker) => runWorker({ mode: "turns", store: p.workerStore(), keys, worker, turns }))
      )
      for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 })
      const stats = results.map((r) => JSON.parse(r.stdout) as { committed: number; duplicates: number; conflicts: number })
      expect(stats.reduce((n, s) => n + s.committed, 0)).toBe(workers * turns)
      const loaded = await Effect.runPromise(run(Effect.gen(function* () {
        const store = yield* StateStore
        return yield* Effect.forEach(keys, (key) => store.load(key))
      })))
      const all = new Map<string, number>()
      for (const { snapshot } of loaded) {
        expect(pairsIntact(snapshot.history)).toBe(true)
        expect(snapshot.history.length).toBe(snapshot.version * 2)
        for (const [id, n] of questionCounts(snapshot.history)) all.set(id, (all.get(id) ?? 0) + n)
      }
      for (let w = 0; w < workers; w++) for (let t = 0; t < turns; t++) expect(all.get(`w${w}-t${t}`), `w${w}-t${t}`).toBe(1)
      expect(all.size).toBe(workers * turns)
    })

    if (p !== undefined) it("kill -9 before every write of a commit: the turn is stored entirely or not at all, and its retry stores it once", async () => {
      const store = p.workerStoreForKills()
      const inKillStore = <A, E>(body: Effect.Effect<A, E, StateStore>) => Effect.runPromise(Effect.provide(body, Layer.fresh(p.layerForKills())))
      const warm = ["warm-1", "warm-2"]
      const seed = (key: SessionKey) =>
        Effect.gen(function* () {
          const s = yield* StateStore
          for (const [i, id] of warm.entries()) yield* s.commit({ session: key, baseVersion: i, turnId: id, append: exchange(id), patch: { tracker: { i } } })
        })
      // Count the writes of the third commit of a session, then kill one process before each.
      const probe = freshKey()
      await inKillStore(seed(probe))
      const counted = await runWorker({ mode: "one", store, key: probe, turnId: "probe" })
      expect(counted, counted.stderr).toMatchObject({ code: 0 })
      const points = (JSON.parse(counted.stdout) as { points: ReadonlyArray<string> }).points
      expect(points.length).toBeGreaterThanOrEqual(h.name.startsWith("file") ? 12 : 5)
      const cases = points.map((point, i) => ({ n: i + 1, point, key: freshKey(), turnId: `killed-${i + 1}` }))
      await inKillStore(Effect.forEach(cases, (c) => seed(c.key), { discard: true }))
      const killed = await Effect.runPromise(
        Effect.forEach(cases, (c) => Effect.promise(() => runWorker({ mode: "one", store, key: c.key, turnId: c.turnId, killAt: c.n })), { concurrency: 4 })
      )
      for (const [i, c] of cases.entries()) expect(killed[i]?.signal, `kill before write ${c.n} (${c.point}): ${killed[i]?.stderr}`).toBe("SIGKILL")
      await inKillStore(
        Effect.forEach(cases, (c) =>
          Effect.gen(function* () {
            const s = yield* StateStore
            const { snapshot } = yield* s.load(c.key)
            const stored = questionCounts(snapshot.history).get(c.turnId) ?? 0
            // All or nothing: the exchange, the patch and the version move together.
            expect(stored, `write ${c.n} (${c.point})`).toBeLessThanOrEqual(1)
            expect(snapshot.version, `write ${c.n} (${c.point})`).toBe(warm.length + stored)
            expect(snapshot.tracker).toEqual(stored === 1 ? { turns: 3, by: c.turnId } : { i: 1 })
            // The caller retries the turn, with the same id, on the state it finds.
            const retry = yield* s.commit({ session: c.key, baseVersion: snapshot.version, turnId: c.turnId, append: exchange(c.turnId), patch: {} })
            expect(retry.duplicate, `write ${c.n} (${c.point})`).toBe(stored === 1)
            const after = (yield* s.load(c.key)).snapshot
            expect(after.version).toBe(3)
            expect([...questionCounts(after.history).keys()]).toEqual([...warm, c.turnId])
            expect(pairsIntact(after.history)).toBe(true)
          })
        )
      )
      // One process per write of a commit (the file store has 12 or more): minutes when the
      // whole test command shares two cores.
    }, 240_000)

    it.effect("the old .strata/ files are imported on first use, once, and nothing else is imported later", () =>
      run(
        Effect.gen(function* () {
          const store = yield* StateStore
          const root = mkdtempSync(join(tmpdir(), "strata-legacy-"))
          mkdirSync(join(root, ".strata", "sessions"), { recursive: true })
          const old: ReadonlyArray<Message> = [
            { role: "user", content: "before the store existed" },
            { role: "assistant", content: "and it is still here" }
          ]
          writeFileSync(join(root, ".strata", "sessions", "20250101-000000.jsonl"), old.map((message) => JSON.stringify({ t: 1, message }) + "\n").join(""))
          const sessionFile = { version: 1, historyId: "20250101-000000", selected: ["src/a.ts"], turns: 1 }
          writeFileSync(join(root, ".strata", "session.json"), JSON.stringify(sessionFile))
          const trackerFile = { format: "strata-tracker", schemaVersion: 1, version: 4, items: [{ key: "tree", tier: "L2" }] }
          writeFileSync(join(root, ".strata", "tracker.json"), JSON.stringify(trackerFile))
          writeFileSync(join(root, ".strata", "journal.json"), "{ torn")
          const key = freshKey()
          // Two first uses at once (two processes starting together) import once.
          const [a, b] = yield* Effect.all([loadOrImport(key, root), loadOrImport(key, root)], { concurrency: 2 })
          for (const loaded of [a, b]) {
            expect(loaded.snapshot.version).toBe(1)
            expect(loaded.snapshot.history).toEqual(old)
            expect(loaded.snapshot.tracker).toEqual(trackerFile)
            expect(loaded.snapshot.record).toEqual(sessionFile)
            expect(loaded.snapshot.journal).toBeNull()
          }
          expect([...a.warnings, ...b.warnings].filter((w) => w.startsWith("imported"))).toHaveLength(1)
          expect(a.warnings.some((w) => /journal\.json is not valid JSON/.test(w))).toBe(true)
          yield* store.commit({ session: key, baseVersion: 1, turnId: "new", append: exchange("new"), patch: {} })
          const later = yield* loadOrImport(key, root)
          expect(later.snapshot.history).toEqual([...old, ...exchange("new")])
          expect(later.warnings).toEqual([])
        })
      )
    )
  })
}

/** Run the worker synchronously (for store-specific tests that need one child). */
export const runWorkerSync = (task: Record<string, unknown>) => spawnSync(process.execPath, [workerPath, JSON.stringify(task)], { encoding: "utf8" })
