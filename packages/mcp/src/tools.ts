/**
 * The tools the MCP server offers, each an input Schema (its JSON Schema is derived from
 * it) and an Effect from decoded arguments to text. Output is deterministic: the same
 * call on an unchanged repository returns the same bytes, lists are sorted, and cuts
 * end with a line that says what was left out.
 */
import { estimateTokens, type PathOutsideRepo } from "@strata/core"
import { focusRanking, referenceData, type SymbolMap } from "@strata/symbols"
import { Effect, Schema } from "effect"
import { BudgetTooSmall, FileNotInMap, InvalidToolInput, type RepositoryUnavailable } from "./internal/errors.ts"
import { repoPath } from "./internal/paths.ts"
import { cutLines, findDefinitions, findReferences, outline, signature } from "./internal/render.ts"

/** What a tool reads: the repository's root, an up-to-date map and the session's report. */
export interface ToolContext {
  readonly root: string
  /** The map, re-indexed for any file changed since the last call. */
  readonly snapshot: Effect.Effect<SymbolMap, RepositoryUnavailable>
  /** The Strata session's cache report, or undefined when the repository has no session. */
  readonly cacheReport: (session: string | undefined) => Effect.Effect<string | undefined, RepositoryUnavailable>
}

/** The errors a tool's run can end with (besides bad arguments, which the server reports). */
export type ToolError = PathOutsideRepo | FileNotInMap | BudgetTooSmall | RepositoryUnavailable

/** One tool: its name, description, argument Schema and what it does. */
export interface Tool<A> {
  readonly name: string
  readonly description: string
  readonly input: Schema.Codec<A, unknown>
  readonly run: (ctx: ToolContext, args: A) => Effect.Effect<string, ToolError>
}

/** A tool as the server lists and calls it: arguments decoded (excess keys refused) before it runs. */
export interface ToolEntry {
  readonly name: string
  readonly description: string
  /** JSON Schema (draft 2020-12) of the arguments, derived from the tool's Schema. */
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
  readonly call: (ctx: ToolContext, args: unknown) => Effect.Effect<string, ToolError | InvalidToolInput>
}

/** Close a tool over its Schema. */
export const toolEntry = <A>(tool: Tool<A>): ToolEntry => {
  const decode = Schema.decodeUnknownEffect(tool.input)
  const document = Schema.toJsonSchemaDocument(tool.input, { onExcessProperty: "error" })
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { ...document.schema, type: "object" },
    call: (ctx, args) =>
      decode(args ?? {}, { onExcessProperty: "error" }).pipe(
        Effect.mapError((error) => new InvalidToolInput({ tool: tool.name, issue: error.message })),
        Effect.flatMap((decoded) => tool.run(ctx, decoded))
      )
  }
}

const Budget = (fallback: number) =>
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
    description: `Token budget of the answer (estimated as characters / 4); default ${fallback}. The answer is cut to it, with a last line saying what was left out.`
  })

const PathList = (description: string) => Schema.Array(Schema.String).annotate({ description })

/** Arguments of `repo_map`. */
export const RepoMapArgs = Schema.Struct({
  budget: Schema.optionalKey(Budget(2048)),
  focus_files: Schema.optionalKey(PathList("Repository-relative paths of the files being worked on; the map is ranked around them")),
  identifiers: Schema.optionalKey(PathList("Identifiers mentioned in the task (function, class, variable names); files defining and using them rank higher"))
})
export type RepoMapArgs = typeof RepoMapArgs.Type

/** Arguments of `find_symbol`. */
export const FindSymbolArgs = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "Symbol name, or a dotted member name such as `Class.method`" }),
  kind: Schema.optionalKey(
    Schema.Literals(["class", "struct", "interface", "enum", "type", "namespace", "impl", "function", "method", "property", "variable", "field"]).annotate({
      description: "Only definitions of this kind"
    })
  ),
  budget: Schema.optionalKey(Budget(1024))
})
export type FindSymbolArgs = typeof FindSymbolArgs.Type

/** Arguments of `find_references`. */
export const FindReferencesArgs = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The referenced symbol's name" }),
  path: Schema.optionalKey(Schema.String.annotate({ description: "Only references to the definition in this file (repository-relative)" })),
  budget: Schema.optionalKey(Budget(1024))
})
export type FindReferencesArgs = typeof FindReferencesArgs.Type

/** Arguments of `file_outline`. */
export const FileOutlineArgs = Schema.Struct({
  path: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "Repository-relative path of a source file" }),
  budget: Schema.optionalKey(Budget(2048))
})
export type FileOutlineArgs = typeof FileOutlineArgs.Type

/** Arguments of `repo_tree`. */
export const RepoTreeArgs = Schema.Struct({
  prefix: Schema.optionalKey(Schema.String.annotate({ description: "Only files under this directory (repository-relative)" })),
  budget: Schema.optionalKey(Budget(4096))
})
export type RepoTreeArgs = typeof RepoTreeArgs.Type

const mapDefault = 2048

/**
 * The map text for a focus: the legend, then blocks in ranked order (focus files first,
 * then Aider's personalised ranking; the global ranking without a focus) while they fit
 * the budget, then a line naming how many files were left out. Pure over the map.
 */
export const renderRepoMap = (map: SymbolMap, args: { readonly budget: number; readonly files: ReadonlyArray<string>; readonly identifiers: ReadonlyArray<string> }): Effect.Effect<string, BudgetTooSmall> =>
  Effect.suspend(() => {
    const focus = { files: args.files, identifiers: args.identifiers }
    const ranked = args.files.length === 0 && args.identifiers.length === 0 ? map.ranked : focusRanking(referenceData(map), focus)
    const unknown = args.files.filter((f) => map.symbols(f) === undefined)
    const header = map.legend + (unknown.length > 0 ? `# focus files without symbols: ${[...unknown].sort().join(", ")}\n` : "")
    const noteFor = (left: number): string =>
      `\n# ${left} of ${ranked.length} files left out to fit ${args.budget} tokens; ask with a larger budget or a narrower focus\n`
    const floor = estimateTokens(header + noteFor(ranked.length))
    if (floor > args.budget) return Effect.fail(new BudgetTooSmall({ budget: args.budget, minimum: floor }))
    const parts: Array<string> = [header]
    let chars = header.length
    let shown = 0
    for (const path of ranked) {
      const block = map.block(path)
      if (block === undefined) continue
      const cost = Math.ceil((chars + 1 + block.length + noteFor(ranked.length - shown - 1).length) / 4)
      if (cost > args.budget) continue
      parts.push(block)
      chars += 1 + block.length
      shown++
    }
    const text = parts.join("\n")
    return Effect.succeed(shown === ranked.length ? text : text + noteFor(ranked.length - shown))
  })

const focusPaths = (root: string, files: ReadonlyArray<string>) => Effect.forEach(files, (f) => repoPath(root, f))

/** `repo_map`: the symbol map, ranked by the focus, within a token budget. */
export const repoMapTool: Tool<RepoMapArgs> = {
  name: "repo_map",
  description:
    "The repository's symbol map: a legend, then one block per file (classes, functions, methods, imports, ←N = used by N other files), most relevant files first. Give focus_files (what you are editing) and identifiers (names in the task) to rank the map around them. Cut to `budget` tokens, with a last line saying how many files were left out.",
  input: RepoMapArgs,
  run: (ctx, args) =>
    Effect.gen(function* () {
      const files = yield* focusPaths(ctx.root, args.focus_files ?? [])
      const map = yield* ctx.snapshot
      return yield* renderRepoMap(map, { budget: args.budget ?? mapDefault, files, identifiers: args.identifiers ?? [] })
    })
}

/** `find_symbol`: where a symbol is defined. */
export const findSymbolTool: Tool<FindSymbolArgs> = {
  name: "find_symbol",
  description:
    "Where a symbol is defined: one line per definition, `path:line-endLine kind name(params) -> returns`, sorted by path and line. Matches the bare name or a dotted member name (`Class.method`).",
  input: FindSymbolArgs,
  run: (ctx, args) =>
    Effect.gen(function* () {
      const map = yield* ctx.snapshot
      const found = findDefinitions(map, args.name, args.kind)
      if (found.length === 0) return `# no definition of "${args.name}"${args.kind === undefined ? "" : ` of kind ${args.kind}`}\n`
      const lines = found.map((d) => `${d.path}:${d.symbol.line}-${d.symbol.endLine} ${signature(d.symbol, d.qualified)}`)
      return cutLines([`# ${found.length} definition${found.length === 1 ? "" : "s"} of "${args.name}"`, ...lines], args.budget ?? 1024, "definitions")
    })
}

/** `find_references`: where a symbol is used from other files. */
export const findReferencesTool: Tool<FindReferencesArgs> = {
  name: "find_references",
  description:
    "Where a symbol is used from other files (resolved imports and call sites): one line per use, `path:line how -> defining file`, sorted by path and line. Give `path` to count only uses of the definition in that file.",
  input: FindReferencesArgs,
  run: (ctx, args) =>
    Effect.gen(function* () {
      const target = args.path === undefined ? undefined : yield* repoPath(ctx.root, args.path)
      const map = yield* ctx.snapshot
      if (target !== undefined && map.symbols(target) === undefined) {
        return yield* new FileNotInMap({ path: target, reason: "is not a source file of the symbol map" })
      }
      const refs = findReferences(map, args.name, target)
      if (refs.length === 0) return `# no references to "${args.name}"${target === undefined ? "" : ` defined in ${target}`}\n`
      const files = new Set(refs.map((r) => r.path)).size
      const lines = refs.map((r) => `${r.path}:${r.line} ${r.how} -> ${r.target}`)
      return cutLines([`# ${refs.length} reference${refs.length === 1 ? "" : "s"} to "${args.name}" from ${files} file${files === 1 ? "" : "s"}`, ...lines], args.budget ?? 1024, "references")
    })
}

/** `file_outline`: one file's imports and symbols with line ranges. */
export const fileOutlineTool: Tool<FileOutlineArgs> = {
  name: "file_outline",
  description:
    "One file's outline: its imports, then every class, function, method and variable with its line range (`start-end kind name(params) -> returns`), members indented, in source order.",
  input: FileOutlineArgs,
  run: (ctx, args) =>
    Effect.gen(function* () {
      const path = yield* repoPath(ctx.root, args.path)
      const map = yield* ctx.snapshot
      if (map.symbols(path) === undefined) {
        const reason = map.files.includes(path) ? "has no symbols (not a language the index parses, or too large)" : "is not a file of the repository (deleted, ignored or misspelt)"
        return yield* new FileNotInMap({ path, reason })
      }
      const text = outline(map, path)
      return cutLines(text.replace(/\n$/, "").split("\n"), args.budget ?? 2048, "outline lines")
    })
}

/** `repo_tree`: the repository's files. */
export const repoTreeTool: Tool<RepoTreeArgs> = {
  name: "repo_tree",
  description:
    "The repository's files (git-tracked and untracked-but-not-ignored), one path per line, sorted. Give `prefix` for one directory. Cut to `budget` tokens, with a last line saying how many paths were left out.",
  input: RepoTreeArgs,
  run: (ctx, args) =>
    Effect.gen(function* () {
      const prefix = args.prefix === undefined ? "" : yield* repoPath(ctx.root, args.prefix)
      const map = yield* ctx.snapshot
      const under = prefix === "" ? map.files : map.files.filter((f) => f.startsWith(`${prefix}/`) || f === prefix)
      if (under.length === 0) return `# no files under ${prefix}\n`
      return cutLines(under, args.budget ?? 4096, "paths")
    })
}

/** Arguments of `cache_report`. */
export const CacheReportArgs = Schema.Struct({
  session: Schema.optionalKey(Schema.String.annotate({ description: "Session name (default: the repository's default session)" }))
})
export type CacheReportArgs = typeof CacheReportArgs.Type

/** `cache_report`: the Strata session's cost and why its last request missed the cache. */
export const cacheReportTool: Tool<CacheReportArgs> = {
  name: "cache_report",
  description:
    "The repository's Strata session: turns, tokens read from and written to the provider's prompt cache, uncached input and output, the cost so far, and why the last request missed the cache, when known.",
  input: CacheReportArgs,
  run: (ctx, args) =>
    ctx.cacheReport(args.session).pipe(Effect.map((report) => report ?? `# no Strata session${args.session === undefined ? "" : ` named ${args.session}`} in this repository\n`))
}

/** The symbol tools every server has, in the order `tools/list` gives them. */
export const SYMBOL_TOOLS: ReadonlyArray<ToolEntry> = [
  toolEntry(repoMapTool),
  toolEntry(findSymbolTool),
  toolEntry(findReferencesTool),
  toolEntry(fileOutlineTool),
  toolEntry(repoTreeTool)
]

/** `cache_report`, listed when the repository has a Strata session. */
export const CACHE_REPORT_TOOL: ToolEntry = toolEntry(cacheReportTool)
