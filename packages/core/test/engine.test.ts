import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import {
  BinaryFile,
  createContextEngine,
  FileNotFound,
  FileTooLarge,
  InvalidInput,
  makeEstimatingCounter,
  PathOutsideRepo
} from "../src/index.ts"
import { Tracker } from "../src/effect.ts"
import { it } from "@strata/test-support"

let base: string
let root: string
let prompts: string
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "strata-engine-"))
  root = join(base, "repo")
  prompts = join(base, "prompts")
  mkdirSync(root)
  mkdirSync(prompts)
  writeFileSync(join(root, "a.ts"), "export const a = 1\n")
  writeFileSync(join(root, "bin.dat"), Buffer.from([1, 0, 2]))
  writeFileSync(join(base, "secret.txt"), "secret")
  symlinkSync(join(base, "secret.txt"), join(root, "leak.txt"))
  writeFileSync(join(prompts, "system.md"), "SYSTEM")
  writeFileSync(join(prompts, "system_reminder.md"), "REMIND")
  // An empty prompt file drops that prompt: no workflow section.
  writeFileSync(join(prompts, "workflow.md"), "")
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe("createContextEngine", () => {
  it("throws the tagged errors themselves, so instanceof and _tag work", async () => {
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, maxFileBytes: 100 })
    const cases: ReadonlyArray<[() => Promise<unknown>, abstract new (...args: never) => Error, string]> = [
      [() => engine.addFile("missing.ts"), FileNotFound, "FileNotFound"],
      [() => engine.addFile("../secret.txt"), PathOutsideRepo, "PathOutsideRepo"],
      [() => engine.addFile("leak.txt"), PathOutsideRepo, "PathOutsideRepo"],
      [() => engine.addFile("bin.dat"), BinaryFile, "BinaryFile"],
      [() => engine.setHistory([{ role: "user", content: 1 }]), InvalidInput, "InvalidInput"]
    ]
    for (const [call, type, tag] of cases) {
      const error = await call().then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(type)
      expect(error).toMatchObject({ _tag: tag })
    }
    writeFileSync(join(root, "big.txt"), "x".repeat(101))
    await expect(engine.addFile("big.txt")).rejects.toMatchObject({ _tag: "FileTooLarge", size: 101, limit: 100 })
    await expect(engine.addFile("big.txt")).rejects.toBeInstanceOf(FileTooLarge)
  })

  it("refuses malformed options at once with InvalidInput naming the field", () => {
    const cases: ReadonlyArray<[Parameters<typeof createContextEngine>[0], string]> = [
      [{ model: "" }, "model"],
      [{ model: "   " }, "model"],
      [{ model: "gpt-4o", maxInputTokens: -5 }, "maxInputTokens"],
      [{ model: "gpt-4o", maxInputTokens: 1.5 }, "maxInputTokens"],
      [{ model: "gpt-4o", maxFileBytes: 0 }, "maxFileBytes"],
      [{ model: "gpt-4o", repoRoot: "" }, "repoRoot"],
      [{ model: "gpt-4o", sessions: "" }, "sessions"]
    ]
    for (const [options, field] of cases) {
      let thrown: unknown
      try {
        createContextEngine(options)
      } catch (error) {
        thrown = error
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(InvalidInput)
      expect((thrown as InvalidInput).message).toMatch(new RegExp(`^Invalid createContextEngine options: ${field}: `))
    }
  })

  it("a prompts folder whose file links out of the repository is refused with PathOutsideRepo", async () => {
    const dir = join(root, "prompts")
    mkdirSync(dir, { recursive: true })
    symlinkSync(join(base, "secret.txt"), join(dir, "system_reminder.md"))
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, promptsDir: dir })
    await expect(engine.getSystemReminder()).rejects.toBeInstanceOf(PathOutsideRepo)
  })

  it("runs the whole session through async methods", async () => {
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, promptsDir: prompts })
    expect(await engine.addFile("a.ts")).toBe("a.ts")
    expect(await engine.addFile("notes/b.md", "# B")).toBe("notes/b.md")
    expect(await engine.getFiles()).toEqual(["a.ts", "notes/b.md"])
    expect(await engine.hasFile("./a.ts")).toBe(true)
    expect(await engine.getFileContent("notes/b.md")).toBe("# B")
    await engine.addExchange("What is a?", "A constant.")
    await engine.addMessage("user", "And b?")
    await engine.addMessage("assistant", "A note.")
    expect(await engine.historyTokenCount()).toBeGreaterThan(0)
    expect((await engine.getTokenBudget()).maxHistoryTokens).toBe(8_000)
    expect(await engine.countTokens("hello world")).toBe(2)

    const request = await engine.assembleFlat({ prompt: "Rename a.", fileTree: "a.ts\nnotes/b.md", urlContext: ["1", "2", "3", "4"] })
    expect(request.messages[0]).toEqual({ role: "system", content: "SYSTEM" })
    expect(request.messages.at(-1)).toEqual({ role: "user", content: "Rename a.\n\nREMIND" })
    // The tree's pair sits before the conversation; after it, the URL context and the
    // Working Files ride with the prompt in user messages, no synthetic turn after history.
    expect(request.messages.map((m) => m.role)).toEqual([
      "system", "user", "assistant", "user", "assistant", "user", "assistant", "user", "user", "user"
    ])
    expect(request.warnings).toEqual(["4 URLs were given; only the first 3 are included in the request."])
    expect(request.tokens).toBeGreaterThan(0)

    expect(await engine.removeFile("notes/b.md")).toBe(true)
    await engine.resetSession()
    expect(await engine.getHistory()).toEqual([])
    expect(await engine.loadSession([{ role: "user", content: "resumed" }])).toBe(1)
    expect((await engine.getState()).history).toEqual([{ role: "user", content: "resumed" }])
    await engine.clearFiles()
    expect(await engine.getFiles()).toEqual([])
  })

  it("sheds the largest files before a flat request that would pass 90% of the input limit", async () => {
    await using engine = createContextEngine({
      model: "test-model",
      repoRoot: root,
      promptsDir: prompts,
      maxInputTokens: 3_000,
      tokenCounter: makeEstimatingCounter("test-model")
    })
    await engine.addFile("huge.txt", "h".repeat(12_000))
    await engine.addFile("a.ts")
    const request = await engine.assembleFlat({ prompt: "Go" })
    expect(request.shed.map((f) => f.path)).toEqual(["huge.txt"])
    expect(request.warnings.some((w) => w.includes("huge.txt"))).toBe(true)
    expect(await engine.getFiles()).toEqual(["a.ts"])
    expect(JSON.stringify(request.messages)).not.toContain("hhhh")
  })

  it("rejects with the signal's reason when aborted, and keeps working afterwards", async () => {
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root })
    const controller = new AbortController()
    controller.abort(new Error("user cancelled"))
    await expect(engine.getFiles({ signal: controller.signal })).rejects.toThrow("user cancelled")
    const late = new AbortController()
    const pending = engine.addFile("a.ts", undefined, { signal: late.signal })
    late.abort()
    const outcome = await pending.then((p) => p, (e: unknown) => (e instanceof Error || e instanceof DOMException ? e.name : String(e)))
    expect(["a.ts", "AbortError"]).toContain(outcome)
    expect(await engine.hasFile("a.ts")).toBe(outcome === "a.ts")
  })

  it("dispose releases the runtime; later calls throw; Symbol.asyncDispose disposes", async () => {
    const engine = createContextEngine({ model: "gpt-4o", repoRoot: root })
    await engine.getFiles()
    await engine.dispose()
    await engine.dispose()
    await expect(engine.getFiles()).rejects.toThrow("disposed")
    let scoped: ReturnType<typeof createContextEngine> | undefined
    {
      await using inner = createContextEngine({ model: "gpt-4o", repoRoot: root })
      scoped = inner
      await inner.getFiles()
    }
    await expect(scoped.getFiles()).rejects.toThrow("disposed")
  })

  it("gives extra layers (a tracker) to the engine's services", async () => {
    let purges = 0
    const tracker = Layer.succeed(Tracker, {
      current: Effect.die("not used"),
      commit: () => Effect.void,
      remove: () => Effect.succeed([]),
      purgeHistory: Effect.sync(() => {
        purges++
        return []
      })
    })
    await using engine = createContextEngine({ model: "gpt-4o", repoRoot: root, layers: [tracker] })
    await engine.addExchange("q", "a")
    await engine.clearHistory()
    await engine.reregisterHistoryItems()
    expect(purges).toBe(2)
  })
})
