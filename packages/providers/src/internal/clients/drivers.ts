/**
 * One driver per provider SDK: how to open a streaming request, read text, stop
 * reasons and errors out of its events, and classify what it throws. The SDKs are
 * optional peer dependencies, loaded on first use.
 */
import { Schema } from "effect"
import type { Driver, DriverReply, Failure, ToolCallDelta } from "../../driver.ts"

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined)
const NO_DELTAS: ReadonlyArray<ToolCallDelta> = []

type ErrorClass = abstract new (...args: never[]) => unknown

/** The error classes Stainless-generated SDKs (Anthropic, OpenAI) export. */
interface StainlessErrors {
  readonly APIError: ErrorClass
  readonly APIConnectionError: ErrorClass
  readonly APIConnectionTimeoutError: ErrorClass
  readonly APIUserAbortError: ErrorClass
}

const header = (headers: unknown, name: string): string | undefined => {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  if (isRecord(headers)) return str(headers[name]) ?? str(headers[name.toLowerCase()])
  return undefined
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Classify what an Anthropic or OpenAI SDK call threw. */
export const classifyStainless = (e: unknown, errors: StainlessErrors): Failure => {
  if (e instanceof errors.APIUserAbortError) return { kind: "aborted", detail: "aborted" }
  if (e instanceof errors.APIConnectionTimeoutError) return { kind: "timeout", detail: describe(e) }
  if (e instanceof errors.APIConnectionError) {
    const cause = (e as { cause?: unknown }).cause
    return { kind: "connection", detail: cause === undefined ? describe(e) : `${describe(e)} (${describe(cause)})` }
  }
  if (e instanceof errors.APIError) {
    const err = e as unknown as { status?: number; headers?: unknown; apiMessage?: string | null; error?: unknown; message: string; requestID?: string | null }
    const body = isRecord(err.error) ? err.error : undefined
    const nested = body !== undefined && isRecord(body["error"]) ? str(body["error"]["message"]) : undefined
    const detail = err.apiMessage ?? nested ?? str(body?.["message"]) ?? err.message
    const retryAfterMsHeader = header(err.headers, "retry-after-ms")
    const retryAfterHeader = header(err.headers, "retry-after")
    return {
      kind: err.status === undefined ? "other" : "http",
      ...(err.status === undefined ? {} : { status: err.status }),
      detail,
      ...(retryAfterMsHeader === undefined ? {} : { retryAfterMsHeader }),
      ...(retryAfterHeader === undefined ? {} : { retryAfterHeader }),
      ...(typeof err.requestID === "string" ? { requestId: err.requestID } : {})
    }
  }
  return { kind: "other", detail: describe(e) }
}

/** Options every driver takes. */
export interface DriverOptions {
  readonly apiKey: string
  readonly baseUrl?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

// The client retries itself (honouring retry-after), so the SDK must not retry underneath
// it; and it reports a broken stream as a typed error, so the SDK must not log one too.
const stainlessClientOptions = (options: DriverOptions) => ({
  apiKey: options.apiKey,
  maxRetries: 0,
  logLevel: "off" as const,
  ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
  ...(options.headers === undefined ? {} : { defaultHeaders: options.headers })
})

/**
 * What a Stainless SDK call opened to. An event stream is iterated lazily; a JSON body
 * (a gateway that ignored `stream: true`) is read whole so it can be decoded as a reply.
 */
const replyOf = async (stream: AsyncIterable<unknown>, response: Response): Promise<DriverReply> => {
  const contentType = response.headers.get("content-type") ?? ""
  if (/json/i.test(contentType)) return { _tag: "Body", contentType, text: await response.text() }
  return { _tag: "Stream", events: stream, contentType }
}

/** A finished Anthropic Messages reply (non-streaming): a stop reason says it finished. */
const AnthropicReply = Schema.Struct({
  type: Schema.Literal("message"),
  content: Schema.Array(Schema.Struct({
    type: Schema.String,
    text: Schema.optional(Schema.String),
    id: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    input: Schema.optional(Schema.Unknown)
  })),
  stop_reason: Schema.String,
  usage: Schema.Record(Schema.String, Schema.Unknown)
})
const decodeAnthropicReply = Schema.decodeUnknownResult(AnthropicReply)

/** A finished OpenAI Chat Completions reply (non-streaming): its first choice has a finish reason. */
const OpenAIReply = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        id: Schema.String,
        function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
      }))))
    }),
    finish_reason: Schema.String
  })).check(Schema.isMinLength(1)),
  usage: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
const decodeOpenAIReply = Schema.decodeUnknownResult(OpenAIReply)

type AnthropicSdk = typeof import("@anthropic-ai/sdk")
type OpenAISdk = typeof import("openai")
type BedrockSdk = typeof import("@aws-sdk/client-bedrock-runtime")

/** Anthropic Messages, streamed (`message_start` ... `message_stop`). */
export const anthropicDriver = (sdk: AnthropicSdk, options: DriverOptions): Driver => {
  const client = new sdk.default(stainlessClientOptions(options))
  return {
    provider: "anthropic",
    format: "anthropic",
    baseUrl: options.baseUrl ?? "https://api.anthropic.com",
    open: async (body, signal, timeoutMs) => {
      const params = { ...body, stream: true } as unknown as import("@anthropic-ai/sdk").default.MessageCreateParamsStreaming
      const { data, response } = await client.messages.create(params, { signal, timeout: timeoutMs }).withResponse()
      return replyOf(data, response)
    },
    classify: (e) => classifyStainless(e, sdk),
    finishedBy: (e) => isRecord(e) && e["type"] === "message_stop",
    finishEvent: "message_stop",
    eventsOfReply: (body) => {
      const decoded = decodeAnthropicReply(body)
      if (decoded._tag === "Failure" || !isRecord(body)) return undefined
      const reply = decoded.success
      const blocks = reply.content.flatMap((b, index): ReadonlyArray<Record<string, unknown>> =>
        b.type === "text" && b.text !== undefined
          ? [{ type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } }]
          : b.type === "tool_use"
            ? [{ type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: b.input ?? {} } }]
            : []
      )
      return [
        { type: "message_start", message: { ...body, content: [], stop_reason: null } },
        ...blocks,
        { type: "message_delta", delta: { stop_reason: reply.stop_reason }, usage: { output_tokens: reply.usage["output_tokens"] } },
        { type: "message_stop" }
      ]
    },
    textOf: (e) => (isRecord(e) && e["type"] === "content_block_delta" && isRecord(e["delta"]) && e["delta"]["type"] === "text_delta" ? str(e["delta"]["text"]) : undefined),
    stopOf: (e) => (isRecord(e) && e["type"] === "message_delta" && isRecord(e["delta"]) ? str(e["delta"]["stop_reason"]) : undefined),
    // A `tool_use` block opens with its id, name and an empty input; `input_json_delta`s carry the JSON.
    toolCallDeltasOf: (e) => {
      if (!isRecord(e)) return NO_DELTAS
      const index = num(e["index"]) ?? 0
      const block = e["content_block"]
      if (e["type"] === "content_block_start" && isRecord(block) && block["type"] === "tool_use") {
        return [{ index, id: str(block["id"]), name: str(block["name"]), input: block["input"] }]
      }
      const delta = e["delta"]
      if (e["type"] === "content_block_delta" && isRecord(delta) && delta["type"] === "input_json_delta") return [{ index, arguments: str(delta["partial_json"]) ?? "" }]
      return NO_DELTAS
    },
    errorOf: (e) => (isRecord(e) && e["type"] === "error" ? (isRecord(e["error"]) ? str(e["error"]["message"]) : undefined) ?? "error event" : undefined)
  }
}

/** OpenAI Chat Completions (and compatible gateways), streamed with the final usage chunk. */
export const openaiDriver = (sdk: OpenAISdk, options: DriverOptions): Driver => {
  const client = new sdk.default(stainlessClientOptions(options))
  return {
    provider: "openai",
    format: "openai-chat",
    baseUrl: options.baseUrl ?? "https://api.openai.com/v1",
    open: async (body, signal, timeoutMs) => {
      const streamOptions = isRecord(body["stream_options"]) ? body["stream_options"] : {}
      const params = {
        ...body,
        stream: true,
        // Without include_usage the stream carries no usage at all.
        stream_options: { ...streamOptions, include_usage: true }
      } as unknown as import("openai").default.ChatCompletionCreateParamsStreaming
      const { data, response } = await client.chat.completions.create(params, { signal, timeout: timeoutMs }).withResponse()
      return replyOf(data, response)
    },
    classify: (e) => classifyStainless(e, sdk),
    finishedBy: (e) => {
      if (!isRecord(e) || !Array.isArray(e["choices"])) return false
      return e["choices"].some((choice: unknown) => isRecord(choice) && typeof choice["finish_reason"] === "string")
    },
    finishEvent: "a finish_reason",
    eventsOfReply: (body) => {
      const decoded = decodeOpenAIReply(body)
      if (decoded._tag === "Failure") return undefined
      const choice = decoded.success.choices[0]
      if (choice === undefined) return undefined
      const toolCalls = (choice.message.tool_calls ?? []).map((c, index) => ({ index, id: c.id, type: "function", function: c.function }))
      const delta = { content: choice.message.content ?? "", ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }) }
      return [{ choices: [{ index: 0, delta, finish_reason: choice.finish_reason }], usage: decoded.success.usage ?? null }]
    },
    textOf: (e) => {
      if (!isRecord(e) || !Array.isArray(e["choices"])) return undefined
      const choice: unknown = e["choices"][0]
      return isRecord(choice) && isRecord(choice["delta"]) ? str(choice["delta"]["content"]) : undefined
    },
    stopOf: (e) => {
      if (!isRecord(e) || !Array.isArray(e["choices"])) return undefined
      const choice: unknown = e["choices"][0]
      return isRecord(choice) ? (str(choice["finish_reason"]) ?? undefined) : undefined
    },
    // The first chunk of a call has its id and name; later ones add argument text at its index.
    toolCallDeltasOf: (e) => {
      if (!isRecord(e) || !Array.isArray(e["choices"])) return NO_DELTAS
      const choice: unknown = e["choices"][0]
      if (!isRecord(choice) || !isRecord(choice["delta"]) || !Array.isArray(choice["delta"]["tool_calls"])) return NO_DELTAS
      return choice["delta"]["tool_calls"].flatMap((call: unknown, k: number): ReadonlyArray<ToolCallDelta> => {
        if (!isRecord(call)) return []
        const fn = isRecord(call["function"]) ? call["function"] : {}
        return [{ index: num(call["index"]) ?? k, id: str(call["id"]), name: str(fn["name"]), arguments: str(fn["arguments"]) }]
      })
    },
    // Gateways (OpenRouter, LiteLLM) report upstream failures as an `error` chunk.
    errorOf: (e) => (isRecord(e) && isRecord(e["error"]) ? (str(e["error"]["message"]) ?? "error chunk") : undefined)
  }
}

/** Options for the Bedrock driver. */
export interface BedrockDriverOptions {
  readonly region: string
  readonly baseUrl?: string | undefined
  readonly model?: string | undefined
  /** A Bedrock API key (bearer token); otherwise SigV4 with `credentials` or the AWS chain. */
  readonly apiKey?: string | undefined
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | undefined
}

const BEDROCK_STATUS: Readonly<Record<string, number>> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  InternalServerException: 500,
  ModelNotReadyException: 503,
  ModelTimeoutException: 408,
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404
}

/** Bedrock ConverseStream (`messageStart` ... `metadata`). */
export const bedrockDriver = (sdk: BedrockSdk, options: BedrockDriverOptions): Driver => {
  const client = new sdk.BedrockRuntimeClient({
    region: options.region,
    maxAttempts: 1,
    ...(options.baseUrl === undefined ? {} : { endpoint: options.baseUrl }),
    ...(options.apiKey !== undefined
      ? { token: { token: options.apiKey }, authSchemePreference: ["httpBearerAuth"] }
      : options.credentials === undefined ? {} : { credentials: options.credentials })
  })
  return {
    provider: "bedrock",
    format: "bedrock",
    baseUrl: options.baseUrl ?? `https://bedrock-runtime.${options.region}.amazonaws.com`,
    open: async (body, signal) => {
      const { modelId, ...rest } = body
      const input = { ...rest, modelId: str(modelId) ?? options.model } as unknown as import("@aws-sdk/client-bedrock-runtime").ConverseStreamCommandInput
      const out = await client.send(new sdk.ConverseStreamCommand(input), { abortSignal: signal })
      if (out.stream === undefined) throw new Error("the response has no event stream")
      return { _tag: "Stream", events: out.stream, contentType: "application/vnd.amazon.eventstream" }
    },
    finishedBy: (e) => isRecord(e) && isRecord(e["messageStop"]),
    finishEvent: "messageStop",
    // The SDK decodes the binary event stream itself; a body that is not one fails inside it.
    eventsOfReply: () => undefined,
    classify: (e) => {
      const err = e as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number; requestId?: string }; $response?: { headers?: unknown } }
      const name = err.name ?? ""
      if (name === "AbortError") return { kind: "aborted", detail: "aborted" }
      if (name === "CredentialsProviderError" || name === "TokenProviderError") return { kind: "credentials", detail: err.message ?? name }
      if (name === "TimeoutError" || err.code === "ETIMEDOUT") return { kind: "timeout", detail: err.message ?? name }
      if (err.code !== undefined && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EPIPE)$/.test(err.code)) {
        return { kind: "connection", detail: `${err.code}: ${err.message ?? ""}` }
      }
      const status = err.$metadata?.httpStatusCode ?? BEDROCK_STATUS[name]
      if (status !== undefined) {
        const retryAfterHeader = header(err.$response?.headers, "retry-after")
        const requestId = err.$metadata?.requestId
        return {
          kind: "http",
          status,
          detail: `${name}: ${err.message ?? ""}`,
          ...(retryAfterHeader === undefined ? {} : { retryAfterHeader }),
          ...(requestId === undefined ? {} : { requestId })
        }
      }
      return { kind: "other", detail: describe(e) }
    },
    textOf: (e) => (isRecord(e) && isRecord(e["contentBlockDelta"]) && isRecord(e["contentBlockDelta"]["delta"]) ? str(e["contentBlockDelta"]["delta"]["text"]) : undefined),
    stopOf: (e) => (isRecord(e) && isRecord(e["messageStop"]) ? str(e["messageStop"]["stopReason"]) : undefined),
    // `contentBlockStart.start.toolUse` names the call; `contentBlockDelta.delta.toolUse.input` carries its JSON.
    toolCallDeltasOf: (e) => {
      if (!isRecord(e)) return NO_DELTAS
      const start = e["contentBlockStart"]
      if (isRecord(start) && isRecord(start["start"]) && isRecord(start["start"]["toolUse"])) {
        const use = start["start"]["toolUse"]
        return [{ index: num(start["contentBlockIndex"]) ?? 0, id: str(use["toolUseId"]), name: str(use["name"]) }]
      }
      const delta = e["contentBlockDelta"]
      if (isRecord(delta) && isRecord(delta["delta"]) && isRecord(delta["delta"]["toolUse"])) {
        return [{ index: num(delta["contentBlockIndex"]) ?? 0, arguments: str(delta["delta"]["toolUse"]["input"]) ?? "" }]
      }
      return NO_DELTAS
    },
    errorOf: (e) => {
      if (!isRecord(e)) return undefined
      const key = Object.keys(e).find((k) => k.endsWith("Exception") && e[k] !== undefined)
      if (key === undefined) return undefined
      const value = e[key]
      return `${key}: ${isRecord(value) ? (str(value["message"]) ?? "") : ""}`
    }
  }
}
