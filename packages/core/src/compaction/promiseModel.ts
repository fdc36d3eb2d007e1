/**
 * A compaction model as a plain async function, for users who do not write Effect: the
 * function becomes the `CompactionModel` service the history compactor asks. The
 * compactor's timeout aborts the function's signal; a rejection or a non-string answer
 * becomes a `CompactionModelError`, which the compactor turns into summary-less truncation.
 */
import { Effect, Layer, Schema } from "effect"
import { CompactionModel, CompactionModelError, type CompactionModelRequest } from "./HistoryCompactor.ts"

/** What the compactor asks: the detection prompt as system and user text, and an answer budget. */
export type CompactionPrompt = CompactionModelRequest

/**
 * A detection model as an async function: answer `prompt` (the system text and the
 * transcript) with the model's text. Stop when `signal` aborts (the compactor's
 * `timeoutMs` passed, or the engine was disposed).
 */
export type CompactionModelFunction = (prompt: CompactionPrompt, options: { readonly signal: AbortSignal }) => Promise<string>

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const decodeAnswer = Schema.decodeUnknownEffect(Schema.String)

/**
 * The `CompactionModel` layer for an async function. `createContextEngine` builds it
 * from its `compactionModel` option; Effect users can provide it themselves.
 *
 * @example
 * ```ts no-run
 * import Anthropic from "@anthropic-ai/sdk"
 * import { compactionModelFromFunction } from "@strata/core"
 * const client = new Anthropic()
 * const layer = compactionModelFromFunction(async (prompt, { signal }) => {
 *   const msg = await client.messages.create({ model: "claude-haiku-4-5", max_tokens: prompt.maxTokens, system: prompt.system, messages: [{ role: "user", content: prompt.user }] }, { signal })
 *   return msg.content.map((b) => (b.type === "text" ? b.text : "")).join("")
 * })
 * ```
 */
export const compactionModelFromFunction = (complete: CompactionModelFunction): Layer.Layer<CompactionModel> =>
  Layer.succeed(CompactionModel, {
    complete: (request) =>
      Effect.tryPromise({
        try: (signal) => complete(request, { signal }),
        catch: (error) => new CompactionModelError({ reason: describe(error) })
      }).pipe(
        Effect.flatMap((answer) => decodeAnswer(answer)),
        Effect.catchTag("SchemaError", (error) => Effect.fail(new CompactionModelError({ reason: `the compactionModel function must resolve to a string: ${error.message}` })))
      )
  })
