// Requests within the model's input limit, through the built CLI (issue 17 item 3): a
// 20,000-file tree generated at test time, whose whole map is over 800,000 tokens, and a
// session whose history alone is over the limit. `strata assemble` stays within the
// limit with a warning in the first case and refuses the second with RequestTooLarge,
// exit code 1, changing nothing under .strata/.
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { tempDir } from "@strata/test-support"
import { appendStored, runBin } from "./support.ts"

const FILES = 20_000
const LIMIT = 200_000 // claude-sonnet-5, the default model
const RESERVE = 8_192

const dirs: Array<{ cleanup: () => void }> = []
afterAll(() => dirs.forEach((d) => d.cleanup()))

/**
 * 20,000 small TypeScript files in 200 folders, each importing one other file, so the
 * reference graph ranks them. Written synchronously: about a second.
 */
const hugeTree = (root: string): void => {
  for (let i = 0; i < FILES; i++) {
    const folder = join(root, "src", `pkg${Math.floor(i / 100)}`)
    if (i % 100 === 0) mkdirSync(folder, { recursive: true })
    const dep = (i * 7919) % FILES
    writeFileSync(
      join(folder, `mod${i}.ts`),
      `import { f${dep} } from "../pkg${Math.floor(dep / 100)}/mod${dep}"\nexport function f${i}(x: number): number {\n  return f${dep}(x) + ${i}\n}\n`
    )
  }
}

/** "anthropic request for claude-sonnet-5: 6 messages, 87,250 tokens" -> 87250 */
const requestTokens = (stdout: string): number => {
  const m = /request for \S+: \d+ messages, ([\d,]+) tokens/.exec(stdout)
  if (m === null) throw new Error(`no request line in:\n${stdout}`)
  return Number(m[1]!.replace(/,/g, ""))
}

describe("a 20,000-file repository", () => {
  let repo = ""
  beforeAll(() => {
    const d = tempDir("strata-huge-")
    dirs.push(d)
    repo = join(d.path, "huge")
    hugeTree(repo)
  }, 120_000)

  it("assemble stays within the model's input limit, with a warning naming the map budget", async () => {
    // Cold: index 20,000 files, rank them, place them (how long that takes is a benchmark's
    // business, bench/symbols; here only the run's own timeout bounds it).
    const first = await runBin(["assemble", "--repo", repo, "--prompt", "Where is f42 used?", "--reply", "In pkg0."], { timeoutMs: 240_000 })
    expect(first.code, first.stderr).toBe(0)
    const tokens = requestTokens(first.stdout)
    expect(tokens + RESERVE).toBeLessThanOrEqual(LIMIT)
    // The map is the model's budget, 16,384 tokens, of a whole map over 800,000.
    expect(tokens).toBeGreaterThan(15_000)
    expect(first.stderr).toMatch(/warning: The repository map \([\d,]+ tokens\) is larger than its 16,384-token budget, derived from claude-sonnet-5's 200,000-token input limit; the file tree \([\d,]+ tokens\) and the symbol blocks of the [\d,]+ least referenced files \([\d,]+ tokens\) are left out of the request/)

    // The breakdown says what was left out, and the total is the request's.
    const breakdown = await runBin(["breakdown", "--repo", repo, "--json"], { timeoutMs: 120_000 })
    expect(breakdown.code, breakdown.stderr).toBe(0)
    const b = JSON.parse(breakdown.stdout) as { total_tokens: number; left_out?: { map: { budget_tokens: number; budget: string; files: number; tree_tokens: number } } }
    expect(b.total_tokens + RESERVE).toBeLessThanOrEqual(LIMIT)
    expect(b.left_out?.map).toMatchObject({ budget_tokens: 16_384, budget: "model" })
    expect(b.left_out!.map.files).toBeGreaterThan(FILES / 2)
    expect(b.left_out!.map.tree_tokens).toBeGreaterThan(100_000)
  }, 300_000)

  it("the cut map is the same from request to request: the next requests keep the frozen prefix byte for byte", async () => {
    type Body = { system: unknown; messages: ReadonlyArray<{ role: string; content: unknown }> }
    // Recorded turns (a dry run would index without the symbol cache, from scratch).
    const body = async (...args: ReadonlyArray<string>): Promise<Body> => {
      const r = await runBin(["assemble", "--repo", repo, "--json", ...args], { timeoutMs: 120_000 })
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout) as Body
    }
    const a = await body("--prompt", "And f43?", "--reply", "In pkg0 too.")
    const b = await body("--prompt", "A different, much longer question about f44 and its callers?", "--file", "src/pkg0/mod7.ts", "--reply", "Nowhere else.")
    // L0 is the system; L1 and L2 are the first four messages (two user/assistant pairs).
    expect(JSON.stringify(b.system)).toBe(JSON.stringify(a.system))
    expect(JSON.stringify(b.messages.slice(0, 4))).toBe(JSON.stringify(a.messages.slice(0, 4)))
    expect(JSON.stringify(a.system).length + JSON.stringify(a.messages.slice(0, 4)).length).toBeGreaterThan(40_000)
  }, 300_000)
})

describe("a session whose history alone is over the limit", () => {
  it("assemble refuses it with RequestTooLarge (exit 1), records nothing, and says what to do", async () => {
    const d = tempDir("strata-long-history-")
    dirs.push(d)
    const repo = makeDemoRepo({ out: join(d.path, "harbor") }).out
    const turn = await runBin(["assemble", "--repo", repo, "--prompt", "Where is pricing done?", "--reply", "In quote()."])
    expect(turn.code, turn.stderr).toBe(0)
    // One very long exchange in the history file (about 250,000 tokens).
    await appendStored(repo, [{ role: "user", content: "Summarize this log:\n" + "abc ".repeat(250_000) }, { role: "assistant", content: "It repeats." }])
    const state = join(repo, ".strata")
    const snapshot = () => {
      const out: Record<string, string> = {}
      const walk = (dir: string, prefix: string) => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          if (e.isDirectory()) {
            if (e.name !== "symbols") walk(join(dir, e.name), `${prefix}${e.name}/`)
          } else out[`${prefix}${e.name}`] = readFileSync(join(dir, e.name), "utf8")
        }
      }
      walk(state, "")
      return out
    }
    const before = snapshot()
    const refused = await runBin(["assemble", "--repo", repo, "--json", "--prompt", "And?", "--reply", "More.", "--file", "src/services/pricing.ts"], { timeoutMs: 120_000 })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    const { error } = JSON.parse(refused.stderr.trim().split("\n").at(-1)!) as { error: { tag: string; message: string; hint: string; exitCode: number } }
    expect(error.tag).toBe("RequestTooLarge")
    expect(error.message).toMatch(/^The request for claude-sonnet-5 is [\d,]+ tokens \(history [\d,]+, files 0, .*over the model's 200,000-token input limit, so it was not sent\./)
    expect(error.hint).toMatch(/start a new conversation \(another session: --session NAME/)
    expect(snapshot()).toEqual(before)

    // The human form says the same on one line, with the hint.
    const plain = await runBin(["assemble", "--repo", repo, "--prompt", "And?", "--dry-run"], { timeoutMs: 120_000 })
    expect(plain.code).toBe(1)
    expect(plain.stderr).toMatch(/^strata: The request for claude-sonnet-5 is/m)
    expect(plain.stderr).toMatch(/^hint: /m)
  }, 300_000)
})

describe("a copy of the demo repository", () => {
  it("is far under the limit: nothing is left out and no warning is given", async () => {
    const d = tempDir("strata-demo-limits-")
    dirs.push(d)
    const repo = join(d.path, "harbor")
    cpSync(makeDemoRepo({ out: join(d.path, "src-harbor") }).out, repo, { recursive: true })
    const r = await runBin(["breakdown", "--repo", repo, "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as { left_out?: unknown }).left_out).toBeUndefined()
    expect(r.stderr).not.toMatch(/budget|input limit/)
  })
})
