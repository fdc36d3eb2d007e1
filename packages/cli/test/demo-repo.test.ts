// The example repository generator: deterministic, and the history the docs promise.
import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { COMMIT_COUNT, makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { tempDir } from "@strata/test-support"

const dirs = [tempDir("strata-demo-a-"), tempDir("strata-demo-b-"), tempDir("strata-demo-c-")]
afterAll(() => dirs.forEach((d) => d.cleanup()))
const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, encoding: "utf8" })

describe("scripts/make-demo-repo.mjs", () => {
  const a = makeDemoRepo({ out: dirs[0]!.path })
  const b = makeDemoRepo({ out: dirs[1]!.path })

  it("is deterministic: the same commit hashes on every run", () => {
    expect(a.git).toBe(true)
    expect(a.head).toMatch(/^[0-9a-f]{40}$/)
    expect(b.head).toBe(a.head)
  })

  it("has at least 30 commits, a merge, renames, deletions and a binary file", () => {
    expect(COMMIT_COUNT).toBeGreaterThanOrEqual(30)
    expect(Number(git(a.out, "rev-list", "--count", "HEAD").trim())).toBe(COMMIT_COUNT)
    expect(git(a.out, "rev-list", "--merges", "HEAD").trim().split("\n")).toHaveLength(1)
    const log = git(a.out, "log", "-M", "--name-status", "--format=")
    expect(log).toMatch(/^R\d+\tsrc\/services\/status\.ts\tsrc\/services\/tracking\.ts$/m)
    expect(log).toMatch(/^R\d+\tworker\/queue\/retry\.go\tworker\/queue\/backoff\.go$/m)
    expect(log).toMatch(/^D\tsrc\/legacy\/csvExport\.ts$/m)
    expect(git(a.out, "log", "--numstat", "--format=", "--", "assets/logo.png")).toMatch(/^-\t-\tassets\/logo\.png$/m)
    expect(new Set(git(a.out, "log", "--format=%an <%ae>").trim().split("\n")).size).toBe(3)
  })

  it("is a three-language project", () => {
    const files = git(a.out, "ls-files").trim().split("\n")
    expect(files.filter((f) => f.endsWith(".ts")).length).toBeGreaterThanOrEqual(8)
    expect(files.filter((f) => f.endsWith(".py")).length).toBeGreaterThanOrEqual(4)
    expect(files.filter((f) => f.endsWith(".go")).length).toBeGreaterThanOrEqual(4)
  })

  it("without git writes the same final tree", () => {
    const c = makeDemoRepo({ out: dirs[2]!.path, git: false })
    expect(c.git).toBe(false)
    const list = (dir: string, prefix = ""): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.name === ".git" || e.name.startsWith(".strata-demo") ? [] : e.isDirectory() ? list(`${dir}/${e.name}`, `${prefix}${e.name}/`) : [`${prefix}${e.name}`]
      )
    expect(list(c.out).sort()).toEqual(git(a.out, "ls-files").trim().split("\n").sort())
  })

  it("never deletes a directory it did not build", () => {
    const foreign = tempDir("strata-foreign-")
    try {
      execFileSync("touch", [`${foreign.path}/keep.txt`])
      expect(() => makeDemoRepo({ out: foreign.path, replace: true })).toThrow(/not built by this script/)
      expect(readdirSync(foreign.path)).toEqual(["keep.txt"])
    } finally {
      foreign.cleanup()
    }
  })
})
