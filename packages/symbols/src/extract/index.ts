/**
 * `extractSymbols`: parse one file with the grammar of its language and return its
 * symbols, imports and call sites. Syntax errors become `errors` entries (what
 * tree-sitter recovered is still extracted); this function never throws on input.
 */
import { type FileSymbols, type Language, languageOf } from "../model.ts"
import type { Parsers, TSNode } from "../parser.ts"
import { C_CALLS, extractC, readCCallee } from "./c.ts"
import { type CalleeReader, type Extraction, collectCalls, dedupe, findErrors, toSymbolInfo } from "./common.ts"
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
 * Bumped whenever extraction output changes shape or content, so cached results from
 * an older version are re-extracted.
 */
export const EXTRACTOR_VERSION = 1

/**
 * Extract the symbols of `source` (the text of `path`). The grammar of the file's
 * language must be loaded (`await parsers.ensure(language)`).
 *
 * @example
 * ```ts
 * import { Parsers, extractSymbols } from "@strata/symbols"
 * const parsers = await Parsers.load(["python"])
 * const file = extractSymbols(parsers, "a.py", "def f(x, y=1):\n    return g(x)\n")
 * file.symbols[0] // { kind: "function", name: "f", params: [{ name: "x", … }, { name: "y", optional: true }], … }
 * file.calls[0] // { name: "g", qualifier: "", line: 2, caller: "f" }
 * ```
 */
export const extractSymbols = (parsers: Parsers, path: string, source: string, language: Language | undefined = languageOf(path)): FileSymbols => {
  if (language === undefined) return { path, language: "typescript", imports: [], symbols: [], calls: [], errors: [{ line: 0, message: "unknown language" }] }
  const extractor = EXTRACTORS[language]
  const tree = parsers.parse(language, source)
  if (tree === null) return { path, language, imports: [], symbols: [], calls: [], errors: [{ line: 0, message: "parser gave up" }] }
  try {
    const root = tree.rootNode
    const { imports, symbols } = extractor.extract(root)
    const calls = collectCalls(tree, parsers.query(language, extractor.calls), extractor.callee, symbols)
    return {
      path,
      language,
      imports,
      symbols: dedupe(symbols).map(toSymbolInfo),
      calls,
      errors: findErrors(root)
    }
  } catch (error) {
    // A grammar shape the extractor did not foresee must not cost the whole map.
    const message = error instanceof Error ? error.message : String(error)
    return { path, language, imports: [], symbols: [], calls: [], errors: [{ line: 0, message: `extractor failed: ${message}` }] }
  } finally {
    tree.delete()
  }
}
