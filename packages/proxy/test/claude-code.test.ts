// The real Claude Code CLI on a scripted coding task of 20+ tool steps (reads, re-reads,
// greps, shell commands, edits), against a scripted Anthropic server on 127.0.0.1 that
// prices its cache with the provider's simulator: once directly and once through the proxy.
// Same file edits, same final answer; every forwarded request is the agent's own modulo
// cache controls; the forwarded requests cost no more than what the agent sent.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAnthropicSimulator } from "@strata/providers"
import { withoutCacheControls } from "@strata/proxy"
import { proxyFront, type Forwarded } from "./drive.ts"
import { requireAgent, runAgent, type AgentRun } from "./agents.ts"
import { startAnthropicServer, type AnthropicStep, type Received } from "./scripted.ts"

const KEY = "sk-ant-test-KEY-4c1d9e77f0a2"
const work = mkdtempSync(join(tmpdir(), "strata-proxy-claude-"))
const repo = join(work, "repo")

// Big enough that a superseded read is worth clearing in edit mode.
const HEADER = Array.from({ length: 60 }, (_, i) => `// ${i}: this module is part of the greeting example and has a long header comment.`).join("\n") + "\n"
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

const read = (p: string) => ({ tool: "Read", input: { file_path: join(repo, p) } })
const bash = (command: string) => ({ tool: "Bash", input: { command, description: "Run a command" } })
const SCRIPT: ReadonlyArray<AnthropicStep> = [
  read("src/greet.ts"),
  { tool: "Grep", input: { pattern: "export", path: repo } },
  bash("ls src"),
  read("src/math.ts"),
  read("src/greet.ts"),
  bash("wc -l src/greet.ts src/math.ts"),
  { tool: "Edit", input: { file_path: join(repo, "src/greet.ts"), old_string: '"hello "', new_string: '"Hello, "' } },
  read("src/greet.ts"),
  bash("cat src/greet.ts"),
  { tool: "Grep", input: { pattern: "Hello", path: repo } },
  { tool: "Edit", input: { file_path: join(repo, "src/math.ts"), old_string: "a - b", new_string: "a - b // checked" } },
  read("src/math.ts"),
  bash("ls"),
  { tool: "Glob", input: { pattern: "**/*.ts" } },
  read("NOTES.md"),
  { tool: "Edit", input: { file_path: join(repo, "NOTES.md"), old_string: "TODO: rename greet", new_string: "DONE: greet says Hello" } },
  read("NOTES.md"),
  bash("grep -rn Hello src"),
  read("src/greet.ts"),
  bash("echo checked"),
  read("src/math.ts"),
  { text: "Renamed the greeting, marked sub as checked and updated the notes." }
]

interface Outcome {
  readonly run: AgentRun
  readonly received: ReadonlyArray<Received>
  readonly files: Record<string, string>
  readonly result: string
}

const runClaude = async (baseUrl: (upstream: string) => Promise<{ url: string; close: () => Promise<void> }>, home: string): Promise<Outcome> => {
  resetRepo()
  const server = await startAnthropicServer(SCRIPT)
  const front = await baseUrl(server.url)
  try {
    const run = await runAgent(
      requireAgent("claude"),
      ["-p", "Tidy the greeting and the notes.", "--output-format", "json", "--allowedTools", "Read,Edit,Write,Bash,Grep,Glob", "--model", "claude-sonnet-4-5"],
      { cwd: repo, home, env: { ANTHROPIC_BASE_URL: front.url, ANTHROPIC_API_KEY: KEY } }
    )
    const files = Object.fromEntries(Object.keys(FILES).map((p) => [p, readFileSync(join(repo, p), "utf8")]))
    let result = ""
    try {
      const parsed: unknown = JSON.parse(run.stdout)
      if (typeof parsed === "object" && parsed !== null && "result" in parsed && typeof parsed.result === "string") result = parsed.result
    } catch {
      result = ""
    }
    return { run, received: [...server.received], files, result }
  } finally {
    await front.close()
    await server.close()
  }
}

const sent: Array<Forwarded> = []
const logs: Array<string> = []
const editSent: Array<Forwarded> = []
const editLogs: Array<string> = []
let direct: Outcome
let proxied: Outcome
let edited: Outcome

beforeAll(async () => {
  direct = await runClaude(async (url) => ({ url, close: async () => {} }), join(work, "home-direct"))
  proxied = await runClaude(proxyFront(sent, { recordDir: join(work, "record"), logs }), join(work, "home-proxy"))
  // Edit mode, on a clock where the person steps away for 15 minutes every 8 requests (so
  // the cache is lost anyway and clearing superseded reads is free).
  let calls = 0
  edited = await runClaude(
    proxyFront(editSent, {
      mode: "edit",
      recordDir: join(work, "record-edit"),
      now: () => {
        const k = calls++
        return 1_000_000 + k * 2 + 900 * Math.floor(k / 8)
      },
      logs: editLogs
    }),
    join(work, "home-edit")
  )
}, 720_000) // three agent runs, each bounded by runAgent's limit

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("Claude Code through the proxy", () => {
  it("runs the 20+ step task directly, to the scripted end", () => {
    expect(direct.run.stderr).not.toMatch(/error/i)
    expect(direct.run.code, `exit ${direct.run.code}\n${direct.run.stderr}\n${direct.run.stdout}`).toBe(0)
    expect(direct.received.filter((r) => r.main).length).toBeGreaterThanOrEqual(SCRIPT.length)
    expect(direct.result).toBe("Renamed the greeting, marked sub as checked and updated the notes.")
    expect(direct.files["src/greet.ts"]).toContain('"Hello, "')
  })

  it("makes the same edits and gives the same answer through the proxy", () => {
    expect(proxied.run.code, `exit ${proxied.run.code}\n${proxied.run.stderr}\n${proxied.run.stdout}`).toBe(0)
    expect(proxied.result).toBe(direct.result)
    expect(proxied.files).toEqual(direct.files)
    expect(proxied.received.filter((r) => r.main).length).toBe(direct.received.filter((r) => r.main).length)
  })

  it("forwards every request as the agent sent it, modulo cache controls", () => {
    expect(sent.length).toBeGreaterThanOrEqual(SCRIPT.length)
    for (const s of sent) expect(withoutCacheControls(s.forwarded)).toEqual(withoutCacheControls(s.sent))
    // What the upstream received is what the proxy forwarded, byte for byte in meaning.
    const main = proxied.received.filter((r) => r.path.startsWith("/v1/messages") && !r.path.includes("count_tokens"))
    for (const r of main) expect(sent.some((s) => JSON.stringify(s.forwarded) === JSON.stringify(r.body))).toBe(true)
    expect(proxied.received.some((r) => r.path.includes("beta=true"))).toBe(true)
  })

  it("costs no more than what the agent sent (the provider's simulator on both)", () => {
    const main = sent.filter((s) => Array.isArray((s.sent as { tools?: unknown }).tools) && ((s.sent as { tools: Array<{ name?: string }> }).tools).some((t) => t.name === "Bash"))
    const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    let a = 0
    let f = 0
    main.forEach((s, i) => {
      a += asSent.send(s.sent, i * 2).cost.inputEquivalentTokens
      f += forwarded.send(s.forwarded, i * 2).cost.inputEquivalentTokens
    })
    expect(a).toBeGreaterThan(0)
    expect(f / a).toBeLessThanOrEqual(1)
  })

  it("--mode edit: same edits, same answer; only cache controls and superseded tool results (placeholders) change; no dearer than sent", () => {
    expect(edited.run.code, `exit ${edited.run.code}\n${edited.run.stderr}\n${edited.run.stdout}`).toBe(0)
    expect(edited.result).toBe(direct.result)
    expect(edited.files).toEqual(direct.files)
    const blank = (body: unknown): unknown => {
      const b = withoutCacheControls(body) as { messages?: Array<{ content?: unknown }> }
      return { ...b, messages: (b.messages ?? []).map((m) => ({ ...m, content: Array.isArray(m.content) ? m.content.map((c: { type?: string }) => (c.type === "tool_result" ? { ...c, content: "" } : c)) : m.content })) }
    }
    let placeholders = 0
    for (const s of editSent) {
      expect(blank(s.forwarded)).toEqual(blank(s.sent))
      const text = JSON.stringify(s.forwarded)
      placeholders += (text.match(/\[strata proxy: cleared the superseded result of /g) ?? []).length
    }
    expect(placeholders).toBeGreaterThan(0)
    // Priced at the times the proxy saw (its clock), main session only.
    const record = readdirSync(join(work, "record-edit")).map((f) => readFileSync(join(work, "record-edit", f), "utf8")).sort((a, b) => b.length - a.length)[0]!
    const times = new Map(record.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { t: number; request: unknown }).map((l) => [JSON.stringify(l.request), l.t]))
    const asSent = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    const forwarded = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
    let a = 0
    let f = 0
    let n = 0
    for (const s of editSent) {
      const t = times.get(JSON.stringify(s.sent))
      if (t === undefined) continue
      n++
      a += asSent.send(s.sent, t).cost.inputEquivalentTokens
      f += forwarded.send(s.forwarded, t).cost.inputEquivalentTokens
    }
    expect(n).toBeGreaterThanOrEqual(SCRIPT.length)
    console.log(`claude code --mode edit: ${n} requests, ${placeholders} placeholders sent, forwarded/as-sent ${(f / a).toFixed(4)}`)
    expect(f / a).toBeLessThanOrEqual(1)
    expect(f / a).toBeLessThan(0.999)
  })

  it("keeps the agent's loop as one session, and never writes the key", () => {
    const exchanges = logs.map((l) => JSON.parse(l) as { kind: string; session?: string; exchange?: { path: string; usage?: unknown } }).filter((l) => l.kind === "exchange")
    const withTools = exchanges.filter((e) => e.exchange?.usage !== undefined)
    const sessions = new Map<string, number>()
    for (const e of withTools) sessions.set(e.session!, (sessions.get(e.session!) ?? 0) + 1)
    expect(Math.max(...sessions.values())).toBeGreaterThanOrEqual(SCRIPT.length)
    expect(logs.join("\n")).not.toContain(KEY)
    const recorded = readFileSync(join(work, "record", `${[...sessions].sort((x, y) => y[1] - x[1])[0]![0]}.jsonl`), "utf8")
    expect(recorded.split("\n").filter((l) => l !== "").length).toBeGreaterThanOrEqual(SCRIPT.length)
    expect(recorded).not.toContain(KEY)
    // The key went upstream unchanged.
    expect(proxied.received.every((r) => r.headers["x-api-key"] === KEY || r.headers["authorization"] === `Bearer ${KEY}`)).toBe(true)
  })
})
