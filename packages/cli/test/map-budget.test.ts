// `strata map` keeps to its budget or says the smallest one it can (issue 29, item 6), and
// `.strata/config.json`'s `map` settings choose what the map covers and how it ranks.
// In-process runs on the demo repository.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeTokenCounter, REPO_MAP_HEADER } from "@strata/core"
import { tempDir } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runCli } from "../src/cli.ts"
import { makeTestOutput } from "../src/support/output.ts"

const dir = tempDir("strata-map-budget-")
afterAll(() => dir.cleanup())
const repo = makeDemoRepo({ out: dir.path }).out

const run = async (...args: ReadonlyArray<string>) => {
  const out = makeTestOutput()
  const code = await runCli([...args, "--repo", repo], { output: out.layer, env: { ...process.env, NO_COLOR: "1" } })
  return { code, stdout: out.stdout(), stderr: out.stderr() }
}

describe("strata map --budget", () => {
  it("prints at most the budget, or names the smallest budget it can keep", async () => {
    const counter = await makeTokenCounter("claude-sonnet-5")
    const tiny = await run("map", "--budget", "10")
    expect(tiny.code).toBe(2)
    expect(tiny.stdout).toBe("")
    const m = /--budget 10 is below the smallest map, ([\d,]+) tokens/.exec(tiny.stderr)
    expect(m, tiny.stderr).not.toBeNull()
    const smallest = Number(m![1]!.replace(/,/g, ""))
    expect(tiny.stderr).toContain(`use --budget ${smallest} or more`)
    expect(smallest).toBeGreaterThan(counter.count(REPO_MAP_HEADER))
    for (const budget of [smallest, smallest + 40, smallest + 200, 600, 1_000, 5_000]) {
      const r = await run("map", "--budget", String(budget))
      expect(r.code, r.stderr).toBe(0)
      expect(counter.count(r.stdout.replace(/\n$/, ""))).toBeLessThanOrEqual(budget)
      // The legend names only the aliases the printed blocks use.
      for (const line of r.stdout.split("\n").filter((l) => /^# @\d+\/=/.test(l))) {
        const token = line.slice(2, line.indexOf("="))
        expect(r.stdout.split("\n").filter((l) => !l.startsWith("#")).some((l) => l.includes(token)), `${token} in ${budget}`).toBe(true)
      }
    }
    const under = await run("map", "--budget", String(smallest - 1))
    expect(under.code).toBe(2)
  })
})

describe(".strata/config.json map settings", () => {
  it("map.exclude leaves files out of the map; map.ranking shows in config", async () => {
    const before = await run("map", "--json")
    const paths = (JSON.parse(before.stdout) as { files: Array<{ path: string }> }).files.map((f) => f.path)
    expect(paths.some((p) => p.startsWith("analytics/"))).toBe(true)
    mkdirSync(join(repo, ".strata"), { recursive: true })
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, map: { exclude: ["analytics/"], ranking: "focus" } }))
    const after = await run("map", "--json")
    expect(after.code, after.stderr).toBe(0)
    const kept = (JSON.parse(after.stdout) as { files: Array<{ path: string }> }).files.map((f) => f.path)
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.some((p) => p.startsWith("analytics/"))).toBe(false)
    expect((await run("tree")).stdout).not.toContain("analytics/")
    const config = await run("config")
    expect(config.stdout).toMatch(/map\.exclude\s+analytics\/\s+\[file\]/)
    expect(config.stdout).toMatch(/map\.ranking\s+focus\s+\[file\]/)
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, map: { include: ["src/"] } }))
    const only = (JSON.parse((await run("map", "--json")).stdout) as { files: Array<{ path: string }> }).files.map((f) => f.path)
    expect(only.length).toBeGreaterThan(0)
    expect(only.every((p) => p.startsWith("src/"))).toBe(true)
  })
})
