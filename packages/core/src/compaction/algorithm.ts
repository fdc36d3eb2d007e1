/**
 * The pure parts of history compaction (docs/compaction.md): where the
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
  /**
   * Model the detector runs on; a cheap one is enough. Passed to the `CompactionModel`
   * with each request; `compactionModelLayer(model)` in `@strata/providers` uses it
   * instead of its own model when set.
   */
  detectionModel: Schema.optionalKey(Schema.String),
  /** Milliseconds before a detector call is abandoned. */
  timeoutMs: Schema.Number.check(Schema.isGreaterThan(0)),
  /**
   * The least history (tokens outside the verbatim window) one compaction must be able
   * to remove; with less, compaction waits for more history, so the cache is never torn
   * down for a small gain. Default: a quarter of `triggerTokens`.
   */
  minStepTokens: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)))
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

/** The configured minimum step, or a quarter of the trigger. */
export const minStepTokens = (config: Pick<CompactionConfig, "triggerTokens" | "minStepTokens">): number =>
  config.minStepTokens ?? Math.floor(config.triggerTokens / 4)

/** True when compaction is enabled and history has reached the trigger. */
export const shouldCompact = (historyTokens: number, config: CompactionConfig): boolean =>
  config.enabled && config.triggerTokens > 0 && historyTokens >= config.triggerTokens

/**
 * True when message `index` starts a turn, where kept history may begin without cutting
 * a unit in two: a user message, or an assistant message that follows a tool message (the
 * next step of an agent loop). A tool message never starts one, and an assistant message
 * with tool calls starts one only after a tool message, so a call and its result always
 * stay on the same side of a cut. In a history without tools the starts are its user
 * messages.
 *
 * @example
 * ```ts
 * import { isTurnStart } from "@strata/core"
 * // [user, assistant(call c1), tool(c1), assistant(call c2), tool(c2)]: starts at 0 and 3
 * ```
 */
export const isTurnStart = (history: ReadonlyArray<Message>, index: number): boolean => {
  const role = history[index]?.role
  return role === "user" || (role === "assistant" && history[index - 1]?.role === "tool")
}

/**
 * Index of the first message kept verbatim: the earlier of the token window (walking
 * back from the newest message while the window holds; the newest is always kept) and
 * the N-th turn start from the end (`isTurnStart`: a user message, or an agent step).
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
      if (isTurnStart(history, i) && ++users === config.minVerbatimExchanges) {
        countIndex = i
        break
      }
    }
  }
  return Math.min(tokenIndex, countIndex)
}

/** True when `message` is the user half of a summary pair from an earlier compaction. */
export const isSummaryMessage = (message: Message | undefined): boolean =>
  message !== undefined && message.role === "user" && messageText(message).startsWith(SUMMARY_PREFIX)

/**
 * The detector's user prompt body: the newest messages with their original indices,
 * long ones cut, as `[i] ROLE: text` blocks. The summary of an earlier compaction
 * (message 0) is always included, uncut, even when it is older than the newest 50, so
 * the new summary can carry it forward.
 *
 * @example
 * ```ts
 * import { formatDetectionTranscript } from "@strata/core"
 * formatDetectionTranscript([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }])
 * // "[0] USER: hi\n\n[1] ASSISTANT: hello"
 * ```
 */
export const formatDetectionTranscript = (history: ReadonlyArray<Message>): string => {
  const start = Math.max(0, history.length - DETECTION_MESSAGE_LIMIT)
  const blocks: Array<string> = []
  if (start > 0 && isSummaryMessage(history[0])) blocks.push(`[0] USER: ${messageText(history[0]!)}`)
  for (let i = start; i < history.length; i++) {
    const message = history[i]!
    let text = messageText(message)
    if (text.length > DETECTION_MESSAGE_CHARS && !(i === 0 && isSummaryMessage(message))) {
      text = text.slice(0, DETECTION_MESSAGE_CHARS) + "... (truncated)"
    }
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
 * by prose (which may itself contain braces). Fails with a reason on malformed JSON or
 * missing fields.
 *
 * @example
 * ```ts
 * import { parseDetection } from "@strata/core"
 * parseDetection('```json\n{"boundary_index": null, "boundary_reason": "", "confidence": 0, "summary": "s"}\n```')
 * // Result.succeed({ boundary_index: null, ... })
 * ```
 */
export const parseDetection = (text: string): Result.Result<Detection, string> => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)
  const candidate = fenced?.[1] ?? text
  const last = candidate.lastIndexOf("}")
  let first = candidate.indexOf("{")
  if (first < 0 || last <= first) return Result.fail("the reply contains no JSON object")
  let json: unknown
  let syntaxError = ""
  // The object is the longest span from some `{` to the last `}` that parses.
  for (let tries = 0; first >= 0 && first < last && tries < 32; tries++) {
    try {
      json = JSON.parse(candidate.slice(first, last + 1))
      syntaxError = ""
      break
    } catch (error) {
      if (syntaxError === "") syntaxError = error instanceof Error ? error.message : String(error)
      first = candidate.indexOf("{", first + 1)
    }
  }
  if (syntaxError !== "") return Result.fail(`the reply is not valid JSON (${syntaxError})`)
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
 * are dropped without a summary. In every case the kept part starts on a turn start (a
 * user message, or an agent step after a tool result: a call is never kept without its
 * result) and is widened back so it holds at least `minVerbatimExchanges` of them.
 *
 * @example
 * ```ts
 * import { applyDetection, DEFAULT_COMPACTION_CONFIG } from "@strata/core"
 * const history = [
 *   { role: "user" as const, content: "Set up CI." }, { role: "assistant" as const, content: "Done." },
 *   { role: "user" as const, content: "Now the parser." }, { role: "assistant" as const, content: "Sure." },
 *   { role: "user" as const, content: "Add a test." }, { role: "assistant" as const, content: "Added." }
 * ]
 * const detection = { boundary_index: 2, boundary_reason: "new task", confidence: 0.9, summary: "CI is set up." }
 * applyDetection(history, detection, 2, DEFAULT_COMPACTION_CONFIG).history // history.slice(2)
 * ```
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
    const keptFrom = keptStart(history, boundary, config.minVerbatimExchanges)
    return {
      kind: "truncated",
      history: history.slice(keptFrom),
      keptFrom,
      reason: `topic boundary at message ${boundary}: ${detection.boundary_reason}`
    }
  }
  const keptFrom = keptStart(history, start, config.minVerbatimExchanges)
  const kept = history.slice(keptFrom)
  if (detection === undefined) {
    return { kind: "truncated", history: kept, keptFrom, reason: "detector unavailable; older messages dropped without a summary" }
  }
  return {
    kind: "summarized",
    history: [...summaryPair(detection.summary), ...kept],
    keptFrom,
    reason: boundary === null || boundary === undefined
      ? "no topic boundary found; older messages summarized"
      : `boundary ${String(boundary)} (confidence ${detection.confidence}) not usable; older messages summarized`
  }
}

/** Where kept history starts: on a turn start, with at least `turns` turn starts kept. */
const keptStart = (history: ReadonlyArray<Message>, index: number, turns: number): number =>
  widenForTurns(history, alignToTurnStart(history, index), turns)

/** Move `index` back, from turn start to turn start, until the kept part holds at least `turns` of them. */
const widenForTurns = (history: ReadonlyArray<Message>, index: number, turns: number): number => {
  let count = 0
  for (let i = index; i < history.length; i++) if (isTurnStart(history, i)) count++
  let start = index
  while (count < turns && start > 0) {
    start--
    if (isTurnStart(history, start)) count++
  }
  return start
}

/**
 * Kept history must start on a turn start so user/assistant pairs and tool exchanges stay
 * whole: move a start that lands inside one back to its start.
 */
const alignToTurnStart = (history: ReadonlyArray<Message>, index: number): number => {
  let i = Math.min(index, history.length)
  while (i > 0 && i < history.length && !isTurnStart(history, i)) i--
  return i
}

/**
 * Emergency truncation (docs/compaction.md): when history exceeds twice the trigger,
 * drop the oldest messages, a turn at a time (a user message with its reply, or an agent
 * step: a tool call is never dropped without its result), until it fits under the
 * trigger. A trigger of 0 disables it. The newest exchange is always kept.
 *
 * @example
 * ```ts
 * import { emergencyTruncate, makeCustomCounter } from "@strata/core"
 * const counter = makeCustomCounter("chars", (t) => t.length)
 * const history = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: "x".repeat(100) }))
 * emergencyTruncate(history, 300, counter).length // 2
 * ```
 */
export const emergencyTruncate = (
  history: ReadonlyArray<Message>,
  triggerTokens: number,
  counter: Pick<TokenCounter, "countMessage" | "countMessages">
): ReadonlyArray<Message> => {
  if (triggerTokens <= 0) return history
  let remaining = counter.countMessages(history)
  if (remaining <= 2 * triggerTokens) return history
  const sizes = history.map((m) => counter.countMessage(m))
  let start = 0
  while (remaining > triggerTokens) {
    // Drop up to the next turn start, so no reply loses its question and no call its result.
    let end = start + 1
    while (end < history.length && !isTurnStart(history, end)) end++
    if (history.length - end < 2) break
    for (let k = start; k < end; k++) remaining -= sizes[k]!
    start = end
  }
  return history.slice(start)
}
