import { appendFile, mkdtemp, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { parseSessionText, SessionStore } from "../src/index.ts"
import { it } from "./support.ts"

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

describe("parseSessionText", () => {
  it("skips corrupt lines in the middle and says which", () => {
    const text = '{"t":1,"message":{"role":"user","content":"a"}}\ngarbage\n{"t":2,"message":{"role":"robot","content":"b"}}\n{"t":3,"message":{"role":"assistant","content":"c"}}\n'
    const parsed = parseSessionText(text)
    expect(parsed.messages).toEqual([{ role: "user", content: "a" }, { role: "assistant", content: "c" }])
    expect(parsed.warnings).toEqual(["line 2 is not valid JSON; skipped", "line 3 is not a session message; skipped"])
  })
})
