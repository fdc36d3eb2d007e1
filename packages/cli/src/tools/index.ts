/**
 * The read-only tools of `strata chat`: `read_file`, `search` and `list_files`, their
 * definitions and their executors, which never read outside the repository root.
 */
export { objectTool, REPO_TOOLS, stringProperty, TOOL_LIMITS, TOOL_NAMES, ListFilesInput, ReadFileInput, SearchInput, type ToolName } from "./definitions.ts"
export { globToRegExp } from "./glob.ts"
export { isSecretFile, runRepoTool, toolOutput, type RepoToolsOptions } from "./repoTools.ts"
