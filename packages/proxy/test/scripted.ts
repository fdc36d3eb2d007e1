// A scripted provider on 127.0.0.1 for the real agents: it answers Anthropic Messages and
// OpenAI Responses requests from a script (one reply per step of the agent's tool loop),
// streams them as the provider does (SSE), and prices every request with the provider's
// prompt-cache simulator from @strata/providers, returning the simulated usage.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeAnthropicSimulator, makeOpenAISimulator, type SimResult } from "@strata/providers"

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** One recorded request: its path, body, when it came, what the simulator charged. */
export interface Received {
  readonly path: string
  readonly body: Json
  readonly at: number
  readonly main: boolean
  readonly sim: SimResult | undefined
  readonly headers: Record<string, string | Array<string> | undefined>
}

export interface ScriptedServer {
  readonly url: string
  readonly received: Array<Received>
  readonly close: () => Promise<void>
}

/** An Anthropic reply step: tool calls, or the final text. */
export type AnthropicStep = { readonly tool: string; readonly input: Json } | { readonly text: string }
/** A Responses reply step: a shell command (Codex's `exec_command`), a patch (its freeform `apply_patch`), or the final text. */
export type CodexStep = { readonly shell: string } | { readonly patch: string } | { readonly text: string }

const sse = (res: ServerResponse, events: ReadonlyArray<[string | undefined, Json]>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const [name, data] of events) res.write(`${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`)
  res.end()
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let b = ""
    req.setEncoding("utf8")
    req.on("data", (c: string) => (b += c))
    req.on("end", () => resolve(b))
    req.on("error", reject)
  })

/** Steps taken so far in an Anthropic conversation: assistant turns that called a tool. */
const anthropicStep = (body: Json): number => (Array.isArray(body["messages"]) ? body["messages"].filter((m) => isRecord(m) && m["role"] === "assistant").length : 0)

const anthropicReply = (res: ServerResponse, step: AnthropicStep, usage: Json, id: string, stream: boolean) => {
  const content: Array<Json> = "text" in step ? [{ type: "text", text: step.text }] : [{ type: "tool_use", id: `toolu_${id}`, name: step.tool, input: step.input }]
  const stop = "text" in step ? "end_turn" : "tool_use"
  const message = { id: `msg_${id}`, type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_sequence: null }
  if (!stream) {
    const body = JSON.stringify({ ...message, content, stop_reason: stop, usage })
    res.writeHead(200, { "content-type": "application/json" })
    res.end(body)
    return
  }
  const events: Array<[string, Json]> = [["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }]]
  content.forEach((block, index) => {
    if (block["type"] === "text") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }])
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block["text"] } }])
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block["id"], name: block["name"], input: {} } }])
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block["input"]) } }])
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }])
  })
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }])
  events.push(["message_stop", { type: "message_stop" }])
  sse(res, events)
}

/** The scripted Anthropic server: main-loop requests (with tools) follow `script`; side requests get a short text. */
export const startAnthropicServer = async (script: ReadonlyArray<AnthropicStep>): Promise<ScriptedServer> => {
  const received: Array<Received> = []
  const sim = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
  const t0 = Date.now()
  let n = 0
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const path = req.url ?? "/"
      const body: Json = (() => {
        try {
          const v: unknown = JSON.parse(text)
          return isRecord(v) ? v : {}
        } catch {
          return {}
        }
      })()
      const at = (Date.now() - t0) / 1000
      if (path.startsWith("/v1/messages/count_tokens")) {
        received.push({ path, body, at, main: false, sim: undefined, headers: req.headers })
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ input_tokens: 1000 }))
        return
      }
      if (!path.startsWith("/v1/messages")) {
        received.push({ path, body, at, main: false, sim: undefined, headers: req.headers })
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not scripted" } }))
        return
      }
      const tools = Array.isArray(body["tools"]) ? body["tools"] : []
      const main = tools.some((t) => isRecord(t) && t["name"] === "Bash")
      const priced = main ? sim.send(body, at, { outputTokens: 20 }) : undefined
      received.push({ path, body, at, main, sim: priced, headers: req.headers })
      const id = String(n++)
      const step: AnthropicStep = main ? (script[anthropicStep(body)] ?? { text: "Done." }) : { text: "Scripted side reply" }
      const usage = priced?.native ?? { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 }
      anthropicReply(res, step, usage as Json, id, body["stream"] === true)
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()) })
  }
}

const codexStep = (body: Json): number =>
  Array.isArray(body["input"]) ? body["input"].filter((i) => isRecord(i) && (i["type"] === "custom_tool_call" || i["type"] === "function_call")).length : 0

/** The scripted Responses server for Codex: each step a `function_call` to `exec_command` or a `custom_tool_call` to `apply_patch`, then the final text. */
export const startResponsesServer = async (script: ReadonlyArray<CodexStep>): Promise<ScriptedServer> => {
  const received: Array<Received> = []
  const sim = makeOpenAISimulator({ model: "gpt-5.5" })
  const t0 = Date.now()
  let n = 0
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const path = req.url ?? "/"
      const body: Json = (() => {
        try {
          const v: unknown = JSON.parse(text)
          return isRecord(v) ? v : {}
        } catch {
          return {}
        }
      })()
      const at = (Date.now() - t0) / 1000
      if (!path.startsWith("/v1/responses")) {
        received.push({ path, body, at, main: false, sim: undefined, headers: req.headers })
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: "not scripted", type: "invalid_request_error" } }))
        return
      }
      let priced: SimResult | undefined
      try {
        priced = sim.send(body, at, { outputTokens: 20 })
      } catch {
        priced = undefined
      }
      received.push({ path, body, at, main: true, sim: priced, headers: req.headers })
      const id = String(n++)
      const step = script[codexStep(body)] ?? { text: "Done." }
      const item: Json = "text" in step
        ? { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: step.text, annotations: [] }] }
        : "shell" in step
          ? { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, name: "exec_command", arguments: JSON.stringify({ cmd: step.shell }), status: "completed" }
          : { type: "custom_tool_call", id: `ctc_${id}`, call_id: `call_${id}`, name: "apply_patch", input: step.patch, status: "completed" }
      const response = { id: `resp_${id}`, object: "response", created_at: 0, status: "completed", model: "gpt-5.5", output: [item] }
      sse(res, [
        [undefined, { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [] } }],
        [undefined, { type: "response.output_item.added", sequence_number: 1, output_index: 0, item }],
        [undefined, { type: "response.output_item.done", sequence_number: 2, output_index: 0, item }],
        [undefined, { type: "response.completed", sequence_number: 3, response: { ...response, usage: priced?.native ?? { input_tokens: 100, output_tokens: 20, total_tokens: 120 } } }]
      ])
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()) })
  }
}
