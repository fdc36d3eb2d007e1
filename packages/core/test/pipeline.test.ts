// The assembly pipeline with stub Tracker / SymbolIndex layers (fixed tier assignments):
// tiered prompt assembly (docs/pipeline.md), tracker commits, fallbacks, stage
// replacement and extra stages, and byte stability across turns.
import { Effect, Exit, Layer, Ref } from "effect"
import { describe, expect } from "vitest"
import {
  assemble,
  assembleMessages,
  assembleTieredMessages,
  decodeAssemblyInput,
  extraStages,
  FileTiersStage,
  fileTiers,
  formatFiles,
  insertPart,
  isLayoutMode,
  LAYOUT_MODES,
  LAYOUTS,
  LayoutMode,
  LayoutPlanStage,
  neutralRequest,
  Placement,
  Pipeline,
  Tokenizer,
  Tracker,
  userAckPart,
  counted,
  type AssemblyInput,
  type Layout,
  type SeedMessage,
  type Stage,
  type TierChange,
  sha256
} from "../src/effect.ts"
import { it } from "@strata/test-support"
import { charCounter, newLog, stubSymbolIndex, stubTracker, stubTrackerLayer, testLayer, type StubRepo, type StubTrackerOptions } from "./pipeline-stubs.ts"

const repo: StubRepo = {
  files: ["src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts", "README.md"],
  blocks: {
    "src/a.ts": "src/a.ts:\n  f a()\n",
    "src/b.ts": "src/b.ts:\n  f b()\n",
    "src/c.ts": "src/c.ts:\n  f c()\n",
    "src/d.ts": "src/d.ts:\n  f d()\n"
  },
  legend: "# f=function",
  components: [["src/a.ts", "src/b.ts"]],
  refCounts: { "src/a.ts": 2, "src/b.ts": 1 }
}

const base: AssemblyInput = {
  model: "gpt-4o",
  prompt: "Do it",
  systemPrompt: "SYS",
  systemReminder: "REMIND",
  files: [],
  history: []
}

const seed = (options: StubTrackerOptions, r: StubRepo = repo) => testLayer(stubTrackerLayer(options), stubSymbolIndex(() => r))

const messagesOf = (body: unknown): ReadonlyArray<SeedMessage> => (body as { messages: ReadonlyArray<SeedMessage> }).messages
const textOf = (m: SeedMessage | undefined): string =>
  m === undefined ? "" : typeof m.content === "string" ? m.content : m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
const isMarked = (m: SeedMessage | undefined): boolean =>
  m !== undefined && typeof m.content !== "string" && m.content.some((b) => "cache_control" in b)
const allText = (ms: ReadonlyArray<SeedMessage>) => ms.map(textOf).join("\n<>\n")
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1

describe("prompt assembly (tiered)", () => {
  it.effect("graduated files are excluded from Working Files; active files stay", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, files: [{ path: "src/a.ts", content: "AAA" }, { path: "src/b.ts", content: "BBB" }] })
      const ms = messagesOf(r.placed.body)
      const working = ms.find((m) => textOf(m).startsWith("# Working Files"))
      expect(textOf(working)).toBe("# Working Files\n\nHere are the files:\n\nsrc/b.ts\n```\nBBB\n```")
      const l1 = ms.find((m) => textOf(m).includes("# Reference Files\n\n"))
      expect(textOf(l1)).toContain("src/a.ts\n```\nAAA\n```")
      expect(count(allText(ms), "AAA")).toBe(1)
    }).pipe(Effect.provide(seed({ assignments: { "file:src/a.ts": "L1" } }))))

  it.effect("all files graduated: no Working Files section", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, files: [{ path: "src/a.ts", content: "AAA" }] })
      expect(allText(messagesOf(r.placed.body))).not.toContain("# Working Files")
      expect(r.report.tiers.L2.files).toBe(1)
    }).pipe(Effect.provide(seed({ assignments: { "file:src/a.ts": "L2" } }))))

  it.effect("L0 system message carries cache_control when L0 has no history", () =>
    Effect.gen(function* () {
      const ms = messagesOf((yield* assemble(base)).placed.body)
      expect(ms[0]?.role).toBe("system")
      expect(isMarked(ms[0])).toBe(true)
    }).pipe(Effect.provide(seed({}))))

  it.effect("L0 with history: cache_control on the last L0 history message, not the system message", () =>
    Effect.gen(function* () {
      const history = [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1" }, { role: "assistant", content: "a1" }] as const
      const ms = messagesOf((yield* assemble({ ...base, history })).placed.body)
      expect(isMarked(ms[0])).toBe(false)
      expect(ms[1]).toEqual({ role: "user", content: "q0" })
      expect(ms[2]).toEqual({ role: "assistant", content: [{ type: "text", text: "a0", cache_control: { type: "ephemeral" } }] })
      expect(textOf(ms.at(-3))).toBe("q1")
    }).pipe(Effect.provide(seed({ assignments: { "history:0": "L0", "history:1": "L0" } }))))

  it.effect("an L1 block is a user/assistant pair with the symbol content", () =>
    Effect.gen(function* () {
      const ms = messagesOf((yield* assemble(base)).placed.body)
      expect(ms[1]).toEqual({ role: "user", content: "# Repository Structure (continued)\n\nsrc/a.ts:\n  f a()\n\nsrc/b.ts:\n  f b()" })
      expect(ms[2]).toEqual({ role: "assistant", content: [{ type: "text", text: "Ok.", cache_control: { type: "ephemeral" } }] })
    }).pipe(Effect.provide(seed({ assignments: { "symbol:src/a.ts": "L1", "symbol:src/b.ts": "L1", "symbol:src/c.ts": "L3", "symbol:src/d.ts": "L3" } }))))

  it.effect("empty tiers produce no messages and are counted", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, useRepoMap: false })
      expect(r.request.blocks.map((b) => b.tier)).toEqual(["L0", "active"])
      expect(r.report.emptyTiers).toBe(3)
      expect(r.request.breakpoints.map((b) => b.tier)).toEqual(["L0"])
    }).pipe(Effect.provide(seed({}))))

  it.effect("tree, active history, URLs, active files and prompt come in order after the cached tiers (what must come last rides after the conversation)", () =>
    Effect.gen(function* () {
      const r = yield* assemble({
        ...base,
        files: [{ path: "src/x.ts", content: "X" }],
        urls: [{ url: "https://a", content: "URL-A" }],
        history: [{ role: "user", content: "old q" }, { role: "assistant", content: "old a" }, { role: "user", content: "new q" }, { role: "assistant", content: "new a" }]
      })
      const texts = messagesOf(r.placed.body).map(textOf)
      const at = (prefix: string) => texts.findIndex((t) => t.startsWith(prefix))
      const order = [
        at("SYS"),
        at("old q"),
        at("# Repository Structure (continued)"),
        at("# Repository Files"),
        at("new q"),
        at("# URL Context"),
        at("# Working Files"),
        at("Do it")
      ]
      expect(order.every((i) => i >= 0)).toBe(true)
      expect([...order].sort((a, b) => a - b)).toEqual(order)
      expect(texts.at(-1)).toBe("Do it\n\nREMIND")
      expect(texts[at("new q") + 1]).toBe("new a")
    }).pipe(Effect.provide(seed({ assignments: { "history:0": "L1", "history:1": "L1" } }))))

  it.effect("multi-tier order L0 < L1 < L3 < tree < active < prompt, one breakpoint per non-empty cached tier", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, files: [{ path: "src/z.ts", content: "Z" }] })
      expect(r.request.blocks.map((b) => b.tier)).toEqual(["L0", "L1", "L3", "active"])
      const ms = messagesOf(r.placed.body)
      const marked = ms.flatMap((m, i) => (isMarked(m) ? [i] : []))
      expect(marked).toEqual(r.request.breakpoints.map((b) => b.messageIndex))
      expect(r.request.breakpoints.map((b) => b.tier)).toEqual(["L0", "L1", "L3"])
      const texts = ms.map(textOf)
      expect(texts.findIndex((t) => t.includes("f a()"))).toBeLessThan(texts.findIndex((t) => t.includes("f c()")))
      expect(texts.findIndex((t) => t.includes("f c()"))).toBeLessThan(texts.findIndex((t) => t.startsWith("# Repository Files")))
      expect(texts.findIndex((t) => t.startsWith("# Repository Files"))).toBeLessThan(texts.findIndex((t) => t.startsWith("# Working Files")))
    }).pipe(Effect.provide(seed({ assignments: { "symbol:src/a.ts": "L1", "symbol:src/b.ts": "L1" } }))))
})

describe("the pipeline's layout rules", () => {
  it.effect("matches assembleTieredMessages on the same tiered content", () =>
    Effect.gen(function* () {
      const input: AssemblyInput = {
        ...base,
        files: [{ path: "src/a.ts", content: "AAA" }, { path: "src/x.ts", content: "XXX" }],
        history: [{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }, { role: "user", content: "q1" }, { role: "assistant", content: "a1" }],
        urls: [{ url: "u", content: "URL" }],
        review: "REVIEW"
      }
      const r = yield* assemble(input)
      const expected = assembleTieredMessages({
        systemPrompt: "SYS",
        symbolLegend: "# f=function",
        tieredContent: {
          L0: { symbols: "src/d.ts:\n  f d()" },
          L1: { files: formatFiles([{ path: "src/a.ts", content: "AAA" }]), history: input.history?.slice(0, 2) ?? [] },
          L3: { symbols: "src/b.ts:\n  f b()\n\nsrc/c.ts:\n  f c()" }
        },
        fileTree: "# File Tree (5 files)\n\nREADME.md\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts\nsrc/d.ts",
        urlContext: ["URL"],
        reviewContext: "REVIEW",
        activeFiles: formatFiles([{ path: "src/x.ts", content: "XXX" }]),
        activeHistory: input.history?.slice(2) ?? [],
        prompt: "Do it",
        systemReminder: "REMIND"
      })
      expect(JSON.stringify(messagesOf(r.placed.body))).toBe(JSON.stringify(expected))
    }).pipe(Effect.provide(seed({ assignments: { "symbol:src/d.ts": "L0", "file:src/a.ts": "L1", "history:0": "L1", "history:1": "L1", "symbol:src/b.ts": "active" } }))))

  it.effect("files in context have no symbol block anywhere; untracked symbols render with L3", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, files: [{ path: "src/a.ts", content: "A" }, { path: "src/c.ts", content: "C" }] })
      const text = allText(messagesOf(r.placed.body))
      expect(text).not.toContain("f a()")
      expect(text).not.toContain("f c()")
      expect(count(text, "f b()")).toBe(1)
      expect(count(text, "f d()")).toBe(1)
      expect(r.report.tiers.L3.symbols).toBe(1)
      expect(r.report.tiers.L2.symbols).toBe(1)
    }).pipe(Effect.provide(seed({ assignments: { "symbol:src/a.ts": "L1", "symbol:src/b.ts": "L2", "symbol:src/c.ts": "L2" } }))))

  it.effect("a changed item renders where its change sends it: files in Working Files, symbols with L3", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, files: [{ path: "src/x.ts", content: "NEW" }, { path: "src/y.ts", content: "SAME" }] })
      const ms = messagesOf(r.placed.body)
      const working = textOf(ms.find((m) => textOf(m).startsWith("# Working Files")))
      expect(working).toContain("NEW")
      expect(working).not.toContain("SAME")
      expect(textOf(ms.find((m) => textOf(m).includes("# Reference Files\n\n")))).toContain("SAME")
      // symbol:src/a.ts changed since it reached L0: it leaves L0 now, rendering with L3.
      expect(textOf(ms[0])).not.toContain("f a()")
      expect(textOf(ms.find((m) => textOf(m).startsWith("# Repository Structure (continued)")))).toContain("f a()")
      expect(r.report.tiers.L0.symbols).toBe(1)
    }).pipe(Effect.provide(seed({
      assignments: { "file:src/x.ts": "L1", "file:src/y.ts": "L1", "symbol:src/a.ts": "L0", "symbol:src/b.ts": "L0" },
      hashes: { "file:src/x.ts": sha256("OLD"), "file:src/y.ts": sha256("SAME"), "symbol:src/a.ts": "stale-hash", "symbol:src/b.ts": sha256("src/b.ts:\n  f b()\n") }
    }))))

  it.effect("normalizes and sorts selected files, so selection order does not change bytes", () =>
    Effect.gen(function* () {
      const one = yield* assemble({ ...base, files: [{ path: "./src\\b.ts", content: "B" }, { path: "src/a.ts", content: "A" }] })
      const two = yield* assemble({ ...base, files: [{ path: "src/a.ts", content: "A" }, { path: "src/b.ts", content: "B" }] })
      expect(JSON.stringify(one.placed.body)).toBe(JSON.stringify(two.placed.body))
    }).pipe(Effect.provide(seed({}))))

  it.effect("more than 3 URLs are cut to 3 with a warning", () =>
    Effect.gen(function* () {
      const urls = ["1", "2", "3", "4", "5"].map((n) => ({ url: `https://x/${n}`, content: `U${n}` }))
      const r = yield* assemble({ ...base, urls })
      const text = allText(messagesOf(r.placed.body))
      expect(text).toContain("U1\n---\nU2\n---\nU3")
      expect(text).not.toContain("U4")
      expect(r.warnings.join("\n")).toMatch(/5 URLs were given; only the first 3/)
    }).pipe(Effect.provide(seed({}))))

  it.effect("images become parts of the prompt message", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, images: ["data:image/png;base64,AA", { type: "image", url: "https://img" }] })
      expect(messagesOf(r.placed.body).at(-1)).toEqual({
        role: "user",
        content: [
          { type: "text", text: "Do it\n\nREMIND" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
          { type: "image_url", image_url: { url: "https://img" } }
        ]
      })
    }).pipe(Effect.provide(seed({}))))

  it.effect("without a SymbolIndex the request has no map, with a warning; useRepoMap: false silences it", () =>
    Effect.gen(function* () {
      const r = yield* assemble(base)
      expect(r.warnings.join()).toMatch(/No SymbolIndex/)
      expect(r.report.tiers.L0.hasLegend).toBe(false)
      const quiet = yield* assemble({ ...base, useRepoMap: false })
      expect(quiet.warnings).toEqual([])
    }).pipe(Effect.provide(testLayer(stubTrackerLayer({})))))

  it.effect("the review context sits between the URL context and the Working Files", () =>
    Effect.gen(function* () {
      const r = yield* assemble({ ...base, review: "DIFF", urls: [{ url: "u", content: "U" }], files: [{ path: "f", content: "F" }] })
      const texts = messagesOf(r.placed.body).map(textOf)
      const review = texts.indexOf("# Code Review Context\n\nDIFF")
      expect(texts[review + 1]).toBe("Ok, I've reviewed the code changes.")
      expect(texts[review - 2]?.startsWith("# URL Context")).toBe(true)
      expect(texts[review + 2]?.startsWith("# Working Files")).toBe(true)
    }).pipe(Effect.provide(seed({}))))
})

describe("input", () => {
  it.effect("untrusted input is decoded; a bad field fails with InvalidInput naming it", () =>
    Effect.gen(function* () {
      const ok = yield* decodeAssemblyInput({ model: "gpt-4o", prompt: "Hi", systemPrompt: "S", files: [{ path: "a.ts", content: "x" }] })
      expect(ok.files).toEqual([{ path: "a.ts", content: "x" }])
      const bad = yield* Effect.flip(decodeAssemblyInput({ model: "gpt-4o", prompt: "Hi", systemPrompt: "S", history: [{ role: "robot", content: "x" }] }))
      expect(bad._tag).toBe("InvalidInput")
      expect(bad.message).toMatch(/history/)
      expect(bad.message).toMatch(/role/)
    }))
})

describe("tracker updates", () => {
  it.effect("the first request places items from the reference graph, uncommitted until commit", () =>
    Effect.gen(function* () {
      const log = newLog()
      const t = yield* stubTracker({
        initialized: false,
        log,
        place: (input) => Object.fromEntries(input.items.map((i) => [i.key, i.key === "symbol:src/a.ts" || i.key === "symbol:src/b.ts" ? "L1" : "L2"]))
      })
      const layer = testLayer(Layer.succeed(Tracker, t.service), stubSymbolIndex(() => repo))
      const r = yield* assemble({ ...base, files: [{ path: "src/d.ts", content: "D" }] }).pipe(Effect.provide(layer))
      expect(log.initialized).toHaveLength(1)
      const init = log.initialized[0]!
      expect(init.items.map((i) => i.key)).toEqual(["symbol:src/a.ts", "symbol:src/b.ts", "symbol:src/c.ts"])
      expect(init.components).toEqual([["symbol:src/a.ts", "symbol:src/b.ts"]])
      expect(init.refCounts).toEqual({ "symbol:src/a.ts": 2, "symbol:src/b.ts": 1, "symbol:src/c.ts": 0 })
      // The placement is used by this very request...
      expect(r.report.tiers.L1.symbols).toBe(2)
      expect(r.report.tiers.L2.symbols).toBe(1)
      expect(r.report.changes.filter((c) => c.from === null)).toHaveLength(3)
      // ...but the tracker holds it only after commit.
      expect((yield* t.service.current).initialized).toBe(false)
      yield* r.commit
      const after = yield* t.service.current
      expect(after.initialized).toBe(true)
      expect(after.tierOf("symbol:src/a.ts")).toBe("L1")
    }))

  it.effect("builds the request's items and commits only on success; a second commit conflicts", () =>
    Effect.gen(function* () {
      const log = newLog()
      const t = yield* stubTracker({ log })
      const layer = testLayer(Layer.succeed(Tracker, t.service), stubSymbolIndex(() => repo))
      const input: AssemblyInput = {
        ...base,
        files: [{ path: "src/a.ts", content: "A" }],
        history: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }],
        urls: [{ url: "https://u", content: "U" }]
      }
      const failed = yield* assemble(input).pipe(Effect.provide(layer))
      // The "provider call" failed: commit is never run.
      expect(yield* Ref.get(t.commits)).toBe(0)
      expect((yield* t.service.current).version).toBe(0)
      const keys = log.updates[0]?.items.map((i) => i.key)
      expect(keys).toEqual([
        "system",
        "symbol:src/a.ts",
        "symbol:src/b.ts",
        "symbol:src/c.ts",
        "symbol:src/d.ts",
        "tree",
        "file:src/a.ts",
        "history:0",
        "history:1",
        "url:https://u"
      ])
      expect(log.updates[0]?.existingFiles?.has("README.md")).toBe(true)
      expect(log.updates[0]?.items.every((i) => i.hash.length === 64 && i.tokens > 0)).toBe(true)
      const ok = yield* assemble(input).pipe(Effect.provide(layer))
      yield* ok.commit
      expect((yield* t.service.current).version).toBe(1)
      const again = yield* Effect.exit(failed.commit)
      expect(Exit.isFailure(again)).toBe(true)
      expect(String(again)).toMatch(/TrackerConflict/)
    }))

  it.effect("reports promotions, demotions and the session's empty tiers (advanced on commit only)", () =>
    Effect.gen(function* () {
      const changes: ReadonlyArray<TierChange> = [
        { key: "symbol:src/a.ts", from: "L3", to: "L2", reason: "promoted" },
        { key: "file:src/b.ts", from: "L1", to: "active", reason: "hash changed" },
        { key: "file:src/gone.ts", from: "active", to: null, reason: "not in request" }
      ]
      const t = yield* stubTracker({ changes })
      const layer = Layer.mergeAll(Pipeline.layer, Tokenizer.layerFrom(charCounter()), Layer.succeed(Tracker, t.service))
      yield* Effect.gen(function* () {
        const first = yield* assemble({ ...base, useRepoMap: false })
        expect(first.report.promotions.map((c) => c.key)).toEqual(["symbol:src/a.ts"])
        expect(first.report.demotions.map((c) => c.key)).toEqual(["file:src/b.ts"])
        expect(first.report.emptyTiersSession).toBe(3)
        const second = yield* assemble({ ...base, useRepoMap: false })
        expect(second.report.emptyTiersSession).toBe(3)
        yield* second.commit
        const third = yield* assemble({ ...base, useRepoMap: false })
        expect(third.report.emptyTiersSession).toBe(6)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("without a Tracker the request falls back to flat assembly", () =>
    Effect.gen(function* () {
      const input: AssemblyInput = { ...base, files: [{ path: "src/x.ts", content: "X" }], history: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }], useRepoMap: false }
      const r = yield* assemble(input)
      expect(r.mode).toBe("flat")
      expect(r.request.breakpoints).toEqual([])
      expect(r.request.messages).toEqual(assembleMessages({
        systemPrompt: "SYS",
        files: input.files,
        history: input.history,
        prompt: "Do it",
        systemReminder: "REMIND"
      }))
      yield* r.commit
    }).pipe(Effect.provide(testLayer())))
})

describe("replacing and adding stages", () => {
  it.effect("a stage is replaced by providing another Layer for its service", () =>
    Effect.gen(function* () {
      const everythingL2: Stage = {
        name: "fileTiers",
        run: (state) => Effect.map(fileTiers.run(state), (s) => ({ ...s, fileTiers: { ...s.fileTiers, L2: s.files, active: [] } }))
      }
      const r = yield* assemble({ ...base, files: [{ path: "src/x.ts", content: "X" }] }).pipe(
        Effect.provide(Layer.mergeAll(seed({}), Layer.succeed(FileTiersStage, everythingL2)))
      )
      expect(r.report.tiers.L2.files).toBe(1)
      expect(allText(messagesOf(r.placed.body))).toContain("# Reference Files (L2)")
    }))

  it.effect("extra stages run after their anchor and can insert sections", () =>
    Effect.gen(function* () {
      const notes: Stage = {
        name: "notes",
        run: (state) => Effect.succeed(insertPart(state, "active", userAckPart("notes", counted("# Notes\n\nN", state.counter), "Ok.", [{ type: "notes", tokens: 1 }], [], state.counter), ["workingFiles", "history", "prompt"]))
      }
      const r = yield* assemble({ ...base, review: "R" }).pipe(Effect.provide(Layer.mergeAll(seed({}), extraStages({ stage: notes, after: "activeBlock" }))))
      const texts = messagesOf(r.placed.body).map(textOf)
      // Both the default review stage and ours ran, in list order.
      expect(texts.indexOf("# Code Review Context\n\nR")).toBeLessThan(texts.indexOf("# Notes\n\nN"))
      expect(texts.indexOf("# Notes\n\nN")).toBe(texts.length - 3)
      const bad = yield* Effect.exit(assemble(base).pipe(Effect.provide(Layer.mergeAll(seed({}), extraStages({ stage: notes, after: "nope" })))))
      expect(String(bad)).toMatch(/runs after "nope", which is not in the pipeline/)
    }))

  it.effect("another Placement in the context replaces the default format", () =>
    Effect.gen(function* () {
      const layer = Layer.mergeAll(seed({}), Layer.succeed(Placement, {
        provider: "test",
        place: (request) => Effect.succeed({ provider: "test", body: { n: request.messages.length }, breakpoints: [], dropped: [] })
      }))
      const r = yield* assemble(base).pipe(Effect.provide(layer))
      expect(r.placed.provider).toBe("test")
      expect(r.placed.body).toEqual({ n: r.request.messages.length })
    }))
})

describe("layouts", () => {
  it("every layout mode is one registered layout, under its own name", () => {
    expect([...LAYOUT_MODES].sort()).toEqual(["journal", "seed"])
    for (const mode of LAYOUT_MODES) expect(LAYOUTS[mode].name).toBe(mode)
    expect(isLayoutMode("seed")).toBe(true)
    expect(isLayoutMode("flat")).toBe(false)
    expect(isLayoutMode("toString")).toBe(false)
  })

  it.effect("the block stages and placement take the state's layout: a layout of one's own orders the request", () =>
    Effect.gen(function* () {
      // The tiered layout's parts, all in the uncached block: no breakpoint, the same messages.
      const uncached: Layout = {
        name: "uncached",
        plan: Effect.succeed,
        blocks: (state) => [{ tier: "active", parts: LAYOUTS.seed.blocks(state).flatMap((b) => b.parts) }],
        request: (state) => neutralRequest(state.input.model, state.blocks)
      }
      const input = { ...base, files: [{ path: "src/a.ts", content: "AAA" }], history: [{ role: "user" as const, content: "q" }, { role: "assistant" as const, content: "a" }] }
      const layer = seed({ assignments: { "file:src/a.ts": "L1", "history:0": "L2" } })
      const own = yield* assemble(input).pipe(
        Effect.provide(Layer.mergeAll(layer, Layer.succeed(LayoutPlanStage, { name: "layoutPlan", run: (state) => uncached.plan({ ...state, layout: uncached }) })))
      )
      const seeded = yield* assemble(input).pipe(Effect.provide(Layer.mergeAll(layer, Layer.succeed(LayoutMode, "seed"))))
      expect(own.request.breakpoints).toEqual([])
      expect(own.request.blocks.map((b) => b.tier)).toEqual(["active"])
      expect(own.request.messages).toEqual(seeded.request.messages)
      expect(seeded.request.breakpoints.map((b) => b.tier)).toEqual(["L0", "L1", "L2", "L3"])
    }))
})

describe("determinism", () => {
  it.effect("same inputs give byte-identical requests", () =>
    Effect.gen(function* () {
      const input: AssemblyInput = { ...base, files: [{ path: "src/a.ts", content: "A" }], history: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }] }
      const a = yield* assemble(input)
      const b = yield* assemble(structuredClone(input))
      expect(JSON.stringify(b.placed.body)).toBe(JSON.stringify(a.placed.body))
    }).pipe(Effect.provide(seed({ assignments: { "symbol:src/b.ts": "L1", "file:src/a.ts": "L2" } }))))

  it.effect("unchanged cached tiers are byte-identical across 50 turns while the active tail changes", () =>
    Effect.gen(function* () {
      const history: Array<{ role: "user" | "assistant"; content: string }> = [{ role: "user", content: "old q" }, { role: "assistant", content: "old a" }]
      let previous: string | undefined
      for (let turn = 0; turn < 50; turn++) {
        const r = yield* assemble({
          ...base,
          prompt: `turn ${turn}`,
          files: [{ path: "src/a.ts", content: "A" }, { path: "src/x.ts", content: `x = ${turn}` }],
          history: [...history]
        })
        const ms = messagesOf(r.placed.body)
        const last = r.request.breakpoints.at(-1)?.messageIndex ?? -1
        const prefix = JSON.stringify(ms.slice(0, last + 1))
        if (previous !== undefined) expect(prefix).toBe(previous)
        previous = prefix
        expect(JSON.stringify(ms)).toContain(`x = ${turn}`)
        history.push({ role: "user", content: `q${turn}` }, { role: "assistant", content: `a${turn}` })
      }
    }).pipe(Effect.provide(seed({
      assignments: { "symbol:src/b.ts": "L0", "symbol:src/c.ts": "L1", "file:src/a.ts": "L2", "history:0": "L3", "history:1": "L3" }
    }))))
})
