// `strata ui` as a real process: it serves the dashboard on loopback over the repository's
// file store, lists a session the Promise API committed, and stops on SIGINT. And
// `strata replay --html`: one self-contained page with the report in it.
import { execFileSync, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { createContextEngine } from "@strata/core"
import { stateStore } from "@strata/store"
import { TrackerLayer } from "@strata/tiers"
import { tempDirs } from "@strata/test-support"
import { describe, expect, it } from "vitest"
import { BIN, runBin } from "./support.ts"

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

describe("strata replay --html", () => {
  it("writes one self-contained page holding the report, with a CSP that allows only its own code", async () => {
    const repo = dirs()
    const git = (...args: ReadonlyArray<string>) => execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: repo })
    git("init", "-q")
    for (let i = 1; i <= 3; i++) {
      writeFileSync(join(repo, `f${i}.ts`), `export const f${i} = (x: number): number => x + ${i}\n`)
      git("add", ".")
      git("commit", "-qm", `commit ${i}`)
    }
    const page = join(repo, "replay.html")
    const r = await runBin(["replay", "--repo", repo, "--session", "agent", "--html", page, "--json"], { timeoutMs: 120_000 })
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as { rows: ReadonlyArray<{ strategy: string }> }
    const html = readFileSync(page, "utf8")
    expect(html.startsWith("<!doctype html>")).toBe(true)
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/)
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/)
    const embedded = /<script type="application\/json" id="report">(.*?)<\/script>/s.exec(html)?.[1] ?? ""
    const data = JSON.parse(embedded) as { report: { rows: ReadonlyArray<{ strategy: string }> } }
    expect(data.report.rows.map((row) => row.strategy)).toEqual(report.rows.map((row) => row.strategy))
  })
})
