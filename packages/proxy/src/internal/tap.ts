/**
 * Reads usage (and the stop reason, and a provider's cache diagnosis) from a reply as it
 * passes, chunk by chunk, without holding the reply: an SSE stream is split into events
 * and only the events that carry usage are parsed; a JSON reply is kept up to a bound
 * (usage sits in it) and parsed at the end.
 */
import { StringDecoder } from "node:string_decoder"
import type { Usage } from "@strata/core"
import { foldStreamUsage, decodeUsage, type UsageFormat } from "@strata/providers"
import type { Protocol } from "./protocol.ts"

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

export interface Tapped {
  readonly usage: Usage | undefined
  readonly stop: string | undefined
  readonly diagnosis: string | undefined
}

const formatOf = (protocol: Protocol): UsageFormat => (protocol === "anthropic" ? "anthropic" : protocol)

/** A JSON reply larger than this is passed on without reading its usage. */
const MAX_JSON_REPLY = 8 * 1024 * 1024
/** An SSE event larger than this is skipped (usage events are small). */
const MAX_EVENT = 1024 * 1024

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const stopOf = (protocol: Protocol, event: Json): string | undefined => {
  if (protocol === "anthropic") {
    if (event["type"] === "message_delta" && isRecord(event["delta"]) && typeof event["delta"]["stop_reason"] === "string") return event["delta"]["stop_reason"]
    if (typeof event["stop_reason"] === "string") return event["stop_reason"]
    return undefined
  }
  if (protocol === "openai-responses") {
    const r = event["type"] === "response.completed" && isRecord(event["response"]) ? event["response"] : event["object"] === "response" ? event : undefined
    if (r === undefined) return undefined
    const output = Array.isArray(r["output"]) ? r["output"] : []
    return output.some((o) => isRecord(o) && (o["type"] === "function_call" || o["type"] === "custom_tool_call")) ? "tool_call" : "completed"
  }
  const choices = Array.isArray(event["choices"]) ? event["choices"] : []
  for (const c of choices) if (isRecord(c) && typeof c["finish_reason"] === "string") return c["finish_reason"]
  return undefined
}

const diagnosisOf = (event: Json): string | undefined => {
  const message = isRecord(event["message"]) ? event["message"] : event
  const d = message["diagnostics"]
  if (!isRecord(d) || !isRecord(d["cache_miss_reason"])) return undefined
  const t = d["cache_miss_reason"]["type"]
  return typeof t === "string" ? `provider: ${t}` : undefined
}

/** A tap for one reply. `push` every chunk as it passes; `finish` at its end. */
export const makeTap = (protocol: Protocol, sse: boolean) => {
  const format = formatOf(protocol)
  const decoder = new StringDecoder("utf8")
  let usage: Usage | undefined
  let stop: string | undefined
  let diagnosis: string | undefined
  let pending = ""
  let jsonChunks: Array<Buffer> | undefined = sse ? undefined : []
  let jsonBytes = 0

  const onEvent = (data: string) => {
    // Only events that can carry usage or a stop reason are parsed.
    if (!data.includes("usage") && !data.includes("stop_reason") && !data.includes("finish_reason") && !data.includes("response.completed")) return
    const event = parse(data)
    if (!isRecord(event)) return
    usage = foldStreamUsage(format, usage, event)
    stop = stopOf(protocol, event) ?? stop
    diagnosis = diagnosisOf(event) ?? diagnosis
  }

  const drain = (final: boolean) => {
    for (;;) {
      const i = pending.indexOf("\n\n")
      const j = pending.indexOf("\r\n\r\n")
      const end = i < 0 ? j : j < 0 ? i : Math.min(i, j)
      if (end < 0) break
      const raw = pending.slice(0, end)
      pending = pending.slice(end + (end === j ? 4 : 2))
      const data = raw
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n")
      if (data !== "" && data !== "[DONE]") onEvent(data)
    }
    if (pending.length > MAX_EVENT) pending = ""
    if (final && pending.trim() !== "") {
      const data = pending.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")
      if (data !== "" && data !== "[DONE]") onEvent(data)
      pending = ""
    }
  }

  return {
    push: (chunk: Buffer): void => {
      if (sse) {
        pending += decoder.write(chunk)
        drain(false)
        return
      }
      if (jsonChunks === undefined) return
      jsonBytes += chunk.length
      if (jsonBytes > MAX_JSON_REPLY) jsonChunks = undefined
      else jsonChunks.push(chunk)
    },
    finish: (): Tapped => {
      if (sse) {
        pending += decoder.end()
        drain(true)
      } else if (jsonChunks !== undefined) {
        const reply = parse(Buffer.concat(jsonChunks).toString("utf8"))
        if (isRecord(reply)) {
          const raw = protocol === "openai-responses" || protocol === "openai-chat" || protocol === "anthropic" ? reply["usage"] : undefined
          if (isRecord(raw)) usage = decodeUsage(format, raw)
          stop = stopOf(protocol, reply)
          diagnosis = diagnosisOf(reply)
        }
      }
      return { usage, stop, diagnosis }
    }
  }
}
