// One request's input gathered from the prompts folder and the files in context: the
// gatherer the session engine and the CLI share.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, beforeEach, describe, expect } from "vitest"
import { PathOutsideRepo, Prompts, RepoFiles, requestInput, selectedFilesInput } from "../src/effect.ts"
import { it } from "@strata/test-support"

let root: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "strata-input-"))
  mkdirSync(join(root, "prompts"))
  mkdirSync(join(root, "src"))
  writeFileSync(join(root, "prompts", "system.md"), "Be careful.")
  writeFileSync(join(root, "prompts", "system_extra.md"), "Use tabs.")
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1\n")
  writeFileSync(join(root, "src", "b.ts"), "export const b = 2\n")
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

const layer = () => Layer.mergeAll(Prompts.layer({ dir: join(root, "prompts"), root }), RepoFiles.layer({ root }))

describe("requestInput", () => {
  it.effect("puts the prompts folder's system prompt and reminder around the request, with the loading warnings", () =>
    Effect.gen(function* () {
      const history = [{ role: "user" as const, content: "Hi" }, { role: "assistant" as const, content: "Hello." }]
      const { input, warnings } = yield* requestInput({ model: "gpt-4o", prompt: "Why?", files: [{ path: "x.ts", content: "x\n" }], history, useRepoMap: false }).pipe(
        Effect.provide(layer())
      )
      // workflow.md is missing from the folder: the bundled default pack's, with a warning.
      expect(input.systemPrompt).toMatch(/^Be careful\.\n\n# Workflow\n[\s\S]*\n\nUse tabs\.$/)
      // No pack here has a reminder: none, and nothing to warn about.
      expect(input.systemReminder).toBe("")
      expect(warnings).toEqual([`Prompt workflow.md is missing from ${join(root, "prompts")}; using the bundled default pack's.`])
      expect(input).toMatchObject({ model: "gpt-4o", prompt: "Why?", files: [{ path: "x.ts", content: "x\n" }], history, useRepoMap: false })
      expect(Object.keys(input)).toEqual(["model", "prompt", "systemPrompt", "systemReminder", "files", "history", "useRepoMap"])
    })
  )
})

describe("selectedFilesInput", () => {
  it.effect("reads the selected files through RepoFiles, in the order given", () =>
    Effect.gen(function* () {
      const { input } = yield* selectedFilesInput({ model: "gpt-4o", prompt: "", selected: ["src/b.ts", "src/a.ts"] }).pipe(Effect.provide(layer()))
      expect(input.files).toEqual([
        { path: "src/b.ts", content: "export const b = 2\n" },
        { path: "src/a.ts", content: "export const a = 1\n" }
      ])
      expect("history" in input).toBe(false)
    })
  )

  it.effect("fails with PathOutsideRepo for a path that leaves the repository", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(selectedFilesInput({ model: "gpt-4o", prompt: "", selected: ["../outside.ts"] }).pipe(Effect.provide(layer())))
      expect(error).toBeInstanceOf(PathOutsideRepo)
    })
  )
})
