// The real Claude Code CLI with `strata mcp` as its MCP server, offline: a scripted
// Anthropic server on 127.0.0.1 streams answers (SSE) whose tool calls are
// mcp__strata__repo_map and then mcp__strata__find_symbol; Claude Code runs them through
// `strata mcp` (stdio) and the next request it sends carries their results.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDirs } from "@strata/test-support"
import { anthropicEvents, type Recorded, type Reply, sse, startServer, type TestServer } from "@strata/test-support/http"
import { agentPaths } from "../../../scripts/install-agents.mjs"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"

const temp = tempDirs("strata-mcp-claude-")
const bin = resolve(import.meta.dirname, "..", "dist", "bin.js")
const claude = agentPaths().claude
const installed = existsSync(claude)
// CI installs the agents first (.ci/run); there a missing binary fails below instead of skipping.
const run = installed || process.env.CI === "true" ? it : it.skip
if (!installed && process.env.CI !== "true") console.warn(`[strata] Claude Code not installed at ${claude}: run \`node scripts/install-agents.mjs\`; skipping mcp-claude.test.ts`)

type Block = { readonly type: string; readonly name?: string; readonly tool_use_id?: string; readonly content?: unknown; readonly id?: string }
type Body = { readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<Block> }>; readonly tools?: ReadonlyArray<{ readonly name: string }> }

const blocksOf = (body: Body): Array<Block> => (body.messages ?? []).flatMap((m) => (typeof m.content === "string" ? [] : [...m.content]))
const resultText = (block: Block): string =>
  typeof block.content === "string" ? block.content : Array.isArray(block.content) ? block.content.map((c: { text?: string }) => c.text ?? "").join("") : ""

/** Stream one assistant message as Anthropic's SSE events: text, or one tool call. */
const stream = (res: Reply, answer: { readonly text: string } | { readonly tool: string; readonly id: string; readonly input: unknown }): Promise<void> =>
  sse(res, anthropicEvents([answer], { id: `msg_${Date.now()}`, usage: { input_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } }))

const isConversation = (body: Body): boolean => (body.tools ?? []).some((t) => t.name === "mcp__strata__repo_map")

describe("strata mcp under the real Claude Code", () => {
  let server: TestServer
  let demo: string
  beforeAll(async () => {
    demo = makeDemoRepo({ out: join(temp("demo"), "repo") }).out
    server = await startServer((request: Recorded, _n, res) => {
      if (!request.path.startsWith("/v1/messages")) {
        res.writeHead(404, { "content-type": "application/json" })
        res.end("{}")
        return
      }
      if (request.path.startsWith("/v1/messages/count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ input_tokens: 100 }))
        return
      }
      const body = request.json as Body
      if (!isConversation(body)) return stream(res, { text: "ok" })
      const results = blocksOf(body).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)
      if (!results.includes("toolu_map")) return stream(res, { tool: "mcp__strata__repo_map", id: "toolu_map", input: { budget: 600, focus_files: ["src/services/tracking.ts"] } })
      if (!results.includes("toolu_find")) return stream(res, { tool: "mcp__strata__find_symbol", id: "toolu_find", input: { name: "ShipmentStore" } })
      return stream(res, { text: "ShipmentStore is defined in src/store/shipmentStore.ts." })
    })
  }, 120_000)
  afterAll(() => server?.close())

  run("calls repo_map and find_symbol, and the next requests carry their results", async () => {
    expect(existsSync(claude), `Claude Code is not installed at ${claude}: run \`node scripts/install-agents.mjs\``).toBe(true)
    const home = temp("home")
    mkdirSync(join(home, ".claude"), { recursive: true })
    const mcpConfig = JSON.stringify({ mcpServers: { strata: { type: "stdio", command: process.execPath, args: [bin, "mcp", "--repo", demo] } } })
    const child = spawn(
      claude,
      ["-p", "Where is ShipmentStore defined?", "--output-format", "json", "--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools", "mcp__strata__repo_map,mcp__strata__find_symbol", "--model", "claude-sonnet-4-5"],
      {
        cwd: demo,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: "sk-test-offline",
          DISABLE_TELEMETRY: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          NO_COLOR: "1",
          // MCP tools in the request itself, not deferred behind ToolSearch.
          ENABLE_TOOL_SEARCH: "false"
        },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    const code = await new Promise<number | null>((done) => child.on("close", done))
    if (process.env.STRATA_DEBUG_MCP === "1") for (const r of server.requests) console.log(r.path, JSON.stringify((r.json as Body | undefined)?.tools?.map((t) => t.name)), JSON.stringify(r.json).slice(0, 3000))
    expect(code, `claude exited ${code}\nstdout: ${stdout}\nstderr: ${stderr}`).toBe(0)
    expect(stdout).toContain("ShipmentStore is defined in src/store/shipmentStore.ts.")
    const conversation = server.requests.filter((r) => r.path.startsWith("/v1/messages") && !r.path.includes("count_tokens") && isConversation(r.json as Body))
    // Both tools came from `strata mcp`, with their JSON schemas.
    const tools = (conversation[0]!.json as { tools: ReadonlyArray<{ name: string; input_schema: { properties: Record<string, unknown> } }> }).tools
    expect(tools.find((t) => t.name === "mcp__strata__repo_map")?.input_schema.properties).toHaveProperty("focus_files")
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["mcp__strata__find_symbol", "mcp__strata__find_references", "mcp__strata__file_outline", "mcp__strata__repo_tree"]))
    // The request after each tool call carries the tool's output.
    const afterMap = conversation.find((r) => blocksOf(r.json as Body).some((b) => b.tool_use_id === "toolu_map"))!
    const mapResult = blocksOf(afterMap.json as Body).find((b) => b.tool_use_id === "toolu_map")!
    expect(resultText(mapResult)).toMatch(/^# c=class s=struct/)
    expect(resultText(mapResult)).toContain("src/services/tracking.ts:")
    const afterFind = conversation.find((r) => blocksOf(r.json as Body).some((b) => b.tool_use_id === "toolu_find"))!
    const findResult = blocksOf(afterFind.json as Body).find((b) => b.tool_use_id === "toolu_find")!
    // Claude Code may append its own reminders after a tool's output.
    expect(resultText(findResult).startsWith('# 1 definition of "ShipmentStore"\nsrc/store/shipmentStore.ts:7-46 class ShipmentStore\n')).toBe(true)
  }, 240_000)
})
