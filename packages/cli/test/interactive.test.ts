// The questions the CLI asks on a terminal, driven in-process with scripted answers
// (a spawned process has no TTY, so it never asks).
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runCli } from "../src/cli.ts"
import { makeTestOutput } from "../src/support/output.ts"
import { tempDir } from "@strata/test-support"

const dirs: Array<{ cleanup: () => void }> = []
afterAll(() => dirs.forEach((d) => d.cleanup()))
const fresh = () => {
  const d = tempDir()
  dirs.push(d)
  return d.path
}

describe("strata init on a terminal", () => {
  it("adds .strata/ to .gitignore when the user agrees", async () => {
    const repo = fresh()
    const out = makeTestOutput(["y"])
    expect(await runCli(["init", "--repo", repo], { output: out.layer })).toBe(0)
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toMatch(/^\.strata\/$/m)
    expect(out.stdout()).toMatch(/Added \.strata\/ to \.gitignore/)
  })

  it("leaves .gitignore alone when the user declines", async () => {
    const repo = fresh()
    writeFileSync(join(repo, ".gitignore"), "dist/\n")
    const out = makeTestOutput(["n"])
    expect(await runCli(["init", "--repo", repo], { output: out.layer })).toBe(0)
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toBe("dist/\n")
    expect(out.stdout()).toMatch(/Left \.gitignore alone/)
  })
})

describe("strata chat without a key, on a terminal", () => {
  const repo = makeDemoRepo({ out: join(fresh(), "harbor") }).out
  const env = { ...process.env }
  afterAll(() => {
    process.env = env
  })

  it("offers --dry-run and continues with it when accepted", async () => {
    delete process.env["ANTHROPIC_API_KEY"]
    const out = makeTestOutput(["y"])
    expect(await runCli(["chat", "--repo", repo, "--once", "Where is pricing done?", "--no-hud"], { output: out.layer })).toBe(0)
    expect(out.stdout()).toMatch(/\(dry run\) would send/)
    expect(existsSync(join(repo, ".strata", "state"))).toBe(false)
  })

  it("fails with the missing variable when declined", async () => {
    delete process.env["ANTHROPIC_API_KEY"]
    const out = makeTestOutput(["n"])
    expect(await runCli(["chat", "--repo", repo, "--once", "hi"], { output: out.layer })).toBe(1)
    expect(out.stderr()).toMatch(/^strata: No credentials for anthropic: set ANTHROPIC_API_KEY/m)
  })
})
