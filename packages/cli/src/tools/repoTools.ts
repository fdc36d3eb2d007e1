/**
 * What the chat tools do: read a file, search the repository, list its files, always
 * inside the repository root. Every path an argument names goes through core's path
 * checks (`normalizeRepoPath`, `resolveInsideRepoSync`, `readInsideRepoSync`): `..`,
 * absolute paths elsewhere, links that lead out, Strata's and git's own folders and
 * special files are answered with an error result, never read. A call never fails: a
 * problem is the model's to read, as an `error-text` output.
 */
import * as nodeFs from "node:fs"
import * as NodePath from "node:path"
import {
  normalizeRepoPath,
  PathOutsideRepo,
  readInsideRepoSync,
  resolveInsideRepoSync,
  SpecialFile,
  type ToolCallPart,
  type ToolResultOutput,
  type ToolResultPart
} from "@strata/core"
import { listFiles, nodeFileSystem } from "@strata/symbols"
import { Effect, Result, Schema } from "effect"
import { RE2JS } from "re2js"
import { ListFilesInput, ReadFileInput, SearchInput, TOOL_LIMITS, TOOL_NAMES } from "./definitions.ts"
import { globToRegExp } from "./glob.ts"

/** Where the tools work. */
export interface RepoToolsOptions {
  /** The repository root; nothing outside it is read. */
  readonly root: string
  /** Files larger than this are neither read nor searched (the CLI's `budgets.maxFileBytes`). */
  readonly maxFileBytes: number
  /**
   * Read files the repository's .gitignore excludes and well-known secret files (`.env*`,
   * `*.pem`, `*.key`, `id_*`, `.npmrc`, `.netrc`). Default false: they are refused, so a
   * key never reaches the provider unless the user opts in (`chat --allow-ignored`).
   */
  readonly allowIgnored?: boolean | undefined
  /** How long one search may run before it stops with what it found. Default `TOOL_LIMITS.searchMs`. */
  readonly searchMs?: number | undefined
}

/** Names of files that usually hold secrets: refused unless `allowIgnored`. Pure. */
export const isSecretFile = (relative: string): boolean => {
  const name = relative.slice(relative.lastIndexOf("/") + 1)
  return /^\.env(?:$|\.|rc$)/.test(name) || /\.(?:pem|key)$/i.test(name) || /^id_[A-Za-z0-9]+(?:\.pub)?$/.test(name) || name === ".npmrc" || name === ".netrc"
}

/** Folders that hold state rather than the project: Strata's own and git's. Never read. */
const INTERNAL = [".strata", ".git"] as const

const text = (value: string): ToolResultOutput => ({ type: "text", value })
const refusal = (value: string): ToolResultOutput => ({ type: "error-text", value })

/** A refusal the tool returns as its output. */
class Refused extends Error {}
const refuse = (message: string): never => {
  throw new Refused(message)
}

const plural = (n: number, word: string): string => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`

const internalFolder = (relative: string): string | undefined => INTERNAL.find((d) => relative === d || relative.startsWith(`${d}/`))

const slashed = (path: string): string => path.split(NodePath.sep).join("/")

/**
 * Check a path an argument named: inside the repository (lexically, and on disk through
 * every link), not in an internal folder. Returns the repository-relative path and the
 * real path it lands on; `folder` accepts the root itself (`""` or `.`).
 */
const checkPath = (options: RepoToolsOptions, path: string, what: "file" | "folder"): { readonly relative: string; readonly real: string; readonly exists: boolean } => {
  if (what === "folder" && /^(?:\.\/?)?$/.test(path.trim())) {
    return { relative: "", real: nodeFs.realpathSync(options.root), exists: true }
  }
  const normalized = normalizeRepoPath(options.root, path)
  if (Result.isFailure(normalized)) {
    const error = normalized.failure
    return refuse(error instanceof PathOutsideRepo ? `"${path}" is outside the repository; name paths relative to the repository root (e.g. src/index.ts).` : error.message)
  }
  const relative = normalized.success
  const internal = internalFolder(relative)
  if (internal !== undefined) return refuse(`"${path}" is inside ${internal}/, which holds ${internal === ".strata" ? "Strata's own state" : "git's internals"}, not the project; the tools do not read it.`)
  let resolved: ReturnType<typeof resolveInsideRepoSync>
  try {
    resolved = resolveInsideRepoSync(options.root, relative)
  } catch (error) {
    if (error instanceof PathOutsideRepo) {
      return refuse(`"${path}" leads outside the repository${error.link === undefined ? "" : ` through the link ${error.link.replace(/ -> .*$/, "")}`}; the tools only read inside it.`)
    }
    return refuse(`"${path}" cannot be read: ${error instanceof Error ? error.message : String(error)}`)
  }
  // A link inside the repository may still land in an internal folder.
  const landed = internalFolder(slashed(NodePath.relative(resolved.realRoot, resolved.real)))
  if (landed !== undefined) return refuse(`"${path}" leads into ${landed}/, which is not part of the project; the tools do not read it.`)
  return { relative, real: resolved.real, exists: resolved.exists }
}

/** Cut a line to `max` characters, saying how much was left out. */
const cut = (line: string, max: number): string => (line.length <= max ? line : `${line.slice(0, max)}... (${plural(line.length - max, "more character")})`)

/** A regular text file's content, or a refusal (missing, special, too large, binary). */
const readText = (options: RepoToolsOptions, path: string, relative: string, real: string): string => {
  let size: number
  try {
    size = nodeFs.statSync(real).size
  } catch {
    return refuse(`There is no file "${path}" in the repository; list_files shows what exists.`)
  }
  if (size > options.maxFileBytes) return refuse(`"${relative}" is ${plural(size, "byte")}, over the ${plural(options.maxFileBytes, "byte")} limit for reading a file.`)
  let bytes: Buffer | undefined
  try {
    bytes = readInsideRepoSync(options.root, relative)
  } catch (error) {
    if (error instanceof SpecialFile) return refuse(error.kind === "directory" ? `"${relative}" is a folder; list_files lists what is in it.` : `"${relative}" is not a regular file (${error.kind}); the tools only read regular files.`)
    if (error instanceof PathOutsideRepo) return refuse(`"${path}" leads outside the repository; the tools only read inside it.`)
    return refuse(`"${relative}" cannot be read: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (bytes === undefined) return refuse(`There is no file "${path}" in the repository; list_files shows what exists.`)
  if (bytes.includes(0)) return refuse(`"${relative}" is a binary file; the tools only read text.`)
  return bytes.toString("utf8")
}

const linesOf = (content: string): ReadonlyArray<string> => {
  const lines = content.split(/\r?\n/)
  if (lines.at(-1) === "") lines.pop()
  return lines
}

/** `read_file`: the file's lines with their numbers, at most `TOOL_LIMITS.readLines` of them and `TOOL_LIMITS.readChars` characters. */
const readFile = (options: RepoToolsOptions, input: ReadFileInput): ToolResultOutput => {
  const { relative, real, exists } = checkPath(options, input.path, "file")
  if (!exists) return refuse(`There is no file "${input.path}" in the repository; list_files shows what exists.`)
  if (options.allowIgnored !== true) {
    if (isSecretFile(relative)) {
      return refuse(`"${relative}" is a kind of file that holds secrets (.env*, *.pem, *.key, id_*, .npmrc, .netrc); the tools do not read it unless the user runs chat with --allow-ignored.`)
    }
    if (nodeFs.statSync(real).isFile() && !listedFiles(options).has(relative)) {
      return refuse(`"${relative}" is excluded by the repository's .gitignore; the tools do not read ignored files unless the user runs chat with --allow-ignored.`)
    }
  }
  const lines = linesOf(readText(options, input.path, relative, real))
  if (lines.length === 0) return text(`${relative} is empty.`)
  const first = input.startLine ?? 1
  if (first > lines.length) return refuse(`${relative} has ${plural(lines.length, "line")}; startLine ${first} is past its end.`)
  if (input.endLine !== undefined && input.endLine < first) return refuse(`endLine ${input.endLine} is before startLine ${first}.`)
  const wanted = Math.min(input.endLine ?? lines.length, lines.length)
  const bound = Math.min(wanted, first + TOOL_LIMITS.readLines - 1)
  const width = String(bound).length
  const body: Array<string> = []
  let chars = 0
  let last = first - 1
  for (let n = first; n <= bound; n++) {
    const line = `${String(n).padStart(width)}\t${cut(lines[n - 1]!, TOOL_LIMITS.lineChars)}`
    // Long lines end the page early; at least one line is always given.
    if (body.length > 0 && chars + line.length > TOOL_LIMITS.readChars) break
    body.push(line)
    chars += line.length + 1
    last = n
  }
  const more = last < wanted ? [`(lines ${last + 1}-${wanted} not shown; call read_file again with startLine ${last + 1})`] : []
  return text([`${relative}, lines ${first}-${last} of ${lines.length}:`, ...body, ...more].join("\n"))
}

/** The repository's files that git does not ignore (and outside the internal folders). */
const listedFiles = (options: RepoToolsOptions): ReadonlySet<string> => new Set(listFiles(options.root, nodeFileSystem).files)

/** The repository's files under `path` matching `glob`, sorted (ignored files, secret files unless allowed, and internal folders left out). */
const filesOf = (options: RepoToolsOptions, path: string | undefined, glob: string | undefined): ReadonlyArray<string> => {
  let folder = ""
  if (path !== undefined) {
    const checked = checkPath(options, path, "folder")
    if (checked.relative !== "") {
      if (!checked.exists) return refuse(`There is no folder "${path}" in the repository.`)
      if (!nodeFs.statSync(checked.real).isDirectory()) return refuse(`"${checked.relative}" is a file, not a folder; read_file reads it.`)
    }
    folder = checked.relative
  }
  let all: ReadonlyArray<string>
  try {
    all = listFiles(options.root, nodeFileSystem).files
  } catch (error) {
    return refuse(`The repository's files cannot be listed: ${error instanceof Error ? error.message : String(error)}`)
  }
  const matcher = glob === undefined || glob.trim() === "" ? undefined : globToRegExp(glob.trim())
  return all.filter(
    (file) =>
      (folder === "" || file.startsWith(`${folder}/`)) &&
      internalFolder(file) === undefined &&
      (options.allowIgnored === true || !isSecretFile(file)) &&
      (matcher === undefined || matcher.test(file))
  )
}

/** `list_files`: paths, one per line, at most `maxResults`. */
const listRepoFiles = (options: RepoToolsOptions, input: ListFilesInput): ToolResultOutput => {
  const files = filesOf(options, input.path, input.glob)
  const max = input.maxResults ?? TOOL_LIMITS.listResults
  if (files.length === 0) return text("No files match.")
  const shown = files.slice(0, max)
  const more = files.length > max ? [`(${plural(files.length - max, "more file")} not shown; narrow with path or glob)`] : []
  return text([...shown, ...more].join("\n"))
}

/** `search`: `path:line: text` for each matching line, in path order, at most `maxResults`. */
const searchRepo = (options: RepoToolsOptions, input: SearchInput): ToolResultOutput => {
  const caseSensitive = input.caseSensitive ?? true
  let test: (line: string) => boolean
  if (input.regex === true) {
    // RE2 (linear time): a pattern such as ^(a+)+$ cannot hang the process on a long line.
    let re: RE2JS
    try {
      re = RE2JS.compile(input.pattern, caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE)
    } catch (error) {
      return refuse(
        `"${input.pattern}" is not a valid regular expression (RE2 syntax: no look-around or back-references): ${error instanceof Error ? error.message : String(error)}`
      )
    }
    test = (line) => re.test(line)
  } else {
    const needle = caseSensitive ? input.pattern : input.pattern.toLowerCase()
    test = caseSensitive ? (line) => line.includes(needle) : (line) => line.toLowerCase().includes(needle)
  }
  const files = filesOf(options, input.path, input.glob)
  const max = input.maxResults ?? TOOL_LIMITS.searchResults
  const matches: Array<string> = []
  let skipped = 0
  let truncated = false
  // A time bound besides the output bound: a huge repository stops the search, with what it found.
  const budgetMs = options.searchMs ?? TOOL_LIMITS.searchMs
  const deadline = performance.now() + budgetMs
  let searched = 0
  let outOfTime = false
  for (const file of files) {
    if (performance.now() > deadline) {
      outOfTime = true
      break
    }
    searched++
    let content: string
    try {
      const { relative, real, exists } = checkPath(options, file, "file")
      if (!exists) continue
      content = readText(options, file, relative, real)
    } catch (error) {
      if (!(error instanceof Refused)) throw error
      // A link out, a binary or oversize file: not searched, counted.
      skipped++
      continue
    }
    const lines = linesOf(content)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.slice(0, TOOL_LIMITS.lineChars)
      if (!test(line)) continue
      if (matches.length === max) {
        truncated = true
        break
      }
      matches.push(`${file}:${i + 1}: ${cut(lines[i]!.trim(), TOOL_LIMITS.matchChars)}`)
    }
    if (truncated) break
  }
  const notes = [
    ...(outOfTime ? [`(search stopped after ${budgetMs} ms with ${plural(files.length - searched, "file")} not searched; narrow with path or glob)`] : []),
    ...(truncated ? [`(more matches not shown; narrow with path or glob, or raise maxResults up to ${TOOL_LIMITS.searchResultsMax})`] : []),
    ...(skipped > 0 ? [`(${plural(skipped, "file")} not searched: binary, over the size limit, or leading outside the repository)`] : [])
  ]
  if (matches.length === 0) return text([`No matches for ${JSON.stringify(input.pattern)} in ${plural(files.length - skipped, "file")}.`, ...notes].join("\n"))
  return text([...matches, ...notes].join("\n"))
}

const decodeRead = Schema.decodeUnknownResult(ReadFileInput)
const decodeSearch = Schema.decodeUnknownResult(SearchInput)
const decodeList = Schema.decodeUnknownResult(ListFilesInput)

/** The decoded arguments, or a refusal naming the bad field. */
const argumentsOf = <A>(tool: string, decoded: Result.Result<A, Schema.SchemaError>): A =>
  Result.isFailure(decoded) ? refuse(`Invalid arguments for ${tool}: ${decoded.failure.message}`) : decoded.success

/**
 * One tool call's output: text on success, `error-text` when the call names a path
 * outside the repository, an internal folder, a missing or special file, or has bad
 * arguments. Synchronous (plain metadata calls and reads); never throws.
 *
 * @example
 * ```ts no-run
 * import { toolOutput } from "@strata/cli"
 * toolOutput({ root: ".", maxFileBytes: 500_000 }, "read_file", { path: "../etc/passwd" })
 * // { type: "error-text", value: "\"../etc/passwd\" is outside the repository; ..." }
 * ```
 */
export const toolOutput = (options: RepoToolsOptions, toolName: string, input: unknown): ToolResultOutput => {
  try {
    switch (toolName) {
      case "read_file":
        return readFile(options, argumentsOf(toolName, decodeRead(input)))
      case "search":
        return searchRepo(options, argumentsOf(toolName, decodeSearch(input)))
      case "list_files":
        return listRepoFiles(options, argumentsOf(toolName, decodeList(input)))
      default:
        return refusal(`There is no tool named ${JSON.stringify(toolName)}; the tools are ${TOOL_NAMES.join(", ")}.`)
    }
  } catch (error) {
    if (error instanceof Refused) return refusal(error.message)
    return refusal(`${toolName} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * Run one tool call inside the repository: the `tool-result` part that answers it.
 * Never fails; a refused or failed call is an `error-text` result.
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { runRepoTool } from "@strata/cli"
 * const result = Effect.runSync(runRepoTool({ root: ".", maxFileBytes: 500_000 }, { type: "tool-call", toolCallId: "c1", toolName: "list_files", input: { glob: "*.md" } }))
 * ```
 */
export const runRepoTool = (options: RepoToolsOptions, call: ToolCallPart): Effect.Effect<ToolResultPart> =>
  Effect.sync(() => ({ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: toolOutput(options, call.toolName, call.input) }))
