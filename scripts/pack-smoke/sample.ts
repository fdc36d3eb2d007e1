// What a user of the published packages writes: compose the engine from the packages'
// values with the session kept in files (@strata/store), assemble a tiered request and
// send it through the official Anthropic SDK with no cast, commit the reply, then open the
// session again from the store in a second engine. scripts/pack-smoke.mjs
// typechecks this file under strict settings in a project that installed the packed
// tarballs, then runs it against a loopback server that answers as the Messages API.
import assert from "node:assert/strict"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Anthropic from "@anthropic-ai/sdk"
import { createContextEngine } from "@strata/core"
import { AnthropicPlacement } from "@strata/providers"
import { stateStore } from "@strata/store"
import { symbolIndexLayer } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"

const repo = mkdtempSync(join(tmpdir(), "strata-smoke-repo-"))
mkdirSync(join(repo, "src"))
writeFileSync(join(repo, "src", "math.ts"), "export const add = (a: number, b: number): number => a + b\n")
writeFileSync(join(repo, "src", "main.ts"), 'import { add } from "./math"\nexport const main = (): number => add(1, 2)\n')

const received: Array<unknown> = []
const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({
      id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6",
      content: [{ type: "text", text: "add returns a + b." }], stop_reason: "end_turn", stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 6, cache_creation_input_tokens: 1500, cache_read_input_tokens: 0 }
    }))
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const { port } = server.address() as AddressInfo

// The repository is no git checkout, so the session's key takes a configured identity.
const open = () =>
  createContextEngine({
    model: "claude-sonnet-4-6",
    repoRoot: repo,
    tracker: TrackerLayer.memory(),
    symbols: symbolIndexLayer(repo, { git: false, cache: false }),
    provider: AnthropicPlacement({ maxTokens: 256 }),
    store: stateStore("file", { repositoryId: "pack-smoke" }),
    session: "smoke"
  })
const client = new Anthropic({ apiKey: "sk-ant-smoke", baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 })
try {
  const engine = open()
  const { sent, text, written } = await (async () => {
    try {
      await engine.addFile("src/math.ts")
      const turn = await engine.assemble({ prompt: "What does add return?" })
      assert.equal(turn.mode, "tiered")
      const message = await client.messages.create(turn.request)
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("")
      assert.equal(text, "add returns a + b.")
      await turn.commit({ reply: message })
      const record = await engine.getSessionRecord()
      assert.equal(record.totals.cacheWrite, 1500, "the reply's usage is in the session totals")
      const sent = received[0] as { system?: Array<{ text: string }>; messages: Array<unknown> }
      assert.ok(sent.system !== undefined && sent.system.length > 0, "the system prompt goes in `system`")
      assert.ok(JSON.stringify(sent).includes("export const add"), "the file in context was sent")
      return { sent, text, written: message.usage.cache_creation_input_tokens ?? 0 }
    } finally {
      await engine.dispose()
    }
  })()
  // A second engine (another process would do the same) reads the session the first committed.
  const reopened = open()
  try {
    const stored = await reopened.getSessionRecord()
    assert.equal(stored.totals.cacheWrite, 1500, "the committed turn is in the file store")
  } finally {
    await reopened.dispose()
  }
  console.log(`pack-smoke sample: ${sent.messages.length} messages sent, reply "${text}", ${written} tokens written to the cache, the session read back from the file store`)
} finally {
  server.close()
  rmSync(repo, { recursive: true, force: true })
}
