// A recording HTTP server on 127.0.0.1 for tests that talk to a provider over the wire: it
// keeps every request (method, path, headers, body) and answers with whatever the test
// scripts: JSON, an SSE stream, an error with retry-after, or nothing at all (a hang).
// The providers' reply shapes (Anthropic Messages, OpenAI Chat Completions and Responses
// streams) are built here once, for every scripted provider of the tests.
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2Session } from "node:http2"
import type { AddressInfo, Socket } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** The body parsed as JSON, or undefined. */
  readonly json: unknown
  /** Milliseconds since the server started. */
  readonly at: number
}

/** The part of an HTTP/1.1 or HTTP/2 response the helpers use. */
export interface Reply {
  statusCode: number
  writeHead(status: number, headers: Record<string, string>): unknown
  write(chunk: string | Buffer): unknown
  end(chunk?: string | Buffer): unknown
  /** Drop the connection (a reset, as a failing network does). */
  destroy(error?: Error): unknown
}

/** Handles request `n` (0-based). May write and end `res`, or leave it hanging. */
export type Handler = (request: Recorded, n: number, res: Reply) => void | Promise<void>

export interface TestServer {
  readonly url: string
  readonly requests: Array<Recorded>
  readonly close: () => Promise<void>
}

/**
 * Start a recording server. `http2: true` speaks cleartext HTTP/2 (prior knowledge), which
 * is what the AWS SDK's Bedrock runtime client uses by default.
 */
export const startServer = async (handler: Handler, options: { readonly http2?: boolean } = {}): Promise<TestServer> => {
  const requests: Array<Recorded> = []
  const sockets = new Set<Socket>()
  const sessions = new Set<Http2Session>()
  const started = performance.now()
  const onRequest = (req: IncomingMessage | Http2ServerRequest, res: Reply) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      let json: unknown
      try {
        json = body.length === 0 ? undefined : JSON.parse(body)
      } catch {
        json = undefined
      }
      const recorded: Recorded = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, json, at: performance.now() - started }
      requests.push(recorded)
      void Promise.resolve(handler(recorded, requests.length - 1, res)).catch((e: unknown) => {
        res.statusCode = 599
        res.end(String(e))
      })
    })
  }
  const server = options.http2 === true
    ? createHttp2Server((req, res) => onRequest(req, res as unknown as Reply))
    : createServer((req, res) => onRequest(req, res))
  server.on("connection", (s: Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  server.on("session", (session: Http2Session) => {
    sessions.add(session)
    session.on("close", () => sessions.delete(session))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const s of sessions) s.destroy()
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Resolve after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A JSON reply. */
export const json = (res: Reply, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/** One server-sent event: `data` is JSON-encoded unless it is a string. */
export interface SseEvent {
  readonly event?: string
  readonly data: unknown
}

/**
 * An SSE stream: each item is `{ event?, data }` (data JSON-encoded unless a string).
 * `stallAfter` stops writing (without ending) after that many events.
 */
export const sse = async (
  res: Reply,
  events: ReadonlyArray<SseEvent>,
  options: { readonly gapMs?: number; readonly stallAfter?: number; readonly headers?: Record<string, string> } = {}
): Promise<void> => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...options.headers })
  for (const [i, e] of events.entries()) {
    if (options.stallAfter !== undefined && i >= options.stallAfter) return
    const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data)
    res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${data}\n\n`)
    if (options.gapMs !== undefined) await sleep(options.gapMs)
  }
  res.end()
}

/**
 * A content block of a scripted Anthropic reply: text (streamed as one delta, or one per
 * piece), or a tool call (its input streamed as JSON in `fragments` pieces, default 1).
 */
export type AnthropicReplyBlock =
  | { readonly text: string | ReadonlyArray<string> }
  | { readonly tool: string; readonly id: string; readonly input: unknown; readonly fragments?: number }

export interface AnthropicReplyOptions {
  /** Default `msg_1`. */
  readonly id?: string | undefined
  /** Default `claude-sonnet-4-6`. */
  readonly model?: string | undefined
  /** The usage `message_start` reports (input and cache counts; its `output_tokens` is 1, as Anthropic's). */
  readonly usage?: object
  /** The output tokens of the final `message_delta` (and of a JSON reply). Default 20. */
  readonly outputTokens?: number
  /** Default `tool_use` when the reply calls a tool, else `end_turn`. */
  readonly stop?: string
}

const DEFAULT_ANTHROPIC_USAGE = { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const anthropicContent = (block: AnthropicReplyBlock): Record<string, unknown> =>
  "text" in block
    ? { type: "text", text: typeof block.text === "string" ? block.text : block.text.join("") }
    : { type: "tool_use", id: block.id, name: block.tool, input: block.input }

const anthropicStop = (blocks: ReadonlyArray<AnthropicReplyBlock>, options: AnthropicReplyOptions): string =>
  options.stop ?? (blocks.some((b) => "tool" in b) ? "tool_use" : "end_turn")

/** A Messages API reply as one JSON body (a request without `stream: true`). */
export const anthropicMessage = (blocks: ReadonlyArray<AnthropicReplyBlock>, options: AnthropicReplyOptions = {}): Record<string, unknown> => ({
  id: options.id ?? "msg_1",
  type: "message",
  role: "assistant",
  model: options.model ?? "claude-sonnet-4-6",
  content: blocks.map(anthropicContent),
  stop_reason: anthropicStop(blocks, options),
  stop_sequence: null,
  usage: { ...DEFAULT_ANTHROPIC_USAGE, ...options.usage, output_tokens: options.outputTokens ?? 20 }
})

/**
 * A Messages API reply as the SSE events Anthropic streams: `message_start`, each block's
 * start, deltas and stop, `message_delta` with the stop reason and output tokens,
 * `message_stop`. Write them with `sse`.
 *
 * @example
 * ```ts fragment
 * await sse(res, anthropicEvents([{ text: "Reading it." }, { tool: "Read", id: "toolu_1", input: { path: "a.ts" } }], { usage: { input_tokens: 900 } }))
 * ```
 */
export const anthropicEvents = (blocks: ReadonlyArray<AnthropicReplyBlock>, options: AnthropicReplyOptions = {}): Array<SseEvent> => {
  const message = { id: options.id ?? "msg_1", type: "message", role: "assistant", model: options.model ?? "claude-sonnet-4-6", content: [], stop_reason: null, stop_sequence: null }
  const events: Array<SseEvent> = [{ event: "message_start", data: { type: "message_start", message: { ...message, usage: { ...DEFAULT_ANTHROPIC_USAGE, ...options.usage, output_tokens: 1 } } } }]
  const event = (name: string, data: Record<string, unknown>) => events.push({ event: name, data: { type: name, ...data } })
  blocks.forEach((block, index) => {
    if ("text" in block) {
      event("content_block_start", { index, content_block: { type: "text", text: "" } })
      for (const text of typeof block.text === "string" ? [block.text] : block.text) event("content_block_delta", { index, delta: { type: "text_delta", text } })
    } else {
      event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.tool, input: {} } })
      const json = JSON.stringify(block.input)
      const n = Math.max(1, block.fragments ?? 1)
      const size = Math.ceil(json.length / n)
      for (let k = 0; k < n; k++) event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(k * size, (k + 1) * size) } })
    }
    event("content_block_stop", { index })
  })
  event("message_delta", { delta: { stop_reason: anthropicStop(blocks, options), stop_sequence: null }, usage: { output_tokens: options.outputTokens ?? 20 } })
  event("message_stop", {})
  return events
}

/**
 * An OpenAI Chat Completions stream answering with text in `pieces`: a chunk per piece,
 * the finishing chunk, a usage chunk (`stream_options.include_usage`) and `[DONE]`.
 */
export const chatCompletionEvents = (
  pieces: ReadonlyArray<string>,
  options: { readonly id?: string; readonly model?: string | undefined; readonly usage?: object; readonly finish?: string } = {}
): Array<SseEvent> => {
  const base = { id: options.id ?? "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: options.model ?? "gpt-5.4" }
  return [
    ...pieces.map((content) => ({ data: { ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }], usage: null } })),
    { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: options.finish ?? "stop" }], usage: null } },
    { data: { ...base, choices: [], usage: options.usage ?? { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } } },
    { data: "[DONE]" }
  ]
}

/**
 * An OpenAI Responses stream answering with `items` (messages, function calls, custom tool
 * calls, as the `output` array holds them): `response.created`, each item added and done,
 * `response.completed` with the usage.
 */
export const responsesEvents = (
  items: ReadonlyArray<Record<string, unknown>>,
  options: { readonly id?: string; readonly model?: string; readonly usage?: object } = {}
): Array<SseEvent> => {
  const response = { id: options.id ?? "resp_1", object: "response", created_at: 0, status: "completed", model: options.model ?? "gpt-5.5", output: items }
  let n = 0
  return [
    { data: { type: "response.created", sequence_number: n++, response: { ...response, status: "in_progress", output: [] } } },
    ...items.flatMap((item, output_index) => [
      { data: { type: "response.output_item.added", sequence_number: n++, output_index, item } },
      { data: { type: "response.output_item.done", sequence_number: n++, output_index, item } }
    ]),
    { data: { type: "response.completed", sequence_number: n++, response: { ...response, usage: options.usage ?? { input_tokens: 100, output_tokens: 20, total_tokens: 120 } } } }
  ]
}
