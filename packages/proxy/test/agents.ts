// Running the real coding agents (Claude Code, Codex CLI) offline, as installed by
// scripts/install-agents.mjs (CI runs it before the tests): a scratch HOME, telemetry off,
// the base URL pointed at a server on 127.0.0.1.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")

/** Where the agents are: `STRATA_AGENTS_DIR`, else the repository's `.cache/agents`. */
export const agentPaths = (): { readonly claude: string; readonly codex: string } => {
  const dir = process.env["STRATA_AGENTS_DIR"] ?? join(root, ".cache", "agents")
  return { claude: join(dir, "node_modules", ".bin", "claude"), codex: join(dir, "node_modules", ".bin", "codex") }
}

/** Fails (never skips) when an agent is missing: the tests need them. */
export const requireAgent = (name: "claude" | "codex"): string => {
  const p = agentPaths()[name]
  if (!existsSync(p)) {
    throw new Error(`${name} is not installed at ${p}: run \`node scripts/install-agents.mjs\` (or set STRATA_AGENTS_DIR to a folder it installed into)`)
  }
  return p
}

export interface AgentRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const runAgent = (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly home: string; readonly env: Record<string, string>; readonly timeoutMs?: number }): Promise<AgentRun> => {
  mkdirSync(options.home, { recursive: true })
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: options.home,
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    NO_COLOR: "1",
    ...options.env
  }
  return new Promise((resolve) => {
    // stdin closed: `codex exec` otherwise waits for more input on it.
    const child = spawn(command, [...args], { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c))
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c))
    // Generous: a run takes seconds alone, minutes when the test command loads both cores.
    const limit = options.timeoutMs ?? 240_000
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      child.kill("SIGKILL")
    }, limit)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? 1, stdout, stderr: killed ? `${stderr}\n(killed after ${limit / 1000} s)` : stderr })
    })
  })
}
