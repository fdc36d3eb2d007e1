// `strata replay` as a user runs it: the table, the dump and the plot, JSON, agent and
// recorded sessions, and bad input with its hint and exit code. What the replay measures
// is tested in @strata/replay (packages/replay/test).
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ReplayReport } from "@strata/replay"
import { tempDir } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runBin } from "./support.ts"

const demo = tempDir("strata-replay-cmd-demo-")
const scratch = tempDir("strata-replay-cmd-out-")
afterAll(() => [demo, scratch].forEach((d) => d.cleanup()))
beforeAll(() => {
  makeDemoRepo({ out: demo.path, replace: true })
})

const MODEL = "claude-sonnet-4-5"

function anthropicBody(text: string): string {
  return JSON.stringify({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: text }] })
}

describe("strata replay (the binary)", () => {
  it("prints the table, writes the dump and the plot; --json gives the report", async () => {
    const dump = join(scratch.path, "requests.jsonl")
    const plot = join(scratch.path, "replay.svg")
    const r = await runBin(["replay", "--repo", demo.path, "--turns", "3", "--strategy", "strata-flux", "--dump", dump, "--plot", plot])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^3 turns of /)
    expect(r.stdout).toMatch(/strata-flux/)
    expect(r.stdout).not.toMatch(/segments/)
    expect(readFileSync(plot, "utf8")).toMatch(/^<svg/)
    const lines = readFileSync(dump, "utf8").trim().split("\n")
    expect(lines).toHaveLength(3 * 3)
    expect(JSON.parse(lines[0]!)).toMatchObject({ t: 0, strategy: "none", request: { model: expect.any(String), messages: expect.any(Array) } })
    const json = await runBin(["replay", "--repo", demo.path, "--turns", "2", "--strategy", "oracle", "--provider", "gemini", "--json"])
    expect(json.code, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout) as ReplayReport
    expect(report).toMatchObject({ provider: "gemini", turns: 2 })
    expect(report.rows.map((row) => row.strategy)).toEqual(["none", "oracle"])
  }, 120_000)

  it("reports bad input with a hint and the usage exit code", async () => {
    const bad = await runBin(["replay", "--repo", demo.path, "--turns", "0"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--turns must be a positive number/)
    const notGit = await runBin(["replay", "--repo", scratch.path])
    expect(notGit.code).toBe(1)
    expect(notGit.stderr).toMatch(/Replay failed/)
    expect(notGit.stderr).toMatch(/hint: pass --repo PATH naming a git repository/)
    // A revision the history lacks is a wrong command line: exit 2, one line and its hint, no trace.
    const rev = await runBin(["replay", "--repo", demo.path, "--from", "no-such-rev"])
    expect(rev.code).toBe(2)
    const lines = rev.stderr.trim().split("\n")
    expect(lines[0]).toMatch(/--from: unknown revision no-such-rev/)
    expect(lines.slice(1).every((l) => /^\s*hint: --from takes a commit/.test(l))).toBe(true)
  }, 120_000)
})

describe("strata replay --session agent / --transcript (the binary)", () => {
  it("prints the agent table; a recorded session's malformed line is named; bad flag combinations are usage errors", async () => {
    const r = await runBin(["replay", "--repo", demo.path, "--session", "agent", "--turns", "2", "--strategy", "transcript"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^2 agent tasks \(\d+ requests\) of /)
    expect(r.stdout).toMatch(/\ntranscript +\d+/)
    const file = join(scratch.path, "bin-session.jsonl")
    writeFileSync(file, [anthropicBody("hi"), "{oops", anthropicBody("again")].join("\n"))
    const rec = await runBin(["replay", "--transcript", file, "--strategy", "transcript", "--json"])
    expect(rec.code, rec.stderr).toBe(0)
    const report = JSON.parse(rec.stdout) as ReplayReport
    expect(report.problems).toEqual([{ line: 2, skipped: true, reason: expect.stringMatching(/^not JSON/) }])
    expect(report.requests).toBe(2)
    const both = await runBin(["replay", "--transcript", file, "--session", "agent"])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--transcript replays a recorded session/)
    const chat = await runBin(["replay", "--repo", demo.path, "--strategy", "transcript-clear"])
    expect(chat.code).toBe(2)
    expect(chat.stderr).toMatch(/add --session agent/)
    const missing = await runBin(["replay", "--transcript", join(scratch.path, "missing.jsonl")])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/hint: --transcript takes a file/)
  }, 120_000)
})
