/**
 * `@strata/symbols`: a tree-sitter symbol map of a repository — extraction, import
 * resolution, the reference graph, the compact format with its legend, the file
 * tree, an incremental indexer with an on-disk cache, and the `SymbolIndex` layer.
 * See README.md.
 */
export { SymbolCache, type SymbolCacheEntry } from "./cache.ts"
export { EXTRACTOR_VERSION, extractSymbols } from "./extract.ts"
export {
  type DirEntry,
  type FileStat,
  type FileSystem,
  gitLsFiles,
  listFiles,
  type Listing,
  type ListOptions,
  nodeFileSystem,
  type Problem,
  walkFiles
} from "./files.ts"
export {
  DEFAULT_FOCUS_WEIGHTS,
  type Focus,
  focusRanking,
  type FocusWeights,
  type NamedReference,
  type RankableMap,
  referenceData,
  type ReferenceData
} from "./focusRank.ts"
export {
  type AliasOptions,
  applyAlias,
  blockHash,
  type BlockInput,
  blockModel,
  type BlockModel,
  type BlockSymbol,
  computeAliases,
  formatFileTree,
  formatLegend,
  type FormatOptions,
  KIND_CODES,
  type PathAlias,
  renderBlock
} from "./format.ts"
export { IgnoreMatcher, rebaseGitignore } from "./gitignore.ts"
export {
  bidirectionalEdges,
  buildGraph,
  connectedComponents,
  type Contribution,
  fileContribution,
  graphFromContributions,
  type GraphInput,
  pageRank,
  type PageRankOptions,
  rankFiles,
  type ReferenceGraph,
  updateGraph
} from "./graph.ts"
export {
  type BudgetedMap,
  type BudgetOptions,
  type IndexOptions,
  type IndexStats,
  type RefreshOptions,
  SymbolIndexer,
  type SymbolMap
} from "./indexer.ts"
export { makeSymbolIndex, type RepoSymbolIndex, symbolIndexLayer, type SymbolIndexOptions } from "./layer.ts"
export { renderMap, selectMapFiles } from "./mapBudget.ts"
export {
  type Binding,
  buildResolveContext,
  definedNames,
  parseJsonc,
  resolveCalls,
  type ResolveContext,
  type ResolvedCall,
  type ResolvedImports,
  resolveImports,
  type TsPathConfig,
  type WorkspacePackage
} from "./resolve.ts"
export {
  CallSite,
  FileSymbols,
  ImportInfo,
  ImportName,
  Language,
  languageOf,
  Param,
  ParseIssue,
  SymbolInfo,
  SymbolKind
} from "./syntax/model.ts"
export { Parsers, type TSLanguage, type TSParser, type TSQuery, type TSTree } from "./syntax/parser.ts"
export { normalizeType } from "./syntax/typeText.ts"
