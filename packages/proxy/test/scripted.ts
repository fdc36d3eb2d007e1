// A scripted provider on 127.0.0.1 for the real agents: it answers Anthropic Messages and
// OpenAI Responses requests from a script (one reply per step of the agent's tool loop),
// streams them as the provider does (SSE), and prices every request with the provider's
// prompt-cache simulator from @strata/providers, returning the simulated usage.
import { anthropicEvents, anthropicMessage, json, responsesEvents, sse, startServer, type Recorded, type Reply } from "@strata/test-support/http"
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

const bodyOf = (r: Recorded): Json => (isRecord(r.json) ? r.json : {})

/** Steps taken so far in an Anthropic conversation: assistant turns that called a tool. */
const anthropicStep = (body: Json): number => (Array.isArray(body["messages"]) ? body["messages"].filter((m) => isRecord(m) && m["role"] === "assistant").length : 0)

const anthropicReply = (res: Reply, step: AnthropicStep, usage: object, id: string, stream: boolean) => {
  const blocks = "text" in step ? [{ text: step.text }] : [{ tool: step.tool, id: `toolu_${id}`, input: step.input }]
  const options = { id: `msg_${id}`, usage }
  if (!stream) return json(res, 200, anthropicMessage(blocks, options))
  return sse(res, anthropicEvents(blocks, options))
}

/** The scripted Anthropic server: main-loop requests (with tools) follow `script`; side requests get a short text. */
export const startAnthropicServer = async (script: ReadonlyArray<AnthropicStep>): Promise<ScriptedServer> => {
  const received: Array<Received> = []
  const sim = makeAnthropicSimulator({ model: "claude-sonnet-4-5" })
  const t0 = Date.now()
  let n = 0
  const server = await startServer((r, _n, res) => {
    const { path, headers } = r
    const body = bodyOf(r)
    const at = (Date.now() - t0) / 1000
    if (path.startsWith("/v1/messages/count_tokens")) {
      received.push({ path, body, at, main: false, sim: undefined, headers })
      return json(res, 200, { input_tokens: 1000 })
    }
    if (!path.startsWith("/v1/messages")) {
      received.push({ path, body, at, main: false, sim: undefined, headers })
      return json(res, 404, { type: "error", error: { type: "not_found_error", message: "not scripted" } })
    }
    const tools = Array.isArray(body["tools"]) ? body["tools"] : []
    const main = tools.some((t) => isRecord(t) && t["name"] === "Bash")
    const priced = main ? sim.send(body, at, { outputTokens: 20 }) : undefined
    received.push({ path, body, at, main, sim: priced, headers })
    const id = String(n++)
    const step: AnthropicStep = main ? (script[anthropicStep(body)] ?? { text: "Done." }) : { text: "Scripted side reply" }
    const usage = priced?.native ?? { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
    return anthropicReply(res, step, usage, id, body["stream"] === true)
  })
  return { url: server.url, received, close: server.close }
}

const codexStep = (body: Json): number =>
  Array.isArray(body["input"]) ? body["input"].filter((i) => isRecord(i) && (i["type"] === "custom_tool_call" || i["type"] === "function_call")).length : 0

/** The scripted Responses server for Codex: each step a `function_call` to `exec_command` or a `custom_tool_call` to `apply_patch`, then the final text. */
export const startResponsesServer = async (script: ReadonlyArray<CodexStep>): Promise<ScriptedServer> => {
  const received: Array<Received> = []
  const sim = makeOpenAISimulator({ model: "gpt-5.5" })
  const t0 = Date.now()
  let n = 0
  const server = await startServer((r, _n, res) => {
    const { path, headers } = r
    const body = bodyOf(r)
    const at = (Date.now() - t0) / 1000
    if (!path.startsWith("/v1/responses")) {
      received.push({ path, body, at, main: false, sim: undefined, headers })
      return json(res, 404, { error: { message: "not scripted", type: "invalid_request_error" } })
    }
    let priced: SimResult | undefined
    try {
      priced = sim.send(body, at, { outputTokens: 20 })
    } catch {
      priced = undefined
    }
    received.push({ path, body, at, main: true, sim: priced, headers })
    const id = String(n++)
    const step = script[codexStep(body)] ?? { text: "Done." }
    const item: Json = "text" in step
      ? { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: step.text, annotations: [] }] }
      : "shell" in step
        ? { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, name: "exec_command", arguments: JSON.stringify({ cmd: step.shell }), status: "completed" }
        : { type: "custom_tool_call", id: `ctc_${id}`, call_id: `call_${id}`, name: "apply_patch", input: step.patch, status: "completed" }
    return sse(res, responsesEvents([item], { id: `resp_${id}`, ...(isRecord(priced?.native) ? { usage: priced.native } : {}) }))
  })
  return { url: server.url, received, close: server.close }
}
