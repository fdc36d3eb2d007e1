// Provider wire formats for the wire tests, on top of the shared recording server
// (`@strata/test-support/http`): AWS binary event streams, and body validators that check
// what each real API checks before it runs a request.
import { crc32 } from "node:zlib"
import { sleep, type Reply } from "@strata/test-support/http"

export { json, sse, startServer, type Handler, type Recorded, type Reply, type TestServer } from "@strata/test-support/http"

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
