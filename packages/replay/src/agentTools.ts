/**
 * The tools of the replay's simulated coding agent (`--session agent`): what every
 * request of an agent session offers the model, in every strategy, so a change of
 * strategy never changes the tool definitions at the head of the prefix.
 */
import type { ToolDefinition } from "@strata/core/effect"

/**
 * `read_file`, `search`, `list_files`, `edit_file`, `run_tests`: the tool set of a
 * coding agent, with descriptions about as long as the leading agents' (their tool
 * definitions are a fixed part of every request, so their size matters).
 */
export const AGENT_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "read_file",
    description:
      "Read a text file of the repository and return its whole content. Use it before editing a file: edits must be made against the current content. Paths are relative to the repository root; paths outside it are refused.",
    inputSchema: { type: "object", properties: { path: { type: "string", description: "Repository-relative path of the file to read" } }, required: ["path"], additionalProperties: false }
  },
  {
    name: "search",
    description:
      "Search the repository's text files for a word or a regular expression, case-insensitively. Returns matching lines as path:line: text, at most 50, then how many more matched.",
    inputSchema: { type: "object", properties: { query: { type: "string", description: "A word or a regular expression" }, path: { type: "string", description: "Only search below this folder (default: the whole repository)" } }, required: ["query"], additionalProperties: false }
  },
  {
    name: "list_files",
    description:
      "List the files below a folder of the repository, one path per line, sorted; at most 200 paths, then how many more there are.",
    inputSchema: { type: "object", properties: { path: { type: "string", description: "Repository-relative folder (default: the root)" } }, additionalProperties: false }
  },
  {
    name: "edit_file",
    description:
      "Change a file by applying a unified diff (hunks with @@ headers, context lines, - and + lines), or create it when it does not exist. Returns whether the patch applied and the lines it changed.",
    inputSchema: { type: "object", properties: { path: { type: "string", description: "Repository-relative path of the file to change" }, patch: { type: "string", description: "Unified diff hunks against the file's current content" } }, required: ["path", "patch"], additionalProperties: false }
  },
  {
    name: "run_tests",
    description:
      "Run the repository's test suite (or the tests below a folder) and return the runner's output: one line per test, failures with their messages, a summary.",
    inputSchema: { type: "object", properties: { path: { type: "string", description: "Only run the tests below this folder (default: all)" } }, additionalProperties: false }
  }
]

export { readPathOf } from "./internal/readPath.ts"
