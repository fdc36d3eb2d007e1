// The real Codex CLI on a scripted coding task of 20+ tool steps (reads, re-reads, greps,
// shell commands, patches) through its `exec_command` and `apply_patch` tools, against a scripted Responses server on
// 127.0.0.1 priced with the provider's simulator: once directly and once through the proxy.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOpenAISimulator } from "@strata/providers"
import { withoutCacheControls } from "@strata/proxy"
import { proxyFront, type Forwarded } from "./drive.ts"
import { requireAgent, runAgent, type AgentRun } from "./agents.ts"
import { startResponsesServer, type CodexStep, type Received } from "./scripted.ts"

const KEY = "sk-test-codex-KEY-93e1b0d4aa17"
const work = mkdtempSync(join(tmpdir(), "strata-proxy-codex-"))
const repo = join(work, "repo")

// Big enough that clearing superseded printouts is worth it in edit mode (at least 1,500
// tokens at once for a Responses body).
const HEADER = Array.from({ length: 80 }, (_, i) => `// ${i}: this module is part of the greeting example and has a long header comment.`).join("\n") + "\n"
const FILES: Record<string, string> = {
  "src/greet.ts": HEADER + 'export const greet = (name: string) => "hello " + name\n',
  "src/math.ts": HEADER + "export const add = (a: number, b: number) => a + b\nexport const sub = (a: number, b: number) => a - b\n",
  "NOTES.md": "# Notes\n\nTODO: rename greet\n"
}

const resetRepo = () => {
  rmSync(repo, { recursive: true, force: true })
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(join(repo, path, ".."), { recursive: true })
    writeFileSync(join(repo, path), content)
  }
}

const sh = (cmd: string): CodexStep => ({ shell: cmd })
const patch = (file: string, from: string, to: string): CodexStep => ({ patch: `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch` })
const SCRIPT: ReadonlyArray<CodexStep> = [
  sh("cat src/greet.ts"),
  sh("grep -rn export src"),
  sh("ls src"),
  sh("cat src/math.ts"),
  sh("cat src/greet.ts"),
  sh("wc -l src/greet.ts src/math.ts"),
  patch("src/greet.ts", 'export const greet = (name: string) => "hello " + name', 'export const greet = (name: string) => "Hello, " + name'),
  sh("cat src/greet.ts"),
  sh("grep -rn Hello src"),
  patch("src/math.ts", "export const sub = (a: number, b: number) => a - b", "export const sub = (a: number, b: number) => a - b // checked"),
  sh("cat src/math.ts"),
  sh("ls"),
  sh("find . -name '*.ts' | sort"),
  sh("cat NOTES.md"),
  patch("NOTES.md", "TODO: rename greet", "DONE: greet says Hello"),
  sh("cat NOTES.md"),
  sh("grep -rn Hello ."),
  sh("cat src/greet.ts"),
  sh("echo checked"),
  sh("cat src/math.ts"),
  sh("head -1 NOTES.md"),
  { text: "Renamed the greeting, marked sub as checked and updated the notes." }
]

interface Outcome {
  readonly run: AgentRun
  readonly received: ReadonlyArray<Received>
  readonly files: Record<string, string>
}

const runCodex = async (front: (upstream: string) => Promise<{ url: string; close: () => Promise<void> }>, home: string): Promise<Outcome> => {
  resetRepo()
  mkdirSync(join(home, ".codex"), { recursive: true })
  const server = await startResponsesServer(SCRIPT)
  const f = await front(server.url)
  try {
    const run = await runAgent(
      requireAgent("codex"),
      [
        "exec",
        "--skip-git-repo-check",
        "-c", 'model_provider="local"',
        "-c", `model_providers.local={name="local",base_url="${f.url}/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`,
        "-c", 'model="gpt-5.5"',
        "-c", 'approval_policy="never"',
        "-c", 'sandbox_mode="danger-full-access"',
        "Tidy the greeting and the notes."
      ],
      { cwd: repo, home, env: { OPENAI_API_KEY: KEY, CODEX_HOME: join(home, ".codex") } }
    )
    const files = Object.fromEntries(Object.keys(FILES).map((p) => [p, readFileSync(join(repo, p), "utf8")]))
    return { run, received: [...server.received], files }
  } finally {
    await f.close()
    await server.close()
  }
}

const sent: Array<Forwarded> = []
const logs: Array<string> = []
const editSent: Array<Forwarded> = []
let direct: Outcome
let proxied: Outcome
let edited: Outcome

beforeAll(async () => {
  direct = await runCodex(async (url) => ({ url, close: async () => {} }), join(work, "home-direct"))
  proxied = await runCodex(proxyFront(sent, { logs }), join(work, "home-proxy"))
  // Edit mode, on a clock where the person steps away for 25 hours every 8 requests: GPT-5.5
  // keeps only 24h cache entries, so the cache is lost anyway and clearing is free. (Pauses
  // of minutes lose nothing on this model, and the proxy then clears nothing.)
  let calls = 0
  edited = await runCodex(
    proxyFront(editSent, {
      mode: "edit",
      now: () => {
        const k = calls++
        return 1_000_000 + k * 2 + 90_000 * Math.floor(k / 8)
      }
    }),
    join(work, "home-edit")
  )
}, 720_000) // three agent runs, each bounded by runAgent's limit

afterAll(() => rmSync(work, { recursive: true, force: true }))

const finalText = (o: Outcome) => o.run.stdout.trim().split("\n").at(-1) ?? ""

describe("Codex CLI through the proxy", () => {
  it("runs the 20+ step task directly, to the scripted end", () => {
    expect(direct.run.code, direct.run.stderr.slice(-2000)).toBe(0)
    expect(direct.received.filter((r) => r.main).length).toBeGreaterThanOrEqual(SCRIPT.length)
    expect(direct.files["src/greet.ts"]).toContain('"Hello, "')
    expect(direct.files["NOTES.md"]).toContain("DONE: greet says Hello")
    expect(finalText(direct)).toContain("Renamed the greeting")
  })

  it("makes the same edits and gives the same answer through the proxy", () => {
    expect(proxied.run.code, proxied.run.stderr.slice(-2000)).toBe(0)
    expect(proxied.files).toEqual(direct.files)
    expect(finalText(proxied)).toBe(finalText(direct))
    expect(proxied.received.filter((r) => r.main).length).toBe(direct.received.filter((r) => r.main).length)
  })

  it("forwards every request as the agent sent it, modulo cache controls", () => {
    expect(sent.length).toBeGreaterThanOrEqual(SCRIPT.length)
    for (const s of sent) expect(withoutCacheControls(s.forwarded)).toEqual(withoutCacheControls(s.sent))
    for (const r of proxied.received.filter((x) => x.main)) expect(sent.some((s) => JSON.stringify(s.forwarded) === JSON.stringify(r.body))).toBe(true)
  })

  it("costs no more than what the agent sent (the provider's simulator on both)", () => {
    const asSent = makeOpenAISimulator({ model: "gpt-5.5" })
    const forwarded = makeOpenAISimulator({ model: "gpt-5.5" })
    let a = 0
    let f = 0
    sent.forEach((s, i) => {
      a += asSent.send(s.sent, i * 2).cost.inputEquivalentTokens
      f += forwarded.send(s.forwarded, i * 2).cost.inputEquivalentTokens
    })
    expect(a).toBeGreaterThan(0)
    expect(f / a).toBeLessThanOrEqual(1)
  })

  it("--mode edit: same edits, same answer; only cache controls and superseded command outputs (placeholders) change; no dearer than sent", () => {
    expect(edited.run.code, `exit ${edited.run.code}\n${edited.run.stderr}\n${edited.run.stdout}`).toBe(0)
    expect(finalText(edited)).toBe(finalText(direct))
    expect(edited.files).toEqual(direct.files)
    const blank = (body: unknown): unknown => {
      const b = withoutCacheControls(body) as { input?: unknown }
      return { ...b, input: Array.isArray(b.input) ? b.input.map((i: { type?: string }) => (i.type === "function_call_output" ? { ...i, output: "" } : i)) : b.input }
    }
    let placeholders = 0
    for (const s of editSent) {
      expect(blank(s.forwarded)).toEqual(blank(s.sent))
      placeholders += (JSON.stringify(s.forwarded).match(/\[strata proxy: cleared the superseded output of /g) ?? []).length
    }
    expect(placeholders).toBeGreaterThan(0)
    // Priced at the times the proxy saw (its clock).
    const asSent = makeOpenAISimulator({ model: "gpt-5.5" })
    const forwarded = makeOpenAISimulator({ model: "gpt-5.5" })
    let a = 0
    let f = 0
    for (const s of editSent) {
      const x = asSent.send(s.sent, s.at ?? 0)
      const y = forwarded.send(s.forwarded, s.at ?? 0)
      a += x.cost.inputEquivalentTokens
      f += y.cost.inputEquivalentTokens
    }
    console.log(`codex --mode edit: ${editSent.length} requests, ${placeholders} placeholders sent, forwarded/as-sent ${(f / a).toFixed(4)}`)
    expect(f / a).toBeLessThanOrEqual(1)
    expect(f / a).toBeLessThan(0.999)
  })

  it("keeps the loop as one session and never logs the key", () => {
    const exchanges = logs.map((l) => JSON.parse(l) as { kind: string; session?: string }).filter((l) => l.kind === "exchange")
    const sessions = new Map<string, number>()
    for (const e of exchanges) sessions.set(e.session!, (sessions.get(e.session!) ?? 0) + 1)
    expect(Math.max(...sessions.values())).toBeGreaterThanOrEqual(SCRIPT.length)
    expect(logs.join("\n")).not.toContain(KEY)
    expect(proxied.received.filter((r) => r.main).every((r) => r.headers["authorization"] === `Bearer ${KEY}`)).toBe(true)
  })
})
