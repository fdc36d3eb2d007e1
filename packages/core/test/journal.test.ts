// Tests of the journal layout (pipeline/journal.ts), the pipeline's default: one example
// per rebuild reason and update kind, and property tests over random sessions (frozen
// tiers, an append-only journal, nothing lost or stale, failed requests, seed mode).
import { Effect, Layer, Ref } from "effect"
import * as TestClock from "effect/testing/TestClock"
import fc from "fast-check"
import { describe, expect, it as vitestIt } from "vitest"
import { ACK, assemble, AssemblySession, FILE_TREE_HEADER, FILES_ACTIVE_HEADER, LayoutPlanStage, SymbolIndex, Tracker, TrackerConflict, type AssemblyInput, type AssemblyServices, type AssemblyResult, type CachedTier, type ItemKey, type JournalMemory, type Message, type RebuildReason, type Tier, type TierChange, type TrackedItem, type TrackerSnapshot } from "../src/effect.ts"
import { FILE_TREE_CHANGES_HEADER, FILES_JOURNAL_HEADER, JOURNAL_NOTE, REPO_MAP_UPDATES_HEADER, SYMBOL_DIFF_NOTE } from "../src/assembly/headers.ts"
import { CacheExpiryMillis } from "../src/pipeline/base/providerCache.ts"
import { AdaptiveTtl, cacheImpactOfJournalRestart } from "../src/pipeline/journal/journalPlan.ts"
import { MESSAGE_OVERHEAD_TOKENS } from "../src/tokens/TokenCounter.ts"
import { it } from "@strata/test-support"
import { charCounter, journalTestLayer, stubSymbolIndex, stubTrackerLayer, testLayer, type StubRepo } from "./pipeline-stubs.ts"
import { historyOf, pairingProblems, stepArb, type Step } from "./tool-sessions.ts"
import { applyHunks } from "./applyDiff.ts"

// ---------------------------------------------------------------------------------------
// A counting tracker: items climb a tier after a few unchanged appearances and drop to
// active when their hash changes (low thresholds, so short sessions move every tier).

const THRESHOLDS: Readonly<Record<CachedTier, number>> = { L3: 1, L2: 3, L1: 5, L0: 7 }

const tierOfN = (n: number): Tier =>
  n >= THRESHOLDS.L0 ? "L0" : n >= THRESHOLDS.L1 ? "L1" : n >= THRESHOLDS.L2 ? "L2" : n >= THRESHOLDS.L3 ? "L3" : "active"

type Held = Omit<TrackedItem, "key">

const countingSnapshot = (
  items: ReadonlyMap<string, Held>,
  version: number,
  initialized: boolean,
  place: (key: string) => CachedTier,
  baseVersion = version
): TrackerSnapshot => {
  const get = (key: string): TrackedItem | undefined => {
    const held = items.get(key)
    return held === undefined ? undefined : { key: key as ItemKey, ...held }
  }
  const self: TrackerSnapshot = {
    version,
    baseVersion,
    initialized,
    thresholds: THRESHOLDS,
    get,
    tierOf: (key) => items.get(key)?.tier,
    itemsIn: (tier) => [...items.keys()].sort().flatMap((k) => (items.get(k)?.tier === tier ? [get(k)!] : [])),
    initialize: (input) => {
      if (initialized) return { snapshot: self, changes: [] }
      const next = new Map(items)
      const changes: Array<TierChange> = []
      for (const item of input.items) {
        const tier = place(item.key)
        next.set(item.key, { tier, n: THRESHOLDS[tier], hash: item.hash, tokens: item.tokens })
        changes.push({ key: item.key, from: null, to: tier, reason: "graduated" })
      }
      return { snapshot: countingSnapshot(next, version, true, place, baseVersion), changes }
    },
    update: (input) => {
      const next = new Map<string, Held>()
      for (const item of input.items) {
        const prev = items.get(item.key)
        const n = prev !== undefined && prev.hash === item.hash ? prev.n + 1 : 0
        next.set(item.key, { tier: tierOfN(n), n, hash: item.hash, tokens: item.tokens })
      }
      return { snapshot: countingSnapshot(next, version + 1, true, place, version), changes: [] }
    }
  }
  return self
}

/** A Tracker over the counting snapshot, with compare-and-set commits. */
const countingTracker = (place: (key: string) => CachedTier): Layer.Layer<Tracker> =>
  Layer.effect(
    Tracker,
    Effect.gen(function* () {
      const ref = yield* Ref.make(countingSnapshot(new Map(), 0, false, place))
      const service: Tracker["Service"] = {
        current: Ref.get(ref),
        commit: (next) =>
          Effect.gen(function* () {
            const now = yield* Ref.get(ref)
            if (next.baseVersion !== now.version) return yield* new TrackerConflict({ expected: next.baseVersion, actual: now.version })
            yield* Ref.set(ref, next)
          }),
        remove: () => Effect.succeed([]),
        purgeHistory: Effect.succeed([])
      }
      return service
    })
  )

// ---------------------------------------------------------------------------------------
// Reading requests

const textOf = (m: Message): string => (typeof m.content === "string" ? m.content : m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(""))
const tierMessages = (r: AssemblyResult, tier: Tier): ReadonlyArray<Message> => r.request.blocks.find((b) => b.tier === tier)?.messages ?? []
const tierJson = (r: AssemblyResult, tier: Tier): string => JSON.stringify(tierMessages(r, tier))
const bodyOf = (r: AssemblyResult): string => JSON.stringify(r.placed.body)
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const UPDATE_HEADERS = [REPO_MAP_UPDATES_HEADER, FILE_TREE_CHANGES_HEADER, FILES_JOURNAL_HEADER]
/** What the journal's first update pair opens with: how to read every update. */
const NOTE = `${JOURNAL_NOTE}\n\n`
/** An update's text without the notes it may open with (`JOURNAL_NOTE`, `SYMBOL_DIFF_NOTE`, or both). */
const withoutNote = (text: string): string =>
  text.startsWith(JOURNAL_NOTE) || text.startsWith(SYMBOL_DIFF_NOTE) ? text.slice(text.indexOf("\n\n") + 2) : text
/** An update: a user message under an update header, acknowledged only before the conversation started. */
const isUpdatePair = (ms: ReadonlyArray<Message>): boolean =>
  ms[0]?.role === "user" && UPDATE_HEADERS.some((h) => withoutNote(textOf(ms[0]!)).startsWith(h)) &&
  (ms.length === 1 || (ms.length === 2 && ms[1]?.role === "assistant" && ms[1].content === ACK))

/** Nothing, or an update pair that only journals selected files (what a rebuild may append after the history). */
const isFilesUpdate = (ms: ReadonlyArray<Message>): boolean =>
  ms.length === 0 || (isUpdatePair(ms) && withoutNote(textOf(ms[0]!)).startsWith(FILES_JOURNAL_HEADER))

const memoryOf = Effect.gen(function* () {
  return yield* Ref.get((yield* AssemblySession).journal)
})

// ---------------------------------------------------------------------------------------
// Example-based tests, on a fixed-tier stub tracker unless they need tiers to move

const REPO: StubRepo = {
  files: ["README.md", "src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"],
  blocks: {
    "src/a.ts": "src/a.ts:\n  f a()\n",
    "src/b.ts": "src/b.ts:\n  f b()\n",
    "src/c.ts": "src/c.ts:\n  f c()\n",
    "src/d.ts": "src/d.ts:\n  f d()\n"
  },
  legend: "# f=function"
}

const ASSIGNMENTS = { "symbol:src/a.ts": "L0", "symbol:src/b.ts": "L1", "symbol:src/c.ts": "L2" } as const

const base: AssemblyInput = { model: "gpt-4o", prompt: "Do it", systemPrompt: "SYS", systemReminder: "REMIND", files: [], history: [] }

const q = (n: number): Message => ({ role: "user", content: `q${n}` })
const a = (n: number): Message => ({ role: "assistant", content: `a${n}` })
const exchanges = (n: number): Array<Message> => Array.from({ length: n }, (_, i) => [q(i), a(i)]).flat()

/** A journal-layout session over a repository the test changes between turns. */
const fixedSession = (initial: StubRepo = REPO) => {
  const repo = { current: initial }
  const layer = journalTestLayer(stubTrackerLayer({ assignments: ASSIGNMENTS }), stubSymbolIndex(() => repo.current))
  return { repo, layer }
}

const withBlock = (r: StubRepo, path: string, block: string): StubRepo => ({ ...r, blocks: { ...r.blocks, [path]: block } })

describe("journal layout: examples", () => {
  it.effect("the first request rebuilds; an uncommitted one leaves the memory as it was; then requests append", () => {
    const { layer } = fixedSession()
    return Effect.gen(function* () {
      const first = yield* assemble(base)
      expect(first.journal).toEqual({ rebuild: "first request", journalTokens: 0, staleTokens: 0 })
      expect(first.request.blocks.map((b) => b.tier)).toEqual(["L0", "L1", "L2", "active"])
      expect(textOf(tierMessages(first, "L0")[0]!)).toContain("src/a.ts:\n  f a()")
      expect(textOf(tierMessages(first, "L1")[0]!)).toBe("# Repository Structure (continued)\n\nsrc/b.ts:\n  f b()")
      // The tracker's L3 (and untracked) entries freeze into L2, which ends with the file tree.
      expect(tierMessages(first, "L2").map(textOf)).toEqual([
        "# Repository Structure (continued)\n\nsrc/c.ts:\n  f c()\n\nsrc/d.ts:\n  f d()",
        ACK,
        `${FILE_TREE_HEADER}# File Tree (5 files)\n\nREADME.md\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts\nsrc/d.ts`,
        ACK
      ])
      expect(yield* memoryOf).toBeUndefined()
      const again = yield* assemble(base)
      expect(again.journal?.rebuild).toBe("first request")
      expect(bodyOf(again)).toBe(bodyOf(first))
      yield* again.commit
      expect((yield* memoryOf)?.requests).toBe(1)
      const third = yield* assemble({ ...base, history: exchanges(1) })
      expect(third.journal?.rebuild).toBeUndefined()
      expect(tierMessages(third, "L3")).toEqual(exchanges(1))
      for (const tier of ["L0", "L1", "L2"] as const) expect(tierJson(third, tier)).toBe(tierJson(first, tier))
    }).pipe(Effect.provide(layer))
  })

  it.effect("an edited symbol block is journaled after the new history under `# Repository Structure (updated)`; L0-L2 keep their bytes", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      const first = yield* assemble(base)
      yield* first.commit
      repo.current = withBlock(REPO, "src/b.ts", "src/b.ts:\n  f b2()\n")
      const second = yield* assemble({ ...base, history: exchanges(1) })
      yield* second.commit
      expect(second.journal?.rebuild).toBeUndefined()
      for (const tier of ["L0", "L1", "L2"] as const) expect(tierJson(second, tier)).toBe(tierJson(first, tier))
      expect(tierMessages(second, "L3")).toEqual([
        q(0),
        a(0),
        { role: "user", content: `${NOTE}${REPO_MAP_UPDATES_HEADER}src/b.ts:\n  f b2()` }
      ])
      // The superseded L1 copy stays in the prefix and is counted as stale.
      expect(second.journal?.staleTokens).toBe("src/b.ts:\n  f b2()".length)
      expect(second.journal?.journalTokens).toBe(second.request.blocks.find((b) => b.tier === "L3")?.tokens)
      // Nothing changed since: the next request only appends its history.
      const third = yield* assemble({ ...base, history: exchanges(2) })
      expect(third.journal?.rebuild).toBeUndefined()
      expect(tierMessages(third, "L3")).toEqual([...tierMessages(second, "L3"), q(1), a(1)])
      // The block changed back: that is a change too (the model last saw b2).
      repo.current = REPO
      const fourth = yield* assemble({ ...base, history: exchanges(2) })
      expect(tierMessages(fourth, "L3").slice(-1).map(textOf)).toEqual([`${REPO_MAP_UPDATES_HEADER}src/b.ts:\n  f b()`])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a small change to a long block is journaled as a symbol diff against the file's latest full entry, noted once", () => {
    const long = (first: string, last: string) => `src/b.ts: ${first}\n${Array.from({ length: 12 }, (_, i) => `  v field${i}`).join("\n")}\n  f b() ${last}`
    const start = withBlock(REPO, "src/b.ts", long("←1", "←1"))
    const { repo, layer } = fixedSession(start)
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      // Only the counts changed: a diff against the frozen L1 copy, opened by the note.
      repo.current = withBlock(start, "src/b.ts", long("←2", "←1"))
      const second = yield* assemble({ ...base, history: exchanges(1) })
      yield* second.commit
      const diff1 = "src/b.ts (diff):\n@@ -1 +1 @@\n-src/b.ts: ←1\n+src/b.ts: ←2"
      expect(tierMessages(second, "L3").slice(-1).map(textOf)).toEqual([`${JOURNAL_NOTE} ${SYMBOL_DIFF_NOTE}\n\n${REPO_MAP_UPDATES_HEADER}${diff1}`])
      // The frozen copy is still the latest full entry: what it and the diff exceed the block by is stale.
      const blockAt = (r: StubRepo) => r.blocks["src/b.ts"]!.length
      const excess = (diff: string, now: StubRepo) => blockAt(start) + diff.length - blockAt(now)
      expect(second.journal?.staleTokens).toBe(excess(diff1, repo.current))
      // Another change: its diff is against the same full entry (not the first diff), which it supersedes.
      repo.current = withBlock(start, "src/b.ts", long("←2", "←3"))
      const third = yield* assemble({ ...base, history: exchanges(2) })
      yield* third.commit
      const diff2 = `${diff1}\n@@ -14 +14 @@\n-  f b() ←1\n+  f b() ←3`
      expect(tierMessages(third, "L3").slice(-1).map(textOf)).toEqual([`${REPO_MAP_UPDATES_HEADER}${diff2}`])
      // The first diff is superseded whole; the excess is now the second's.
      expect(third.journal?.staleTokens).toBe(diff1.length + excess(diff2, repo.current))
      // A change as long as the block: the block whole, the new latest full entry, superseding the frozen copy and the diff.
      const rewritten = `src/b.ts:\n${Array.from({ length: 12 }, (_, i) => `  f other${i}()`).join("\n")}`
      repo.current = withBlock(start, "src/b.ts", rewritten)
      const fourth = yield* assemble({ ...base, history: exchanges(3) })
      yield* fourth.commit
      expect(tierMessages(fourth, "L3").slice(-1).map(textOf)).toEqual([`${REPO_MAP_UPDATES_HEADER}${rewritten}`])
      expect(fourth.journal?.staleTokens).toBe(diff1.length + diff2.length + rewritten.length)
      // The next small change is a diff against that entry; the note is not repeated.
      repo.current = withBlock(start, "src/b.ts", rewritten.replace("other11", "last"))
      const fifth = yield* assemble({ ...base, history: exchanges(4) })
      expect(tierMessages(fifth, "L3").slice(-1).map(textOf)).toEqual([`${REPO_MAP_UPDATES_HEADER}src/b.ts (diff):\n@@ -13 +13 @@\n-  f other11()\n+  f last()`])
      expect((yield* memoryOf)?.diffNoted).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("added and removed files: new blocks, `(deleted)` entries and a `# Repository Files (changes)` list", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      repo.current = {
        ...REPO,
        files: ["src/a.ts", "src/b.ts", "src/c.ts", "src/e.ts"],
        blocks: { "src/a.ts": "src/a.ts:\n  f a()\n", "src/b.ts": "src/b.ts:\n  f b()\n", "src/c.ts": "src/c.ts:\n  f c()\n", "src/e.ts": "src/e.ts:\n  f e()\n" }
      }
      const second = yield* assemble(base)
      yield* second.commit
      expect(second.journal?.rebuild).toBeUndefined()
      expect(tierMessages(second, "L3").map(textOf)).toEqual([
        `${NOTE}${REPO_MAP_UPDATES_HEADER}src/e.ts:\n  f e()\n\nsrc/d.ts: (deleted)\n\n${FILE_TREE_CHANGES_HEADER}+ src/e.ts\n- README.md\n- src/d.ts`,
        ACK
      ])
      // Told once: the same repository next turn adds nothing.
      const third = yield* assemble(base)
      expect(tierJson(third, "L3")).toBe(tierJson(second, "L3"))
      // A deleted file coming back is announced again, with its block.
      repo.current = REPO
      const fourth = yield* assemble(base)
      expect(tierMessages(fourth, "L3").slice(-2).map(textOf)).toEqual([
        `${REPO_MAP_UPDATES_HEADER}src/d.ts:\n  f d()\n\nsrc/e.ts: (deleted)\n\n${FILE_TREE_CHANGES_HEADER}+ README.md\n+ src/d.ts\n- src/e.ts`,
        ACK
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a changed system prompt rebuilds (`system prompt changed`), dropping superseded copies and restarting the journal", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      repo.current = withBlock(REPO, "src/b.ts", "src/b.ts:\n  f b2()\n")
      yield* (yield* assemble({ ...base, history: exchanges(1) })).commit
      const rebuilt = yield* assemble({ ...base, systemPrompt: "SYS 2", history: exchanges(2) })
      expect(rebuilt.journal).toMatchObject({ rebuild: "system prompt changed", staleTokens: 0 })
      expect(textOf(tierMessages(rebuilt, "L0")[0]!).startsWith("SYS 2\n\n")).toBe(true)
      expect(textOf(tierMessages(rebuilt, "L1")[0]!)).toBe("# Repository Structure (continued)\n\nsrc/b.ts:\n  f b2()")
      expect(tierMessages(rebuilt, "L3")).toEqual(exchanges(2))
      const all = rebuilt.request.messages.map(textOf).join("\n")
      expect(all).not.toContain("f b()")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a changed legend rebuilds (`legend changed`)", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      repo.current = { ...REPO, legend: "# f=function c=class" }
      const rebuilt = yield* assemble({ ...base, history: exchanges(1) })
      expect(rebuilt.journal?.rebuild).toBe("legend changed")
      expect(textOf(tierMessages(rebuilt, "L0")[0]!)).toContain("# f=function c=class")
    }).pipe(Effect.provide(layer))
  })

  it.effect("compaction restarts the journal only (`history rewritten`): L0-L2 keep their bytes, updates since the freeze are merged into one pair", () => {
    // A large unchanged block in L2: refreezing would write it again, the restart does not.
    const large = withBlock(REPO, "src/d.ts", `src/d.ts:\n${"  f d()\n".repeat(200)}`)
    const { repo, layer } = fixedSession(large)
    return Effect.gen(function* () {
      const first = yield* assemble(base)
      yield* first.commit
      repo.current = withBlock(large, "src/b.ts", "src/b.ts:\n  f b2()\n")
      yield* (yield* assemble({ ...base, history: exchanges(1) })).commit
      repo.current = withBlock(withBlock(large, "src/b.ts", "src/b.ts:\n  f b3()\n"), "src/c.ts", "src/c.ts:\n  f c2()\n")
      yield* (yield* assemble({ ...base, history: exchanges(2) })).commit
      const summary: Array<Message> = [{ role: "user", content: "summary of q0..q1" }, { role: "assistant", content: "Understood." }]
      const compacted = yield* assemble({ ...base, history: summary })
      expect(compacted.journal?.rebuild).toBe("history rewritten")
      for (const tier of ["L0", "L1", "L2"] as const) expect(tierJson(compacted, tier)).toBe(tierJson(first, tier))
      expect(tierMessages(compacted, "L3")).toEqual([
        ...summary,
        { role: "user", content: `${NOTE}${REPO_MAP_UPDATES_HEADER}src/b.ts:\n  f b3()\n\nsrc/c.ts:\n  f c2()` }
      ])
      // Both frozen copies are superseded again.
      expect(compacted.journal?.staleTokens).toBe("src/b.ts:\n  f b3()".length + "src/c.ts:\n  f c2()".length)
      yield* compacted.commit
      const next = yield* assemble({ ...base, history: [...summary, q(9), a(9)] })
      expect(next.journal?.rebuild).toBeUndefined()
      expect(tierMessages(next, "L3")).toEqual([...tierMessages(compacted, "L3"), q(9), a(9)])
    }).pipe(Effect.provide(layer))
  })

  it.effect("compaction refreezes the tiers when that writes no more than restarting the journal (`history rewritten, refrozen`)", () => {
    // Frozen at the first request when the map was one block; every block since sits in the journal's updates.
    const tiny: StubRepo = { ...REPO, files: ["src/a.ts"], blocks: { "src/a.ts": REPO.blocks["src/a.ts"]! } }
    const { repo, layer } = fixedSession(tiny)
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      repo.current = REPO
      yield* (yield* assemble({ ...base, history: exchanges(1) })).commit
      const summary: Array<Message> = [{ role: "user", content: "summary of q0" }, { role: "assistant", content: "Understood." }]
      const compacted = yield* assemble({ ...base, history: summary })
      expect(compacted.journal?.rebuild).toBe("history rewritten, refrozen")
      // The map is in the frozen tiers now; the journal is the history alone.
      expect(tierMessages(compacted, "L3")).toEqual(summary)
      expect(tierJson(compacted, "L2")).toContain("src/c.ts:")
      expect(compacted.journal?.staleTokens).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("in a chat turn a new file waits in the Working Files once, enters the journal when it comes back unchanged, and an edited one supersedes the journaled copy", () => {
    const repo = { current: REPO }
    const layer = journalTestLayer(countingTracker(() => "L2"), stubSymbolIndex(() => repo.current))
    const notes = (content: string): AssemblyInput => ({ ...base, files: [{ path: "README.md", content }] })
    const working = (r: AssemblyResult) => tierMessages(r, "active").map(textOf).find((t) => t.startsWith(FILES_ACTIVE_HEADER))
    return Effect.gen(function* () {
      const t0 = yield* assemble(notes("N1"))
      yield* t0.commit
      expect(working(t0)).toBe(`${FILES_ACTIVE_HEADER}README.md\n\`\`\`\nN1\n\`\`\``)
      // Sent before with the same content (the tracker holds its hash): journaled once, out of the Working Files.
      const t1 = yield* assemble(notes("N1"))
      yield* t1.commit
      expect(t1.journal?.rebuild).toBeUndefined()
      expect(working(t1)).toBeUndefined()
      expect(tierMessages(t1, "L3").map(textOf)).toEqual([`${NOTE}${FILES_JOURNAL_HEADER}README.md\n\`\`\`\nN1\n\`\`\``, ACK])
      const t2 = yield* assemble(notes("N1"))
      yield* t2.commit
      expect(tierJson(t2, "L3")).toBe(tierJson(t1, "L3"))
      expect(working(t2)).toBeUndefined()
      expect(t2.journal?.staleTokens).toBe(0)
      // Edited: back in the Working Files for one turn; the journaled copy stays in the prefix.
      const t3 = yield* assemble(notes("N2"))
      yield* t3.commit
      expect(working(t3)).toBe(`${FILES_ACTIVE_HEADER}README.md\n\`\`\`\nN2\n\`\`\``)
      expect(tierJson(t3, "L3")).toBe(tierJson(t1, "L3"))
      expect(t3.journal?.staleTokens).toBe(0)
      // Unchanged since: journaled again after the first copy, which is now carried as stale.
      const t4 = yield* assemble(notes("N2"))
      yield* t4.commit
      expect(working(t4)).toBeUndefined()
      expect(tierMessages(t4, "L3").map(textOf)).toEqual([
        `${NOTE}${FILES_JOURNAL_HEADER}README.md\n\`\`\`\nN1\n\`\`\``,
        ACK,
        `${FILES_JOURNAL_HEADER}README.md\n\`\`\`\nN2\n\`\`\``,
        ACK
      ])
      expect(t4.journal?.staleTokens).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("in an agent's loop a file enters the journal once, after the user turn it appeared in; later steps read it in the prefix; a deselected copy is carried as stale", () => {
    const { layer } = fixedSession()
    const tools = [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" as const } }]
    const task = (files: ReadonlyArray<{ readonly path: string; readonly content: string }>, history: ReadonlyArray<Message>): AssemblyInput => ({
      ...base,
      prompt: "",
      systemReminder: "",
      tools,
      files,
      history
    })
    const fix: Message = { role: "user", content: "Fix src/a.ts" }
    const step = (n: number): Array<Message> => [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${n}`, toolName: "read_file", input: { path: "src/a.ts" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `c${n}`, toolName: "read_file", output: { type: "text", value: `step ${n}` } }] }
    ]
    const file = { path: "src/a.ts", content: "export const a = 1" }
    const copy = `${FILES_JOURNAL_HEADER}src/a.ts\n\`\`\`\nexport const a = 1\n\`\`\``
    return Effect.gen(function* () {
      // The task's first request: the prompt, then the file in the same user turn, cached with the journal.
      const r0 = yield* assemble(task([file], [fix]))
      yield* r0.commit
      expect(tierMessages(r0, "L3").map(textOf)).toEqual(["Fix src/a.ts", `${NOTE}${copy}`])
      expect(tierMessages(r0, "active").map(textOf)).toEqual([""])
      expect(r0.request.breakpoints.at(-1)?.tier).toBe("L3")
      // A tool step: the journal grows by the exchange; the request ends with the tool results, the file is read in the prefix.
      const r1 = yield* assemble(task([file], [fix, ...step(1)]))
      yield* r1.commit
      expect(r1.journal?.rebuild).toBeUndefined()
      expect(tierMessages(r1, "L3")).toEqual([...tierMessages(r0, "L3"), ...step(1)])
      expect(tierMessages(r1, "active").map(textOf)).toEqual([""])
      expect(bodyOf(r1).split("export const a = 1").length - 1).toBe(1)
      // The next task: the file leaves the selection; its copy stays in the prefix, carried as stale.
      const next: Message = { role: "user", content: "Now src/b.ts" }
      const r2 = yield* assemble(task([], [fix, ...step(1), { role: "assistant", content: "Done." }, next]))
      expect(r2.journal?.rebuild).toBeUndefined()
      expect(tierJson(r2, "L3").startsWith(tierJson(r1, "L3").slice(0, -1))).toBe(true)
      expect(r2.journal?.staleTokens).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer))
  })

  /**
   * Assemble and commit turns with `src/b.ts`'s block set by `blockAt(turn)` until the
   * journal rebuilds for `stale copies`; the stale tokens grow until then (`onAppend` checks
   * each appending turn). Returns the rebuild and the turn it happened at.
   */
  const untilStaleRebuild = (
    blockAt: (turn: number) => string,
    maxTurns: number,
    onAppend: (r: AssemblyResult) => void = () => undefined
  ) => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      let history: Array<Message> = []
      let stale = 0
      for (let turn = 0; turn < maxTurns; turn++) {
        repo.current = withBlock(REPO, "src/b.ts", blockAt(turn))
        const r = yield* assemble({ ...base, history })
        yield* r.commit
        if (turn === 0) expect(r.journal?.rebuild).toBe("first request")
        else if (r.journal?.rebuild !== undefined) {
          expect(r.journal.rebuild).toBe("stale copies")
          expect(r.journal.staleTokens).toBe(0)
          expect(stale).toBeGreaterThan(0)
          return { r, turn, history }
        } else {
          onAppend(r)
          expect(r.journal?.staleTokens).toBeGreaterThan(stale)
          stale = r.journal?.staleTokens ?? 0
        }
        history = [...history, q(turn), a(turn)]
      }
      return expect.unreachable(`no \`stale copies\` rebuild within ${maxTurns} turns`)
    }).pipe(Effect.provide(layer))
  }

  it.effect("a block edited every turn eventually costs more to keep than to rebuild (`stale copies`), and the rebuild shows each block once", () => {
    const big = (v: number) => `src/b.ts:\n  f b${v}(${"x".repeat(400)})\n`
    return Effect.gen(function* () {
      const { r, turn, history } = yield* untilStaleRebuild(big, 80)
      expect(tierMessages(r, "L3")).toEqual(history)
      const all = r.request.messages.map(textOf).join("\n")
      for (const path of ["src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"]) expect(all.split(`${path}:\n`).length - 1).toBe(1)
      expect(all).toContain(big(turn).slice(0, -1))
    })
  })

  it.effect("symbol diffs piling up also end in a `stale copies` rebuild, which shows the block whole, once", () => {
    // A long block whose one changing line grows a little each turn: every change is a diff.
    const long = (v: number) => `src/b.ts:\n${Array.from({ length: 30 }, (_, i) => `  v field${i}`).join("\n")}\n  f b(${"x".repeat(v)})\n`
    return Effect.gen(function* () {
      const { r, turn } = yield* untilStaleRebuild(long, 200, (appended) => {
        expect(tierMessages(appended, "L3").map(textOf).at(-1)).toContain("src/b.ts (diff):")
      })
      const all = r.request.messages.map(textOf).join("\n")
      expect(all).not.toContain(" (diff):")
      expect(all.split("src/b.ts:\n").length - 1).toBe(1)
      expect(all).toContain(long(turn).slice(0, -1))
    })
  })

  it.effect("cacheImpactOfJournalRestart counts every journal token as invalidated and the non-history ones as rewritten", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      yield* (yield* assemble({ ...base, history: exchanges(1) })).commit
      const historyOnly = yield* memoryOf
      const l3 = (yield* assemble({ ...base, history: exchanges(1) })).request.blocks.find((b) => b.tier === "L3")
      expect(cacheImpactOfJournalRestart(historyOnly!)).toEqual({ invalidated: l3?.tokens, rewritten: 0 })
      repo.current = withBlock(REPO, "src/b.ts", "src/b.ts:\n  f b2()\n")
      const r = yield* assemble({ ...base, history: exchanges(2) })
      yield* r.commit
      const memory: JournalMemory | undefined = yield* memoryOf
      const journalTokens = r.request.blocks.find((b) => b.tier === "L3")?.tokens ?? 0
      const historyTokens = exchanges(2).reduce((n, m) => n + charCounter().countMessage(m), 0)
      // After the conversation started the update has no acknowledgement.
      const update = MESSAGE_OVERHEAD_TOKENS + `${NOTE}${REPO_MAP_UPDATES_HEADER}src/b.ts:\n  f b2()`.length
      expect(journalTokens - historyTokens).toBe(update)
      expect(cacheImpactOfJournalRestart(memory!)).toEqual({ invalidated: journalTokens, rewritten: update })
    }).pipe(Effect.provide(layer))
  })

  it.effect("seed layout: the layoutPlan stage plans nothing", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, history: exchanges(2) })
      yield* r.commit
      expect(r.journal).toBeUndefined()
      expect(yield* memoryOf).toBeUndefined()
      // The tiered layout: the history is active and the tree sits in the active block.
      expect(tierMessages(r, "active").map(textOf)).toContain("q1")
      expect(tierMessages(r, "active").some((m) => textOf(m).startsWith(FILE_TREE_HEADER))).toBe(true)
    }).pipe(Effect.provide(testLayer(stubTrackerLayer({ assignments: ASSIGNMENTS }), stubSymbolIndex(() => REPO)))))
})

describe("journal layout: a block that leaves the map", () => {
  // The index drops a file's block while the file stays (@strata/symbols skips a file that
  // grew past its size limit, turned binary or became unreadable, and keeps it in the
  // tree): the journal says so (`path: (no symbol entry)`), so the old block is not left
  // as the model's last word on the file.
  vitestIt("a block that leaves the map while its file stays is not left as the file's current entry", () => {
    const { repo, layer } = fixedSession()
    return Effect.runPromise(Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      const { "src/b.ts": _dropped, ...blocks } = REPO.blocks
      repo.current = { ...REPO, blocks }
      const r = yield* assemble({ ...base, history: exchanges(1) })
      // Any fix passes: a rebuild, or a later entry for the file.
      const all = `\n${r.request.messages.map(textOf).join("\n\n")}`
      const last = all.lastIndexOf("\nsrc/b.ts:")
      const lastEntry = last < 0 ? "" : all.slice(last, last + "\nsrc/b.ts:\n  f b()".length)
      expect(lastEntry).not.toBe("\nsrc/b.ts:\n  f b()")
    }).pipe(Effect.provide(layer)))
  })
})

// ---------------------------------------------------------------------------------------
// Random sessions: each turn changes the world (blocks, files, selection, contents,
// compaction, system prompt, legend), assembles, commits, and the history grows by an
// exchange. Markers (⟦S:path:vN⟧, ⟦C:path:vN⟧) say which version of what a text is.

const PATHS: ReadonlyArray<string> = ["src/app.ts", "src/util.ts", "src/db.ts", "lib/io.ts", "lib/net.ts", "main.ts", "docs/notes.md"]
/** A file the index has no block for (as for a README). */
const NO_BLOCK = "docs/notes.md"

type Op =
  | { readonly op: "editBlock" | "add" | "remove" | "select" | "deselect" | "editContent"; readonly i: number }
  | { readonly op: "compact" | "system" | "legend" | "tools" }

interface World {
  readonly exists: Set<string>
  readonly selected: Set<string>
  readonly blockV: Map<string, number>
  readonly contentV: Map<string, number>
  history: ReadonlyArray<Message>
  system: number
  legend: number
  tools: number
}

interface Session {
  readonly exists: ReadonlyArray<boolean>
  readonly selected: ReadonlyArray<boolean>
  readonly placement: ReadonlyArray<CachedTier>
  readonly turns: ReadonlyArray<{ readonly ops: ReadonlyArray<Op>; readonly failed: ReadonlyArray<Op> | undefined; readonly steps: ReadonlyArray<Step> }>
}

const pathIndex = fc.integer({ min: 0, max: PATHS.length - 1 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: pathIndex.map((i): Op => ({ op: "editBlock", i })) },
  { weight: 6, arbitrary: pathIndex.map((i): Op => ({ op: "editContent", i })) },
  { weight: 6, arbitrary: pathIndex.map((i): Op => ({ op: "select", i })) },
  { weight: 3, arbitrary: pathIndex.map((i): Op => ({ op: "deselect", i })) },
  { weight: 3, arbitrary: pathIndex.map((i): Op => ({ op: "add", i })) },
  { weight: 3, arbitrary: pathIndex.map((i): Op => ({ op: "remove", i })) },
  { weight: 3, arbitrary: fc.constant<Op>({ op: "compact" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ op: "system" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ op: "legend" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ op: "tools" }) }
)
const flags = fc.array(fc.boolean(), { minLength: PATHS.length, maxLength: PATHS.length })
const sessionArb: fc.Arbitrary<Session> = fc.record({
  exists: flags,
  selected: flags,
  placement: fc.array(fc.constantFrom<CachedTier>("L0", "L1", "L2", "L3"), { minLength: PATHS.length, maxLength: PATHS.length }),
  turns: fc.array(
    fc.record({
      ops: fc.array(opArb, { maxLength: 3 }),
      failed: fc.option(fc.array(opArb, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      // Tool exchanges (and prompts, replies) the turn adds after its question and answer.
      steps: fc.array(stepArb, { maxLength: 3 })
    }),
    { minLength: 1, maxLength: 8 }
  )
})

/** Some blocks are long, so that a version change is shorter as a symbol diff than whole. */
const LONG_BLOCKS: ReadonlySet<string> = new Set(["src/app.ts", "lib/io.ts", "lib/net.ts", "main.ts"])
const fields = (from: number): string => Array.from({ length: 8 }, (_, k) => `  v field${from + k}\n`).join("")
const blockText = (path: string, v: number): string =>
  LONG_BLOCKS.has(path)
    ? `${path}:\n${fields(0)}  f ${path.replace(/\W/g, "_")}() ⟦S:${path}:v${v}⟧\n${fields(8)}`
    : `${path}:\n  f ${path.replace(/\W/g, "_")}() ⟦S:${path}:v${v}⟧\n`
const contentText = (path: string, v: number): string => `content ⟦C:${path}:v${v}⟧`
const question = (t: number): string => `question ⟦Q${t}⟧`

const initialWorld = (s: Session): World => {
  const exists = new Set(PATHS.filter((_, i) => s.exists[i] === true))
  if (exists.size === 0) exists.add(PATHS[0]!)
  return {
    exists,
    selected: new Set([...exists].filter((p) => s.selected[PATHS.indexOf(p)] === true)),
    blockV: new Map(),
    contentV: new Map(),
    history: [],
    system: 0,
    legend: 0,
    tools: 0
  }
}

const cloneWorld = (w: World): World => ({
  exists: new Set(w.exists),
  selected: new Set(w.selected),
  blockV: new Map(w.blockV),
  contentV: new Map(w.contentV),
  history: [...w.history],
  system: w.system,
  legend: w.legend,
  tools: w.tools
})

const applyOp = (w: World, op: Op, tag: string): void => {
  const bump = (m: Map<string, number>, p: string) => m.set(p, (m.get(p) ?? 0) + 1)
  switch (op.op) {
    case "compact":
      // Shorter, and different from the start: a summary, then the last exchange.
      // The kept tail never starts inside a tool exchange.
      if (w.history.length >= 2) {
        let cut = w.history.length - 2
        while (cut > 0 && w.history[cut]?.role === "tool") cut--
        w.history = [{ role: "user", content: `summary ⟦H:${tag}⟧` }, ...(w.history.length >= 4 ? w.history.slice(cut) : [])]
      }
      return
    case "system":
      w.system++
      return
    case "legend":
      w.legend++
      return
    case "tools":
      w.tools++
      return
  }
  const p = PATHS[op.i]!
  switch (op.op) {
    case "editBlock":
      if (w.exists.has(p) && p !== NO_BLOCK) bump(w.blockV, p)
      return
    case "editContent":
      bump(w.contentV, p)
      return
    case "add":
      w.exists.add(p)
      return
    case "remove":
      if (w.exists.size > 1 && w.exists.delete(p)) w.selected.delete(p)
      return
    case "select":
      if (w.exists.has(p)) w.selected.add(p)
      return
    case "deselect":
      w.selected.delete(p)
      return
  }
}

const repoOf = (w: World): StubRepo => ({
  files: [...w.exists],
  blocks: Object.fromEntries([...w.exists].filter((p) => p !== NO_BLOCK).map((p) => [p, blockText(p, w.blockV.get(p) ?? 0)])),
  legend: `# f=function ⟦L${w.legend}⟧`
})

const inputOf = (w: World, prompt: string): AssemblyInput => ({
  model: "gpt-4o",
  prompt,
  systemPrompt: `system ⟦SYS${w.system}⟧`,
  systemReminder: "REMIND",
  // Selection order is the user's; the pipeline sorts.
  files: [...w.selected].reverse().map((p) => ({ path: p, content: contentText(p, w.contentV.get(p) ?? 0) })),
  history: w.history,
  ...(w.tools === 0 ? {} : { tools: [{ name: "read_file", description: `Read a file (v${w.tools})`, inputSchema: { type: "object" } }] })
})

interface TurnRecord {
  readonly t: number
  readonly result: AssemblyResult
  /** The world this request was assembled from. */
  readonly world: World
  /** The history is not an extension of the previous request's (compaction). */
  readonly compacted: boolean
  readonly ops: ReadonlyArray<Op>
}

type SessionLayer = (tracker: Layer.Layer<Tracker>, index: Layer.Layer<SymbolIndex>) => Layer.Layer<AssemblyServices>

const extendsHistory = (before: ReadonlyArray<Message>, after: ReadonlyArray<Message>): boolean =>
  before.length <= after.length && before.every((m, i) => JSON.stringify(m) === JSON.stringify(after[i]))

/**
 * Run a session, committing each turn's request. With `failures`, a turn with `failed`
 * ops is preceded by a request from a world with those ops applied, never committed.
 */
const runSession = (s: Session, options: { readonly failures?: boolean; readonly layer?: SessionLayer } = {}): ReadonlyArray<TurnRecord> => {
  let repo: StubRepo = { files: [], blocks: {} }
  const place = (key: string): CachedTier => s.placement[PATHS.indexOf(key.slice("symbol:".length))] ?? "L3"
  const layer = (options.layer ?? journalTestLayer)(countingTracker(place), stubSymbolIndex(() => repo))
  return Effect.runSync(
    Effect.gen(function* () {
      const world = initialWorld(s)
      const out: Array<TurnRecord> = []
      let before: ReadonlyArray<Message> = []
      for (const [t, turn] of s.turns.entries()) {
        if (options.failures === true && turn.failed !== undefined) {
          const other = cloneWorld(world)
          for (const op of turn.failed) applyOp(other, op, `failed ${t}`)
          repo = repoOf(other)
          yield* assemble(inputOf(other, `failed ⟦F${t}⟧`))
        }
        for (const op of turn.ops) applyOp(world, op, `${t}`)
        repo = repoOf(world)
        const result = yield* assemble(inputOf(world, question(t)))
        yield* result.commit
        out.push({ t, result, world: cloneWorld(world), compacted: !extendsHistory(before, world.history), ops: turn.ops })
        before = world.history
        world.history = [
          ...world.history,
          { role: "user", content: question(t) },
          { role: "assistant", content: `answer ⟦A${t}⟧` },
          ...historyOf(turn.steps, { message: 1000 * (t + 1), call: 1000 * (t + 1) })
        ]
      }
      return out
    }).pipe(Effect.provide(layer))
  )
}

/**
 * A file's symbol block as the model reads the request: its latest full entry with the
 * symbol diff after it, if any, applied (a diff is against the latest full entry).
 */
const modelView = (all: string, p: string): string | undefined => {
  const entryAt = (at: number, header: string): string => {
    const end = all.indexOf("\n\n", at)
    return all.slice(at + 1 + header.length, end < 0 ? undefined : end)
  }
  const full = all.lastIndexOf(`\n${p}:\n`)
  if (full < 0) return undefined
  const block = `${p}:\n${entryAt(full, `${p}:\n`)}`
  const diff = all.lastIndexOf(`\n${p} (diff):\n`)
  return diff < full ? block : applyHunks(block, entryAt(diff, `${p} (diff):\n`))
}

const isHistory = (m: Message): boolean => /⟦(Q|A|H|R)/.test(JSON.stringify(m.content))

/** Property 4: everything current is in the request, and is the last word on its subject. */
const checkNothingLost = ({ t, result: r, world: w }: TurnRecord): void => {
  const all = `\n${r.request.messages.map(textOf).join("\n\n")}`
  const active = tierMessages(r, "active").map(textOf).join("\n\n")
  for (const p of PATHS) {
    // Symbol entries: a block (⟦S:p:vN⟧) or a deletion notice.
    const entries = [...all.matchAll(new RegExp(`⟦S:${escape(p)}:v(\\d+)⟧|\\n${escape(p)}: \\(deleted\\)`, "g"))]
    const last = entries.at(-1)
    if (w.exists.has(p) && !w.selected.has(p) && p !== NO_BLOCK) {
      expect(last?.[1], `turn ${t}: last symbol entry of ${p}`).toBe(String(w.blockV.get(p) ?? 0))
      expect(modelView(all, p), `turn ${t}: ${p} as the model reads it`).toBe(blockText(p, w.blockV.get(p) ?? 0).trimEnd())
    } else if (!w.exists.has(p)) {
      expect(last === undefined || last[1] === undefined, `turn ${t}: ${p} is deleted, yet its last entry is a block`).toBe(true)
    }
    expect(active, `turn ${t}: symbols in the active block`).not.toContain(`⟦S:${p}:`)
    if (w.selected.has(p)) {
      const v = String(w.contentV.get(p) ?? 0)
      const copies = [...all.matchAll(new RegExp(`⟦C:${escape(p)}:v(\\d+)⟧`, "g"))]
      expect(copies.at(-1)?.[1], `turn ${t}: last copy of ${p}`).toBe(v)
      expect(all).toContain(`\n${p}\n\`\`\`\n${contentText(p, Number(v))}\n\`\`\``)
    }
  }
  // The Working Files hold selected files' current contents only, which no cached tier
  // shows; in an agent's loop (tools offered, or tool exchanges in the conversation) none:
  // a file enters the journal at once.
  const cached = `\n${r.request.blocks.filter((b) => b.tier !== "active").flatMap((b) => b.messages).map(textOf).join("\n\n")}`
  for (const m of active.matchAll(/⟦C:([^:⟧]+):v(\d+)⟧/g)) {
    expect(w.selected.has(m[1]!), `turn ${t}: ${m[1]} in Working Files is not selected`).toBe(true)
    expect(m[2]).toBe(String(w.contentV.get(m[1]!) ?? 0))
    expect(cached, `turn ${t}: ${m[1]} in Working Files and in the prefix`).not.toContain(m[0])
    expect(w.tools > 0 || w.history.some((h) => h.role === "tool"), `turn ${t}: ${m[1]} in Working Files of an agent's request`).toBe(false)
  }
  // History: all of it, in order, in L3 only; the active block holds the prompt.
  expect(tierMessages(r, "L3").filter(isHistory), `turn ${t}: history in L3`).toEqual(w.history)
  for (const tier of ["L0", "L1", "L2"] as const) expect(tierMessages(r, tier).some(isHistory)).toBe(false)
  expect(tierMessages(r, "active").filter(isHistory).map(textOf)).toEqual([`${question(t)}\n\nREMIND`])
  // Files: the frozen tree (in L2) with the journaled changes applied is the repository now.
  const trees = r.request.messages.map(textOf).filter((m) => m.startsWith(FILE_TREE_HEADER))
  expect(trees).toHaveLength(1)
  expect(tierMessages(r, "L2").map(textOf)).toContain(trees[0])
  const view = new Set(PATHS.filter((p) => trees[0]!.split("\n").includes(p)))
  for (const m of tierMessages(r, "L3").map(textOf)) {
    const at = m.indexOf(FILE_TREE_CHANGES_HEADER)
    if (at < 0) continue
    for (const line of m.slice(at + FILE_TREE_CHANGES_HEADER.length).split("\n")) {
      if (line.startsWith("+ ")) view.add(line.slice(2))
      else if (line.startsWith("- ")) view.delete(line.slice(2))
    }
  }
  expect([...view].sort(), `turn ${t}: files the model was told exist`).toEqual([...w.exists].sort())
  // A tool call and its result stay adjacent.
  expect(pairingProblems(r.request.messages), `turn ${t}: pairing`).toEqual([])
  // The fidelity rule: after the first history message, no synthetic assistant turn.
  const firstHistory = r.request.messages.findIndex(isHistory)
  const late = firstHistory < 0 ? [] : r.request.messages.slice(firstHistory).filter((m) => m.role === "assistant" && !isHistory(m))
  expect(late, `turn ${t}: synthetic turns after the conversation started`).toEqual([])
  // Accounting: the report counts the request, the summary counts the journal.
  const toolTokens = r.request.tools === undefined ? 0 : charCounter().count(JSON.stringify(r.request.tools))
  expect(r.report.totalTokens).toBe(charCounter().countMessages(r.request.messages) + toolTokens)
  expect(r.journal?.journalTokens).toBe(r.request.blocks.find((b) => b.tier === "L3")?.tokens ?? 0)
}

/** Properties 2 and 3, and the rebuild reasons: `prev` and `cur` are consecutive committed requests. */
const checkStep = (prev: TurnRecord, cur: TurnRecord, staleSinceRebuild: boolean): void => {
  const reason = cur.result.journal?.rebuild
  const t = cur.t
  const system = cur.ops.some((o) => o.op === "system")
  const legend = cur.ops.some((o) => o.op === "legend")
  const tools = cur.ops.some((o) => o.op === "tools")
  const allowed: ReadonlyArray<RebuildReason> = system
    ? ["system prompt changed"]
    : tools
    ? ["tools changed"]
    : legend
    ? ["legend changed"]
    : cur.compacted
    ? ["history rewritten", "history rewritten, refrozen", "stale copies"]
    : [undefined, "stale copies"]
  expect(allowed, `turn ${t}: rebuild reason ${String(reason)}`).toContain(reason)
  if (reason === "stale copies") expect(staleSinceRebuild, `turn ${t}: stale-copies rebuild without stale copies`).toBe(true)
  if (reason === undefined || reason === "history rewritten") {
    for (const tier of ["L0", "L1", "L2"] as const) expect(tierJson(cur.result, tier), `turn ${t}: ${tier} frozen`).toBe(tierJson(prev.result, tier))
  }
  const before = tierMessages(prev.result, "L3")
  const after = tierMessages(cur.result, "L3")
  if (reason === undefined) {
    // Append-only: the old journal, the new history, at most one update pair.
    expect(JSON.stringify(after.slice(0, before.length)), `turn ${t}: journal is append-only`).toBe(JSON.stringify(before))
    const fresh = cur.world.history.slice(prev.world.history.length)
    const appended = after.slice(before.length)
    expect(appended.slice(0, fresh.length)).toEqual(fresh)
    const rest = appended.slice(fresh.length)
    expect(rest.length === 0 || isUpdatePair(rest), `turn ${t}: appended ${JSON.stringify(rest)}`).toBe(true)
    expect(cur.result.journal?.staleTokens).toBeGreaterThanOrEqual(prev.result.journal?.staleTokens ?? 0)
  } else if (reason === "history rewritten") {
    expect(after.slice(0, cur.world.history.length)).toEqual(cur.world.history)
    const rest = after.slice(cur.world.history.length)
    expect(rest.length === 0 || isUpdatePair(rest)).toBe(true)
  } else {
    // A full rebuild shows everything once: the journal is the history, then the selected
    // files no frozen tier shows, if any are journaled.
    expect(after.slice(0, cur.world.history.length)).toEqual(cur.world.history)
    expect(isFilesUpdate(after.slice(cur.world.history.length)), `turn ${t}: after a rebuild`).toBe(true)
    expect(cur.result.journal?.staleTokens).toBe(0)
  }
}

const checkSession = (records: ReadonlyArray<TurnRecord>, seen?: Set<RebuildReason>): void => {
  let staleSinceRebuild = false
  records.forEach((cur, i) => {
    const reason = cur.result.journal?.rebuild
    seen?.add(reason)
    checkNothingLost(cur)
    const prev = records[i - 1]
    if (prev === undefined) {
      expect(reason).toBe("first request")
      const journal = tierMessages(cur.result, "L3")
      expect(journal.slice(0, cur.world.history.length)).toEqual(cur.world.history)
      expect(isFilesUpdate(journal.slice(cur.world.history.length))).toBe(true)
    } else checkStep(prev, cur, staleSinceRebuild)
    if (reason !== undefined && reason !== "history rewritten") staleSinceRebuild = false
    if ((cur.result.journal?.staleTokens ?? 0) > 0) staleSinceRebuild = true
  })
}

describe("journal layout: random sessions (property tests)", () => {
  vitestIt("frozen L0-L2 between rebuilds, an append-only journal, nothing lost, the right rebuild reasons", () => {
    const seen = new Set<RebuildReason>()
    let diffs = 0
    fc.assert(
      fc.property(sessionArb, (s) => {
        const records = runSession(s)
        checkSession(records, seen)
        diffs += records.filter((r) => bodyOf(r.result).includes(" (diff):")).length
      }),
      { numRuns: 200 }
    )
    // Long blocks make symbol diffs, which the model view above checks.
    expect(diffs).toBeGreaterThan(0)
    // The generator reaches every reason but the rent-or-buy one (its own example above).
    for (const reason of ["first request", "history rewritten", "legend changed", "system prompt changed", "tools changed", undefined]) expect([...seen]).toContain(reason)
  }, 120_000) // 200 random sessions: ~3 s alone, much longer beside the other packages' tests on 2 cores

  vitestIt("determinism: the same session gives byte-identical request bodies in a fresh pipeline", () => {
    fc.assert(
      fc.property(sessionArb, (s) => {
        const one = runSession(s).map((r) => bodyOf(r.result))
        const two = runSession(structuredClone(s)).map((r) => bodyOf(r.result))
        expect(two).toEqual(one)
      }),
      { numRuns: 100 }
    )
  }, 120_000) // property runs: seconds alone, much longer beside the other suites on 2 cores

  vitestIt("a failed (uncommitted) request leaves the memory as it was: the next request is the one it would have been", () => {
    fc.assert(
      fc.property(sessionArb, (s) => {
        const clean = runSession(s).map((r) => bodyOf(r.result))
        const interrupted = runSession(s, { failures: true }).map((r) => bodyOf(r.result))
        expect(interrupted).toEqual(clean)
      }),
      { numRuns: 100 }
    )
  }, 120_000) // property runs: seconds alone, much longer beside the other suites on 2 cores

  vitestIt("seed layout: the layoutPlan stage plans nothing (same bytes as with the stage replaced by a no-op)", () => {
    const seed: SessionLayer = (tracker, index) => testLayer(tracker, index)
    const noJournal: SessionLayer = (tracker, index) =>
      Layer.mergeAll(testLayer(tracker, index), Layer.succeed(LayoutPlanStage, { name: "layoutPlan", run: (state) => Effect.succeed(state) }))
    fc.assert(
      fc.property(sessionArb, (s) => {
        const withStage = runSession(s, { layer: seed })
        const without = runSession(s, { layer: noJournal })
        expect(withStage.every((r) => r.result.journal === undefined)).toBe(true)
        expect(withStage.map((r) => bodyOf(r.result))).toEqual(without.map((r) => bodyOf(r.result)))
        for (const r of withStage) expect(bodyOf(r.result)).not.toContain("(updated)")
      }),
      { numRuns: 60 }
    )
  }, 120_000) // property runs: seconds alone, much longer beside the other suites on 2 cores

  vitestIt("journal layout without a plan (the layoutPlan stage replaced by a no-op): the tiered layout's bytes", () => {
    const seed: SessionLayer = (tracker, index) => testLayer(tracker, index)
    const unplanned: SessionLayer = (tracker, index) =>
      Layer.mergeAll(journalTestLayer(tracker, index), Layer.succeed(LayoutPlanStage, { name: "layoutPlan", run: (state) => Effect.succeed(state) }))
    fc.assert(
      fc.property(sessionArb, (s) => {
        const planned = runSession(s)
        const without = runSession(s, { layer: unplanned })
        expect(without.every((r) => r.result.journal === undefined)).toBe(true)
        expect(without.map((r) => bodyOf(r.result))).toEqual(runSession(s, { layer: seed }).map((r) => bodyOf(r.result)))
        // The sessions make requests a plan changes (at least the first, whose history is journaled).
        expect(planned.map((r) => bodyOf(r.result))).not.toEqual(without.map((r) => bodyOf(r.result)))
      }),
      { numRuns: 30 }
    )
  }, 120_000) // property runs: seconds alone, much longer beside the other suites on 2 cores
})

describe("journal layout: cache expiry", () => {
  it.effect("a request after the provider's cache expired rebuilds (the whole prefix is written anyway)", () => {
    const { repo, layer } = fixedSession()
    return Effect.gen(function* () {
      const run = (turn: number) =>
        Effect.gen(function* () {
          const r = yield* assemble({ ...base, history: exchanges(turn) })
          yield* r.commit
          return r
        })
      expect((yield* run(0)).journal?.rebuild).toBe("first request")
      // An edit leaves a superseded copy behind.
      repo.current = withBlock(repo.current, "src/b.ts", "src/b.ts:\n  f b()\n  f b2()\n")
      yield* TestClock.adjust(60_000)
      const appended = yield* run(1)
      expect(appended.journal?.rebuild).toBeUndefined()
      expect(appended.journal?.staleTokens).toBeGreaterThan(0)
      // Just under five minutes later: still cached, still appending.
      yield* TestClock.adjust(5 * 60 * 1000)
      expect((yield* run(2)).journal?.rebuild).toBeUndefined()
      // Past five minutes: nothing is cached any more, so the tiers are frozen afresh.
      yield* TestClock.adjust(5 * 60 * 1000 + 1)
      const expired = yield* run(3)
      expect(expired.journal).toMatchObject({ rebuild: "cache expired", staleTokens: 0 })
      expect(textOf(tierMessages(expired, "L1")[0]!)).toContain("f b2()")
      // Before the long gap the breakpoints asked for the default lifetime; after it, for 1 h
      // (AdaptiveTtl), which then holds while requests append, and caches outlive 5 minutes.
      expect(appended.request.breakpoints.every((b) => b.ttl === undefined)).toBe(true)
      expect(expired.request.breakpoints.length).toBeGreaterThan(0)
      expect(expired.request.breakpoints.every((b) => b.ttl === "1h")).toBe(true)
      yield* TestClock.adjust(60_000)
      const quick = yield* run(4)
      expect(quick.journal?.rebuild).toBeUndefined()
      expect(quick.request.breakpoints.every((b) => b.ttl === "1h")).toBe(true)
      yield* TestClock.adjust(30 * 60 * 1000)
      expect((yield* run(5)).journal?.rebuild).toBeUndefined()
      yield* TestClock.adjust(60 * 60 * 1000 + 1)
      expect((yield* run(6)).journal?.rebuild).toBe("cache expired")
    }).pipe(Effect.provide(layer), Effect.provide(TestClock.layer()))
  })

  it.effect("without AdaptiveTtl a long gap rebuilds but asks for no longer lifetime", () => {
    const { layer } = fixedSession()
    return Effect.gen(function* () {
      yield* (yield* assemble(base)).commit
      yield* TestClock.adjust(10 * 60 * 1000)
      const late = yield* assemble({ ...base, history: exchanges(1) })
      expect(late.journal?.rebuild).toBe("cache expired")
      expect(late.request.breakpoints.every((b) => b.ttl === undefined)).toBe(true)
    }).pipe(Effect.provide(Layer.mergeAll(layer, Layer.succeed(AdaptiveTtl, false))), Effect.provide(TestClock.layer()))
  })

  it.effect("CacheExpiryMillis sets the lifetime (Infinity: never assume expiry)", () => {
    const { layer } = fixedSession()
    return Effect.gen(function* () {
      const first = yield* assemble(base)
      yield* first.commit
      yield* TestClock.adjust(24 * 60 * 60 * 1000)
      expect((yield* assemble({ ...base, history: exchanges(1) })).journal?.rebuild).toBeUndefined()
    }).pipe(Effect.provide(Layer.mergeAll(layer, Layer.succeed(CacheExpiryMillis, Infinity))), Effect.provide(TestClock.layer()))
  })
})
