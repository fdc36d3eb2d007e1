/**
 * The detector's instructions: `compaction.md` from the user's prompts folder through
 * the `Prompts` service when one is provided (re-read at every compaction, so edits
 * apply without a restart), else the bundled `prompts/compaction.md`.
 */
import { Effect } from "effect"
import type { InvalidInput } from "../domain/errors.ts"
import { Prompts, type PromptError, type PromptText } from "../prompts/Prompts.ts"

/** The prompt file the compactor reads. */
export const COMPACTION_PROMPT_FILE = "compaction.md"

/**
 * Read `compaction.md` through `prompts` (user folder first, then the bundled default),
 * or the bundled file alone when no `Prompts` service is given.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { loadCompactionPrompt } from "@strata/core/effect"
 * const prompt = await Effect.runPromise(loadCompactionPrompt()) // the bundled prompt
 * ```
 */
export const loadCompactionPrompt = (prompts?: Prompts["Service"]): Effect.Effect<PromptText, PromptError | InvalidInput> =>
  prompts !== undefined
    ? prompts.load(COMPACTION_PROMPT_FILE)
    : Prompts.use((p) => p.load(COMPACTION_PROMPT_FILE)).pipe(Effect.provide(Prompts.layer()))
