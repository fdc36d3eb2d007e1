// A local HTTP server on 127.0.0.1 posing as the provider for `strata chat` tests: it
// records every request and answers Anthropic Messages and OpenAI Chat Completions
// streams in their real SSE shapes, with the usage the provider's prompt-cache simulator
// computes for the body it received (so a second turn reports cache reads).
import { makeSimulator } from "@strata/providers"
import { anthropicEvents, chatCompletionEvents, json, sse, startServer, type Reply } from "@strata/test-support/http"

export interface Recorded {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly json: Record<string, unknown>
}

export interface FakeProvider {
  readonly url: string
  readonly requests: ReadonlyArray<Recorded>
  /** Answer the next requests with this HTTP status and error body instead of a stream. */
  failNext: (status: number, count?: number) => void
  /**
   * Answer the next requests (every attempt the client makes) with `answer` instead:
   * cut streams, bad bodies, stalls, resets. `answer` may leave the response open.
   */
  scriptNext: (answer: (res: Reply, request: Recorded) => void, count?: number) => void
  readonly close: () => Promise<void>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const modelOf = (body: Record<string, unknown>): string | undefined => (typeof body["model"] === "string" ? body["model"] : undefined)

export const startFakeProvider = async (options: { readonly reply?: ReadonlyArray<string>; readonly model?: string } = {}): Promise<FakeProvider & { setReply: (parts: ReadonlyArray<string>) => void }> => {
  let reply = options.reply ?? ["Pricing lives in ", "`quote()` in src/services/pricing.ts", "."]
  const anthropicSim = makeSimulator("anthropic", { model: options.model ?? "claude-sonnet-5" })
  const openaiSim = makeSimulator("openai", { model: "gpt-5.4" })
  let clock = 0
  let failures: { status: number; left: number } | undefined
  let scripted: { answer: (res: Reply, request: Recorded) => void; left: number } | undefined

  const anthropicStream = (res: Reply, body: Record<string, unknown>) =>
    sse(res, anthropicEvents([{ text: reply }], { model: modelOf(body), usage: anthropicSim.send(body, clock).native, outputTokens: 12 }))

  const chatStream = (res: Reply, body: Record<string, unknown>) =>
    sse(res, chatCompletionEvents(reply, { model: modelOf(body), usage: { ...openaiSim.send(body, clock).native, completion_tokens: 12 } }))

  const server = await startServer(async (request, _n, res) => {
    if (scripted !== undefined && scripted.left > 0) {
      scripted.left--
      return scripted.answer(res, { path: request.path, headers: request.headers, json: isRecord(request.json) ? request.json : {} })
    }
    if (failures !== undefined && failures.left > 0) {
      failures.left--
      return json(res, failures.status, { type: "error", error: { type: "invalid_request_error", message: "scripted failure" } })
    }
    clock += 5
    const body = isRecord(request.json) ? request.json : {}
    if (request.path.endsWith("/v1/messages")) return anthropicStream(res, body)
    if (request.path.endsWith("/chat/completions")) return chatStream(res, body)
    res.writeHead(404, {})
    res.end()
  })
  return {
    url: server.url,
    get requests() {
      return server.requests.map((r) => ({ path: r.path, headers: r.headers, json: isRecord(r.json) ? r.json : {} }))
    },
    setReply: (parts) => {
      reply = parts
    },
    failNext: (status, count = 1) => {
      failures = { status, left: count }
    },
    scriptNext: (answer, count = 1) => {
      scripted = { answer, left: count }
    },
    close: server.close
  }
}
