/**
 * `@strata/symbols`: a tree-sitter symbol map of a repository — extraction, import
 * resolution, the reference graph, the compact format with its legend, the file
 * tree, an incremental indexer with an on-disk cache, and the `SymbolIndex` layer.
 * See README.md.
 */
export * from "./syntax/model.ts"
export * from "./syntax/parser.ts"
export { extractSymbols, EXTRACTOR_VERSION } from "./extract/index.ts"
export { normalizeType } from "./extract/common.ts"
export * from "./resolve.ts"
export * from "./graph.ts"
export * from "./focusRank.ts"
export * from "./format.ts"
export * from "./mapBudget.ts"
export * from "./files.ts"
export * from "./gitignore.ts"
export * from "./cache.ts"
export * from "./indexer.ts"
export * from "./layer.ts"
