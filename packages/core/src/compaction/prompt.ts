/**
 * Loads the detector's instructions: the bundled `prompts/compaction.md`, unless the
 * caller passes its own text.
 */
import { readFile } from "node:fs/promises"
import { Effect } from "effect"

const bundled = new URL("../../prompts/compaction.md", import.meta.url)

/** The bundled compaction prompt (read once per call; it is small). */
export const loadCompactionPrompt: Effect.Effect<string> = Effect.promise(() => readFile(bundled, "utf8"))
