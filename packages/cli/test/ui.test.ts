// `strata ui` as a real process: it serves the dashboard on loopback over the repository's
// file store, lists a session the Promise API committed, and stops on SIGINT.
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { createContextEngine } from "@strata/core"
import { stateStore } from "@strata/store"
import { TrackerLayer } from "@strata/tiers"
import { tempDirs } from "@strata/test-support"
import { describe, expect, it } from "vitest"
import { BIN } from "./support.ts"

const dirs = tempDirs("strata-cli-ui-")

describe("strata ui", () => {
  it("serves the sessions of the repository's store on 127.0.0.1 and stops on SIGINT", async () => {
    const repo = dirs()
    writeFileSync(join(repo, "a.ts"), "export const a = 1\n")
    {
      await using engine = createContextEngine({ model: "claude-sonnet-4-5", repoRoot: repo, store: stateStore("file"), session: "work", tracker: TrackerLayer.memory() })
      const turn = await engine.assemble({ prompt: "What is a?" })
      await turn.commit({ reply: "One.", usage: { input: 1200, cacheRead: 0, cacheWrite: 0, output: 10 } })
    }
    const child = spawn(process.execPath, [BIN, "ui", "--repo", repo, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = ""
        child.stderr.on("data", (d: Buffer) => {
          err += d.toString("utf8")
          const m = /Strata dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err)
          if (m?.[1] !== undefined) resolve(m[1])
        })
        child.on("close", (code) => reject(new Error(`strata ui exited (${String(code)}): ${err}`)))
      })
      const body = (await (await fetch(new URL("/_strata/api/sessions", url))).json()) as { sessions: ReadonlyArray<{ name: string; requests: number }> }
      expect(body.sessions.map((s) => [s.name, s.requests])).toEqual([["work", 1]])
      expect((await fetch(url)).headers.get("content-type")).toMatch(/text\/html/)
    } finally {
      const closed = new Promise((resolve) => child.on("close", resolve))
      child.kill("SIGINT")
      await closed
    }
  })
})
