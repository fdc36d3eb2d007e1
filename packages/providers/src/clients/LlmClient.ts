/**
 * The `LlmClient` service: streaming chat requests to Anthropic Messages, OpenAI(-compatible)
 * Chat Completions and Bedrock ConverseStream through the official SDKs, with the key
 * from the environment, timeouts, retries on 429/5xx honouring `retry-after`, typed
 * errors, the reply's tool calls, and usage decoded from the stream into the neutral `Usage`.
 */
import type { Usage } from "@strata/core"
import type { ToolCallPart } from "@strata/core"
import { Clock, Config, Context, Duration, Effect, Layer, Option, Random, Redacted, Stream } from "effect"
import { foldStreamUsage } from "../usage.ts"
import type { Driver, DriverReply, Failure, LlmProvider, ToolCallDelta } from "../driver.ts"
import { anthropicDriver, bedrockDriver, openaiDriver, type DriverOptions } from "../internal/clients/drivers.ts"
import {
  LlmConnectionError,
  LlmHttpError,
  LlmIncompleteReply,
  LlmInvalidRequest,
  LlmMissingCredentials,
  LlmSdkMissing,
  LlmStreamError,
  LlmTimeout,
  type LlmError
} from "./errors.ts"
import { DEFAULT_RETRY, nextDelayMs, retryAfterMs, type RetryOptions } from "./retry.ts"
import { collectToolCalls } from "./toolCalls.ts"

export type { Driver, LlmProvider } from "../driver.ts"

/**
 * A request: the provider's native body, as a placement plugin emits it
 * (`PlacementResult.body`) or as `simpleBody` builds it. `stream` is set by the client.
 */
export interface LlmRequest {
  readonly body: unknown
}

/**
 * What a stream emits: text as it arrives; once the provider said the reply finished,
 * each tool call it made (whole, in order), then the usage (when reported), then the end.
 * A reply that breaks before it finished emits no tool call.
 */
export type LlmEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly call: ToolCallPart }
  | { readonly _tag: "Usage"; readonly usage: Usage }
  | { readonly _tag: "Finish"; readonly stopReason: string | undefined }

/** A completed request. `usage` is undefined only if the provider reported none. */
export interface LlmResponse {
  readonly provider: LlmProvider
  readonly text: string
  /** The tool calls the reply made, in order (empty when it made none). */
  readonly toolCalls: ReadonlyArray<ToolCallPart>
  readonly usage: Usage | undefined
  readonly stopReason: string | undefined
}

/** Options shared by every client layer. */
export interface LlmClientOptions {
  /** API base URL: a gateway, or `http://127.0.0.1:<port>` in tests. Default: the provider's. */
  readonly baseUrl?: string
  /** The key itself. Default: read from `apiKeyEnv`. */
  readonly apiKey?: string | Redacted.Redacted<string>
  /** Environment variable holding the key (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `AWS_BEARER_TOKEN_BEDROCK` by default). */
  readonly apiKeyEnv?: string
  /** Per attempt: how long to wait for the response to start. Default 60,000 ms. */
  readonly timeoutMs?: number
  /** Longest gap between stream events. Default 60,000 ms. */
  readonly idleTimeoutMs?: number
  readonly retry?: RetryOptions
  /** Extra headers on every request (gateway routing, beta flags). */
  readonly headers?: Readonly<Record<string, string>>
}

/** Bedrock options: region and model besides the common ones; SigV4 credentials when no API key is set. */
export interface BedrockClientOptions extends LlmClientOptions {
  /** Default: `AWS_REGION`, then `AWS_DEFAULT_REGION`, then `us-east-1`. */
  readonly region?: string
  /** `modelId` for bodies that carry none. */
  readonly model?: string
  /** Static SigV4 credentials; without these and without an API key the AWS default chain is used. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
}

/** The service's shape. */
export interface LlmClientShape {
  readonly provider: LlmProvider
  /**
   * Stream a request's events. Retries happen before the first event; a stream that
   * breaks later fails with `LlmStreamError`, one that ends before the provider said it
   * finished with `LlmIncompleteReply` (after the text that did arrive).
   */
  readonly stream: (request: LlmRequest) => Stream.Stream<LlmEvent, LlmError>
  /** Send a request and collect its text, usage and stop reason. */
  readonly complete: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmError>
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

interface Settings {
  readonly timeoutMs: number
  readonly idleTimeoutMs: number
  readonly retry: Required<RetryOptions>
  readonly keyVariable: string
}

const settingsOf = (options: LlmClientOptions, keyVariable: string): Settings => ({
  timeoutMs: options.timeoutMs ?? 60_000,
  idleTimeoutMs: options.idleTimeoutMs ?? options.timeoutMs ?? 60_000,
  retry: { ...DEFAULT_RETRY, ...options.retry },
  keyVariable
})

const toError = (driver: Driver, f: Failure, attempts: number, settings: Settings, nowMs: number): LlmError => {
  switch (f.kind) {
    case "http": {
      const wait = retryAfterMs(f, nowMs)
      return new LlmHttpError({
        provider: driver.provider,
        status: f.status ?? 0,
        detail: f.detail,
        attempts,
        ...(wait === undefined ? {} : { retryAfterMs: wait }),
        ...(f.requestId === undefined ? {} : { requestId: f.requestId })
      })
    }
    case "timeout":
      return new LlmTimeout({ provider: driver.provider, timeoutMs: settings.timeoutMs, phase: "response", attempts })
    case "credentials":
      return new LlmMissingCredentials({ provider: driver.provider, variable: `${settings.keyVariable} (or AWS credentials: ${f.detail})` })
    case "connection":
    case "aborted":
      return new LlmConnectionError({ provider: driver.provider, baseUrl: driver.baseUrl, reason: f.detail, attempts })
    case "other":
      return new LlmInvalidRequest({ provider: driver.provider, reason: f.detail })
  }
}

interface Opened {
  readonly reply: DriverReply
  readonly controller: AbortController
  readonly attempts: number
}

/** Open the stream, retrying 429/5xx/timeouts/connection errors with backoff or `retry-after`. */
const openWithRetry = (driver: Driver, body: Record<string, unknown>, settings: Settings): Effect.Effect<Opened, LlmError> => {
  const attempt = (n: number): Effect.Effect<Opened, LlmError> =>
    Effect.suspend(() => {
      const controller = new AbortController()
      return Effect.tryPromise({
        try: () => driver.open(body, controller.signal, settings.timeoutMs),
        catch: (e): Failure => driver.classify(e)
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(settings.timeoutMs),
          orElse: () => Effect.fail<Failure>({ kind: "timeout", detail: `no response within ${settings.timeoutMs} ms` })
        }),
        Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
        Effect.map((reply): Opened => ({ reply, controller, attempts: n + 1 })),
        Effect.catch((failure: Failure) =>
          Effect.gen(function* () {
            // A timed-out or failed attempt must not keep its connection open.
            controller.abort()
            const now = yield* Clock.currentTimeMillis
            const random = yield* Random.next
            const delay = nextDelayMs(failure, n, settings.retry, now, random)
            if (delay === undefined) return yield* Effect.fail(toError(driver, failure, n + 1, settings, now))
            yield* Effect.sleep(Duration.millis(delay))
            return yield* attempt(n + 1)
          })
        )
      )
    })
  return attempt(0)
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/** The start of a body, quoted, for messages. */
const preview = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text)

/**
 * The native events a whole-body reply stands for (a gateway that ignored `stream: true`):
 * the body must be JSON that decodes as a finished reply; an empty body, non-JSON or
 * another shape is an incomplete reply saying what arrived.
 */
const bodyEvents = (driver: Driver, reply: Extract<DriverReply, { _tag: "Body" }>): ReadonlyArray<unknown> => {
  const incomplete = (arrived: string) => new LlmIncompleteReply({ provider: driver.provider, arrived, events: 0, characters: 0 })
  const what = `a 200 response (content-type ${reply.contentType || "none"}) that is not an event stream`
  if (reply.text.trim() === "") throw incomplete(`${what} and has an empty body`)
  let json: unknown
  try {
    json = JSON.parse(reply.text)
  } catch {
    throw incomplete(`${what}, and its ${plural(Buffer.byteLength(reply.text), "byte")} are not JSON: ${preview(reply.text)}`)
  }
  const error = driver.errorOf(json)
  if (error !== undefined) throw new LlmStreamError({ provider: driver.provider, reason: error })
  const events = driver.eventsOfReply(json)
  if (events === undefined) throw incomplete(`${what}, and its JSON is not a finished ${driver.provider} reply: ${preview(reply.text)}`)
  return events
}

/**
 * Native events to `LlmEvent`s, folding usage as it goes. A reply counts only when the
 * provider said it finished (`Driver.finishedBy`); a stream that ends or breaks before
 * that fails with `LlmIncompleteReply` or `LlmStreamError`, saying how much arrived.
 */
/** Internal: one native event arrived (any kind), so the stall timer restarts; never leaves the client. */
interface Tick {
  readonly _tag: "Tick"
}
const TICK: Tick = { _tag: "Tick" }

async function* toEvents(driver: Driver, reply: DriverReply): AsyncGenerator<LlmEvent | Tick> {
  let usage: Usage | undefined
  let stopReason: string | undefined
  let events = 0
  let characters = 0
  let finished = false
  const deltas: Array<ToolCallDelta> = []
  const source = reply._tag === "Body" ? bodyEvents(driver, reply) : reply.events
  try {
    for await (const event of source) {
      events++
      // Every event counts as progress (a tool call's input_json_delta too, not only text).
      yield TICK
      const error = driver.errorOf(event)
      if (error !== undefined) throw new LlmStreamError({ provider: driver.provider, reason: `${error} (after ${plural(events, "event")}; ${plural(characters, "character")} of text had arrived)` })
      usage = foldStreamUsage(driver.format, usage, event)
      const text = driver.textOf(event)
      if (text !== undefined && text.length > 0) {
        characters += text.length
        yield { _tag: "TextDelta", text }
      }
      for (const delta of driver.toolCallDeltasOf(event)) deltas.push(delta)
      stopReason = driver.stopOf(event) ?? stopReason
      if (driver.finishedBy(event)) finished = true
    }
  } catch (error) {
    if (error instanceof LlmStreamError || error instanceof LlmIncompleteReply) throw error
    // A connection cut after the provider said it finished loses nothing.
    if (!finished) {
      const detail = driver.classify(error).detail
      throw new LlmStreamError({ provider: driver.provider, reason: `${detail} (after ${plural(events, "event")}; ${plural(characters, "character")} of text had arrived)` })
    }
  }
  if (!finished) {
    const kind = reply._tag === "Stream" && reply.contentType !== "" && !/event-stream|eventstream/i.test(reply.contentType) ? ` (content-type ${reply.contentType})` : ""
    throw new LlmIncompleteReply({
      provider: driver.provider,
      arrived: `the stream ended after ${plural(events, "event")} without ${driver.finishEvent}${kind}`,
      events,
      characters
    })
  }
  for (const call of collectToolCalls(deltas)) yield { _tag: "ToolCall", call }
  if (usage !== undefined) yield { _tag: "Usage", usage }
  yield { _tag: "Finish", stopReason }
}

/** A client over one driver. */
export const makeLlmClient = (
  driver: Driver,
  options: LlmClientOptions,
  keyVariable: string,
  check: (body: Record<string, unknown>) => string | undefined = () => undefined
): LlmClientShape => {
  const settings = settingsOf(options, keyVariable)
  const validate = (request: LlmRequest): Effect.Effect<Record<string, unknown>, LlmInvalidRequest> => {
    if (!isRecord(request.body)) {
      return Effect.fail(new LlmInvalidRequest({ provider: driver.provider, reason: "the body must be a JSON object (a placement plugin's `body`, or `simpleBody(...)`)" }))
    }
    const problem = check(request.body)
    return problem === undefined ? Effect.succeed(request.body) : Effect.fail(new LlmInvalidRequest({ provider: driver.provider, reason: problem }))
  }
  const stream = (request: LlmRequest): Stream.Stream<LlmEvent, LlmError> =>
    Stream.unwrap(
      Effect.gen(function* () {
        const body = yield* validate(request)
        // Interruptible: a caller's timeout or abort must not wait out the open and its retries;
        // openWithRetry aborts its own controller when interrupted.
        const opened = yield* Effect.acquireRelease(openWithRetry(driver, body, settings), (o) => Effect.sync(() => o.controller.abort()), { interruptible: true })
        return Stream.fromAsyncIterable(toEvents(driver, opened.reply), (e): LlmError =>
          e instanceof LlmStreamError || e instanceof LlmIncompleteReply ? e : new LlmStreamError({ provider: driver.provider, reason: driver.classify(e).detail })
        ).pipe(
          // The stall timer runs between stream events of any kind (ticks), then the ticks go.
          Stream.timeoutOrElse({
            duration: Duration.millis(settings.idleTimeoutMs),
            orElse: () => Stream.fail(new LlmTimeout({ provider: driver.provider, timeoutMs: settings.idleTimeoutMs, phase: "stream", attempts: opened.attempts }))
          }),
          Stream.filter((event): event is LlmEvent => event._tag !== "Tick")
        )
      })
    )
  const complete = (request: LlmRequest): Effect.Effect<LlmResponse, LlmError> =>
    stream(request).pipe(
      Stream.runFold(
        (): { text: string; toolCalls: Array<ToolCallPart>; usage: Usage | undefined; stopReason: string | undefined } => ({ text: "", toolCalls: [], usage: undefined, stopReason: undefined }),
        (acc, event) => {
          switch (event._tag) {
            case "TextDelta":
              acc.text += event.text
              break
            case "ToolCall":
              acc.toolCalls.push(event.call)
              break
            case "Usage":
              acc.usage = event.usage
              break
            case "Finish":
              acc.stopReason = event.stopReason
          }
          return acc
        }
      ),
      Effect.map((acc): LlmResponse => ({ provider: driver.provider, ...acc })),
      Effect.withSpan("LlmClient.complete", { attributes: { provider: driver.provider } })
    )
  return { provider: driver.provider, stream, complete }
}

/** The key from options or the environment (through Effect's `ConfigProvider`); undefined when unset or empty. */
const findKey = (options: LlmClientOptions, variable: string): Effect.Effect<string | undefined> => {
  if (options.apiKey !== undefined) return Effect.succeed(typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey))
  return Config.option(Config.Redacted(variable)).pipe(
    Effect.map((found) => (Option.isSome(found) && Redacted.value(found.value).length > 0 ? Redacted.value(found.value) : undefined)),
    Effect.catch(() => Effect.succeed(undefined))
  )
}

const requireKey = (provider: LlmProvider, options: LlmClientOptions, variable: string): Effect.Effect<string, LlmMissingCredentials> =>
  findKey(options, variable).pipe(
    Effect.flatMap((key) => (key === undefined ? Effect.fail(new LlmMissingCredentials({ provider, variable })) : Effect.succeed(key)))
  )

const loadSdk = <A>(provider: LlmProvider, packageName: string, load: () => Promise<A>): Effect.Effect<A, LlmSdkMissing> =>
  Effect.tryPromise({ try: load, catch: (e) => new LlmSdkMissing({ provider, packageName, reason: describe(e) }) })

/** How to build a client over an SDK that takes an API key (Anthropic, OpenAI). */
interface KeyedSdk<Sdk> {
  readonly provider: LlmProvider
  /** Environment variable read when `apiKeyEnv` is not given. */
  readonly variable: string
  readonly packageName: string
  readonly load: () => Promise<Sdk>
  readonly driver: (sdk: Sdk, options: DriverOptions) => Driver
}

const makeKeyedClient = <Sdk>(spec: KeyedSdk<Sdk>, options: LlmClientOptions): Effect.Effect<LlmClientShape, LlmMissingCredentials | LlmSdkMissing> =>
  Effect.gen(function* () {
    const variable = options.apiKeyEnv ?? spec.variable
    const apiKey = yield* requireKey(spec.provider, options, variable)
    const sdk = yield* loadSdk(spec.provider, spec.packageName, spec.load)
    return makeLlmClient(spec.driver(sdk, { apiKey, baseUrl: options.baseUrl, headers: options.headers }), options, variable)
  })

/** An Anthropic Messages client; key from `ANTHROPIC_API_KEY` unless given. */
export const makeAnthropicClient = (options: LlmClientOptions = {}): Effect.Effect<LlmClientShape, LlmMissingCredentials | LlmSdkMissing> =>
  makeKeyedClient({ provider: "anthropic", variable: "ANTHROPIC_API_KEY", packageName: "@anthropic-ai/sdk", load: () => import("@anthropic-ai/sdk"), driver: anthropicDriver }, options)

/** An OpenAI Chat Completions client (or any compatible gateway via `baseUrl`); key from `OPENAI_API_KEY` unless given. */
export const makeOpenAIClient = (options: LlmClientOptions = {}): Effect.Effect<LlmClientShape, LlmMissingCredentials | LlmSdkMissing> =>
  makeKeyedClient({ provider: "openai", variable: "OPENAI_API_KEY", packageName: "openai", load: () => import("openai"), driver: openaiDriver }, options)

/**
 * A Bedrock ConverseStream client. Auth: a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`
 * or `apiKey`), else `credentials`, else the AWS default chain (`AWS_ACCESS_KEY_ID`...).
 */
export const makeBedrockClient = (options: BedrockClientOptions = {}): Effect.Effect<LlmClientShape, LlmSdkMissing> =>
  Effect.gen(function* () {
    const variable = options.apiKeyEnv ?? "AWS_BEARER_TOKEN_BEDROCK"
    const apiKey = yield* findKey(options, variable)
    const envRegion = yield* Config.option(Config.String("AWS_REGION")).pipe(
      Effect.flatMap((r) => (Option.isSome(r) ? Effect.succeed(r) : Config.option(Config.String("AWS_DEFAULT_REGION")))),
      Effect.catch(() => Effect.succeed(Option.none<string>()))
    )
    const region = options.region ?? Option.getOrElse(envRegion, () => "us-east-1")
    const sdk = yield* loadSdk("bedrock", "@aws-sdk/client-bedrock-runtime", () => import("@aws-sdk/client-bedrock-runtime"))
    const driver = bedrockDriver(sdk, { region, baseUrl: options.baseUrl, model: options.model, apiKey, credentials: options.credentials })
    return makeLlmClient(driver, options, `${variable} or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY`, (body) =>
      typeof body["modelId"] === "string" || options.model !== undefined
        ? undefined
        : "the body has no modelId; add one or pass `model` in the client options")
  })

/**
 * Sends chat requests to an LLM provider. Layers per provider; the CLI's chat command
 * and the compaction model use it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LlmClient, simpleBody } from "@strata/providers"
 * const program = Effect.gen(function* () {
 *   const llm = yield* LlmClient
 *   const reply = yield* llm.complete({ body: simpleBody("anthropic", { model: "claude-sonnet-4-6", messages: [{ role: "user", content: "hi" }], maxTokens: 100 }) })
 *   return reply.usage
 * }).pipe(Effect.provide(LlmClient.layerAnthropic()))
 * ```
 */
export class LlmClient extends Context.Service<LlmClient, LlmClientShape>()("@strata/providers/LlmClient") {
  static readonly layerAnthropic = (options: LlmClientOptions = {}): Layer.Layer<LlmClient, LlmMissingCredentials | LlmSdkMissing> =>
    Layer.effect(LlmClient, makeAnthropicClient(options))

  static readonly layerOpenAI = (options: LlmClientOptions = {}): Layer.Layer<LlmClient, LlmMissingCredentials | LlmSdkMissing> =>
    Layer.effect(LlmClient, makeOpenAIClient(options))

  static readonly layerBedrock = (options: BedrockClientOptions = {}): Layer.Layer<LlmClient, LlmSdkMissing> =>
    Layer.effect(LlmClient, makeBedrockClient(options))

  /** The layer for a provider by name (`openai` also serves OpenAI-compatible gateways). */
  static readonly layer = (provider: LlmProvider, options: BedrockClientOptions = {}): Layer.Layer<LlmClient, LlmMissingCredentials | LlmSdkMissing> =>
    provider === "anthropic" ? LlmClient.layerAnthropic(options) : provider === "openai" ? LlmClient.layerOpenAI(options) : LlmClient.layerBedrock(options)
}
