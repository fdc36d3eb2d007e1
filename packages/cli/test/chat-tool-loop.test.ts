// `strata chat`'s tool loop end to end: the built binary against a scripted provider on
// 127.0.0.1 whose replies call the repository tools (parallel calls, several rounds, a
// path outside the repository, a link leading out). Every request body is checked the way
// the real API checks it (pairing, order, roles), each round is recorded on its own once
// the provider said it finished, and a broken reply mid-loop changes nothing.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anthropicEvents, sse, type Reply } from "@strata/test-support/http"
import { tempDir } from "@strata/test-support"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { validateAnthropic, validateChat } from "../../providers/test/wire-validators.ts"
import { startFakeProvider, type Recorded } from "./fake-provider.ts"
import { copyIndexed, indexTemplate, runBin, storedSession, strataFiles } from "./support.ts"

const dirs: Array<{ cleanup: () => void }> = []
let master = ""
let outside = ""
let server: Awaited<ReturnType<typeof startFakeProvider>>
beforeAll(async () => {
  const d = tempDir("strata-chat-tools-master-")
  dirs.push(d)
  master = await indexTemplate(makeDemoRepo({ out: join(d.path, "harbor") }).out)
  outside = join(d.path, "outside.txt")
  writeFileSync(outside, "SECRET-OUTSIDE-THE-REPOSITORY\n")
  server = await startFakeProvider({ reply: ["Pricing is done by ", "quote() in src/services/pricing.ts."] })
}, 120_000)
afterAll(async () => {
  await server.close()
  dirs.forEach((d) => d.cleanup())
})

const demo = (provider: string): string => {
  const d = tempDir("strata-chat-tools-")
  dirs.push(d)
  const repo = join(d.path, "harbor")
  copyIndexed(master, repo)
  mkdirSync(join(repo, ".strata"), { recursive: true })
  writeFileSync(join(repo, ".strata", "config.json"), JSON.stringify({ version: 1, provider }))
  // A link inside the repository that leads out of it.
  symlinkSync(outside, join(repo, "notes.md"))
  return repo
}

interface Call {
  readonly id: string
  readonly name: string
  readonly input: Record<string, unknown>
}

/** An Anthropic stream whose reply is `text` and then `calls` (arguments in fragments). */
const anthropicCalls = (res: Reply, text: string, calls: ReadonlyArray<Call>) =>
  sse(res, anthropicEvents([{ text }, ...calls.map((c) => ({ tool: c.name, id: c.id, input: c.input, fragments: 2 }))], {
    id: "msg_t",
    model: "claude-sonnet-5",
    usage: { input_tokens: 900, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    outputTokens: 40,
    stop: "tool_use"
  }))

/** An OpenAI Chat stream whose reply calls `calls` in parallel. */
const openaiCalls = (res: Reply, calls: ReadonlyArray<Call>) => {
  const chunk = (delta: unknown, finish: string | null = null) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5.4", choices: [{ index: 0, delta, finish_reason: finish }], usage: null } })
  return sse(res, [
    ...calls.map((c, index) => chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] })),
    ...calls.map((c, index) => chunk({ tool_calls: [{ index, function: { arguments: JSON.stringify(c.input) } }] })),
    chunk({}, "tool_calls"),
    { data: { id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-5.4", choices: [], usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } } },
    { data: "[DONE]" }
  ])
}

/** Answer the next requests in turn with `replies` (then the server's plain text reply). */
const script = (replies: ReadonlyArray<(res: Reply, request: Recorded) => void>) => {
  let n = 0
  server.scriptNext((res, request) => replies[n++]!(res, request), replies.length)
}

type Obj = Record<string, unknown>
const messagesOf = (r: Recorded): ReadonlyArray<Obj> => r.json["messages"] as ReadonlyArray<Obj>
/** The session's history as the store holds it, as plain JSON objects. */
const historyOf = async (repo: string): Promise<ReadonlyArray<Obj>> =>
  JSON.parse(JSON.stringify((await storedSession(repo)).history)) as ReadonlyArray<Obj>

const ANTHROPIC_ENV = () => ({ ANTHROPIC_API_KEY: "test-key", STRATA_BASE_URL: server.url })

describe("strata chat: the tool loop", () => {
  it("anthropic: two rounds of parallel calls, an error result for a path outside, then the answer; every body passes the API's checks", async () => {
    const repo = demo("anthropic")
    const sent = server.requests.length
    script([
      (res) => anthropicCalls(res, "Let me look.", [
        { id: "toolu_read", name: "read_file", input: { path: "src/services/pricing.ts" } },
        { id: "toolu_search", name: "search", input: { pattern: "quote(", path: "src" } }
      ]),
      (res) => anthropicCalls(res, "And around it.", [
        { id: "toolu_list", name: "list_files", input: { path: "src/services" } },
        { id: "toolu_out", name: "read_file", input: { path: "../../../etc/passwd" } },
        { id: "toolu_link", name: "read_file", input: { path: "notes.md" } }
      ])
    ])
    const r = await runBin(["chat", "--repo", repo, "--once", "Where is pricing done?", "--no-hud"], { env: ANTHROPIC_ENV() })
    expect(r.code, r.stderr).toBe(0)
    const requests = server.requests.slice(sent)
    expect(requests).toHaveLength(3)
    for (const [i, request] of requests.entries()) {
      expect(validateAnthropic(request.json), `request ${i + 1}`).toEqual([])
      expect((request.json["tools"] as ReadonlyArray<Obj>).map((t) => t["name"])).toEqual(["read_file", "search", "list_files"])
    }
    // Round 2 answers both calls of round 1, first in the next user message (the system reminder, if any, after them).
    const resultsOf = (r: Recorded) => (messagesOf(r).at(-1)!["content"] as ReadonlyArray<Obj>).filter((b) => b["type"] === "tool_result")
    const results1 = resultsOf(requests[1]!)
    expect(results1.map((b) => [b["type"], b["tool_use_id"], b["is_error"]])).toEqual([["tool_result", "toolu_read", undefined], ["tool_result", "toolu_search", undefined]])
    expect(JSON.stringify(results1[0]!["content"])).toMatch(/src\/services\/pricing\.ts, lines 1-\d+ of \d+:/)
    expect(JSON.stringify(results1[1]!["content"])).toMatch(/src\/services\/pricing\.ts:\d+: /)
    // Round 3: the listing, and errors for the path outside and the link leading out.
    const results2 = resultsOf(requests[2]!)
    expect(results2.map((b) => [b["tool_use_id"], b["is_error"]])).toEqual([["toolu_list", undefined], ["toolu_out", true], ["toolu_link", true]])
    expect(JSON.stringify(results2[1]!["content"])).toMatch(/is outside the repository/)
    expect(JSON.stringify(results2[2]!["content"])).toMatch(/leads outside the repository through the link notes\.md/)
    for (const request of requests) expect(JSON.stringify(request.json)).not.toMatch(/SECRET-OUTSIDE/)
    // The first request's prompt is in the history from round 2 on, before the exchanges.
    expect(JSON.stringify(messagesOf(requests[1]!))).toMatch(/Where is pricing done\?/)
    // Output: the reply's text, each call, each round's usage, the summary.
    expect(r.stdout).toMatch(/^Let me look\.\ntool read_file \{"path":"src\/services\/pricing\.ts"\} -> \d+ lines\ntool search \{"pattern":"quote\(","path":"src"\} -> \d+ lines\nanthropic: read/)
    expect(r.stdout).toMatch(/tool read_file \{"path":"\.\.\/\.\.\/\.\.\/etc\/passwd"\} -> error: "\.\.\/\.\.\/\.\.\/etc\/passwd" is outside the repository/)
    expect(r.stdout).toMatch(/Pricing is done by quote\(\) in src\/services\/pricing\.ts\.\n/)
    expect(r.stdout).toMatch(/tools: 5 calls in 2 rounds \(read_file x3, search, list_files\)/)
    expect(r.stdout.split("\n").filter((l) => l.startsWith("anthropic: read"))).toHaveLength(3)
    // The history: the prompt, then each round's calls with their results as one item, then the answer.
    const history = await historyOf(repo)
    expect(history.map((m) => m["role"])).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
    expect(history[5]!["content"]).toBe("Pricing is done by quote() in src/services/pricing.ts.")
    expect((await storedSession(repo)).decodedRecord.turns).toBe(3)
    // The next prompt follows the stored exchanges, and the body is still valid.
    const next = await runBin(["chat", "--repo", repo, "--once", "Thanks. And tracking?", "--no-hud"], { env: ANTHROPIC_ENV() })
    expect(next.code, next.stderr).toBe(0)
    expect(validateAnthropic(server.requests.at(-1)!.json)).toEqual([])
    expect(next.stdout).toMatch(/anthropic: read [1-9]/)
  })

  it("openai: parallel calls round trip as tool_calls and tool messages", async () => {
    const repo = demo("openai")
    const sent = server.requests.length
    script([
      (res) => openaiCalls(res, [
        { id: "call_a", name: "list_files", input: { glob: "src/**/*.ts", maxResults: 5 } },
        { id: "call_b", name: "read_file", input: { path: ".strata/session.json" } }
      ])
    ])
    const r = await runBin(["chat", "--repo", repo, "--once", "What is in src?", "--no-hud"], { env: { OPENAI_API_KEY: "sk-test", STRATA_BASE_URL: `${server.url}/v1` } })
    expect(r.code, r.stderr).toBe(0)
    const requests = server.requests.slice(sent)
    expect(requests).toHaveLength(2)
    for (const request of requests) expect(validateChat(request.json)).toEqual([])
    const messages = messagesOf(requests[1]!)
    const assistant = messages.find((m) => m["role"] === "assistant" && m["tool_calls"] !== undefined)!
    expect((assistant["tool_calls"] as ReadonlyArray<Obj>).map((c) => c["id"])).toEqual(["call_a", "call_b"])
    const tools = messages.filter((m) => m["role"] === "tool")
    expect(tools.map((m) => m["tool_call_id"])).toEqual(["call_a", "call_b"])
    expect(String(tools[0]!["content"])).toMatch(/^src\/.*\.ts\n/)
    expect(String(tools[1]!["content"])).toMatch(/inside \.strata\/, which holds Strata's own state/)
    expect(r.stdout).toMatch(/tools: 2 calls in 1 round \(list_files, read_file\)/)
  })

  it("a reply broken in the middle of the loop records nothing: the state is what the last finished round left", async () => {
    const repo = demo("anthropic")
    let before: Record<string, string> = {}
    script([
      (res) => anthropicCalls(res, "Reading.", [{ id: "toolu_1", name: "read_file", input: { path: "README.md" } }]),
      (res) => {
        // Round 1 is recorded by the time round 2 is asked for.
        before = strataFiles(repo)
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-sonnet-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } })}\n\n`)
        res.write(`event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_2", name: "search", input: {} } })}\n\n`)
        res.end()
      }
    ])
    const r = await runBin(["chat", "--repo", repo, "--once", "What does the README say?", "--no-hud"], { env: ANTHROPIC_ENV() })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/The anthropic reply is incomplete/)
    expect(Object.keys(before).length).toBeGreaterThan(0)
    expect(strataFiles(repo)).toEqual(before)
    expect((await historyOf(repo)).map((m) => m["role"])).toEqual(["user", "assistant", "tool"])
    expect(r.stdout).not.toMatch(/tool search/)
  })

  it("--max-tool-rounds: calls past the limit are answered, not run, and the loop stops", async () => {
    const repo = demo("anthropic")
    const sent = server.requests.length
    const again = (res: Reply) => anthropicCalls(res, "More.", [{ id: `toolu_${Math.random().toString(36).slice(2)}`, name: "list_files", input: {} }])
    script([again, again, again])
    const r = await runBin(["chat", "--repo", repo, "--once", "Look everywhere", "--no-hud", "--max-tool-rounds", "1"], { env: ANTHROPIC_ENV() })
    expect(r.code, r.stderr).toBe(0)
    const requests = server.requests.slice(sent)
    expect(requests).toHaveLength(3)
    for (const request of requests) expect(validateAnthropic(request.json)).toEqual([])
    const lastResult = (messagesOf(requests[2]!).at(-1)!["content"] as ReadonlyArray<Obj>)[0]!
    expect(lastResult["is_error"]).toBe(true)
    expect(JSON.stringify(lastResult["content"])).toMatch(/Not run: this prompt used its 1 tool rounds/)
    expect(r.stdout).toMatch(/The model still called tools after 1 tool rounds; stopped without its answer/)
    expect((await historyOf(repo)).map((m) => m["role"])).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant", "tool"])
    const bad = await runBin(["chat", "--repo", repo, "--once", "x", "--max-tool-rounds", "0"], { env: ANTHROPIC_ENV() })
    expect(bad.code).toBe(2)
  })

  it("--no-tools sends no tool definitions; --json reports each round's calls", async () => {
    const repo = demo("anthropic")
    const plain = await runBin(["chat", "--repo", repo, "--once", "hi", "--no-tools", "--no-hud"], { env: ANTHROPIC_ENV() })
    expect(plain.code, plain.stderr).toBe(0)
    expect(server.requests.at(-1)!.json["tools"]).toBeUndefined()
    script([(res) => anthropicCalls(res, "", [{ id: "toolu_j", name: "read_file", input: { path: "README.md", startLine: 1, endLine: 2 } }])])
    const r = await runBin(["chat", "--repo", repo, "--once", "Read the README", "--json"], { env: ANTHROPIC_ENV() })
    expect(r.code, r.stderr).toBe(0)
    const doc = JSON.parse(r.stdout) as { reply: string; rounds: ReadonlyArray<{ text: string; toolCalls: ReadonlyArray<{ id: string; name: string; output: { type: string; value: string } }> }> }
    expect(doc.reply).toBe("Pricing is done by quote() in src/services/pricing.ts.")
    expect(doc.rounds.map((x) => x.toolCalls.map((c) => [c.id, c.name, c.output.type]))).toEqual([[["toolu_j", "read_file", "text"]], []])
    expect(doc.rounds[0]!.toolCalls[0]!.output.value).toMatch(/^README\.md, lines 1-2 of \d+:\n1\t/)
  })
})
