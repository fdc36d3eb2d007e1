/**
 * The tagged errors of the LLM clients. Each names the provider and says what to do:
 * set a variable, install a package, wait, raise a timeout, or fix the request.
 */
import { Schema } from "effect"

/** No credentials: the key's environment variable is unset and none was passed. */
export class LlmMissingCredentials extends Schema.TaggedError<LlmMissingCredentials>()("LlmMissingCredentials", {
  provider: Schema.String,
  variable: Schema.String
}) {
  override get message(): string {
    return `No credentials for ${this.provider}: set ${this.variable} in the environment, or pass apiKey in the client options.`
  }
}

/** The provider's SDK (an optional peer dependency) is not installed. */
export class LlmSdkMissing extends Schema.TaggedError<LlmSdkMissing>()("LlmSdkMissing", {
  provider: Schema.String,
  packageName: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `The ${this.provider} client needs the optional peer dependency ${this.packageName}; install it (npm install ${this.packageName}). (${this.reason})`
  }
}

/** The request cannot be sent as given (not an object, no model). */
export class LlmInvalidRequest extends Schema.TaggedError<LlmInvalidRequest>()("LlmInvalidRequest", {
  provider: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot send this ${this.provider} request: ${this.reason}`
  }
}

const hint = (status: number): string => {
  if (status === 400 || status === 422) return "the provider rejected the request body; check the model id and the fields named above"
  if (status === 401) return "the key was rejected; check the key's environment variable"
  if (status === 403) return "the key is not allowed to do this; check its permissions, region or model access"
  if (status === 404) return "the model or endpoint does not exist; check the model id and the base URL"
  if (status === 413) return "the request is too large; send fewer tokens"
  if (status === 429) return "rate limited; wait and retry, or lower the request rate"
  if (status >= 500) return "the provider is having trouble; retry later"
  return "see the provider's documentation for this status"
}

/** The provider answered with an HTTP error (after retries, for 429 and 5xx). */
export class LlmHttpError extends Schema.TaggedError<LlmHttpError>()("LlmHttpError", {
  provider: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  attempts: Schema.Number,
  /** The server's `retry-after`, in milliseconds, when it sent one. */
  retryAfterMs: Schema.optionalKey(Schema.Number),
  requestId: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    const tries = this.attempts > 1 ? ` after ${this.attempts} attempts` : ""
    const wait = this.retryAfterMs === undefined ? "" : ` The server asked to wait ${Math.ceil(this.retryAfterMs / 1000)} s.`
    const id = this.requestId === undefined ? "" : ` (request id ${this.requestId})`
    return `${this.provider} returned HTTP ${this.status}${tries}: ${this.detail}${id}. Hint: ${hint(this.status)}.${wait}`
  }
}

/** No response (or no stream event) within the configured time. */
export class LlmTimeout extends Schema.TaggedError<LlmTimeout>()("LlmTimeout", {
  provider: Schema.String,
  timeoutMs: Schema.Number,
  phase: Schema.Literals(["response", "stream"]),
  attempts: Schema.Number
}) {
  override get message(): string {
    const what = this.phase === "response" ? "no response" : "the stream stalled: no event"
    const tries = this.attempts > 1 ? ` (${this.attempts} attempts)` : ""
    return `${this.provider}: ${what} within ${this.timeoutMs} ms${tries}; raise timeoutMs/idleTimeoutMs or check the network and base URL.`
  }
}

/** The endpoint could not be reached (DNS, refused connection, TLS). */
export class LlmConnectionError extends Schema.TaggedError<LlmConnectionError>()("LlmConnectionError", {
  provider: Schema.String,
  baseUrl: Schema.String,
  reason: Schema.String,
  attempts: Schema.Number
}) {
  override get message(): string {
    return `Could not reach ${this.provider} at ${this.baseUrl} (${this.attempts} attempt${this.attempts === 1 ? "" : "s"}): ${this.reason}. Check the base URL and the network.`
  }
}

/** The stream broke after it started (an error event, a cut connection, a malformed event). Not retried: output was already delivered. */
export class LlmStreamError extends Schema.TaggedError<LlmStreamError>()("LlmStreamError", {
  provider: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `The ${this.provider} stream failed midway: ${this.reason}. The partial answer is incomplete; send the request again.`
  }
}

/**
 * The provider answered 200, but not with a finished reply: the stream ended before the
 * provider said it finished (Anthropic `message_stop`, an OpenAI `finish_reason`, Bedrock
 * `messageStop`), or the body was empty or not a reply. `arrived` says what came; the
 * partial text is not a reply and must not be used as one. Not retried: the request may
 * have been processed.
 */
export class LlmIncompleteReply extends Schema.TaggedError<LlmIncompleteReply>()("LlmIncompleteReply", {
  provider: Schema.String,
  /** What arrived, in words: "the stream ended after 3 events without message_stop". */
  arrived: Schema.String,
  /** Stream events received (0 for a body). */
  events: Schema.Number,
  /** Characters of reply text received. */
  characters: Schema.Number
}) {
  override get message(): string {
    return `The ${this.provider} reply is incomplete: ${this.arrived}; ${this.characters} character${this.characters === 1 ? "" : "s"} of text arrived. The partial reply was discarded; send the request again.`
  }
}

/** Every error an `LlmClient` fails with. */
export type LlmError =
  | LlmMissingCredentials
  | LlmSdkMissing
  | LlmInvalidRequest
  | LlmHttpError
  | LlmTimeout
  | LlmConnectionError
  | LlmStreamError
  | LlmIncompleteReply
