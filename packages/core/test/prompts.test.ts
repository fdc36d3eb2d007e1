import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect } from "vitest"
import { BUNDLED_PROMPTS_DIR, InvalidInput, PromptNotFound, Prompts } from "../src/effect.ts"
import { it } from "@strata/test-support"

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-prompts-"))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const withPrompts = <A, E>(body: (prompts: Prompts["Service"]) => Effect.Effect<A, E>, options: Parameters<typeof Prompts.layer>[0] = { dir }) =>
  Prompts.use(body).pipe(Effect.provide(Prompts.layer(options)))

const bundled = (name: string) => readFileSync(join(BUNDLED_PROMPTS_DIR, name), "utf8").trimEnd()

describe("bundled prompts", () => {
  it("ship next to the package, found from the module's URL", () => {
    expect(BUNDLED_PROMPTS_DIR.endsWith(join("core", "prompts") + "/")).toBe(true)
    for (const name of ["system.md", "workflow.md", "compaction.md", "edit-blocks/workflow.md", "edit-blocks/system_reminder.md", "read-only/workflow.md"]) {
      expect(existsSync(join(BUNDLED_PROMPTS_DIR, name))).toBe(true)
    }
    // The default pack is neutral: no edit protocol and no reminder (tools carry the contract).
    expect(existsSync(join(BUNDLED_PROMPTS_DIR, "system_reminder.md"))).toBe(false)
    expect(`${bundled("system.md")}\n${bundled("workflow.md")}`).not.toMatch(/<<<<<<< EDIT|edit block/i)
    expect(bundled("edit-blocks/workflow.md")).toContain("<<<<<<< EDIT")
    const system = bundled("system.md")
    // The default explains the symbol map notation and each context section.
    for (const needle of ["# Repository Structure", "# Working Files", "# Repository Files", "# URL Context", "legend", "←N", "i→"]) {
      expect(system).toContain(needle)
    }
  })
})

describe("Prompts", () => {
  it.effect("uses the bundled defaults when no folder is configured, without warnings", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        const system = yield* p.systemPrompt
        expect(system).toEqual({ text: `${bundled("system.md")}\n\n${bundled("workflow.md")}`, warnings: [] })
        expect(yield* p.systemReminder).toEqual({ text: "", warnings: [] })
      }), {}))

  it.effect("a pack supplies its own files, the default pack the rest; the user's folder wins, an empty file drops the prompt", () =>
    Effect.gen(function* () {
      const edits = yield* withPrompts((p) => Effect.all([p.systemPrompt, p.systemReminder]), { pack: "edit-blocks" })
      expect(edits[0].text).toBe(`${bundled("system.md")}\n\n${bundled("edit-blocks/workflow.md")}`)
      expect(edits[1].text).toBe(bundled("edit-blocks/system_reminder.md"))
      const readOnly = yield* withPrompts((p) => Effect.all([p.systemPrompt, p.systemReminder]), { pack: "read-only" })
      expect(readOnly[0].text).toBe(`${bundled("system.md")}\n\n${bundled("read-only/workflow.md")}`)
      expect(readOnly[1].text).toBe("")
      writeFileSync(join(dir, "workflow.md"), "Answer in haiku.")
      writeFileSync(join(dir, "system_reminder.md"), "")
      const own = yield* withPrompts((p) => Effect.all([p.systemPrompt, p.systemReminder]), { dir, pack: "edit-blocks" })
      expect(own[0].text).toBe(`${bundled("system.md")}\n\nAnswer in haiku.`)
      expect(own[1].text).toBe("")
    }))

  it.effect("reads system.md and joins system_extra.md with a blank line", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "system.md"), "Main prompt.\n")
        writeFileSync(join(dir, "workflow.md"), "")
        writeFileSync(join(dir, "system_extra.md"), "Project rules.\n")
        expect(yield* p.systemPrompt).toEqual({ text: "Main prompt.\n\nProject rules.", warnings: [] })
      })))

  it.effect("system_extra.md is optional", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "system.md"), "Main prompt.")
        writeFileSync(join(dir, "workflow.md"), "")
        expect((yield* p.systemPrompt).text).toBe("Main prompt.")
      })))

  it.effect("re-reads the files on every call, so edits apply to the next request", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "system.md"), "Version 1")
        writeFileSync(join(dir, "workflow.md"), "")
        writeFileSync(join(dir, "system_reminder.md"), "Reminder 1")
        expect((yield* p.systemPrompt).text).toBe("Version 1")
        expect((yield* p.systemReminder).text).toBe("Reminder 1")
        writeFileSync(join(dir, "system.md"), "Version 2")
        writeFileSync(join(dir, "system_extra.md"), "Extra")
        writeFileSync(join(dir, "system_reminder.md"), "Reminder 2")
        expect((yield* p.systemPrompt).text).toBe("Version 2\n\nExtra")
        expect((yield* p.systemReminder).text).toBe("Reminder 2")
        unlinkSync(join(dir, "system_extra.md"))
        expect((yield* p.systemPrompt).text).toBe("Version 2")
      })))

  it.effect("falls back to the bundled file with a warning when a file is missing from the folder", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "system_extra.md"), "Extra")
        const system = yield* p.systemPrompt
        expect(system.text).toBe(`${bundled("system.md")}\n\n${bundled("workflow.md")}\n\nExtra`)
        expect(system.warnings).toHaveLength(2)
        expect(system.warnings[0]).toContain("system.md is missing")
        expect(system.warnings[1]).toContain("workflow.md is missing")
        // No pack has a reminder here: none, and nothing to warn about.
        expect(yield* p.systemReminder).toEqual({ text: "", warnings: [] })
      })))

  it.effect("a missing folder behaves like a folder with no files", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        const system = yield* p.systemPrompt
        expect(system.text).toBe(`${bundled("system.md")}\n\n${bundled("workflow.md")}`)
        expect(system.warnings).toHaveLength(2)
      }), { dir: join(dir, "does-not-exist") }))

  it.effect("load reads other prompts by name (compaction.md) and validates the name", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "commit.md"), "Write a commit message.")
        expect((yield* p.load("commit.md")).text).toBe("Write a commit message.")
        expect((yield* p.load("compaction.md")).text).toBe(bundled("compaction.md"))
        for (const bad of ["../system.md", "a/b.md", "", ".."]) {
          expect(yield* Effect.flip(p.load(bad))).toBeInstanceOf(InvalidInput)
        }
        const missing = yield* Effect.flip(p.load("nope.md"))
        expect(missing).toBeInstanceOf(PromptNotFound)
        expect(missing.message).toContain("nope.md")
      })))

  it.effect("fails with PromptNotFound when neither the folder nor the bundle has the file", () =>
    withPrompts((p) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(p.systemPrompt)
        expect(error).toBeInstanceOf(PromptNotFound)
        expect(error).toMatchObject({ searched: [dir, join(dir, "empty-bundle")] })
      }), { dir, bundledDir: join(dir, "empty-bundle") }))
})
