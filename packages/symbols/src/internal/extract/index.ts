/**
 * The per-file extraction behind `extractSymbols` (src/extract.ts): the grammar of the
 * file's language, the language's extractor and its call-site query. Syntax errors become
 * `errors` entries (what tree-sitter recovered is still extracted); it never throws on input.
 * A change to what it returns bumps `EXTRACTOR_VERSION` there (cached results re-extract).
 */
import type { CallSite, FileSymbols, ImportInfo, Language } from "../../syntax/model.ts"
import type { Parsers, TSNode, TSTree } from "../../syntax/parser.ts"
import { C_CALLS, extractC, readCCallee } from "./c.ts"
import { type CalleeReader, type Draft, type Extraction, collectCalls, dedupe, findErrors, named, toSymbolInfo } from "./common.ts"
import { GO_CALLS, extractGo, readGoCallee } from "./go.ts"
import { JAVA_CALLS, extractJava, readJavaCallee } from "./java.ts"
import { PYTHON_CALLS, extractPython, readPythonCallee } from "./python.ts"
import { RUST_CALLS, extractRust, readRustCallee } from "./rust.ts"
import { TSX_CALLS, TS_CALLS, extractTypeScript, readTsCallee } from "./typescript.ts"

interface LanguageExtractor {
  readonly extract: (root: TSNode) => Extraction
  readonly calls: string
  readonly callee: CalleeReader
}

const EXTRACTORS: Readonly<Record<Language, LanguageExtractor>> = {
  typescript: { extract: extractTypeScript, calls: TS_CALLS, callee: readTsCallee },
  tsx: { extract: extractTypeScript, calls: TSX_CALLS, callee: readTsCallee },
  javascript: { extract: extractTypeScript, calls: TSX_CALLS, callee: readTsCallee },
  python: { extract: extractPython, calls: PYTHON_CALLS, callee: readPythonCallee },
  go: { extract: extractGo, calls: GO_CALLS, callee: readGoCallee },
  rust: { extract: extractRust, calls: RUST_CALLS, callee: readRustCallee },
  java: { extract: extractJava, calls: JAVA_CALLS, callee: readJavaCallee },
  c: { extract: extractC, calls: C_CALLS, callee: readCCallee },
  cpp: { extract: extractC, calls: C_CALLS, callee: readCCallee }
}

/**
 * `class API_EXPORT Name : Base {` — an upper-case macro between `class`/`struct` and
 * the name — reads as a class named after the macro followed by an error. The macro
 * is replaced by spaces (offsets and lines unchanged) before parsing.
 */
const blankExportMacros = (source: string): string =>
  source.replace(
    /\b(class|struct)(\s+)([A-Z][A-Z0-9_]*[A-Z0-9])(?=\s+[A-Za-z_]\w*\s*(?::(?!:)|\{|final\b))/g,
    (_match, keyword: string, space: string, macro: string) => `${keyword}${space}${" ".repeat(macro.length)}`
  )

/**
 * TypeScript 5 syntax the newest tree-sitter-typescript grammar in any registry package
 * (the one in `@vscode/tree-sitter-wasm` 0.3.1; `tree-sitter-typescript` 0.23.2 is older)
 * still reports as errors, blanked to an equivalent the grammar knows, keeping every
 * offset and line: `export type * from "./a"` reads as `export * from "./a"` (a re-export
 * either way), and `static accessor x = 1` as `static x = 1` (a field either way).
 * `satisfies`, `using`, const type parameters, overloaded call signatures and a bare
 * `accessor` parse as they are.
 */
const blankModernTypeScript = (source: string): string =>
  source
    .replace(/\bexport(\s+)type(?=\s*\*)/g, (_match, space: string) => `export${space}    `)
    .replace(
      /\b((?:static|public|private|protected|readonly|override|declare|abstract)\s+)accessor(?=\s+[#\w$[])/g,
      (_match, modifiers: string) => `${modifiers}        `
    )

/** Lines (at column 0) where a top-level declaration starts, for chunked recovery. */
const TS_CHUNK = /^(?:export\s|import\s|class\s|abstract\s|function[\s*]|async\s|interface\s|type\s|enum\s|const\s|let\s|var\s|declare\s|namespace\s|module\s|@)/
const CHUNK_START: Partial<Record<Language, RegExp>> = {
  typescript: TS_CHUNK,
  tsx: TS_CHUNK,
  javascript: TS_CHUNK,
  python: /^(?:def\s|async\s|class\s|@|import\s|from\s)/,
  go: /^(?:func\s|type\s|var\s|const\s|import\s)/,
  rust: /^(?:pub[\s(]|fn\s|struct\s|enum\s|trait\s|impl[\s<]|mod\s|use\s|const\s|static\s|type\s|async\s|unsafe\s|#\[|macro_rules!)/,
  // C and C++: a line starting with a name or #include/#define, after a line that ended a declaration.
  c: /^(?:[A-Za-z_]|#\s*(?:include|define)\b)(?!\w*:\s*$)/,
  cpp: /^(?:[A-Za-z_]|#\s*(?:include|define)\b)(?!\w*:\s*$)/
}

/** For C and C++, a chunk may only start after a blank line or one that ended a declaration. */
const ENDS_DECLARATION = /(?:^\s*$|[;}]\s*(?:\/\/.*)?$|\*\/\s*$|^\s*(?:#|\/\/))/

/**
 * Whether error recovery lost a large part of the file: the root itself is an
 * error, or one top-level error spans at least 30 lines and a quarter of the file.
 */
const swallowed = (root: TSNode): boolean => {
  if (root.type === "ERROR") return true
  const lines = root.endPosition.row + 1
  for (const child of named(root)) {
    if (child.type !== "ERROR") continue
    const span = child.endPosition.row - child.startPosition.row + 1
    if (span >= 30 && span * 4 >= lines) return true
  }
  return false
}

interface Chunk {
  readonly text: string
  /** 0-based line and UTF-16 offset of the chunk in the file. */
  readonly line: number
  readonly offset: number
}

/** Split `source` before every line matching `start` (for C/C++, only after a declaration ended). */
const chunks = (source: string, start: RegExp, language: Language): Array<Chunk> => {
  const out: Array<Chunk> = []
  let chunkLine = 0
  let chunkOffset = 0
  let offset = 0
  const lines = source.split("\n")
  const guarded = language === "c" || language === "cpp"
  lines.forEach((text, line) => {
    if (line > chunkLine && start.test(text) && (!guarded || ENDS_DECLARATION.test(lines[line - 1]!))) {
      out.push({ text: source.slice(chunkOffset, offset), line: chunkLine, offset: chunkOffset })
      chunkLine = line
      chunkOffset = offset
    }
    offset += text.length + 1
  })
  out.push({ text: source.slice(chunkOffset), line: chunkLine, offset: chunkOffset })
  return out
}

interface Part {
  readonly imports: Array<ImportInfo>
  readonly symbols: Array<Draft>
  readonly calls: Array<CallSite>
}

const extractOne = (tree: TSTree, parsers: Parsers, language: Language, extractor: LanguageExtractor, declarationsOnly: boolean): Part => {
  const { imports, symbols } = extractor.extract(tree.rootNode)
  // Declaration files (`.d.ts`) have no bodies, so there are no calls to look for.
  const calls = declarationsOnly ? [] : collectCalls(tree, parsers.query(language, extractor.calls), extractor.callee, symbols)
  return { imports, symbols, calls }
}

const shift = (d: Draft, line: number, offset: number): void => {
  d.line += line
  d.endLine += line
  d.start += offset
  d.end += offset
  for (const c of d.children) shift(c, line, offset)
}

const extractChunk = (parsers: Parsers, language: Language, extractor: LanguageExtractor, chunk: Chunk, declarationsOnly: boolean): Part => {
  const tree = parsers.parse(language, chunk.text)
  if (tree === null) return { imports: [], symbols: [], calls: [] }
  try {
    const part = extractOne(tree, parsers, language, extractor, declarationsOnly)
    for (const d of part.symbols) shift(d, chunk.line, chunk.offset)
    return {
      imports: part.imports.map((i) => ({ ...i, line: i.line + chunk.line })),
      symbols: part.symbols,
      calls: part.calls.map((c) => ({ ...c, line: c.line + chunk.line }))
    }
  } finally {
    tree.delete()
  }
}

/** The symbols, imports and call sites of `source` (the text of `path`); the grammar must be loaded. */
export const extractFile = (parsers: Parsers, path: string, source: string, language: Language | undefined): FileSymbols => {
  if (language === undefined) return { path, language: "typescript", imports: [], symbols: [], calls: [], errors: [{ line: 0, message: "unknown language" }] }
  const extractor = EXTRACTORS[language]
  if (language === "c" || language === "cpp") source = blankExportMacros(source)
  if (language === "typescript" || language === "tsx") source = blankModernTypeScript(source)
  const tree = parsers.parse(language, source)
  if (tree === null) return { path, language, imports: [], symbols: [], calls: [], errors: [{ line: 0, message: "parser gave up" }] }
  try {
    const root = tree.rootNode
    const errors = findErrors(root)
    const chunkStart = CHUNK_START[language]
    // When error recovery swallowed the whole file, parse it again one top-level
    // declaration at a time, so one construct the grammar does not know costs only itself.
    const declarationsOnly = /\.d\.[cm]?ts$/.test(path)
    const parts =
      chunkStart !== undefined && swallowed(root)
        ? chunks(source, chunkStart, language).map((chunk) => extractChunk(parsers, language, extractor, chunk, declarationsOnly))
        : [extractOne(tree, parsers, language, extractor, declarationsOnly)]
    return {
      path,
      language,
      imports: parts.flatMap((p) => p.imports),
      symbols: dedupe(parts.flatMap((p) => p.symbols)).map(toSymbolInfo),
      calls: parts.flatMap((p) => p.calls),
      errors
    }
  } catch (error) {
    // A grammar shape the extractor did not foresee must not cost the whole map.
    const message = error instanceof Error ? error.message : String(error)
    return { path, language, imports: [], symbols: [], calls: [], errors: [{ line: 0, message: `extractor failed: ${message}` }] }
  } finally {
    tree.delete()
  }
}
