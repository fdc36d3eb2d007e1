/**
 * The data extracted from one source file: symbols, imports and call sites. It is
 * plain JSON (it is cached on disk under `.strata/`), so every type is a Schema.
 */
import { Schema } from "effect"

/** Languages the extractor understands. C goes through the C++ grammar. */
export const Language = Schema.Literals(["typescript", "tsx", "javascript", "python", "go", "rust", "java", "c", "cpp"])
export type Language = typeof Language.Type

/** What a symbol is; each kind has a short code in the compact format (see `KIND_CODES`). */
export const SymbolKind = Schema.Literals([
  "class",
  "struct",
  "interface",
  "enum",
  "type",
  "namespace",
  "impl",
  "function",
  "method",
  "property",
  "variable",
  "field"
])
export type SymbolKind = typeof SymbolKind.Type

/**
 * A parameter: its name (with a `...`, `*` or `**` prefix for rest parameters) and
 * whether it is optional (has a default or a `?`). Types are not kept: the map shows
 * names only.
 */
export const Param = Schema.Struct({
  name: Schema.String,
  optional: Schema.Boolean
})
export type Param = typeof Param.Type

/** One symbol with its members. `params` is null for symbols that are not callable. */
export interface SymbolInfo {
  readonly kind: SymbolKind
  readonly name: string
  readonly async: boolean
  readonly params: ReadonlyArray<Param> | null
  /** Return type (or property type), whitespace-normalized; "" when absent. */
  readonly returns: string
  /** Base classes, implemented interfaces, trait bounds; whitespace-normalized. */
  readonly bases: ReadonlyArray<string>
  readonly children: ReadonlyArray<SymbolInfo>
  /** 1-based first and last line. */
  readonly line: number
  readonly endLine: number
}

export const SymbolInfo: Schema.Codec<SymbolInfo> = Schema.Struct({
  kind: SymbolKind,
  name: Schema.String,
  async: Schema.Boolean,
  params: Schema.NullOr(Schema.Array(Param)),
  returns: Schema.String,
  bases: Schema.Array(Schema.String),
  children: Schema.Array(Schema.suspend((): Schema.Codec<SymbolInfo> => SymbolInfo)),
  line: Schema.Number,
  endLine: Schema.Number
})

/** A name brought in by an import; `name` is `*` for a namespace or wildcard import. */
export const ImportName = Schema.Struct({
  name: Schema.String,
  /** The local name it is bound to (equal to `name` when not renamed). */
  alias: Schema.String
})
export type ImportName = typeof ImportName.Type

/**
 * One import statement (or `require`, re-export, `#include`, Rust `mod`/`use`).
 * `module` is the specifier as written: `./a`, `..pkg.mod`, `crate::a::b`, `util/x.h`.
 */
export const ImportInfo = Schema.Struct({
  module: Schema.String,
  names: Schema.Array(ImportName),
  line: Schema.Number,
  /** Rust `mod x;` declarations and C `#include <x>` need their own resolution rules. */
  form: Schema.Literals(["import", "mod", "system-include"])
})
export type ImportInfo = typeof ImportInfo.Type

/**
 * A call (or `new`, or Go qualified reference). `qualifier` is the receiver when it
 * is a plain name or dotted name (`path` in `path.join()`), else "". `caller` is the
 * dotted name of the enclosing symbol ("" at top level).
 */
export const CallSite = Schema.Struct({
  name: Schema.String,
  qualifier: Schema.String,
  line: Schema.Number,
  caller: Schema.String
})
export type CallSite = typeof CallSite.Type

/** A syntax error tree-sitter recovered from. */
export const ParseIssue = Schema.Struct({
  line: Schema.Number,
  message: Schema.String
})
export type ParseIssue = typeof ParseIssue.Type

/** Everything extracted from one file. */
export const FileSymbols = Schema.Struct({
  path: Schema.String,
  language: Language,
  imports: Schema.Array(ImportInfo),
  symbols: Schema.Array(SymbolInfo),
  calls: Schema.Array(CallSite),
  errors: Schema.Array(ParseIssue)
})
export type FileSymbols = typeof FileSymbols.Type

/** Extensions the extractor parses, by language. `.h` is read as C. */
export const EXTENSIONS: Readonly<Record<string, Language>> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".jsx": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".py": "python",
  ".pyi": "python",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".cxx": "cpp",
  ".c++": "cpp",
  ".hh": "cpp",
  ".hpp": "cpp",
  ".hxx": "cpp",
  ".h++": "cpp",
  ".ipp": "cpp",
  ".inl": "cpp"
}

/**
 * The language of a path, or undefined when its extension is not parsed.
 *
 * @example
 * ```ts
 * import { languageOf } from "@strata/symbols"
 * languageOf("src/a.tsx") // "tsx"
 * languageOf("README.md") // undefined
 * ```
 */
export const languageOf = (path: string): Language | undefined => {
  const slash = path.lastIndexOf("/")
  const dot = path.lastIndexOf(".")
  if (dot <= slash + 1) return undefined
  return EXTENSIONS[path.slice(dot).toLowerCase()]
}
