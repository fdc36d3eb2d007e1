/**
 * The pure parts of history compaction (seed 004, reference algorithm): where the
 * verbatim window starts, the detection prompt, parsing the detector's JSON, and the
 * history that results from truncating at a topic boundary or summarizing.
 */
import { Result, Schema, SchemaIssue } from "effect"
import { type Message, messageText } from "../domain/Message.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"

/**
 * Compaction settings. Defaults follow the reference implementation: compact at
 * 24,000 history tokens, keep at least 4,000 tokens and 2 user turns verbatim, and
 * ask for a summary of at most 500 tokens.
 */
export const CompactionConfig = Schema.Struct({
  enabled: Schema.Boolean,
  triggerTokens: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  verbatimWindowTokens: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  summaryBudgetTokens: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  minVerbatimExchanges: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  /** Minimum detector confidence for truncating at its boundary. */
  minConfidence: Schema.Number,
  /** Model the detector runs on; a cheap one is enough. */
  detectionModel: Schema.optionalKey(Schema.String),
  /** Milliseconds before a detector call is abandoned. */
  timeoutMs: Schema.Number
})
export type CompactionConfig = typeof CompactionConfig.Type

export const DEFAULT_COMPACTION_CONFIG: CompactionConfig = {
  enabled: true,
  triggerTokens: 24_000,
  verbatimWindowTokens: 4_000,
  summaryBudgetTokens: 500,
  minVerbatimExchanges: 2,
  minConfidence: 0.5,
  timeoutMs: 30_000
}

/** The text of the user message that carries a summary. */
export const SUMMARY_PREFIX = "[History Summary]\n"
/** The assistant's reply to a summary message. */
export const SUMMARY_ACK = "Ok, I understand the context from the previous conversation."
/** Used when the detector returned an empty summary. */
export const EMPTY_SUMMARY =
  "The prior conversation covered earlier topics that are not directly relevant to the current work."

/** How many of the newest messages the detector sees. */
export const DETECTION_MESSAGE_LIMIT = 50
/** Messages longer than this are cut in the detection prompt. */
export const DETECTION_MESSAGE_CHARS = 1000

/** True when compaction is enabled and history has reached the trigger. */
export const shouldCompact = (historyTokens: number, config: CompactionConfig): boolean =>
  config.enabled && config.triggerTokens > 0 && historyTokens >= config.triggerTokens

/**
 * Index of the first message kept verbatim: the earlier of the token window (walking
 * back from the newest message while the window holds; the newest is always kept) and
 * the N-th user message from the end.
 */
export const verbatimStart = (
  history: ReadonlyArray<Message>,
  counter: Pick<TokenCounter, "countMessage">,
  config: Pick<CompactionConfig, "verbatimWindowTokens" | "minVerbatimExchanges">
): number => {
  if (history.length === 0) return 0
  let tokenIndex = history.length - 1
  let used = counter.countMessage(history[tokenIndex]!)
  while (tokenIndex > 0) {
    const next = counter.countMessage(history[tokenIndex - 1]!)
    if (used + next > config.verbatimWindowTokens) break
    used += next
    tokenIndex--
  }
  let countIndex = history.length
  if (config.minVerbatimExchanges > 0) {
    let users = 0
    countIndex = 0
    for (let i = history.length - 1; i >= 0; i--) {
      if (history[i]!.role === "user" && ++users === config.minVerbatimExchanges) {
        countIndex = i
        break
      }
    }
  }
  return Math.min(tokenIndex, countIndex)
}

/**
 * The detector's user prompt body: the newest messages with their original indices,
 * long ones cut, as `[i] ROLE: text` blocks.
 */
export const formatDetectionTranscript = (history: ReadonlyArray<Message>): string => {
  const start = Math.max(0, history.length - DETECTION_MESSAGE_LIMIT)
  const blocks: Array<string> = []
  for (let i = start; i < history.length; i++) {
    const message = history[i]!
    let text = messageText(message)
    if (text.length > DETECTION_MESSAGE_CHARS) text = text.slice(0, DETECTION_MESSAGE_CHARS) + "... (truncated)"
    blocks.push(`[${i}] ${message.role.toUpperCase()}: ${text}`)
  }
  return blocks.join("\n\n")
}

/** What the detection model answers. */
export const Detection = Schema.Struct({
  boundary_index: Schema.NullOr(Schema.Number),
  boundary_reason: Schema.String,
  confidence: Schema.Number,
  summary: Schema.String
})
export type Detection = typeof Detection.Type

const decodeDetection = Schema.decodeUnknownResult(Detection)
const formatIssue = SchemaIssue.makeFormatterDefault()

/**
 * Parse the detector's reply: JSON, optionally inside a ```json fence or surrounded
 * by prose. Fails with a reason on malformed JSON or missing fields.
 */
export const parseDetection = (text: string): Result.Result<Detection, string> => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)
  const candidate = fenced?.[1] ?? text
  const first = candidate.indexOf("{")
  const last = candidate.lastIndexOf("}")
  if (first < 0 || last <= first) return Result.fail("the reply contains no JSON object")
  let json: unknown
  try {
    json = JSON.parse(candidate.slice(first, last + 1))
  } catch (error) {
    return Result.fail(`the reply is not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const decoded = decodeDetection(json)
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail(`the reply's JSON does not match the expected shape: ${formatIssue(decoded.failure.issue)}`)
}

/** How a compaction changed the history. */
export type CompactionKind = "truncated" | "summarized"

export interface CompactionOutcome {
  readonly kind: CompactionKind
  readonly history: ReadonlyArray<Message>
  /** Index in the old history where kept messages start. */
  readonly keptFrom: number
  readonly reason: string
}

/** The summary pair that replaces older messages. */
export const summaryPair = (summary: string): ReadonlyArray<Message> => [
  { role: "user", content: SUMMARY_PREFIX + (summary.trim() === "" ? EMPTY_SUMMARY : summary.trim()) },
  { role: "assistant", content: SUMMARY_ACK }
]

/**
 * Apply a detection to the history. A confident boundary at or after the verbatim
 * start truncates there (everything before is dropped); otherwise older messages are
 * replaced by a summary pair. With no detection (the model failed) the older messages
 * are dropped without a summary. In the summarize and drop cases the kept part is
 * widened back so it holds at least `minVerbatimExchanges` user messages.
 */
export const applyDetection = (
  history: ReadonlyArray<Message>,
  detection: Detection | undefined,
  start: number,
  config: Pick<CompactionConfig, "minConfidence" | "minVerbatimExchanges">
): CompactionOutcome => {
  const boundary = detection?.boundary_index
  if (
    detection !== undefined &&
    boundary !== null && boundary !== undefined &&
    Number.isInteger(boundary) &&
    detection.confidence >= config.minConfidence &&
    boundary >= start &&
    boundary < history.length
  ) {
    const kept = alignToUser(history, boundary)
    return {
      kind: "truncated",
      history: history.slice(kept),
      keptFrom: kept,
      reason: `topic boundary at message ${boundary}: ${detection.boundary_reason}`
    }
  }
  const keptFrom = alignToUser(history, widenForUsers(history, start, config.minVerbatimExchanges))
  const kept = history.slice(keptFrom)
  if (detection === undefined) {
    return { kind: "truncated", history: kept, keptFrom, reason: "detector unavailable; older messages dropped without a summary" }
  }
  return {
    kind: "summarized",
    history: [...summaryPair(detection.summary), ...kept],
    keptFrom,
    reason: boundary === null
      ? "no topic boundary found; older messages summarized"
      : `boundary ${String(boundary)} (confidence ${detection.confidence}) not usable; older messages summarized`
  }
}

/** Move `index` back until the kept part holds at least `users` user messages. */
const widenForUsers = (history: ReadonlyArray<Message>, index: number, users: number): number => {
  let count = 0
  for (let i = index; i < history.length; i++) if (history[i]!.role === "user") count++
  let start = index
  while (count < users && start > 0) {
    start--
    if (history[start]!.role === "user") count++
  }
  return start
}

/**
 * Kept history must start on a user message so user/assistant pairs stay whole:
 * move a start that lands on an assistant message back to its user message.
 */
const alignToUser = (history: ReadonlyArray<Message>, index: number): number => {
  let i = Math.min(index, history.length)
  while (i > 0 && i < history.length && history[i]!.role !== "user") i--
  return i
}

/**
 * Emergency truncation (seed 004 layer 2): when history exceeds twice the trigger,
 * drop the oldest messages, a user/assistant pair at a time, until it fits under the
 * trigger. A trigger of 0 disables it. The newest exchange is always kept.
 */
export const emergencyTruncate = (
  history: ReadonlyArray<Message>,
  triggerTokens: number,
  counter: Pick<TokenCounter, "countMessages">
): ReadonlyArray<Message> => {
  if (triggerTokens <= 0 || counter.countMessages(history) <= 2 * triggerTokens) return history
  let start = 0
  while (start < history.length - 2 && counter.countMessages(history.slice(start)) > triggerTokens) {
    // Drop a whole pair when the oldest message opens one, so no reply loses its question.
    const pair = history[start]!.role === "user" && history[start + 1]?.role === "assistant" ? 2 : 1
    start += pair
  }
  return history.slice(start)
}
