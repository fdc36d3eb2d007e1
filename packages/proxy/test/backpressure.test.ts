// Slow clients and slow upstreams: bounded memory. A 32 MB streamed reply to a client that
// reads nothing until the upstream is held back: the bytes the proxy holds (its client
// socket's queue plus what it read from upstream and has not passed on: `writableLength`,
// `readableLength`) stay near the streams' high-water marks, and the upstream stops
// writing, instead of the proxy buffering the reply. A slow upstream (many small chunks)
// leaves nothing queued.
import { EventEmitter } from "node:events"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startProxy, type ProxyServer } from "@strata/proxy"

const TOTAL = 32 * 1024 * 1024
const event = (text: string) => `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })}\n\n`
const CHUNK = Buffer.from(event("x".repeat(64 * 1024 - 120)))
const START = `event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}\n\n`
const END = `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`

const upstreamEvents = new EventEmitter()
let written = 0
let upstream: Server
let proxy: ProxyServer

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (c: string) => (body += c))
    req.on("end", () => {
      const slow = body.includes("slow upstream")
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(START)
      if (slow) {
        // A slow upstream: 400 small chunks, each after the previous one was flushed.
        let n = 0
        const next = () => {
          if (n++ === 400) {
            res.end(END)
            return
          }
          upstreamEvents.emit("chunk")
          res.write(event(`part ${n} `), () => setImmediate(next))
        }
        next()
        return
      }
      // A fast upstream: as fast as its socket takes it, waiting for `drain` when full.
      written = 0
      const pump = () => {
        while (written < TOTAL) {
          written += CHUNK.length
          if (!res.write(CHUNK)) {
            upstreamEvents.emit("blocked")
            res.once("drain", pump)
            return
          }
        }
        res.end(END)
        upstreamEvents.emit("done")
      }
      pump()
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
  proxy = await startProxy({ port: 0, upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, store: "memory" })
})

afterAll(async () => {
  await proxy.close()
  await new Promise<void>((resolve) => upstream.close(() => resolve()))
})

const body = (text: string) => JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, stream: true, messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe("slow clients and slow upstreams", () => {
  it("holds back a fast upstream for a client that does not read: the proxy's buffers stay bounded", async () => {
    let received = 0
    let held = { writable: -1, readable: -1, replies: 0 }
    let writtenThen = 0
    let blocks = 0
    await new Promise<void>((resolve, reject) => {
      const req = request(new URL("/v1/messages", proxy.url), { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" } }, (res) => {
        res.pause()
        // The client reads nothing until the upstream stays blocked (no drain for 300 ms:
        // everything between it and the client is full) or has written the whole reply (the
        // proxy took it all: no backpressure). Then measure what the proxy holds, and read.
        let quiet: NodeJS.Timeout | undefined
        const verdict = () => {
          upstreamEvents.removeAllListeners("blocked")
          upstreamEvents.removeAllListeners("done")
          if (quiet !== undefined) clearTimeout(quiet)
          held = proxy.buffered()
          writtenThen = written
          res.on("data", (c: Buffer) => (received += c.length))
          res.resume()
        }
        upstreamEvents.on("blocked", () => {
          blocks++
          if (quiet !== undefined) clearTimeout(quiet)
          quiet = setTimeout(verdict, 300)
        })
        upstreamEvents.on("done", verdict)
        res.on("end", resolve)
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body("fast upstream"))
    })
    console.log(`slow client: the upstream wrote ${(writtenThen / 1024 / 1024).toFixed(1)} of ${TOTAL / 1024 / 1024} MB before it was held back (${blocks} blocks); the proxy held ${held.writable} bytes queued to the client and ${held.readable} read from upstream`)
    expect(held.replies).toBe(1)
    // Held back: the rest of the reply stayed upstream (what it wrote sits in the loopback sockets' kernel buffers)...
    expect(writtenThen).toBeLessThan(TOTAL / 2)
    // ...and the proxy itself holds about a high-water mark each way, not the reply.
    expect(held.writable + held.readable).toBeLessThan(1024 * 1024)
    expect(received).toBeGreaterThan(TOTAL)
  }, 60_000)

  it("passes a slow upstream's chunks on as they come, holding nothing", async () => {
    let maxHeld = 0
    let chunks = 0
    const onChunk = () => {
      chunks++
      const b = proxy.buffered()
      maxHeld = Math.max(maxHeld, b.writable + b.readable)
    }
    upstreamEvents.on("chunk", onChunk)
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(new URL("/v1/messages", proxy.url), { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" } }, (res) => {
        let t = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (t += c))
        res.on("end", () => resolve(t))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body("slow upstream"))
    })
    upstreamEvents.off("chunk", onChunk)
    expect(chunks).toBe(400)
    expect(text).toContain("part 400 ")
    expect(text.endsWith(`data: {"type":"message_stop"}\n\n`)).toBe(true)
    expect(maxHeld).toBeLessThan(64 * 1024)
  })
})
