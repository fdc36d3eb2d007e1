// A reader that closes stdout early (`strata hud | head -3`, quitting `less`): every
// printing command ends with exit 0 and no stack trace. The pipe's read end is closed
// before the command writes anything, so every write meets EPIPE.
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "@strata/test-support"
import { BIN } from "./support.ts"

let repo: { path: string; cleanup: () => void }
beforeAll(() => {
  repo = tempDir("strata-epipe-")
  mkdirSync(join(repo.path, "src"))
  for (let i = 0; i < 40; i++) {
    writeFileSync(join(repo.path, "src", `mod${i}.ts`), `export function f${i}(x: number): number {\n  return x + ${i}\n}\n`)
  }
})
afterAll(() => repo.cleanup())

const closedEarly = (args: ReadonlyArray<string>): Promise<{ code: number | null; stderr: string }> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith("STRATA_") && !/API_KEY/.test(k)) env[k] = v
    }
    const child = spawn(process.execPath, [BIN, ...args, "--repo", repo.path], { env, stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.destroy()
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`strata ${args.join(" ")} timed out: ${stderr}`))
    }, 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })

describe.concurrent("a pipe closed early", () => {
  for (const args of [["hud"], ["map"], ["tree"], ["breakdown"], ["config"], ["config", "--json"], ["assemble", "--prompt", "hi"], ["--help"], ["map", "--help"]]) {
    it(`strata ${args.join(" ")}: exit 0, no stack trace`, async () => {
      const r = await closedEarly(args)
      expect(r.stderr).not.toMatch(/EPIPE|\s{4}at |internal error/)
      expect(r.code).toBe(0)
    })
  }
})
