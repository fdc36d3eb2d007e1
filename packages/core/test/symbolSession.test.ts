// The symbolData stage's session cache: patched from the index's deltas, it must hold
// exactly what a cache built from scratch on the same snapshot holds (entries, ranking,
// budget cut), and what `mapRanking` and `cutMap` decide; unchanged entries keep their
// objects, so their bytes are never re-read.
import fc from "fast-check"
import { describe, expect } from "vitest"
import { cutMap, mapRanking, sha256, type SymbolMapSnapshot } from "../src/index.ts"
import { SymbolSession } from "../src/pipeline/symbolMap/internal/symbolSession.ts"
import { it } from "@strata/test-support"
import { charCounter } from "./pipeline-stubs.ts"

/** A repository state: per path, the block's body and its incoming reference count. */
type Files = ReadonlyMap<string, { readonly body: string; readonly refs: number }>

const SEPARATOR = 2

/** A snapshot as an index renders it: the count is part of the block, so a count change is a block change. */
const snapshotOf = (files: Files, previous?: { readonly files: Files; readonly revision: object; readonly extra: ReadonlyArray<string> }): SymbolMapSnapshot => {
  const paths = [...files.keys()].sort()
  const block = (p: string) => {
    const f = files.get(p)
    return f === undefined ? undefined : `${p}: ←${f.refs}\n${f.body}\n`
  }
  const changed = new Set<string>()
  if (previous !== undefined) {
    const before = (p: string) => {
      const f = previous.files.get(p)
      return f === undefined ? undefined : `${p}: ←${f.refs}\n${f.body}\n`
    }
    for (const p of new Set([...paths, ...previous.files.keys()])) if (block(p) !== before(p)) changed.add(p)
    // A delta may name more paths than changed, never fewer.
    for (const p of previous.extra) changed.add(p)
  }
  return {
    files: paths,
    symbolFiles: paths,
    block,
    blockHash: (p) => {
      const b = block(p)
      return b === undefined ? undefined : sha256(b)
    },
    legend: "",
    fileTree: "",
    fileTreeHash: sha256(""),
    components: [],
    refCounts: new Map(paths.map((p) => [p, files.get(p)!.refs])),
    problems: [],
    revision: {},
    ...(previous === undefined ? {} : { delta: { from: previous.revision, paths: changed } })
  }
}

const path = fc.constantFrom(...Array.from({ length: 24 }, (_, i) => `src/m${i.toString().padStart(2, "0")}.ts`))
const file = fc.record({ body: fc.string({ minLength: 1, maxLength: 40 }).map((s) => `f ${s.replace(/\n/g, " ")}`), refs: fc.nat({ max: 4 }) })
const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("edit" as const), path, file }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("count" as const), path, refs: fc.nat({ max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("add" as const), path, file }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), path }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("extra" as const), path }) }
)

describe("SymbolSession", () => {
  it("patched from deltas, it holds what a fresh cache, mapRanking and cutMap give; unchanged entries keep their objects", () => {
    fc.assert(fc.property(
    fc.dictionary(path, file, { minKeys: 1 }),
    fc.array(fc.array(step, { maxLength: 4 }), { minLength: 1, maxLength: 12 }),
    fc.array(fc.nat({ max: 400 }), { minLength: 1, maxLength: 12 }),
    (initial, turns, rooms) => {
    const counter = charCounter()
    const session = new SymbolSession()
    session.use(counter)
    let files: Files = new Map(Object.entries(initial))
    let map = snapshotOf(files)
    session.update(map, counter)
    turns.forEach((changes, turn) => {
      const next = new Map(files)
      const extra: Array<string> = []
      for (const c of changes) {
        const current = next.get(c.path)
        if (c.kind === "edit" && current !== undefined) next.set(c.path, c.file)
        else if (c.kind === "count" && current !== undefined) next.set(c.path, { ...current, refs: c.refs })
        else if (c.kind === "add") next.set(c.path, c.file)
        else if (c.kind === "remove" && next.size > 1) next.delete(c.path)
        else if (c.kind === "extra") extra.push(c.path)
      }
      const before = new Map(session.entries.map((e) => [e.path, e]))
      // Ask for the ranking and a cut on some turns only, so both are patched and built lazily.
      if (turn % 2 === 0) session.cut(rooms[turn % rooms.length]!, SEPARATOR)
      const nextMap = snapshotOf(next, { files, revision: map.revision!, extra })
      files = next
      map = nextMap
      session.update(map, counter)

      const fresh = new SymbolSession()
      fresh.use(counter)
      fresh.update({ ...map, delta: undefined }, counter)
      const view = (s: SymbolSession) => s.entries.map((e) => ({ path: e.path, hash: e.hash, text: e.text, tokens: e.tokens }))
      expect(view(session)).toEqual(view(fresh))
      expect(session.blockTokens).toBe(fresh.blockTokens)
      for (const e of session.entries) if (before.get(e.path)?.hash === e.hash) expect(e).toBe(before.get(e.path))

      expect(session.ranked()).toEqual(mapRanking(map))
      const room = rooms[(turn + 1) % rooms.length]!
      const blocks = new Map(session.entries.map((e) => [e.path, e.tokens + SEPARATOR]))
      // cutMap's greedy fill, with no legend and no tree: the whole budget is the room.
      const reference = cutMap({ blocks, ranked: () => mapRanking(map), legendTokens: 0, treeTokens: 0, budgetTokens: room })
      const kept = session.cut(room, SEPARATOR)
      const expected = reference.files === undefined ? session.entries : session.entries.filter((e) => reference.files!.has(e.path))
      expect(kept.kept.map((e) => e.path)).toEqual(expected.map((e) => e.path))
      expect(kept.tokens).toBe(expected.reduce((n, e) => n + e.tokens + SEPARATOR, 0))
      expect(fresh.cut(room, SEPARATOR).kept.map((e) => e.path)).toEqual(expected.map((e) => e.path))
    })
  }), { numRuns: 200 })
  })

  it("the same snapshot again costs nothing: the entries and the cut are the previous objects", () => {
    const counter = charCounter()
    const session = new SymbolSession()
    session.use(counter)
    const map = snapshotOf(new Map([["a.ts", { body: "f a()", refs: 1 }], ["b.ts", { body: "f b()", refs: 0 }]]))
    session.update(map, counter)
    const entries = session.entries
    const cut = session.cut(10, SEPARATOR)
    session.update(map, counter)
    expect(session.entries).toBe(entries)
    expect(session.cut(10, SEPARATOR)).toBe(cut)
  })
})
