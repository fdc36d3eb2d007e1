// The Promise facade's tiered assembly: the engine gathers history, files and prompts
// (re-read per request) and runs the pipeline; commit() advances the tracker.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createContextEngine, Tracker, type SeedMessage } from "../src/index.ts"
import { stubSymbolIndex, stubTracker } from "./pipeline-stubs.ts"

let root: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "strata-pipeline-engine-"))
  mkdirSync(join(root, "src"))
  mkdirSync(join(root, "prompts"))
  writeFileSync(join(root, "src/a.ts"), "export const a = 1\n")
  writeFileSync(join(root, "prompts/system.md"), "You are version one.\n")
  writeFileSync(join(root, "prompts/system_reminder.md"), "Keep edits small.\n")
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

const messages = (body: { readonly messages: ReadonlyArray<SeedMessage> }) => body.messages
const text = (m: SeedMessage | undefined) =>
  m === undefined ? "" : typeof m.content === "string" ? m.content : m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")

describe("ContextEngine.assemble", () => {
  it("assembles the session tiered, re-reads prompts, and commits on request", async () => {
    const t = Effect.runSync(stubTracker({ assignments: { "symbol:src/b.ts": "L1" } }))
    const index = stubSymbolIndex(() => ({ files: ["src/a.ts", "src/b.ts"], blocks: { "src/a.ts": "src/a.ts:\n  v a\n", "src/b.ts": "src/b.ts:\n  v b\n" }, legend: "# v=var" }))
    await using engine = createContextEngine({
      model: "gpt-4o",
      repoRoot: root,
      promptsDir: join(root, "prompts"),
      layers: [Layer.succeed(Tracker, t.service), index]
    })
    await engine.addFile("src/a.ts")
    await engine.addExchange("What is a?", "A constant.")
    const first = await engine.assemble({ prompt: "Rename a" })
    expect(first.mode).toBe("tiered")
    const ms = messages(first.placed.body)
    expect(text(ms[0])).toMatch(/^You are version one\.\n\n# Workflow\n[\s\S]*# Repository Structure/)
    expect(text(ms[1])).toBe("# Repository Structure (continued)\n\nsrc/b.ts:\n  v b")
    expect(ms.map(text)).toContain("# Working Files\n\nHere are the files:\n\nsrc/a.ts\n```\nexport const a = 1\n\n```")
    expect(text(ms.at(-1))).toBe("Rename a\n\nKeep edits small.")
    expect(first.userText).toBe("Rename a")
    // The default journal layout journals history in L3 as soon as it exists.
    expect(first.report.tiers.L3.history).toBe(2)
    expect(first.report.tiers.active.history).toBe(0)
    expect(Effect.runSync(t.service.current).version).toBe(0)
    await first.commit()
    expect(Effect.runSync(t.service.current).version).toBe(1)

    writeFileSync(join(root, "prompts/system.md"), "You are version two.\n")
    const breakdown = await engine.getContextBreakdown()
    expect(breakdown.blocks.map((b) => b.tier)).toEqual(["L0", "L1", "L2", "L3", "active"])
    const second = await engine.assemble({ prompt: "Again" })
    expect(text(messages(second.placed.body)[0])).toMatch(/^You are version two\./)
    // The breakdown shows the cached blocks exactly as the next request sends them.
    expect(breakdown.blocks.slice(0, -1)).toEqual(second.breakdown.blocks.slice(0, -1))
  })

  it("falls back to flat assembly without a tracker", async () => {
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, promptsDir: join(root, "prompts") })
    const result = await engine.assemble({ prompt: "Hi", useRepoMap: false })
    expect(result.mode).toBe("flat")
    expect(result.neutral.breakpoints).toEqual([])
    expect(result.request.messages.at(-1)).toEqual({ role: "user", content: "Hi\n\nKeep edits small." })
    await result.commit()
  })
})
