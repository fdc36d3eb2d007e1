// The turn API over a StateStore: one snapshot per turn, one commit per turn with
// compare-and-set, nothing changed by a turn that is never committed, conflicts retried
// by re-assembling. The tracker here is a JSON-state stub (the real one is @strata/tiers,
// exercised end to end in packages/e2e).
import { Effect, Layer, Ref, Schema } from "effect"
import { describe, expect } from "vitest"
import {
  appendHistory,
  beginTurn,
  EMPTY_RECORD,
  InvalidInput,
  MemoryStateStore,
  RecordedRequest,
  rewriteSessionHistory,
  runTurn,
  SessionRecord,
  StateStore,
  TrackerState,
  turnBreakdown,
  type Message,
  type ProviderPlugin,
  type SeededTracker,
  type SessionKey,
  type TurnRequest
} from "../src/effect.ts"
import { journalTestLayer, stubSnapshot, stubSymbolIndex } from "./pipeline-stubs.ts"
import { it } from "@strata/test-support"

const session: SessionKey = { repository: "id:test", name: "default" }

/** Tracker state as `{ commits, purges }`: each commit and purge of a seeded tracker counts. */
const CounterState = Schema.Struct({ commits: Schema.Number, purges: Schema.Number })
const stubTrackerState = Layer.succeed(TrackerState, {
  seed: (json) =>
    Effect.gen(function* () {
      const start = json === null ? { commits: 0, purges: 0 } : Schema.decodeUnknownSync(CounterState)(json)
      const state = yield* Ref.make(start)
      const snapshot = stubSnapshot({ assignments: { "history:0": "L3" } })
      const seeded: SeededTracker = {
        tracker: {
          current: Effect.succeed(snapshot),
          commit: () => Ref.update(state, (s) => ({ ...s, commits: s.commits + 1 })),
          remove: () => Effect.succeed([]),
          purgeHistory: Effect.as(Ref.update(state, (s) => ({ ...s, purges: s.purges + 1 })), [])
        },
        state: Ref.get(state),
        warnings: []
      }
      return seeded
    })
})

const layer = () =>
  Layer.mergeAll(
    journalTestLayer(stubSymbolIndex(() => ({ files: ["a.ts"], blocks: { "a.ts": "a.ts:\n  f a\n" } }))),
    MemoryStateStore.layer,
    stubTrackerState
  )

const request = (prompt: string, extra: Partial<TurnRequest> = {}): TurnRequest => ({
  session,
  input: { model: "gpt-4o", prompt, systemPrompt: "SYSTEM", files: [{ path: "a.ts", content: "export const a = 1\n" }] },
  ...extra
})

const load = StateStore.use((store) => Effect.map(store.load(session), (l) => l.snapshot))

describe("turn API", () => {
  it.effect("a committed turn stores the prompt and reply, the tracker, the journal and the record in one commit", () =>
    Effect.gen(function* () {
      const turn = yield* beginTurn(request("What is a?"))
      expect(turn.baseVersion).toBe(0)
      expect(turn.assembly.mode).toBe("tiered")
      const committed = yield* turn.commit({ reply: [{ role: "assistant", content: "A constant." }], usage: { input: 10, cacheRead: 0, cacheWrite: 90, output: 3 } })
      expect(committed).toMatchObject({ version: 1, duplicate: false })
      const state = yield* load
      expect(state.history).toEqual([{ role: "user", content: "What is a?" }, { role: "assistant", content: "A constant." }])
      expect(state.tracker).toEqual({ commits: 1, purges: 0 })
      expect(state.journal).not.toBeNull()
      expect(state.record).toMatchObject({ turns: 1, selected: ["a.ts"], totals: { input: 10, cacheRead: 0, cacheWrite: 90, output: 3 } })
      expect(committed.record.last).toMatchObject({ provider: "openai-compatible", model: "gpt-4o", usageSource: "provider" })

      // The next turn starts from what was stored: history, tracker and journal.
      const second = yield* beginTurn(request("And b?"))
      expect(second.baseVersion).toBe(1)
      expect(second.history).toHaveLength(2)
      expect(second.record.turns).toBe(1)
      expect(second.assembly.journal?.rebuild).toBeUndefined()
    }).pipe(Effect.provide(layer())))

  it.effect("each turn stores its request summary with the turn; the record keeps only the last request's blocks", () =>
    Effect.gen(function* () {
      const first = yield* beginTurn(request("What is a?"))
      yield* first.commit({ reply: [{ role: "assistant", content: "A." }], usage: { input: 10, cacheRead: 0, cacheWrite: 90, output: 3 }, source: "cli" })
      const second = yield* beginTurn(request("And b?"))
      yield* second.commit({ reply: [{ role: "assistant", content: "B." }], usage: { input: 12, cacheRead: 90, cacheWrite: 20, output: 4 } })
      const page = yield* StateStore.use((store) => store.requests(session, { from: 1, limit: 10 }))
      expect(page.next).toBeUndefined()
      expect(page.requests.map((r) => r.version)).toEqual([1, 2])
      const [a, b] = page.requests.map((r) => Schema.decodeUnknownSync(RecordedRequest)(r.request))
      expect(a).toMatchObject({ source: "cli", usage: { input: 10, cacheWrite: 90 }, usageSource: "provider", model: "gpt-4o" })
      expect(b).toMatchObject({ source: "api", usage: { cacheRead: 90 } })
      expect(a!.blocks.length).toBeGreaterThan(0)
      expect(a!.blocks.every((x) => x.changed && x.text === undefined)).toBe(true)
      // The second request's unchanged blocks are marked so, against the first's hashes.
      expect(b!.blocks.filter((x) => !x.changed).map((x) => x.hash)).toEqual(b!.blocks.filter((x) => a!.blocks.some((y) => y.tier === x.tier && y.hash === x.hash)).map((x) => x.hash))
      const state = yield* load
      const record = Schema.decodeUnknownSync(SessionRecord)(state.record)
      expect(record.requests).toBeUndefined()
      expect(record.lastBlocks?.map((x) => x.hash)).toEqual(b!.blocks.map((x) => x.hash))
      expect(record.lastBlocks?.some((x) => x.text?.includes("And b?") === true)).toBe(true)
    }).pipe(Effect.provide(layer())))

  it.effect("a turn never committed changes nothing", () =>
    Effect.gen(function* () {
      yield* beginTurn(request("first"))
      const state = yield* load
      expect(state).toMatchObject({ version: 0, history: [], tracker: null, journal: null, record: null })
    }).pipe(Effect.provide(layer())))

  it.effect("a stale turn fails with StaleTurn, and with retries is re-assembled and stored once after the other", () =>
    Effect.gen(function* () {
      const a = yield* beginTurn(request("from A"))
      const b = yield* beginTurn(request("from B"))
      yield* a.commit({ reply: [{ role: "assistant", content: "A" }] })
      const conflict = yield* Effect.flip(b.commit({ reply: [{ role: "assistant", content: "B" }] }))
      expect(conflict._tag).toBe("StaleTurn")
      expect(conflict).toMatchObject({ assembledAt: 0, current: 1 })
      expect((yield* load).version).toBe(1)
      const retried = yield* b.commit({ reply: [{ role: "assistant", content: "B" }] }, { retries: 2 })
      expect(retried.version).toBe(2)
      const state = yield* load
      expect(state.history.map((m) => m.content)).toEqual(["from A", "A", "from B", "B"])
      expect(state.tracker).toEqual({ commits: 2, purges: 0 })
      expect(state.record).toMatchObject({ turns: 2 })
      // A turn commits once.
      const twice = yield* Effect.flip(b.commit({ reply: [{ role: "assistant", content: "B2" }] }))
      expect(twice._tag).toBe("TurnAlreadyCommitted")
      // The same turn id in a new turn (a retry after a crash) is a duplicate and writes nothing.
      const replay = yield* beginTurn({ ...request("from B"), turnId: b.id })
      const again = yield* replay.commit({ reply: [{ role: "assistant", content: "B" }] }, { retries: 2 })
      expect(again.duplicate).toBe(true)
      expect((yield* load).version).toBe(2)
    }).pipe(Effect.provide(layer())))

  it.effect("a tool-call reply leaves the call pending; the next turn answers it with toolResults", () =>
    Effect.gen(function* () {
      const call: Message = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a.ts" } }] }
      yield* runTurn(request("Read a.ts"), () => Effect.succeed({ reply: [call] }))
      // Assembling without the result fails, naming the call, and changes nothing.
      const missing = yield* Effect.flip(beginTurn(request("next")))
      expect(missing).toBeInstanceOf(InvalidInput)
      expect(missing.message).toContain('"c1"')
      const turn = yield* beginTurn(request("", { toolResults: [{ type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "export const a = 1" } }] }))
      expect(turn.assembly.request.messages.some((m) => m.role === "tool")).toBe(true)
      yield* turn.commit({ reply: [{ role: "assistant", content: "a is 1." }] })
      const state = yield* load
      expect(state.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    }).pipe(Effect.provide(layer())))

  it.effect("a reply that breaks the history is refused and nothing is stored", () =>
    Effect.gen(function* () {
      const turn = yield* beginTurn(request("hi"))
      const bad = yield* Effect.flip(turn.commit({ reply: [{ role: "tool", content: [{ type: "tool-result", toolCallId: "x", toolName: "ls", output: { type: "text", value: "" } }] }] }))
      expect(bad).toBeInstanceOf(InvalidInput)
      expect((yield* load).version).toBe(0)
    }).pipe(Effect.provide(layer())))

  it.effect("a commit without a reply appends nothing but advances the tracker and the record", () =>
    Effect.gen(function* () {
      const turn = yield* beginTurn(request("just looking"))
      const committed = yield* turn.commit()
      expect(committed.appended).toEqual([])
      const state = yield* load
      expect(state.history).toEqual([])
      expect(state.record).toMatchObject({ turns: 1, last: { usageSource: "none" } })
    }).pipe(Effect.provide(layer())))

  it.effect("a plugin types the body; its result is the one placed", () =>
    Effect.gen(function* () {
      const plugin: ProviderPlugin<{ readonly model: string; readonly count: number }> = {
        provider: "counting",
        place: (req) => ({ provider: "counting", body: { model: req.model, count: req.messages.length }, breakpoints: [], dropped: [] }),
        decodeReply: () => ({ messages: [], usage: undefined }),
        decodeUsage: () => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0 })
      }
      const turn = yield* beginTurn(request("hi"), { plugin })
      const count: number = turn.assembly.placed.body.count
      expect(count).toBe(turn.assembly.request.messages.length)
      const committed = yield* turn.commit({ reply: [{ role: "assistant", content: "ok" }] })
      expect(committed.record.last?.provider).toBe("counting")
    }).pipe(Effect.provide(layer())))

  it.effect("history changes outside turns: validated appends, and rewrites that purge the tracker", () =>
    Effect.gen(function* () {
      yield* appendHistory(session, [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }])
      const orphan = yield* Effect.flip(appendHistory(session, [{ role: "tool", content: [{ type: "tool-result", toolCallId: "x", toolName: "ls", output: { type: "text", value: "" } }] }]))
      expect(orphan).toBeInstanceOf(InvalidInput)
      const cleared = yield* rewriteSessionHistory(session, () => Effect.succeed({ history: [], value: "cleared" }), { purgeTracker: true })
      expect(cleared).toMatchObject({ value: "cleared", commit: { version: 2 } })
      const state = yield* load
      expect(state.history).toEqual([])
      expect(state.tracker).toEqual({ commits: 0, purges: 1 })
      const breakdown = yield* turnBreakdown(request(""))
      expect(breakdown.total_tokens).toBeGreaterThan(0)
      expect(EMPTY_RECORD.turns).toBe(0)
    }).pipe(Effect.provide(layer())))
})
