// `strata chat --continue` picks up the session the last chat used (issue 29, item 7),
// in-process against a scripted provider on 127.0.0.1.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { runCli } from "../src/cli.ts"
import { makeTestOutput } from "../src/support/output.ts"
import { startFakeProvider } from "./fake-provider.ts"
import { storedSession } from "./support.ts"

const dir = tempDir("strata-chat-continue-")
let server: Awaited<ReturnType<typeof startFakeProvider>>
const repo = makeDemoRepo({ out: join(dir.path, "harbor") }).out

beforeAll(async () => {
  server = await startFakeProvider()
  mkdirSync(join(repo, ".strata"), { recursive: true })
  writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "anthropic" }))
})
afterAll(async () => {
  await server.close()
  dir.cleanup()
})

/** Run `strata` in-process; the commands read process.env, so the provider's settings go there for the call. */
const run = async (...args: ReadonlyArray<string>) => {
  const saved = { ...process.env }
  for (const k of Object.keys(process.env)) if (k.startsWith("STRATA_")) delete process.env[k]
  Object.assign(process.env, { ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url, NO_COLOR: "1" })
  try {
    const out = makeTestOutput()
    const code = await runCli([...args, "--repo", repo, "--no-hud"], { output: out.layer, env: process.env })
    return { code, stdout: out.stdout(), stderr: out.stderr() }
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
    Object.assign(process.env, saved)
  }
}

describe("chat --continue", () => {
  it("continues the session the last chat used; says so when there is none", async () => {
    const none = await run("chat", "--continue", "--once", "hi")
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/no chat has run in .* yet, so there is no session to continue/)

    expect((await run("chat", "--session", "review", "--once", "Where is pricing done?")).code).toBe(0)
    const next = await run("chat", "--continue", "--once", "And shipping?")
    expect(next.code, next.stderr).toBe(0)
    const review = await storedSession(repo, { name: "review" })
    expect(review.history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["Where is pricing done?", "And shipping?"])
    expect((await storedSession(repo)).history).toHaveLength(0)

    const both = await run("chat", "--continue", "--session", "other", "--once", "x")
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--continue and --session cannot be used together")
  })
})
