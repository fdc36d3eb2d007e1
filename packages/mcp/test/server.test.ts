// The MCP server through the SDK's own client, over stdio (a spawned server) and over
// streamable HTTP (in this process): tools listed with their schemas, each tool called on
// the demo repository against golden outputs (UPDATE_GOLDEN=1 rewrites them), bad input
// answered with MCP errors while the server keeps serving, and a fresh index after edits.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDirs } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { type SessionRecord, StateStore } from "@strata/core/effect"
import { FileStateStore, sessionKeyFor } from "@strata/store"
import { makeStrataMcp, serveHttp } from "../src/index.ts"

const here = dirname(fileURLToPath(import.meta.url))
const goldenDir = join(here, "golden")
const temp = tempDirs("strata-mcp-")

/** Every tool once, on the demo repository. */
const CALLS: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
  ["repo_map-global", "repo_map", { budget: 700 }],
  ["repo_map-focus", "repo_map", { budget: 700, focus_files: ["src/services/tracking.ts"], identifiers: ["nextBackoff"] }],
  ["find_symbol", "find_symbol", { name: "ShipmentStore" }],
  ["find_references", "find_references", { name: "ShipmentStore" }],
  ["file_outline", "file_outline", { path: "src/store/shipmentStore.ts" }],
  ["repo_tree", "repo_tree", { budget: 60 }]
]

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string => {
  const content = result.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>
  return content.map((c) => c.text ?? "").join("")
}

const golden = (name: string, actual: string): void => {
  const file = join(goldenDir, `${name}.txt`)
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    mkdirSync(goldenDir, { recursive: true })
    writeFileSync(file, actual)
  }
  expect(actual).toBe(readFileSync(file, "utf8"))
}

/** The checks both transports pass. */
const exercise = async (client: Client): Promise<void> => {
  const { tools } = await client.listTools()
  expect(tools.map((t) => t.name)).toEqual(["repo_map", "find_symbol", "find_references", "file_outline", "repo_tree"])
  for (const tool of tools) {
    expect(tool.description?.length).toBeGreaterThan(40)
    expect(tool.inputSchema.type).toBe("object")
  }
  expect(tools[0]!.inputSchema.properties).toHaveProperty("focus_files")
  for (const [name, tool, args] of CALLS) {
    const first = await client.callTool({ name: tool, arguments: args })
    expect(first.isError).toBeFalsy()
    golden(name, textOf(first))
    // The same call on an unchanged repository: the same bytes.
    expect(textOf(await client.callTool({ name: tool, arguments: args }))).toBe(textOf(first))
  }
  const { resources } = await client.listResources()
  expect(resources.map((r) => r.uri)).toEqual(["strata://map", "strata://tree"])
  const tree = await client.readResource({ uri: "strata://tree" })
  expect(tree.contents[0]).toMatchObject({ uri: "strata://tree", text: expect.stringContaining("src/store/shipmentStore.ts\n") })
}

/** Bad input: MCP errors with a message, and the server answers the next call. */
const badInput = async (client: Client): Promise<void> => {
  await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/Unknown tool "no_such_tool"; this server has: repo_map/)
  await expect(client.callTool({ name: "repo_map", arguments: { budget: "big" } })).rejects.toThrow(/Invalid arguments for repo_map: Expected number[\s\S]*budget/)
  await expect(client.callTool({ name: "find_symbol", arguments: { name: 42 } })).rejects.toThrow(/Invalid arguments for find_symbol: Expected string/)
  await expect(client.callTool({ name: "repo_map", arguments: { budget: 0 } })).rejects.toThrow(/greater than or equal to 1[\s\S]*budget/)
  await expect(client.callTool({ name: "repo_map", arguments: { budget: -5 } })).rejects.toThrow(/greater than or equal to 1/)
  await expect(client.callTool({ name: "repo_tree", arguments: { depth: 2 } })).rejects.toThrow(/Invalid arguments for repo_tree/)
  const outside = await client.callTool({ name: "file_outline", arguments: { path: "../../etc/passwd" } })
  expect(outside.isError).toBe(true)
  expect(textOf(outside)).toMatch(/resolves outside the repository root/)
  const absolute = await client.callTool({ name: "repo_map", arguments: { focus_files: ["/etc/passwd"] } })
  expect(absolute.isError).toBe(true)
  const tiny = await client.callTool({ name: "repo_map", arguments: { budget: 10 } })
  expect(tiny.isError).toBe(true)
  expect(textOf(tiny)).toMatch(/cannot hold the map's legend; ask for at least \d+ tokens/)
  // Still serving.
  expect(textOf(await client.callTool({ name: "find_symbol", arguments: { name: "ShipmentStore" } }))).toContain("src/store/shipmentStore.ts:")
}

let demo: string
beforeAll(() => {
  demo = makeDemoRepo({ out: join(temp("demo"), "repo") }).out
})

describe("stdio", () => {
  let client: Client
  beforeAll(async () => {
    client = new Client({ name: "strata-test", version: "0" })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(here, "serve.mjs"), demo], stderr: "pipe" }))
  })
  afterAll(() => client.close())

  it("lists the tools and answers each on the demo repository", () => exercise(client))
  it("answers bad input with MCP errors and keeps serving", () => badInput(client))
})

describe("streamable HTTP", () => {
  let client: Client
  let scope: Scope.Closeable
  let url: string
  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const endpoint = await Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* makeStrataMcp({ root: demo })
        return yield* serveHttp(mcp, 0)
      }).pipe(Scope.provide(scope))
    )
    url = endpoint.url
    client = new Client({ name: "strata-test", version: "0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  })
  afterAll(async () => {
    await client.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("listens on 127.0.0.1 only", () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  })
  it("lists the tools and answers each on the demo repository", () => exercise(client))
  it("answers bad input with MCP errors and keeps serving", () => badInput(client))
})

describe("fresh index", () => {
  it("re-indexes a changed file before answering and never returns a deleted file's symbols", async () => {
    const repo = temp("fresh")
    mkdirSync(join(repo, "src"))
    writeFileSync(join(repo, "src", "a.ts"), "export function alpha(x: number) { return x }\n")
    writeFileSync(join(repo, "src", "b.ts"), "import { alpha } from './a'\nexport const beta = () => alpha(1)\n")
    const scope = await Effect.runPromise(Scope.make())
    const mcp = await Effect.runPromise(makeStrataMcp({ root: repo, cache: false }).pipe(Scope.provide(scope)))
    const call = (name: string, args: unknown) => Effect.runPromise(Effect.orDie(mcp.context.snapshot).pipe(Effect.flatMap(() => mcp.tools), Effect.map((tools) => tools.find((t) => t.name === name)!), Effect.flatMap((t) => Effect.orDie(t.call(mcp.context, args)))))
    expect(await call("find_symbol", { name: "alpha" })).toContain("src/a.ts:1-1 function alpha(x)")
    writeFileSync(join(repo, "src", "a.ts"), "export function alpha(x: number, y?: number) { return x }\nexport class Gamma {}\n")
    expect(await call("find_symbol", { name: "alpha" })).toContain("function alpha(x, y?)")
    expect(await call("find_symbol", { name: "Gamma" })).toContain("src/a.ts:2-2 class Gamma")
    rmSync(join(repo, "src", "a.ts"))
    expect(await call("find_symbol", { name: "Gamma" })).toBe('# no definition of "Gamma"\n')
    expect(await call("repo_tree", {})).toBe("src/b.ts\n")
    expect(await call("repo_map", {})).not.toContain("src/a.ts:")
    // A new file in a new directory.
    mkdirSync(join(repo, "lib"))
    writeFileSync(join(repo, "lib", "c.ts"), "export const delta = 1\n")
    expect(await call("find_symbol", { name: "delta" })).toContain("lib/c.ts:1-1 variable delta")
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })
})

// The demo repository is built from a script two directories up; keep the import honest.
expect(resolve(here, "../../../scripts/make-demo-repo.mjs")).toMatch(/scripts\/make-demo-repo\.mjs$/)

describe("cache_report", () => {
  it("is listed once the repository has a Strata session, and reports it", async () => {
    const repo = temp("session")
    writeFileSync(join(repo, "a.ts"), "export const a = 1\n")
    const scope = await Effect.runPromise(Scope.make())
    const mcp = await Effect.runPromise(makeStrataMcp({ root: repo, cache: false, store: "file" }).pipe(Scope.provide(scope)))
    const names = async () => (await Effect.runPromise(mcp.tools)).map((t) => t.name)
    expect(await names()).not.toContain("cache_report")
    const record: SessionRecord = {
      selected: ["a.ts"],
      turns: 1,
      emptyTiersTotal: 0,
      totals: { input: 500, cacheRead: 9000, cacheWrite: 500, output: 100 },
      last: {
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        at: 1767225600000,
        promptTokens: 10000,
        usage: { input: 500, cacheRead: 9000, cacheWrite: 500, output: 100 },
        usageSource: "provider",
        changes: [],
        emptyTiers: 0,
        lastMiss: "the system prompt changed"
      },
      aliases: null
    }
    await Effect.runPromise(
      Effect.gen(function* () {
        const key = yield* sessionKeyFor(mcp.root, { name: "default" })
        const store = yield* StateStore
        yield* store.commit({ session: key, baseVersion: 0, turnId: "t1", append: [], patch: { record } })
      }).pipe(Effect.provide(FileStateStore.layer({ repoRoot: mcp.root })))
    )
    expect(await names()).toContain("cache_report")
    const tool = (await Effect.runPromise(mcp.tools)).find((t) => t.name === "cache_report")!
    const report = await Effect.runPromise(tool.call(mcp.context, {}))
    expect(report).toMatch(/^# Strata session "default": 1 turn\n/)
    expect(report).toContain("input tokens: 10,000 (cache read 9,000, cache write 500, uncached 500); output 100")
    expect(report).toMatch(/cost: \$\d+\.\d{4} at anthropic\/claude-sonnet-4-5 prices/)
    expect(report).toContain("last miss: the system prompt changed")
    expect(await Effect.runPromise(tool.call(mcp.context, { session: "other" }))).toBe("# no Strata session named other in this repository\n")
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })
})
