// A local HTTP server on 127.0.0.1 posing as the provider for `strata chat` tests: it
// records every request and answers Anthropic Messages and OpenAI Chat Completions
// streams in their real SSE shapes, with the usage the provider's prompt-cache simulator
// computes for the body it received (so a second turn reports cache reads).
import { createServer, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeSimulator } from "@strata/providers"

export interface Recorded {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly json: Record<string, unknown>
}

export interface FakeProvider {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Answer the next requests with this HTTP status and error body instead of a stream. */
  failNext: (status: number, count?: number) => void
  /**
   * Answer the next requests (every attempt the client makes) with `answer` instead:
   * cut streams, bad bodies, stalls, resets. `answer` may leave the response open.
   */
  scriptNext: (answer: (res: ServerResponse, request: Recorded) => void, count?: number) => void
  readonly close: () => Promise<void>
}

const sse = (event: string | undefined, data: unknown): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`

export const startFakeProvider = async (options: { readonly reply?: ReadonlyArray<string>; readonly model?: string } = {}): Promise<FakeProvider & { setReply: (parts: ReadonlyArray<string>) => void }> => {
  const requests: Array<Recorded> = []
  let reply = options.reply ?? ["Pricing lives in ", "`quote()` in src/services/pricing.ts", "."]
  const anthropicSim = makeSimulator("anthropic", { model: options.model ?? "claude-sonnet-5" })
  const openaiSim = makeSimulator("openai", { model: "gpt-5.4" })
  let clock = 0
  let failures: { status: number; left: number } | undefined
  let scripted: { answer: (res: ServerResponse, request: Recorded) => void; left: number } | undefined
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const json = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>
      const recorded: Recorded = { path: req.url ?? "", headers: req.headers, json }
      requests.push(recorded)
      if (scripted !== undefined && scripted.left > 0) {
        scripted.left--
        scripted.answer(res, recorded)
        return
      }
      if (failures !== undefined && failures.left > 0) {
        failures.left--
        res.writeHead(failures.status, { "content-type": "application/json" })
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "scripted failure" } }))
        return
      }
      clock += 5
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      if (req.url?.endsWith("/v1/messages")) {
        const usage = anthropicSim.send(json, clock).native
        res.write(sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: json["model"], content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }))
        res.write(sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }))
        for (const text of reply) res.write(sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }))
        res.write(sse("content_block_stop", { type: "content_block_stop", index: 0 }))
        res.write(sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } }))
        res.end(sse("message_stop", { type: "message_stop" }))
        return
      }
      if (req.url?.endsWith("/chat/completions")) {
        const usage = openaiSim.send(json, clock).native as unknown as Record<string, unknown>
        const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: json["model"] }
        for (const text of reply) res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }], usage: null })}\n\n`)
        res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null })}\n\n`)
        res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { ...usage, completion_tokens: 12 } })}\n\n`)
        res.end("data: [DONE]\n\n")
        return
      }
      res.writeHead(404)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setReply: (parts) => {
      reply = parts
    },
    failNext: (status, count = 1) => {
      failures = { status, left: count }
    },
    scriptNext: (answer, count = 1) => {
      scripted = { answer, left: count }
    },
    close: () =>
      new Promise((resolve) => {
        // Stalled scripted answers hold their connections open; end them.
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
