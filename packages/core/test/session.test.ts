import { appendFile, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Effect, Layer } from "effect"
import { describe, expect, it as vitestIt } from "vitest"
import {
  createContextEngine,
  parseSessionText,
  SessionNotFound,
  SessionStore,
  SessionStoreMissing,
  Tracker,
  type TrackerSnapshot
} from "../src/effect.ts"
import { it } from "@strata/test-support"

const fixedClock = (ms: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => ms,
  currentTimeMillis: Effect.succeed(ms),
  monotonicTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  monotonicTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  sleep: () => Effect.void
})

const withStore = <A, E>(body: (dir: string) => Effect.Effect<A, E, SessionStore>) =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "strata-sessions-")))
    return yield* body(dir).pipe(Effect.provide(SessionStore.layerDirectory(dir)))
  })

describe("SessionStore", () => {
  it.effect("appends messages as JSONL and loads them back in order", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* store.create
        yield* store.append(id, { role: "user", content: "one" })
        yield* store.appendExchange(id, { role: "user", content: "two" }, { role: "assistant", content: [{ type: "text", text: "three" }] })
        const loaded = yield* store.load(id)
        expect(loaded.messages.map((m) => m.role)).toEqual(["user", "user", "assistant"])
        expect(loaded.warnings).toEqual([])
        const text = yield* Effect.promise(() => readFile(join(dir, `${id}.jsonl`), "utf8"))
        expect(text.trim().split("\n")).toHaveLength(3)
      })))

  it.effect("drops a truncated last line with a warning and keeps everything before it", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* store.create
        yield* store.appendExchange(id, { role: "user", content: "kept" }, { role: "assistant", content: "kept too" })
        yield* Effect.promise(() => appendFile(join(dir, `${id}.jsonl`), '{"t":1,"message":{"role":"user","cont'))
        const loaded = yield* store.load(id)
        expect(loaded.messages).toEqual([{ role: "user", content: "kept" }, { role: "assistant", content: "kept too" }])
        expect(loaded.warnings).toEqual(["line 3 is truncated (an interrupted write); dropped"])
      })))

  it.effect("lists sessions newest first with message counts", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* Effect.promise(() => writeFile(join(dir, "a.jsonl"), '{"t":1,"message":{"role":"user","content":"x"}}\n'))
        const id = yield* store.create
        yield* store.appendExchange(id, { role: "user", content: "q" }, { role: "assistant", content: "a" })
        const list = yield* store.list
        expect(list.map((s) => s.id).sort()).toEqual(["a", id].sort())
        expect(list.find((s) => s.id === id)?.messages).toBe(2)
      })))

  it.effect("refuses ids that are not safe file names and reports missing sessions", () =>
    withStore(() =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const bad = yield* Effect.flip(store.load("../../etc/passwd"))
        expect(bad._tag).toBe("SessionNotFound")
        const missing = yield* Effect.flip(store.load("nope"))
        expect(missing._tag).toBe("SessionNotFound")
      })))
})

describe("SessionStore: crashes and ids", () => {
  it.effect("a write after a crash ends the torn line first, so the new message survives", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* store.create
        yield* store.appendExchange(id, { role: "user", content: "q1" }, { role: "assistant", content: "a1" })
        yield* Effect.promise(() => appendFile(join(dir, `${id}.jsonl`), '{"t":1,"message":{"role":"us'))
        yield* store.appendExchange(id, { role: "user", content: "q2" }, { role: "assistant", content: "a2" })
        const loaded = yield* store.load(id)
        expect(loaded.messages.map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2"])
        // The torn line was moved aside by the write, so it is reported once, not at every load.
        expect(loaded.warnings).toEqual([])
        expect(yield* Effect.promise(() => readFile(join(dir, `${id}.jsonl.bad`), "utf8"))).toBe('{"t":1,"message":{"role":"us\n')
      })))

  it.effect("a corrupt line in the middle is warned about until the next write moves it to <id>.jsonl.bad", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* store.create
        yield* store.appendExchange(id, { role: "user", content: "q1" }, { role: "assistant", content: "a1" })
        const file = join(dir, `${id}.jsonl`)
        const lines = (yield* Effect.promise(() => readFile(file, "utf8"))).split("\n")
        yield* Effect.promise(() => writeFile(file, [lines[0], "garbage", lines[1], ""].join("\n")))
        // Loading is a read: it warns every time and changes nothing.
        expect((yield* store.load(id)).warnings).toEqual(["line 2 is not valid JSON; skipped"])
        expect((yield* store.load(id)).warnings).toEqual(["line 2 is not valid JSON; skipped"])
        yield* store.appendExchange(id, { role: "user", content: "q2" }, { role: "assistant", content: "a2" })
        const loaded = yield* store.load(id)
        expect(loaded.warnings).toEqual([])
        expect(loaded.messages.map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2"])
        expect(yield* Effect.promise(() => readFile(`${file}.bad`, "utf8"))).toBe("garbage\n")
      })))

  it.effect("ids sort by creation time and never collide within one second", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const ids = [yield* store.create, yield* store.create, yield* store.create]
        expect(ids).toEqual(["20261121-093000", "20261121-093000_2", "20261121-093000_3"])
        expect((yield* Effect.promise(() => readdir(dir))).sort()).toEqual(ids.map((id) => `${id}.jsonl`))
        // Lines carry the time of the write.
        yield* store.append(ids[0]!, { role: "user", content: "x" })
        const text = yield* Effect.promise(() => readFile(join(dir, `${ids[0]!}.jsonl`), "utf8"))
        expect(text).toBe('{"t":1795253400000,"message":{"role":"user","content":"x"}}\n')
      }).pipe(Effect.provideService(Clock.Clock, fixedClock(Date.parse("2026-11-21T09:30:00Z"))))))
})

/** A tracker stand-in that counts purges (core may not import @strata/tiers). */
const purgeCounter = () => {
  const log = { purges: 0 }
  const snapshot: TrackerSnapshot = {
    version: 0,
    baseVersion: 0,
    initialized: true,
    thresholds: { L0: 12, L1: 9, L2: 6, L3: 3 },
    get: () => undefined,
    tierOf: () => undefined,
    itemsIn: () => [],
    initialize: () => ({ snapshot, changes: [] }),
    update: () => ({ snapshot, changes: [] })
  }
  const layer = Layer.succeed(Tracker, {
    current: Effect.succeed(snapshot),
    commit: () => Effect.void,
    remove: () => Effect.succeed([]),
    purgeHistory: Effect.sync(() => {
      log.purges++
      return []
    })
  })
  return { layer, log }
}

describe("the engine's JSONL log (a transcript beside the session's store)", () => {
  vitestIt("records every message, resumes a session and continues in it, and starts a new one on reset", async () => {
    const root = await mkdtemp(join(tmpdir(), "strata-repo-"))
    const tracker = purgeCounter()
    let first: string | undefined
    {
      await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: true })
      expect(await engine.getSessionId()).toBeUndefined()
      await engine.addMessage("user", "Where is the parser?")
      await engine.addMessage("assistant", "In src/parse.ts.")
      await engine.addExchange("Add a test.", [{ type: "text", text: "Added test/parse.test.ts." }])
      first = await engine.getSessionId()
    }
    expect(first).toMatch(/^\d{8}-\d{6}$/)
    const file = join(root, ".strata", "sessions", `${first!}.jsonl`)
    expect((await readFile(file, "utf8")).trim().split("\n")).toHaveLength(4)

    // A new process: resume, continue, reset.
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: true, tracker: tracker.layer })
    await engine.addExchange("unrelated", "question")
    const other = await engine.getSessionId()
    const loaded = await engine.resumeSession(first!)
    expect(loaded).toEqual({
      id: first,
      messages: [
        { role: "user", content: "Where is the parser?" },
        { role: "assistant", content: "In src/parse.ts." },
        { role: "user", content: "Add a test." },
        { role: "assistant", content: [{ type: "text", text: "Added test/parse.test.ts." }] }
      ],
      warnings: []
    })
    expect(await engine.getHistory()).toEqual(loaded.messages)
    expect(await engine.getSessionId()).toBe(first)
    expect(tracker.log.purges).toBe(1)
    await engine.addExchange("And the lexer?", "Also tested.")
    expect((await readFile(file, "utf8")).trim().split("\n")).toHaveLength(6)
    const list = await engine.listSessions()
    expect(list.map((s) => s.id).sort()).toEqual([first, other].sort())
    expect(list.find((s) => s.id === first)?.messages).toBe(6)

    await engine.resetSession()
    expect(await engine.getHistory()).toEqual([])
    expect(await engine.getSessionId()).toBeUndefined()
    await engine.addMessage("user", "fresh start")
    const next = await engine.getSessionId()
    expect(next).not.toBe(first)
    expect(next).not.toBe(other)
    expect((await engine.listSessions()).map((s) => s.id)).toContain(next)
  })

  vitestIt("without a log, messages stay in the store and the log's operations say how to enable it", async () => {
    const root = await mkdtemp(join(tmpdir(), "strata-repo-"))
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root })
    await engine.addExchange("q", "a")
    expect(await engine.getSessionId()).toBeUndefined()
    const error = await engine.resumeSession("20260101-000000").catch((x: unknown) => x)
    expect(error).toBeInstanceOf(SessionStoreMissing)
    expect((error as SessionStoreMissing).message).toBe('Cannot resume session "20260101-000000": no session store is configured. Create the engine with `sessions: true` (or provide SessionStore.layer(repoRoot)).')
    await expect(engine.listSessions()).rejects.toBeInstanceOf(SessionStoreMissing)
    expect(await engine.getHistory()).toHaveLength(2)
  })

  vitestIt("resuming a session that does not exist changes nothing", async () => {
    const root = await mkdtemp(join(tmpdir(), "strata-repo-"))
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: true })
    await engine.addExchange("q", "a")
    const id = await engine.getSessionId()
    await expect(engine.resumeSession("nope")).rejects.toBeInstanceOf(SessionNotFound)
    expect(await engine.getHistory()).toHaveLength(2)
    expect(await engine.getSessionId()).toBe(id)
  })
})

describe("createContextEngine({ sessions })", () => {
  vitestIt("stores exchanges, lists sessions and resumes one in a new engine", async () => {
    const root = await mkdtemp(join(tmpdir(), "strata-repo-"))
    const dir = join(root, "my-sessions")
    let id: string | undefined
    {
      await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: dir })
      await engine.addExchange("What is Strata?", "A context engine.")
      id = await engine.getSessionId()
    }
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: dir })
    expect((await engine.listSessions()).map((s) => s.id)).toEqual([id])
    const loaded = await engine.resumeSession(id!)
    expect(loaded.messages).toHaveLength(2)
    expect(await engine.getHistory()).toEqual(loaded.messages)
    await engine.addExchange("More?", "Yes.")
    expect((await readFile(join(dir, `${id!}.jsonl`), "utf8")).trim().split("\n")).toHaveLength(4)
    await expect(engine.resumeSession("missing")).rejects.toBeInstanceOf(SessionNotFound)
  })

  vitestIt("sessions: true stores under <repo>/.strata/sessions", async () => {
    const root = await mkdtemp(join(tmpdir(), "strata-repo-"))
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, sessions: true })
    await engine.addMessage("user", "hi")
    expect(await readdir(join(root, ".strata", "sessions"))).toEqual([`${(await engine.getSessionId())!}.jsonl`])
  })
})

describe("parseSessionText", () => {
  it("skips corrupt lines in the middle and says which", () => {
    const text = '{"t":1,"message":{"role":"user","content":"a"}}\ngarbage\n{"t":2,"message":{"role":"robot","content":"b"}}\n{"t":3,"message":{"role":"assistant","content":"c"}}\n'
    const parsed = parseSessionText(text)
    expect(parsed.messages).toEqual([{ role: "user", content: "a" }, { role: "assistant", content: "c" }])
    expect(parsed.warnings).toEqual(["line 2 is not valid JSON; skipped", "line 3 is not a session message; skipped"])
  })
})
