// End to end: core's assembly pipeline over the real @strata/tiers tracker and the real
// @strata/symbols index of a repository on disk. First-request placement, commit only on
// success, byte-stable tiers across 50 turns, demotion of an edited file, and the
// breakdown adding up to the request.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  assemble,
  getContextBreakdown,
  LayoutMode,
  Pipeline,
  Tokenizer,
  Tracker,
  makeCustomCounter,
  type AssemblyInput,
  type Block,
  type Message,
  type SeedMessage
} from "@strata/core/effect"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"

let root: string

const write = (path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true })
  writeFileSync(join(root, path), text)
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "strata-pipeline-e2e-"))
  write("src/math/add.ts", "export function add(a: number, b: number): number {\n  return a + b\n}\n")
  write("src/math/mul.ts", "import { add } from \"./add\"\nexport function mul(a: number, b: number): number {\n  let r = 0\n  for (let i = 0; i < b; i++) r = add(r, a)\n  return r\n}\n")
  write("src/app/main.ts", "import { mul } from \"../math/mul\"\nimport { add } from \"../math/add\"\nexport class App {\n  run(): number {\n    return add(mul(2, 3), 1)\n  }\n}\n")
  write("src/app/config.ts", "export const port = 8080\nexport function load(): number {\n  return port\n}\n")
  write("src/util/strings.py", "def shout(text):\n    return text.upper()\n\nclass Greeter:\n    def greet(self, name):\n        return shout(name)\n")
  write("README.md", "# Demo\n")
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

// One token per character keeps the accounting exact and the test fast.
const layer = (layout: LayoutMode = "journal") =>
  Layer.mergeAll(
    Pipeline.layer,
    Layer.succeed(LayoutMode, layout),
    Tokenizer.layerFrom(makeCustomCounter("chars", (t) => t.length)),
    TrackerLayer.memory(),
    symbolIndexLayer(root, { cache: false, git: false })
  )

const body = (placed: unknown) => (placed as { messages: ReadonlyArray<SeedMessage> }).messages
const text = (ms: ReadonlyArray<SeedMessage>) => ms.map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""))).join("\n")
const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1

const baseInput = (files: ReadonlyArray<{ path: string; content: string }>, history: ReadonlyArray<Message>, prompt: string): AssemblyInput => ({
  model: "claude-sonnet-4-5",
  prompt,
  systemPrompt: "You are a careful coding assistant.",
  systemReminder: "Keep edits small.",
  files,
  history
})

/** The content of the last fenced copy of `path` in `haystack`. */
const lastCopy = (haystack: string, path: string): string | undefined => {
  const at = haystack.lastIndexOf(`${path}\n\`\`\`\n`)
  if (at < 0) return undefined
  const start = at + path.length + 5
  return haystack.slice(start, haystack.indexOf("\n```", start))
}

describe.each(["journal", "seed"] as const)("pipeline with @strata/tiers and @strata/symbols (%s layout)", (layout) => {
  it("places on the first request, commits only on success, keeps unchanged tiers byte-identical for 50 turns", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const tracker = yield* Tracker
        let config = "export const port = 8080\nexport function load(): number {\n  return port\n}\n"
        const history: Array<Message> = []

        // First request: the tracker is empty; the pipeline places symbol entries from the graph.
        const first = yield* assemble(baseInput([{ path: "src/app/config.ts", content: config }], history, "What does config do?"))
        expect(first.mode).toBe("tiered")
        expect((yield* tracker.current).initialized).toBe(false)
        // Placed across L1-L3 (entries of a new session never start in active).
        const { L1, L2, L3 } = first.report.tiers
        expect([L1.symbols, L2.symbols, L3.symbols].filter((n) => n > 0).length).toBeGreaterThan(1)
        const firstText = text(body(first.placed.body))
        expect(occurrences(firstText, "export const port = 8080")).toBe(1)
        // The selected file's symbol block is nowhere; every other file's block is there once.
        expect(firstText).not.toMatch(/src\/app\/config\.ts:/)
        expect(occurrences(firstText, "add.ts:")).toBe(1)
        expect(occurrences(firstText, "strings.py:")).toBe(1)

        // The provider call "failed": nothing committed, N did not advance.
        expect((yield* tracker.current).version).toBe(0)
        yield* first.commit
        const afterFirst = yield* tracker.current
        expect(afterFirst.initialized).toBe(true)
        const n0 = afterFirst.get("file:src/app/config.ts")?.n
        const failed = yield* assemble(baseInput([{ path: "src/app/config.ts", content: config }], history, "lost"))
        expect((yield* tracker.current).get("file:src/app/config.ts")?.n).toBe(n0)
        void failed

        // 50 turns; the config file is edited on turns 20 and 35.
        let previous: { blocks: ReadonlyArray<Block>; hashes: ReadonlyMap<string, string | undefined> } | undefined
        let stableComparisons = 0
        let promotions = 0
        for (let turn = 0; turn < 50; turn++) {
          if (turn === 20 || turn === 35) config += `export const edit${turn} = ${turn}\n`
          const r = yield* assemble(baseInput([{ path: "src/app/config.ts", content: config }], history, `turn ${turn}`))
          promotions += r.report.promotions.length
          if (turn === 20) {
            expect(r.report.demotions.some((c) => c.key === "file:src/app/config.ts" && c.to === "active")).toBe(true)
          }
          const sent = text(body(r.placed.body))
          if (layout === "seed") {
            // A file appears once, always.
            expect(occurrences(sent, "export const port = 8080")).toBe(1)
          } else {
            // The journal may still carry an earlier copy; the last copy is the current content.
            expect(occurrences(sent, "export const port = 8080")).toBeGreaterThanOrEqual(1)
            expect(lastCopy(sent, "src/app/config.ts")).toBe(config)
          }
          // The breakdown adds up to the request.
          expect(r.breakdown.blocks.reduce((n, b) => n + b.tokens, 0)).toBe(r.report.totalTokens)
          yield* r.commit
          const now = yield* tracker.current
          const hashes = new Map(r.request.blocks.flatMap((b) => b.items).map((k) => [k, now.get(k)?.hash]))
          if (previous !== undefined) {
            for (const block of r.request.blocks) {
              if (block.tier === "active") continue
              const before = previous.blocks.find((b) => b.tier === block.tier)
              const sameItems = before !== undefined &&
                JSON.stringify(before.items) === JSON.stringify(block.items) &&
                block.items.every((k) => previous?.hashes.get(k) === hashes.get(k))
              if (sameItems) {
                stableComparisons++
                expect(JSON.stringify(block.messages)).toBe(JSON.stringify(before?.messages))
              }
            }
          }
          previous = { blocks: r.request.blocks, hashes }
          history.push({ role: "user", content: `turn ${turn}` }, { role: "assistant", content: `answer ${turn}` })
        }
        // Tiers whose items and hashes did not change were compared (and matched) many times.
        expect(stableComparisons).toBeGreaterThan(15)
        expect(promotions).toBeGreaterThan(0)

        // The breakdown runs the same stages: same blocks as a request would send, nothing committed.
        const version = (yield* tracker.current).version
        const input = baseInput([{ path: "src/app/config.ts", content: config }], history, "next")
        const breakdown = yield* getContextBreakdown(input)
        const next = yield* assemble(input)
        expect(breakdown.blocks).toEqual(next.breakdown.blocks)
        expect(breakdown.total_tokens).toBe(next.report.totalTokens)
        expect((yield* tracker.current).version).toBe(version)
      }).pipe(Effect.provide(layer(layout)))
    )
  })
})
