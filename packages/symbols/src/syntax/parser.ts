/**
 * Loads the tree-sitter WASM runtime and grammars that ship inside
 * `@vscode/tree-sitter-wasm` (read from the package's files, never the network).
 */
import TreeSitter from "@vscode/tree-sitter-wasm"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { Language } from "./model.ts"

export type TSParser = InstanceType<typeof TreeSitter.Parser>
export type TSLanguage = InstanceType<typeof TreeSitter.Language>
export type TSNode = InstanceType<typeof TreeSitter.Node>
export type TSTree = InstanceType<typeof TreeSitter.Tree>
export type TSQuery = InstanceType<typeof TreeSitter.Query>

/** The grammar file of each language (C is read with the C++ grammar, a superset for our purpose). */
const GRAMMAR_FILE: Readonly<Record<Language, string>> = {
  typescript: "tree-sitter-typescript.wasm",
  tsx: "tree-sitter-tsx.wasm",
  javascript: "tree-sitter-javascript.wasm",
  python: "tree-sitter-python.wasm",
  go: "tree-sitter-go.wasm",
  rust: "tree-sitter-rust.wasm",
  java: "tree-sitter-java.wasm",
  c: "tree-sitter-cpp.wasm",
  cpp: "tree-sitter-cpp.wasm"
}

const READ_CHUNK = 10 * 1024

const wasmDir = (): string => dirname(createRequire(import.meta.url).resolve("@vscode/tree-sitter-wasm"))

let runtime: Promise<void> | undefined
const initRuntime = (): Promise<void> => {
  runtime ??= TreeSitter.Parser.init({ locateFile: (file: string) => join(wasmDir(), file) })
  return runtime
}

/**
 * A parser per language plus compiled queries, loaded once. Grammars load lazily on
 * first use, so a Python-only repository never instantiates the C++ grammar.
 */
export class Parsers {
  private readonly languages = new Map<string, TSLanguage>()
  private readonly queries = new Map<string, TSQuery>()
  private readonly parser: TSParser

  private constructor() {
    this.parser = new TreeSitter.Parser()
  }

  /** Initialise the WASM runtime and preload the grammars of `languages`. */
  static async load(languages: ReadonlyArray<Language> = []): Promise<Parsers> {
    await initRuntime()
    const parsers = new Parsers()
    for (const language of languages) await parsers.ensure(language)
    return parsers
  }

  /** Make `language` available to `parse` (loads its grammar once). */
  async ensure(language: Language): Promise<void> {
    const file = GRAMMAR_FILE[language]
    if (this.languages.has(file)) return
    const grammar = await TreeSitter.Language.load(readFileSync(join(wasmDir(), file)))
    this.languages.set(file, grammar)
  }

  /** Whether `language`'s grammar is loaded. */
  has(language: Language): boolean {
    return this.languages.has(GRAMMAR_FILE[language])
  }

  /** The loaded grammar of `language`; throws if `ensure` was not awaited first. */
  grammar(language: Language): TSLanguage {
    const grammar = this.languages.get(GRAMMAR_FILE[language])
    if (grammar === undefined) throw new Error(`Grammar for ${language} not loaded; call Parsers.ensure first`)
    return grammar
  }

  /** Parse `source`; null only when tree-sitter gives up (it normally recovers from errors). */
  parse(language: Language, source: string): TSTree | null {
    this.parser.setLanguage(this.grammar(language))
    // The binding's string input slices the whole remaining text on every 10 KiB read;
    // handing it bounded slices keeps large files linear.
    return this.parser.parse((index: number) => (index < source.length ? source.slice(index, index + READ_CHUNK) : ""))
  }

  /** A compiled query for `language`, cached by its text. */
  query(language: Language, text: string): TSQuery {
    const key = `${GRAMMAR_FILE[language]}\u0000${text}`
    let query = this.queries.get(key)
    if (query === undefined) {
      query = new TreeSitter.Query(this.grammar(language), text)
      this.queries.set(key, query)
    }
    return query
  }
}
