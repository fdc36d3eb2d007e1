// What a person (or a script) sees: every --json document starts with its schema
// version, and the HUD box fits the terminal it is drawn on while piped output stays the
// same whatever the window. Run in-process with a recording Output (a spawn costs seconds).
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runCli } from "../src/cli.ts"
import { JSON_SCHEMA_VERSION, makeTestOutput } from "../src/support/output.ts"
import { tempDir } from "@strata/test-support"

const dirs: Array<{ cleanup: () => void }> = []
let repo = ""
beforeAll(() => {
  const d = tempDir("strata-presentation-")
  dirs.push(d)
  repo = makeDemoRepo({ out: join(d.path, "harbor") }).out
})
afterAll(() => dirs.forEach((d) => d.cleanup()))

const run = async (args: ReadonlyArray<string>, options: { readonly columns?: number } = {}) => {
  const out = makeTestOutput([], options)
  const code = await runCli([...args, "--repo", repo], { output: out.layer, env: {} })
  return { code, stdout: out.stdout(), stderr: out.stderr() }
}

/** The keys of a JSON document, in order. */
const keysOf = (text: string): Array<string> => Object.keys(JSON.parse(text) as Record<string, unknown>)

describe("--json documents carry schemaVersion first", () => {
  it.each([
    [["init", "--yes", "--json"]],
    [["config", "--json"]],
    [["map", "--budget", "300", "--json"]],
    [["tree", "--json"]],
    [["hud", "--json"]],
    [["breakdown", "--json"]],
    [["replay", "--turns", "2", "--strategy", "none", "--json"]]
  ])("strata %j", async (args) => {
    const r = await run(args)
    expect(r.code, r.stderr).toBe(0)
    expect(keysOf(r.stdout)[0]).toBe("schemaVersion")
    expect((JSON.parse(r.stdout) as { schemaVersion: unknown }).schemaVersion).toBe(JSON_SCHEMA_VERSION)
  }, 60_000)

  it("chat prints one versioned line per turn, and errors are versioned too", async () => {
    const chat = await run(["chat", "--dry-run", "--once", "Where is pricing done?", "--json"])
    expect(chat.code, chat.stderr).toBe(0)
    const lines = chat.stdout.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(keysOf(lines[0]!).slice(0, 2)).toEqual(["schemaVersion", "dryRun"])
    const error = await run(["assemble", "--prompt", "x", "--file", "../secrets.env", "--json"])
    expect(error.code).toBe(2)
    expect(JSON.parse(error.stderr.trim())).toMatchObject({ schemaVersion: JSON_SCHEMA_VERSION, error: { tag: "PathOutsideRepo", exitCode: 2 } })
  }, 60_000)

  it("assemble --json stays the provider's body, unwrapped, so it can be sent as it is", async () => {
    const r = await run(["assemble", "--prompt", "x", "--dry-run", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(keysOf(r.stdout)).not.toContain("schemaVersion")
    expect(keysOf(r.stdout)).toContain("messages")
  }, 60_000)
})

describe("the HUD box", () => {
  const box = (stdout: string) => stdout.split("\n").filter((l) => /^[╭│├╰]/.test(l))

  it("fits a terminal's width, wrapping inside the box; without a terminal it is as wide as its rows", async () => {
    const piped = await run(["hud"])
    expect(piped.code, piped.stderr).toBe(0)
    const natural = box(piped.stdout)
    expect(natural[0]!.length).toBeGreaterThanOrEqual(52)
    expect(piped.stdout).toMatch(/Total: [\d,]+ tokens \| In cached blocks: \d+%/)
    expect(piped.stdout).not.toContain("Cache hit:")

    const narrow = box((await run(["hud"], { columns: 40 })).stdout)
    expect(new Set(narrow.map((l) => l.length))).toEqual(new Set([40]))
    expect(narrow.length).toBeGreaterThan(natural.length)
    const wide = box((await run(["hud"], { columns: 300 })).stdout)
    expect(wide).toEqual(natural)
  }, 60_000)
})
