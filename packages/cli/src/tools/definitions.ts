/**
 * The read-only tools `strata chat` offers the model: their definitions (sent natively
 * by every provider plugin) and the schemas their arguments are decoded with. What they
 * do is in `repoTools.ts`.
 */
import type { ToolDefinition } from "@strata/core"
import { Schema } from "effect"

/** Bounds that keep one tool result from flooding the context. */
export const TOOL_LIMITS = {
  /** Lines one `read_file` returns at most. */
  readLines: 2000,
  /** Characters one `read_file` returns at most (about 25,000 tokens); the lines stop before. */
  readChars: 100_000,
  /** Characters of one line `read_file` and `search` show at most. */
  lineChars: 2000,
  /** Default and largest number of matches `search` returns. */
  searchResults: 50,
  searchResultsMax: 200,
  /** Characters of a matching line `search` shows. */
  matchChars: 240,
  /** Default and largest number of paths `list_files` returns. */
  listResults: 200,
  listResultsMax: 1000,
  /** How long one `search` runs at most before it stops with what it found (ms). */
  searchMs: 5000
} as const

const Count = (max: number) => Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: max }))
const Line = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/** `read_file`'s arguments. */
export const ReadFileInput = Schema.Struct({
  path: Schema.String,
  startLine: Schema.optionalKey(Line),
  endLine: Schema.optionalKey(Line)
})
export type ReadFileInput = typeof ReadFileInput.Type

/** `search`'s arguments. */
export const SearchInput = Schema.Struct({
  pattern: Schema.String.check(Schema.isMinLength(1)),
  regex: Schema.optionalKey(Schema.Boolean),
  caseSensitive: Schema.optionalKey(Schema.Boolean),
  path: Schema.optionalKey(Schema.String),
  glob: Schema.optionalKey(Schema.String),
  maxResults: Schema.optionalKey(Count(TOOL_LIMITS.searchResultsMax))
})
export type SearchInput = typeof SearchInput.Type

/** `list_files`' arguments. */
export const ListFilesInput = Schema.Struct({
  path: Schema.optionalKey(Schema.String),
  glob: Schema.optionalKey(Schema.String),
  maxResults: Schema.optionalKey(Count(TOOL_LIMITS.listResultsMax))
})
export type ListFilesInput = typeof ListFilesInput.Type

/**
 * A tool whose arguments are one JSON object of these properties and no others: the
 * shape of every tool the CLI offers (chat's, and the replay's simulated agent's).
 *
 * @example
 * ```ts
 * import { objectTool, stringProperty } from "@strata/cli"
 * objectTool("read_file", "Read a file", { path: stringProperty("The file") }, ["path"]).inputSchema
 * // { type: "object", properties: { path: { type: "string", description: "The file" } }, required: ["path"], additionalProperties: false }
 * ```
 */
export const objectTool = (
  name: string,
  description: string,
  properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  required?: ReadonlyArray<string>
): ToolDefinition => ({
  name,
  description,
  inputSchema: { type: "object", properties, ...(required === undefined ? {} : { required }), additionalProperties: false }
})

/** A string argument of a tool, with its description. */
export const stringProperty = (description: string) => ({ type: "string", description })

/** The names of the chat tools. */
export const TOOL_NAMES = ["read_file", "search", "list_files"] as const
export type ToolName = (typeof TOOL_NAMES)[number]

const folderHelp = "A folder to look in, relative to the repository root (default: the whole repository)."

/**
 * The tools as neutral definitions, in a fixed order (they open the cached prefix, so
 * they never change between requests).
 *
 * @example
 * ```ts
 * import { REPO_TOOLS } from "@strata/cli"
 * REPO_TOOLS.map((t) => t.name) // ["read_file", "search", "list_files"]
 * ```
 */
export const REPO_TOOLS: ReadonlyArray<ToolDefinition> = [
  objectTool(
    "read_file",
    `Read a text file of the repository, with line numbers. Paths are relative to the repository root. Gives at most ${TOOL_LIMITS.readLines} lines (fewer when they are long); pass startLine and endLine (1-based, inclusive) for a part of a long file.`,
    {
      path: stringProperty("The file, relative to the repository root, e.g. src/index.ts."),
      startLine: { type: "integer", minimum: 1, description: "First line to return (default 1)." },
      endLine: { type: "integer", minimum: 1, description: "Last line to return (default: the end of the file, or the line limit)." }
    },
    ["path"]
  ),
  objectTool(
    "search",
    "Search the repository's text files (ignored files left out) for a string, or a JavaScript regular expression with regex: true. Returns path:line: text for each matching line, in path order.",
    {
      pattern: stringProperty("The text to find (or a regular expression when regex is true)."),
      regex: { type: "boolean", description: "Read pattern as a regular expression (default false: literal text)." },
      caseSensitive: { type: "boolean", description: "Match case (default true)." },
      path: stringProperty(folderHelp),
      glob: stringProperty("Only files whose path matches this glob, e.g. **/*.ts or src/**/*.{ts,tsx}."),
      maxResults: { type: "integer", minimum: 1, maximum: TOOL_LIMITS.searchResultsMax, description: `Most matching lines to return (default ${TOOL_LIMITS.searchResults}).` }
    },
    ["pattern"]
  ),
  objectTool("list_files", "List the repository's files (ignored files left out), sorted, one path per line; narrow with a folder or a glob.", {
    path: stringProperty(folderHelp),
    glob: stringProperty("Only paths matching this glob, e.g. src/**/*.test.ts."),
    maxResults: { type: "integer", minimum: 1, maximum: TOOL_LIMITS.listResultsMax, description: `Most paths to return (default ${TOOL_LIMITS.listResults}).` }
  })
]
