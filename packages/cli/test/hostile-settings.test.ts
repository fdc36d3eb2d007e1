// Settings a user mistypes or an attacker plants: no output of any command shows a
// database password in any of its forms; an unknown store setting and malformed
// environment numbers are refused before anything is written.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "@strata/test-support"
import { runCli } from "../src/cli.ts"
import { makeTestOutput } from "../src/support/output.ts"
import { runBin } from "./support.ts"

const cleanups: Array<() => void> = []
afterAll(() => {
  for (const c of cleanups.splice(0)) c()
})
const fresh = () => {
  const dir = tempDir("strata-settings-")
  cleanups.push(dir.cleanup)
  writeFileSync(join(dir.path, "a.ts"), "export const a = 1\n")
  return dir.path
}

const SECRET = "hunter2secret"
// Port 1 on loopback: nothing listens, so opening the store fails fast.
const FORMS = [
  `postgres://strata:${SECRET}@127.0.0.1:1/strata`,
  `postgres://strata@127.0.0.1:1/strata?password=${SECRET}`,
  `postgresql://strata@127.0.0.1:1/strata?connect_timeout=1&password=${SECRET}`,
  `postgress://strata:${SECRET}@127.0.0.1:1/strata`,
  `postgres//strata:${SECRET}@127.0.0.1:1/strata`
]

/** Run `strata` in-process with `env`; stdout and stderr as recorded. */
const inProcess = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  // The commands read process.env; each test file runs in its own worker.
  const saved = { ...process.env }
  for (const k of Object.keys(process.env)) if (k.startsWith("STRATA_")) delete process.env[k]
  Object.assign(process.env, env)
  try {
    const out = makeTestOutput()
    const code = await runCli(args, { output: out.layer, env: process.env })
    return { code, stdout: out.stdout(), stderr: out.stderr() }
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
    Object.assign(process.env, saved)
  }
}

describe("a store password is never printed", () => {
  it("every form, from the environment and the config file: config, config --json, hud, assemble", async () => {
    const outputs: Array<string> = []
    for (const form of FORMS) {
      const repo = fresh()
      for (const args of [["config"], ["config", "--json"], ["hud"], ["assemble", "--prompt", "hi", "--json"]]) {
        const r = await inProcess([...args, "--repo", repo], { STRATA_STORE: form })
        outputs.push(`${args.join(" ")} -> ${r.code}\n${r.stdout}\n${r.stderr}`)
      }
      mkdirSync(join(repo, ".strata"), { recursive: true })
      writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, store: form }))
      for (const args of [["config"], ["config", "--json"], ["hud", "--verbose"]]) {
        const r = await inProcess([...args, "--repo", repo], {})
        outputs.push(`${args.join(" ")} (file) -> ${r.code}\n${r.stdout}\n${r.stderr}`)
      }
    }
    const all = outputs.join("\n")
    expect(all).not.toContain(SECRET)
    // The outputs are real: each setting was read and reported, masked.
    expect(all.split("***").length).toBeGreaterThan(FORMS.length * 4)
  })

  it("the real process, stderr and --verbose included", async () => {
    const r = await runBin(["hud", "--verbose", "--repo", fresh()], { env: { STRATA_STORE: FORMS[1] ?? "" } })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/password=\*\*\*/)
    expect(r.stdout + r.stderr).not.toContain(SECRET)
  })
})

describe("settings refused before anything is written", () => {
  it("STRATA_STORE=garbage is refused with exit 2; no garbage/ folder appears", async () => {
    const repo = fresh()
    const r = await inProcess(["assemble", "--prompt", "hi", "--repo", repo], { STRATA_STORE: "garbage" })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/STRATA_STORE.*a folder inside the repository written as a path/)
    expect(existsSync(join(repo, "garbage"))).toBe(false)
  })

  it("a folder written as a path is still the file store", async () => {
    const repo = fresh()
    const r = await inProcess(["assemble", "--prompt", "hi", "--reply", "ok", "--repo", repo], { STRATA_STORE: ".strata/shared" })
    expect(r.code, r.stderr).toBe(0)
    expect(readdirSync(join(repo, ".strata", "shared")).length).toBeGreaterThan(0)
  })

  for (const [name, value] of [
    ["STRATA_MAX_INPUT_TOKENS", "99999999999999999999"],
    ["STRATA_MAX_FILE_BYTES", "0x10"],
    ["STRATA_MAX_FILE_BYTES", "1e3"],
    ["STRATA_TIMEOUT_MS", "-5"]
  ] as const) {
    it(`${name}=${value} is refused as the config file would refuse it`, async () => {
      const r = await inProcess(["config", "--repo", fresh()], { [name]: value })
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`$${name}`)
    })
  }
})
