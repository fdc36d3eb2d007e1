// A recording HTTP server on 127.0.0.1 for the wire tests: it keeps every request (method,
// path, headers, body) and answers with whatever the test scripts: JSON, an SSE stream, an
// AWS binary event stream, an error with retry-after, or nothing at all (a hang).
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2Session } from "node:http2"
import type { AddressInfo, Socket } from "node:net"
import { crc32 } from "node:zlib"

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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A JSON reply. */
export const json = (res: Reply, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/**
 * An SSE stream: each item is `{ event?, data }` (data JSON-encoded unless a string).
 * `stallAfter` stops writing (without ending) after that many events.
 */
export const sse = async (
  res: Reply,
  events: ReadonlyArray<{ readonly event?: string; readonly data: unknown }>,
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

const header = (name: string, value: string): Buffer => {
  const k = Buffer.from(name)
  const v = Buffer.from(value)
  const b = Buffer.alloc(1 + k.length + 1 + 2 + v.length)
  let o = b.writeUInt8(k.length, 0)
  k.copy(b, o)
  o += k.length
  o = b.writeUInt8(7, o) // string
  o = b.writeUInt16BE(v.length, o)
  v.copy(b, o)
  return b
}

/** One AWS event-stream frame (prelude, prelude CRC, headers, payload, message CRC). */
export const eventFrame = (eventType: string, payload: unknown, messageType: "event" | "exception" = "event"): Buffer => {
  const headers = Buffer.concat([
    header(messageType === "event" ? ":event-type" : ":exception-type", eventType),
    header(":content-type", "application/json"),
    header(":message-type", messageType)
  ])
  const body = Buffer.from(JSON.stringify(payload))
  const prelude = Buffer.alloc(8)
  prelude.writeUInt32BE(12 + headers.length + body.length + 4, 0)
  prelude.writeUInt32BE(headers.length, 4)
  const preludeCrc = Buffer.alloc(4)
  preludeCrc.writeUInt32BE(crc32(prelude), 0)
  const message = Buffer.concat([prelude, preludeCrc, headers, body])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(message), 0)
  return Buffer.concat([message, crc])
}

/** A Bedrock ConverseStream response: binary event-stream frames. */
export const eventStream = async (
  res: Reply,
  frames: ReadonlyArray<readonly [string, unknown] | readonly [string, unknown, "exception"]>,
  options: { readonly gapMs?: number } = {}
): Promise<void> => {
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-bedrock-1" })
  for (const [type, payload, kind] of frames) {
    res.write(eventFrame(type, payload, kind ?? "event"))
    if (options.gapMs !== undefined) await sleep(options.gapMs)
  }
  res.end()
}
