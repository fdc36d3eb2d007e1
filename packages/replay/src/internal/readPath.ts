// Which path a tool call reads (shared by the agent tools and the agent layouts).
const READ_TOOLS = /^(read|read_?file|view|view_?file|cat|open_?file|str_replace_based_edit_tool)$/i
const PATH_KEYS = ["path", "file_path", "filePath", "file", "filename", "target_file"] as const

/**
 * The path a tool call reads, when it is a file read: `read_file` and the names the
 * leading agents give theirs (`Read`, `view`, `cat`, `open_file`...; the text editor
 * tool's `view` command), with the path under `path`, `file_path`, `filePath`,
 * `file`, `filename` or `target_file`. Undefined for any other call.
 *
 * @example
 * ```ts
 * import { readPathOf } from "@strata/replay"
 * readPathOf({ toolName: "Read", input: { file_path: "src/a.ts" } }) // "src/a.ts"
 * readPathOf({ toolName: "run_tests", input: {} }) // undefined
 * ```
 */
export const readPathOf = (call: { readonly toolName: string; readonly input: unknown }): string | undefined => {
  if (!READ_TOOLS.test(call.toolName)) return undefined
  const input = call.input
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const fields = new Map(Object.entries(input))
  if (call.toolName === "str_replace_based_edit_tool" && fields.get("command") !== "view") return undefined
  for (const key of PATH_KEYS) {
    const value = fields.get(key)
    if (typeof value === "string" && value !== "") return value
  }
  return undefined
}
