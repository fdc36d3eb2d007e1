/**
 * `extractSymbols`: parse one file with the grammar of its language and return its
 * symbols, imports and call sites. Syntax errors become `errors` entries (what
 * tree-sitter recovered is still extracted); this function never throws on input.
 */
import { extractFile } from "./internal/extract/index.ts"
import { type FileSymbols, type Language, languageOf } from "./syntax/model.ts"
import type { Parsers } from "./syntax/parser.ts"

/**
 * Bumped whenever extraction output changes shape or content, so cached results from
 * an older version are re-extracted.
 */
export const EXTRACTOR_VERSION = 7

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
export const extractSymbols = (parsers: Parsers, path: string, source: string, language: Language | undefined = languageOf(path)): FileSymbols =>
  extractFile(parsers, path, source, language)
