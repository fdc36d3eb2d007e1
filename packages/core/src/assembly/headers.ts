/**
 * The exact section headers and acknowledgements of a Strata request (docs/pipeline.md), and how
 * files and the system reminder are written into it. Flat and tiered assembly both use
 * these, so the texts live in one place.
 */
import type { CachedTier, Tier } from "../domain/Tier.ts"

export const REPO_MAP_HEADER =
  "# Repository Structure\n\nBelow is a map of the repository showing classes, functions, and their relationships.\nUse this to understand the codebase structure and find relevant code.\n\n"
export const REPO_MAP_CONTINUATION = "# Repository Structure (continued)\n\n"
export const TIER_SYMBOLS_HEADER = REPO_MAP_CONTINUATION
export const FILE_TREE_HEADER = "# Repository Files\n\nComplete list of files in the repository:\n\n"
/**
 * Journal layout: symbol blocks that changed since the model saw them (they supersede
 * earlier entries). The journal's update headers are titles only: every earlier request's
 * updates are read again on every later one, so the rule they follow is stated once, at
 * the head of the journal's first update (`JOURNAL_NOTE`), not in each of them.
 */
export const REPO_MAP_UPDATES_HEADER = "# Repository Structure (updated)\n\n"
/** Journal layout: files added (`+`) to and removed (`-`) from the repository since the file list above. */
export const FILE_TREE_CHANGES_HEADER = "# Repository Files (changes)\n\n"
/** Journal layout: selected files that became stable, shown once in the journal instead of every turn. */
export const FILES_JOURNAL_HEADER = "# Reference Files (updated)\n\n"
/**
 * Journal layout: how to read the update pairs the conversation carries, stated once, at
 * the head of the journal's first update, instead of in every update (a session whose
 * map never changes never pays for it).
 */
export const JOURNAL_NOTE =
  "Entries under a later \"(updated)\" heading replace earlier ones for the same file; \"(changes)\" lists files added (+) and removed (-)."
/**
 * Journal layout: how to read a symbol diff (`symbolDiffEntry`), stated once, at the head
 * of the first update that carries one (a session that never sends one never pays for it).
 */
export const SYMBOL_DIFF_NOTE =
  "A \"path (diff):\" entry gives that file's changes against its latest full entry as unified diff hunks (line 1 is the path line) and replaces only earlier diffs of it."

/**
 * Journal layout: a changed symbol block written as its changes (zero-context unified diff
 * hunks) against the file's latest full entry, under the path and `(diff):`.
 *
 * @example
 * ```ts
 * import { symbolDiffEntry } from "@strata/core"
 * symbolDiffEntry("a.ts", "@@ -1 +1 @@\n-a.ts: ←1\n+a.ts: ←2") // "a.ts (diff):\n@@ -1 +1 @@\n-a.ts: ←1\n+a.ts: ←2"
 * ```
 */
export const symbolDiffEntry = (path: string, hunks: string): string => `${path} (diff):\n${hunks}`
export const URL_CONTEXT_HEADER =
  "# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n"
export const REVIEW_CONTEXT_HEADER = "# Code Review Context\n\n"
export const FILES_ACTIVE_HEADER = "# Working Files\n\nHere are the files:\n\n"
export const FILES_L0_HEADER = "# Reference Files (Stable)\n\nThese files are included for reference:\n\n"
export const FILES_L1_HEADER = "# Reference Files\n\nThese files are included for reference:\n\n"
export const FILES_L2_HEADER = "# Reference Files (L2)\n\nThese files are included for reference:\n\n"
export const FILES_L3_HEADER = "# Reference Files (L3)\n\nThese files are included for reference:\n\n"

/** The file-section header of each tier. */
export const FILES_HEADERS: Readonly<Record<Tier, string>> = {
  L0: FILES_L0_HEADER,
  L1: FILES_L1_HEADER,
  L2: FILES_L2_HEADER,
  L3: FILES_L3_HEADER,
  active: FILES_ACTIVE_HEADER
}

/** Assistant acknowledgements that close each user-only section. */
export const ACK = "Ok."
export const URL_ACK = "Ok, I've reviewed the URL content."
export const REVIEW_ACK = "Ok, I've reviewed the code changes."

/** Separator between URL contents in the URL context message. */
export const URL_SEPARATOR = "\n---\n"

/**
 * The user's prompt with the system reminder appended, separated by a blank line;
 * the prompt alone when the reminder is empty.
 *
 * @example
 * ```ts
 * import { withReminder } from "@strata/core"
 * withReminder("Fix the bug.", "Keep edits small.") // "Fix the bug.\n\nKeep edits small."
 * ```
 */
export const withReminder = (prompt: string, reminder: string): string =>
  reminder.trim() === "" ? prompt : `${prompt}\n\n${reminder}`

/** The file-section header of a cached tier. */
export const filesHeaderFor = (tier: CachedTier | "active"): string => FILES_HEADERS[tier]

/** One file as a fenced block: path line, then the content fenced with no language tag. */
export const formatFile = (path: string, content: string): string => `${path}\n\`\`\`\n${content}\n\`\`\``

/**
 * Files as fenced blocks joined by a blank line, under `header`; empty string when
 * there are no files (a header alone is never emitted).
 *
 * @example
 * ```ts
 * import { formatFiles, FILES_ACTIVE_HEADER } from "@strata/core"
 * formatFiles([{ path: "a.ts", content: "x" }], FILES_ACTIVE_HEADER)
 * // "# Working Files\n\nHere are the files:\n\na.ts\n```\nx\n```"
 * ```
 */
export const formatFiles = (
  files: ReadonlyArray<{ readonly path: string; readonly content: string }>,
  header = ""
): string => (files.length === 0 ? "" : header + files.map((f) => formatFile(f.path, f.content)).join("\n\n"))
