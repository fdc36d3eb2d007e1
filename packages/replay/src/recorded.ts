/**
 * Recorded sessions (`strata replay --transcript FILE.jsonl`): one request body per
 * line, as a logging proxy writes them: an Anthropic Messages or an OpenAI Chat
 * Completions body, with an optional `t` (seconds) beside it or a `{"t", "request"}`
 * wrapper. Each line is decoded into its system prompt, tools and conversation in
 * core's types; a malformed line is reported with its number and skipped. Nothing is
 * guessed: fields the replay cannot carry are named in a note.
 */
import { Result, Schema, SchemaIssue } from "effect"
import {
  historyProblems,
  JsonSchemaObject,
  type AssistantPart,
  type ContentPart,
  type Message,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultOutput,
  type ToolResultPart
} from "@strata/core/effect"
import { readPathOf } from "./agentTools.ts"

/** One decoded line: what the request sent. */
export interface RecordedLine {
  /** 1-based line number in the file. */
  readonly line: number
  /** Seconds since the session started, when the line says. */
  readonly t: number | undefined
  readonly format: "anthropic" | "openai"
  readonly systemPrompt: string
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly messages: ReadonlyArray<Message>
}

/** A line that was skipped (malformed) or replayed without some of its content (a note). */
export interface RecordedProblem {
  readonly line: number
  readonly skipped: boolean
  readonly reason: string
}

/** A file the session's tool results read: its path and the content of its first read. */
export interface RecordedFile {
  readonly path: string
  readonly content: string
}

export interface RecordedSession {
  readonly requests: ReadonlyArray<RecordedLine>
  readonly problems: ReadonlyArray<RecordedProblem>
  /** Files read by tool calls (`readPathOf`), first read wins, sorted by path. */
  readonly files: ReadonlyArray<RecordedFile>
}

const formatIssue = SchemaIssue.makeFormatterDefault()

class LineError extends Error {}

const decodeWith = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, value: unknown, where: string): S["Type"] => {
  const decoded = Schema.decodeUnknownResult(schema)(value)
  if (Result.isFailure(decoded)) throw new LineError(`${where}: ${formatIssue(decoded.failure.issue)}`)
  return decoded.success
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

// ---------------------------------------------------------------------------------------
// Anthropic Messages

const AnthropicText = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const AnthropicImage = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Union([
    Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.String, data: Schema.String }),
    Schema.Struct({ type: Schema.Literal("url"), url: Schema.String })
  ])
})
const AnthropicThinking = Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String })
const AnthropicRedacted = Schema.Struct({ type: Schema.Literal("redacted_thinking"), data: Schema.String })
const AnthropicToolUse = Schema.Struct({ type: Schema.Literal("tool_use"), id: Schema.String, name: Schema.String, input: Schema.JsonObject })
const AnthropicToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.Union([AnthropicText, AnthropicImage]))])),
  is_error: Schema.optionalKey(Schema.Boolean)
})
const AnthropicBody = Schema.Struct({
  system: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(AnthropicText)])),
  tools: Schema.optionalKey(Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.optionalKey(Schema.String), input_schema: Schema.optionalKey(JsonSchemaObject) }))),
  messages: Schema.Array(Schema.Struct({ role: Schema.Literals(["user", "assistant"]), content: Schema.Union([Schema.String, Schema.Array(Schema.Unknown)]) }))
})

type ImageSource = (typeof AnthropicImage.Type)["source"]
const imageUrl = (source: ImageSource): ContentPart =>
  source.type === "url" ? { type: "image", url: source.url } : { type: "image", url: `data:${source.media_type};base64,${source.data}`, mediaType: source.media_type }

const anthropicRequest = (body: unknown, notes: Array<string>): Omit<RecordedLine, "line" | "t"> => {
  const b = decodeWith(AnthropicBody, body, "an Anthropic Messages body")
  const systemPrompt = b.system === undefined ? "" : typeof b.system === "string" ? b.system : b.system.map((s) => s.text).join("\n\n")
  const tools = (b.tools ?? []).flatMap((t, i): ReadonlyArray<ToolDefinition> => {
    if (t.input_schema === undefined) {
      notes.push(`tools.${i} (${t.name}) has no input_schema (a server tool): left out`)
      return []
    }
    return [{ name: t.name, ...(t.description === undefined ? {} : { description: t.description }), inputSchema: t.input_schema }]
  })
  const names = new Map<string, string>()
  const messages: Array<Message> = []
  b.messages.forEach((m, i) => {
    if (typeof m.content === "string") {
      messages.push({ role: m.role, content: m.content })
      return
    }
    const parts: Array<AssistantPart> = []
    const results: Array<ToolResultPart> = []
    m.content.forEach((raw, k) => {
      const where = `messages.${i}.content.${k}`
      const type = isObject(raw) ? raw["type"] : undefined
      switch (type) {
        case "text":
          parts.push(decodeWith(AnthropicText, raw, where))
          return
        case "image":
          parts.push(imageUrl(decodeWith(AnthropicImage, raw, where).source))
          return
        case "thinking": {
          const t = decodeWith(AnthropicThinking, raw, where)
          parts.push({ type: "reasoning", text: t.thinking, provider: "anthropic", signature: t.signature })
          return
        }
        case "redacted_thinking":
          parts.push({ type: "reasoning", text: "", provider: "anthropic", redactedData: decodeWith(AnthropicRedacted, raw, where).data })
          return
        case "tool_use": {
          const u = decodeWith(AnthropicToolUse, raw, where)
          names.set(u.id, u.name)
          parts.push({ type: "tool-call", toolCallId: u.id, toolName: u.name, input: u.input })
          return
        }
        case "tool_result": {
          const r = decodeWith(AnthropicToolResult, raw, where)
          const content = r.content ?? ""
          const output: ToolResultOutput = typeof content === "string"
            ? { type: r.is_error === true ? "error-text" : "text", value: content }
            : content.length === 1 && content[0]!.type === "text" && r.is_error !== true
              ? { type: "text", value: content[0]!.text }
              : r.is_error === true
                ? { type: "error-text", value: content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n\n") }
                : { type: "content", value: content.map((c): ContentPart => (c.type === "text" ? c : imageUrl(c.source))) }
          results.push({ type: "tool-result", toolCallId: r.tool_use_id, toolName: names.get(r.tool_use_id) ?? "", output })
          return
        }
        default:
          notes.push(`${where} is a ${typeof type === "string" ? `"${type}"` : "untyped"} block: left out`)
      }
    })
    if (m.role === "assistant") {
      if (parts.length > 0) messages.push({ role: "assistant", content: parts })
      return
    }
    if (results.length > 0) messages.push({ role: "tool", content: results })
    const user = parts.flatMap((p): ReadonlyArray<ContentPart> => (p.type === "text" || p.type === "image" ? [p] : []))
    if (user.length > 0) messages.push({ role: "user", content: user.length === 1 && user[0]!.type === "text" ? user[0]!.text : user })
  })
  return { format: "anthropic", systemPrompt, tools, messages }
}

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions

const ChatText = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const ChatImage = Schema.Struct({ type: Schema.Literal("image_url"), image_url: Schema.Struct({ url: Schema.String }) })
const ChatContent = Schema.Union([Schema.String, Schema.Array(Schema.Union([ChatText, ChatImage]))])
const ChatToolCall = Schema.Struct({ id: Schema.String, type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String, arguments: Schema.String }) })
const ChatMessage = Schema.Union([
  Schema.Struct({ role: Schema.Literals(["system", "developer"]), content: ChatContent }),
  Schema.Struct({ role: Schema.Literal("user"), content: ChatContent }),
  Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.optionalKey(Schema.NullOr(ChatContent)), tool_calls: Schema.optionalKey(Schema.Array(ChatToolCall)) }),
  Schema.Struct({ role: Schema.Literal("tool"), tool_call_id: Schema.String, content: ChatContent })
])
const ChatBody = Schema.Struct({
  tools: Schema.optionalKey(Schema.Array(Schema.Struct({
    type: Schema.Literal("function"),
    function: Schema.Struct({ name: Schema.String, description: Schema.optionalKey(Schema.String), parameters: Schema.optionalKey(JsonSchemaObject) })
  }))),
  messages: Schema.Array(ChatMessage)
})
const JsonObjectText = Schema.fromJsonString(Schema.JsonObject)

const chatParts = (content: typeof ChatContent.Type): ReadonlyArray<ContentPart> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content.map((p): ContentPart => (p.type === "text" ? p : { type: "image", url: p.image_url.url }))
const chatText = (content: typeof ChatContent.Type): string =>
  typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n")

const openaiRequest = (body: unknown, notes: Array<string>): Omit<RecordedLine, "line" | "t"> => {
  const b = decodeWith(ChatBody, body, "an OpenAI Chat Completions body")
  const tools = (b.tools ?? []).map((t): ToolDefinition => ({
    name: t.function.name,
    ...(t.function.description === undefined ? {} : { description: t.function.description }),
    inputSchema: t.function.parameters ?? { type: "object", properties: {} }
  }))
  const system: Array<string> = []
  const names = new Map<string, string>()
  const messages: Array<Message> = []
  b.messages.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        // The leading system messages are the system prompt; a later one stays where it is.
        if (messages.length === 0) system.push(chatText(m.content))
        else messages.push({ role: "system", content: chatText(m.content) })
        return
      case "user": {
        const parts = chatParts(m.content)
        messages.push({ role: "user", content: typeof m.content === "string" ? m.content : parts })
        return
      }
      case "assistant": {
        const parts: Array<AssistantPart> = m.content === undefined || m.content === null ? [] : chatParts(m.content).filter((p) => p.type !== "text" || p.text !== "")
        for (const [k, c] of (m.tool_calls ?? []).entries()) {
          const input = decodeWith(JsonObjectText, c.function.arguments, `messages.${i}.tool_calls.${k}.function.arguments`)
          names.set(c.id, c.function.name)
          parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input } satisfies ToolCallPart)
        }
        if (parts.length === 0) notes.push(`messages.${i} is an empty assistant message: left out`)
        else messages.push({ role: "assistant", content: parts })
        return
      }
      case "tool": {
        const result: ToolResultPart = { type: "tool-result", toolCallId: m.tool_call_id, toolName: names.get(m.tool_call_id) ?? "", output: { type: "text", value: chatText(m.content) } }
        const last = messages.at(-1)
        if (last?.role === "tool") messages[messages.length - 1] = { role: "tool", content: [...last.content, result] }
        else messages.push({ role: "tool", content: [result] })
        return
      }
    }
  })
  return { format: "openai", systemPrompt: system.join("\n\n"), tools, messages }
}

// ---------------------------------------------------------------------------------------
// Lines

/**
 * Which API a body is for: OpenAI Chat when a message has the `system`, `developer` or
 * `tool` role or `tool_calls`, or a tool is `{type: "function"}`; Anthropic otherwise
 * (a body that could be either carries the same conversation in both readings).
 */
export const recordedFormat = (body: Readonly<Record<string, unknown>>): "anthropic" | "openai" => {
  const messages = Array.isArray(body["messages"]) ? body["messages"] : []
  const tools = Array.isArray(body["tools"]) ? body["tools"] : []
  const chat = messages.some((m) => isObject(m) && (m["role"] === "system" || m["role"] === "developer" || m["role"] === "tool" || m["tool_calls"] !== undefined)) ||
    tools.some((t) => isObject(t) && t["type"] === "function")
  return chat ? "openai" : "anthropic"
}

const LineTime = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/** Decode one line's JSON into a request; throws `LineError` with the reason. */
const decodeLine = (value: unknown, notes: Array<string>): { readonly t: number | undefined; readonly request: Omit<RecordedLine, "line" | "t"> } => {
  if (!isObject(value)) throw new LineError("not a JSON object")
  const wrapped = isObject(value["request"])
  const raw = wrapped ? value["request"] : value
  if (!isObject(raw)) throw new LineError("not a JSON object")
  const t = value["t"] === undefined ? undefined : decodeWith(LineTime, value["t"], "t")
  const { t: _t, ...body } = raw
  if (!Array.isArray(body["messages"])) throw new LineError(`no "messages" array: not an Anthropic Messages or OpenAI Chat request body${wrapped ? "" : ' (nor a {"t", "request"} line)'}`)
  const request = recordedFormat(body) === "openai" ? openaiRequest(body, notes) : anthropicRequest(body, notes)
  const problems = historyProblems(request.messages, { pending: true })
  if (problems.length > 0) throw new LineError(problems[0]!.issue)
  return { t, request }
}

/** A read path as a repository-relative one (leading `/` and `./` dropped); undefined for a path with `..`. */
const repoPath = (path: string | undefined): string | undefined => {
  if (path === undefined) return undefined
  const clean = path.replace(/\\/g, "/").replace(/^(\.?\/)+/, "")
  return clean === "" || clean.split("/").includes("..") ? undefined : clean
}

/**
 * Read a recorded session: every line decoded (blank lines ignored), malformed ones
 * reported with their line number and skipped, and the files its tool calls read.
 *
 * @example
 * ```ts no-run
 * import { readFileSync } from "node:fs"
 * import { parseRecordedSession } from "@strata/replay"
 * const session = parseRecordedSession(readFileSync("session.jsonl", "utf8"))
 * session.problems // [{ line: 7, skipped: true, reason: "not JSON: ..." }]
 * ```
 */
export const parseRecordedSession = (text: string): RecordedSession => {
  const requests: Array<RecordedLine> = []
  const problems: Array<RecordedProblem> = []
  const files = new Map<string, string>()
  let lastT = -Infinity
  text.split("\n").forEach((source, i) => {
    const line = i + 1
    if (source.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(source)
    } catch (error) {
      problems.push({ line, skipped: true, reason: `not JSON: ${error instanceof Error ? error.message : String(error)}` })
      return
    }
    const notes: Array<string> = []
    try {
      const { t, request } = decodeLine(value, notes)
      if (t !== undefined && t < lastT) throw new LineError(`t ${t} is before the previous line's ${lastT}`)
      if (t !== undefined) lastT = t
      requests.push({ line, t, ...request })
      for (const note of notes) problems.push({ line, skipped: false, reason: note })
    } catch (error) {
      if (!(error instanceof LineError)) throw error
      problems.push({ line, skipped: true, reason: error.message })
    }
  })
  for (const request of requests) {
    const reads = new Map<string, string>()
    for (const m of request.messages) {
      if (m.role === "assistant" && typeof m.content !== "string") {
        for (const p of m.content) if (p.type === "tool-call") {
          const path = readPathOf(p)
          if (path !== undefined) reads.set(p.toolCallId, path)
        }
      }
      if (m.role !== "tool") continue
      for (const r of m.content) {
        const path = repoPath(reads.get(r.toolCallId))
        if (path !== undefined && r.output.type === "text" && !files.has(path)) files.set(path, r.output.value)
      }
    }
  }
  return {
    requests,
    problems,
    files: [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, content]) => ({ path, content }))
  }
}
