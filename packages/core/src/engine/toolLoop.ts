/**
 * The agent loop users expect from an engine: assemble, send, commit the reply, run the
 * tools it calls, and assemble the next request with their results, until the model
 * answers without calling a tool. Plain Promises over the engine's turn API, so every
 * round is one strict commit and every request ends with the results it answers.
 */
import { Schema } from "effect"
import { toolCalls, type Message, type ToolCallPart, type ToolResultOutput, type ToolResultPart } from "../domain/Message.ts"
import type { TurnCommitted } from "../turn/turn.ts"

/** What a tool handler gets besides the call's input. */
export interface ToolCallContext {
  readonly toolCallId: string
  readonly toolName: string
  /** The loop's signal: abort long tools with it. */
  readonly signal: AbortSignal | undefined
}

/**
 * A tool's implementation: the call's input in, its output out (a string, or any JSON
 * value). A thrown error goes back to the model as an error result with its message.
 */
export type ToolHandler = (input: unknown, call: ToolCallContext) => unknown

/** What the loop hands to `send` with each request body. */
export interface SendContext {
  /** 1 for the first request, one more per round of tool calls. */
  readonly round: number
  readonly signal: AbortSignal | undefined
}

/** Options of `ContextEngine.runToolLoop`. */
export interface ToolLoopOptions<Body> {
  /** The first request's prompt (later requests carry the tool results). */
  readonly prompt?: string | undefined
  /**
   * Send one request body to the provider and return its response as the SDK gives it
   * (an Anthropic `Message`, a `ChatCompletion`, an AI SDK `generateText` result...): the
   * engine's plugin decodes it into the reply and its usage.
   */
  readonly send: (request: Body, context: SendContext) => Promise<unknown>
  /** The tools' handlers by name. A call to a name not here is answered with an error result. */
  readonly tools: Readonly<Record<string, ToolHandler>>
  /**
   * Rounds of tool calls to run (default 8). When the model still calls tools after the
   * last, those calls are answered with an error result asking it to answer with what it
   * has, and one last request is sent.
   */
  readonly maxRounds?: number | undefined
  readonly signal?: AbortSignal | undefined
}

/** What a tool loop did. */
export interface ToolLoopResult {
  /** The text of the model's final answer (its last assistant message). */
  readonly text: string
  /** Requests sent. */
  readonly requests: number
  /** Rounds of tool calls run. */
  readonly toolRounds: number
  /** Every message the loop appended to the history, in order. */
  readonly messages: ReadonlyArray<Message>
  /** The last commit (session version, record). */
  readonly committed: TurnCommitted
}

/** The loop's default `maxRounds`. */
export const DEFAULT_TOOL_ROUNDS = 8

/** A handler's value as a tool result's output: text as it is, anything else as JSON. */
export const toolOutputOf = (value: unknown): ToolResultOutput => {
  if (typeof value === "string") return { type: "text", value }
  const text = JSON.stringify(value)
  // undefined, a function: nothing to show.
  if (text === undefined) return { type: "text", value: "" }
  return { type: "json", value: decodeJson(JSON.parse(text)) }
}

const decodeJson = Schema.decodeUnknownSync(Schema.Json)

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The calls the committed messages leave open: the tool calls of the last assistant
 * message when nothing after it answers them (an SDK that ran its own tools answered them).
 */
export const openToolCalls = (appended: ReadonlyArray<Message>): ReadonlyArray<ToolCallPart> => {
  const last = appended.at(-1)
  return last === undefined || last.role !== "assistant" ? [] : toolCalls(last)
}

/** Run each call's handler (in parallel), errors and unknown tools as error results. */
export const runToolCalls = (
  calls: ReadonlyArray<ToolCallPart>,
  tools: Readonly<Record<string, ToolHandler>>,
  signal: AbortSignal | undefined
): Promise<ReadonlyArray<ToolResultPart>> =>
  Promise.all(calls.map(async (call): Promise<ToolResultPart> => {
    const result = (output: ToolResultOutput): ToolResultPart => ({ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output })
    const handler = Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined
    if (handler === undefined) return result({ type: "error-text", value: `Unknown tool "${call.toolName}"; the tools are: ${Object.keys(tools).join(", ") || "(none)"}.` })
    try {
      return result(toolOutputOf(await handler(call.input, { toolCallId: call.toolCallId, toolName: call.toolName, signal })))
    } catch (error) {
      return result({ type: "error-text", value: errorText(error) })
    }
  }))

/** Results telling the model its calls were not run: the loop used its rounds. */
export const roundLimitResults = (calls: ReadonlyArray<ToolCallPart>, maxRounds: number): ReadonlyArray<ToolResultPart> =>
  calls.map((call) => ({
    type: "tool-result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: { type: "error-text", value: `Not run: this task used its ${maxRounds} rounds of tool calls. Answer with what you have.` }
  }))

/** The text of a message's text parts. */
export const replyText = (message: Message | undefined): string => {
  if (message === undefined) return ""
  if (typeof message.content === "string") return message.content
  return message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
}
