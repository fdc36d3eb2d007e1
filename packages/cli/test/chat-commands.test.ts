// `strata chat` as a chat user meets it (the built binary against a scripted provider on
// 127.0.0.1): the slash commands (/add, /drop, /model, /cost, /tokens, /clear), --session,
// a reply's terminal control sequences shown as text (Strata's own colours kept), a
// "waiting" line while the provider is silent, and help texts that match behaviour.
import { cpSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { startFakeProvider } from "./fake-provider.ts"
import { tempDir } from "@strata/test-support"
import { runBin, storedSession } from "./support.ts"

const dirs: Array<{ cleanup: () => void }> = []
let server: Awaited<ReturnType<typeof startFakeProvider>>
let template = ""

const env = (extra: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url, ...extra })

/** A fresh copy of the demo repository, configured for Anthropic. */
const repoCopy = (): string => {
  const d = tempDir("strata-chat-cmd-copy-")
  dirs.push(d)
  cpSync(template, d.path, { recursive: true })
  return d.path
}

beforeAll(async () => {
  server = await startFakeProvider()
  const d = tempDir("strata-chat-cmd-")
  dirs.push(d)
  template = makeDemoRepo({ out: join(d.path, "harbor") }).out
  mkdirSync(join(template, ".strata"), { recursive: true })
  writeFileSync(join(template, ".strata", "config.json"), JSON.stringify({ version: 1, provider: "anthropic" }))
})
afterAll(async () => {
  await server.close()
  for (const d of dirs) d.cleanup()
})

describe("chat: slash commands", () => {
  it("/add confirms, /drop of an unknown file says so, /model, /cost, /tokens and /clear answer", async () => {
    const repo = repoCopy()
    const input = [
      "/add src/services/pricing.ts",
      "/add src/services/pricing.ts",
      "/drop nope.ts",
      "/model",
      "/model gpt-5.4",
      "Where is pricing done?",
      "/cost",
      "/tokens",
      "/drop src/services/pricing.ts",
      "/clear",
      "/quit"
    ].join("\n")
    const r = await runBin(["chat", "--repo", repo, "--no-hud", "--no-tools"], { env: env(), input: input + "\n" })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("added src/services/pricing.ts (1 file in context)")
    expect(r.stderr).toContain("src/services/pricing.ts is already in context")
    expect(r.stderr).toContain("nope.ts is not in context; /files lists the files in context")
    expect(r.stderr).toMatch(/^anthropic claude-sonnet-5$/m)
    expect(r.stderr).toContain("strata chat --model gpt-5.4")
    expect(r.stderr).toMatch(/turn 1 "Where is pricing done\?": \$\d+\.\d+ \(\$\d+\.\d+ without the cache\)/)
    expect(r.stderr).toMatch(/this chat: \$/)
    expect(r.stderr).toMatch(/session \(1 requests\): \$/)
    expect(r.stderr).toMatch(/next request: [\d,.k]+ tokens before your prompt/)
    expect(r.stderr).toMatch(/last turn: read [\d,.k]+, write/)
    expect(r.stderr).toContain("dropped src/services/pricing.ts (0 files in context)")
    expect(r.stderr).toContain("cleared the conversation (2 messages); the files in context stay")
    expect((await storedSession(repo)).history).toEqual([])
  })

  it("--session NAME keeps the conversation under that name; the default session is untouched", async () => {
    const repo = repoCopy()
    const r = await runBin(["chat", "--repo", repo, "--no-hud", "--no-tools", "--session", "review", "--once", "Where is pricing done?"], { env: env() })
    expect(r.code, r.stderr).toBe(0)
    expect((await storedSession(repo, { name: "review" })).history).toHaveLength(2)
    expect((await storedSession(repo)).history).toHaveLength(0)
    const bad = await runBin(["chat", "--repo", repo, "--session", "../x", "--once", "hi"], { env: env() })
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain("--session")
  })
})

describe("chat: terminal safety and waiting", () => {
  it("a reply's control sequences (OSC 52, window title, clear screen, BEL) are shown as text; Strata's colours stay", async () => {
    const repo = repoCopy()
    server.setReply(["Hello ", "\x1b]52;c;cHduZWQ=\x07", "\x1b]0;owned\x07", "\x1b[2J", "done"])
    try {
      const r = await runBin(["chat", "--repo", repo, "--no-hud", "--no-tools", "--once", "hi"], { env: env({ FORCE_COLOR: "1" }) })
      expect(r.code, r.stderr).toBe(0)
      const bytes = Buffer.from(r.stdout, "utf8")
      expect(bytes.includes(0x07)).toBe(false)
      // Every ESC left is one of Strata's SGR colour sequences.
      // eslint-disable-next-line no-control-regex
      expect(r.stdout.replace(/\x1b\[\d+(?:;\d+)*m/g, "")).not.toContain("\x1b")
      // eslint-disable-next-line no-control-regex
      expect(r.stdout).toMatch(/\x1b\[\d+m/)
      expect(r.stdout).toContain("\\x1b]52;c;cHduZWQ=\\x07")
      expect(r.stdout).toContain("\\x1b[2J")
    } finally {
      server.setReply(["Pricing lives in ", "`quote()` in src/services/pricing.ts", "."])
    }
  })

  it("a provider that is silent for a while gets a 'waiting for' line on stderr", async () => {
    const repo = repoCopy()
    server.scriptNext((res) => {
      setTimeout(() => res.destroy(), 3600)
    })
    const r = await runBin(["chat", "--repo", repo, "--no-hud", "--no-tools", "--once", "hi", "--timeout-ms", "10000"], { env: env() })
    expect(r.stderr).toMatch(/waiting for anthropic claude-sonnet-5 to answer \(up to 10 s; Ctrl-C stops\)/)
  })
})

describe("help texts match behaviour", () => {
  it("chat --help names .strata/state/ and a gateway URL with /v1; init --help the flux policy", async () => {
    const chat = await runBin(["chat", "--help"])
    expect(chat.stdout).toContain(".strata/state/")
    expect(chat.stdout).not.toContain(".strata/sessions/")
    expect(chat.stdout).toContain("STRATA_BASE_URL=http://localhost:4000/v1")
    const init = await runBin(["init", "--help"])
    expect(init.stdout).toContain("flux policy")
    expect(init.stdout).not.toContain("threshold policy")
  })

  it("map --budget -5 and --budget abc: exit 2, a message in the CLI's words with an example", async () => {
    for (const value of ["-5", "abc", "0"]) {
      const r = await runBin(["map", "--budget", value, "--repo", template])
      expect(r.code, value).toBe(2)
      expect(r.stderr, value).toContain(`--budget must be a whole number of tokens greater than 0, got "${value}"`)
      expect(r.stderr, value).toContain("strata map --budget 2000")
      expect(r.stderr, value).not.toMatch(/--verbose|finite number/)
    }
  })
})
