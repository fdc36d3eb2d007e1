// End-to-end: the built binary as a real process (pipes, so no TTY and no colour).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "@strata/test-support"
import { runBin, runProcess } from "./support.ts"

const cleanups: Array<() => void> = []
afterAll(() => {
  for (const c of cleanups.splice(0)) c()
})
const fresh = () => {
  const dir = tempDir("strata-cli-")
  cleanups.push(dir.cleanup)
  return dir.path
}
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[/

describe.concurrent("strata (conventions)", () => {
  it("--help lists the commands with examples, exit 0, no colour on a pipe (the real process)", async () => {
    const r = await runProcess(["--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/SUBCOMMANDS/)
    expect(r.stdout).toMatch(/init/)
    expect(r.stdout).toMatch(/EXAMPLES/)
    expect(r.stdout).not.toMatch(ANSI)
  })

  it("every command has --help with examples", async () => {
    for (const command of ["init", "config"]) {
      const r = await runBin([command, "--help"])
      expect(r.code, command).toBe(0)
      expect(r.stdout, command).toMatch(/EXAMPLES/)
      expect(r.stdout, command).toMatch(/--repo/)
    }
  })

  it("an unknown flag is a usage error: exit 2, one line and a hint on stderr", async () => {
    const r = await runBin(["init", "--bogus"], { cwd: fresh() })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    const lines = r.stderr.trim().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe("strata: Unrecognized flag: --bogus in command strata init")
    expect(lines[1]).toMatch(/^hint: run `strata init --help`/)
  })

  it("an unknown command is a usage error", async () => {
    const r = await runBin(["frobnicate"])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^strata: Unknown subcommand "frobnicate"/)
  })

  it("a missing repository is a usage error naming the path", async () => {
    const r = await runBin(["config", "--repo", "/definitely/not/here"])
    expect(r.code).toBe(2)
    expect(r.stderr.split("\n")[0]).toBe("strata: Repository /definitely/not/here does not exist")
    expect(r.stderr).toMatch(/hint: pass --repo PATH/)
  })

  it("errors come as JSON on stderr under --json", async () => {
    const r = await runBin(["config", "--json", "--repo", "/definitely/not/here"])
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stderr.trim())).toMatchObject({ error: { tag: "RepoNotFound", exitCode: 2 } })
  })

  it("--verbose adds the full cause after the one-line message", async () => {
    const plain = await runBin(["config", "--repo", "/definitely/not/here"])
    const verbose = await runBin(["config", "--verbose", "--repo", "/definitely/not/here"])
    expect(verbose.code).toBe(2)
    expect(verbose.stderr.split("\n")[0]).toBe(plain.stderr.split("\n")[0])
    expect(verbose.stderr.trim().split("\n").length).toBeGreaterThan(plain.stderr.trim().split("\n").length)
    expect(verbose.stderr).toMatch(/RepoNotFound/)
  })

  it("FORCE_COLOR colours errors, NO_COLOR wins over it", async () => {
    const forced = await runBin(["config", "--repo", "/nope"], { env: { FORCE_COLOR: "1" } })
    expect(forced.stderr).toMatch(ANSI)
    const off = await runBin(["config", "--repo", "/nope"], { env: { FORCE_COLOR: "1", NO_COLOR: "1" } })
    expect(off.stderr).not.toMatch(ANSI)
  })

  it("--version prints the package version", async () => {
    const r = await runBin(["--version"])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toMatch(/^strata \d+\.\d+\.\d+$/)
  })
})

describe("strata init", () => {
  it("writes a valid config and, with --yes, ignores .strata/ in git", async () => {
    const repo = fresh()
    writeFileSync(join(repo, ".gitignore"), "node_modules/")
    const r = await runBin(["init", "--yes", "--repo", repo, "--provider", "openai", "--map-tokens", "1500"])
    expect(r.code).toBe(0)
    const config = JSON.parse(readFileSync(join(repo, ".strata", "config.json"), "utf8")) as Record<string, unknown>
    expect(config).toMatchObject({ version: 1, provider: "openai", model: "gpt-5.4", policy: "flux", budgets: { mapTokens: 1500 }, prompts: ".strata/prompts" })
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toBe("node_modules/\n# Strata session state (strata init)\n.strata/\n")
  })

  it("without --yes and without a terminal, leaves .gitignore alone and says how", async () => {
    const repo = fresh()
    const r = await runBin(["init"], { cwd: repo })
    expect(r.code).toBe(0)
    expect(existsSync(join(repo, ".gitignore"))).toBe(false)
    expect(r.stdout).toMatch(/pass --yes/)
  })

  it("refuses to overwrite without --force; --force repairs a corrupt file", async () => {
    const repo = fresh()
    expect((await runBin(["init", "--yes", "--repo", repo])).code).toBe(0)
    const again = await runBin(["init", "--repo", repo])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/already exists/)
    writeFileSync(join(repo, ".strata", "config.json"), "{ broken")
    const read = await runBin(["config", "--repo", repo])
    expect(read.code).toBe(1)
    expect(read.stderr.split("\n")[0]).toMatch(/^strata: Invalid configuration in \.strata\/config\.json: not valid JSON/)
    expect(read.stderr).toMatch(/hint: .*strata init --force/)
    const forced = await runBin(["init", "--force", "--json", "--repo", repo])
    expect(forced.code).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({ values: { version: 1 }, gitignore: "present" })
  })

  it("a config with a bad field fails with the field's path", async () => {
    const repo = fresh()
    mkdirSync(join(repo, ".strata"))
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, budgets: { maxFileBytes: "big" } }))
    const r = await runBin(["config", "--repo", repo])
    expect(r.code).toBe(1)
    expect(r.stderr.split("\n")[0]).toBe("strata: Invalid configuration in .strata/config.json: budgets.maxFileBytes: Expected number")
  })
})

describe.concurrent("strata config", () => {
  it("reports values and their sources with precedence flag > env > file > default", async () => {
    const repo = fresh()
    mkdirSync(join(repo, ".strata"))
    writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "gemini", policy: "flux", model: "m-file" }))
    const r = await runBin(["config", "--json", "--repo", repo, "--model", "m-flag"], { env: { STRATA_PROVIDER: "openai" } })
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as { values: Record<string, unknown>; sources: Record<string, string> }
    expect(out.values).toMatchObject({ provider: "openai", model: "m-flag", policy: "flux" })
    expect(out.sources).toMatchObject({ provider: "env", model: "flag", policy: "file", prompts: "default" })
  })

  it("STRATA_REPO is the default repository", async () => {
    const repo = fresh()
    const r = await runBin(["config", "--json"], { env: { STRATA_REPO: repo } })
    expect(r.code).toBe(0)
    expect((JSON.parse(r.stdout) as { repo: string }).repo).toMatch(/strata-cli-/)
  })

  it("a malformed STRATA_* value is reported with the variable's name", async () => {
    const r = await runBin(["config", "--repo", fresh()], { env: { STRATA_MAP_TOKENS: "lots" } })
    expect(r.code).toBe(1)
    expect(r.stderr.split("\n")[0]).toBe('strata: Invalid configuration in $STRATA_MAP_TOKENS: expected an integer >= 1, got "lots"')
  })
})
