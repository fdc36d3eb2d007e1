/**
 * `@strata/core/effect`: everything in `@strata/core` plus the Effect API (layers, the engine,
 * the turn API, the pipeline and its stages). See README.md, "Two entry points".
 */
export * from "./index.ts"

export {
  ACK,
  FILE_TREE_HEADER,
  formatFile,
  JOURNAL_NOTE,
  REPO_MAP_CONTINUATION,
  REVIEW_ACK,
  SYMBOL_DIFF_NOTE,
  URL_ACK
} from "./assembly/headers.ts"
export {
  type CountedTools,
  type CountedUrl,
  type L0Content,
  neutralRequest,
  NOTHING,
  promptPart,
  type Section,
  SECTION_SEPARATOR,
  sectionOf,
  syntheticMessages,
  type SystemContent,
  systemPart,
  type TierContent,
  tierContentPart,
  type TierSections,
  treePart,
  urlsPart,
  workingFilesPart
} from "./assembly/parts.ts"
export { isSummaryMessage, minStepTokens, summaryPair, verbatimStart } from "./compaction/algorithm.ts"
export { type HistoryCompactorOptions } from "./compaction/HistoryCompactor.ts"
export { loadCompactionPrompt } from "./compaction/prompt.ts"
export { ContextManager, type ContextManagerShape } from "./context/ContextManager.ts"
export { assembleFlatRequest } from "./context/flatRequest.ts"
export { partText } from "./domain/Message.ts"
export { type EngineLayerError, type EngineOwnOptions, EngineSession, makeEngineLayer } from "./engine/layer.ts"
export { beginEngineTurn, commitEngineTurn, engineAppend, engineBudget, engineCompact, engineHistory } from "./engine/session.ts"
export { requestInput, type RequestParts, type RequestSources, selectedFilesInput } from "./engine/requestInput.ts"
export { renderTierChanges } from "./hud/index.ts"
export {
  assemble,
  type AssemblyResult,
  type AssemblyServices,
  getContextBreakdown,
  type JournalSummary
} from "./pipeline/assemble.ts"
export { AssemblySession } from "./pipeline/assemblySession.ts"
export {
  type ClearedResult,
  type ClearReason,
  type ContextEditMemory,
  type ContextEditPlan
} from "./pipeline/base/contextEditMemory.ts"
export {
  type CachedTierLists,
  type Entry,
  type FileEntry,
  type HistoryEntry,
  type SymbolData,
  type SymbolEntry,
  type TierLists
} from "./pipeline/base/entries.ts"
export {
  type FrozenContent,
  type FrozenTier,
  type JournalMemory,
  type JournalPlan,
  type RebuildReason,
  type ShownFile,
  type SymbolDiff
} from "./pipeline/base/journalMemory.ts"
export { CacheExpiryMillis, type CachePriceRatios, CachePrices } from "./pipeline/base/providerCache.ts"
export {
  type AssemblyError,
  type AssemblyState,
  decodeAssemblyInput,
  insertPart,
  type Layout,
  type PendingUpdate,
  type PipelineServices,
  type Stage,
  StageError
} from "./pipeline/base/state.ts"
export { contextEditing, ContextEditing, ContextEditingStage } from "./pipeline/contextEditing/contextEditing.ts"
export {
  clearedPlaceholder,
  ContextEditingSettings,
  DEFAULT_CONTEXT_EDITING,
  fileAccess
} from "./pipeline/contextEditing/contextEdits.ts"
export { extraStages, Pipeline, type StageInsertion, type StageServices, StagesLayer } from "./pipeline/index.ts"
export { inputLimit, InputLimitStage } from "./pipeline/inputLimit/inputLimit.ts"
export { requestLimits, RequestLimits } from "./pipeline/inputLimit/requestLimits.ts"
export { journalBlocks, journalLayout } from "./pipeline/journal/journal.ts"
export {
  decodeJournalMemory,
  encodeJournalMemory,
  JOURNAL_MEMORY_VERSION,
  JournalMemoryJson
} from "./pipeline/journal/journalCodec.ts"
export { AdaptiveTtl, cacheImpactOfJournalRestart } from "./pipeline/journal/journalPlan.ts"
export { isLayoutMode, LAYOUT_MODES, LayoutMode, LAYOUTS } from "./pipeline/layouts.ts"
export { promptOf, seedBlocks, type SeedContent, seedLayout, systemPromptOf } from "./pipeline/seed/seed.ts"
export { placeSeedFormat, seedPlacement, seedPlacementLayer, type SeedToolCall } from "./pipeline/seed/seedPlacement.ts"
export { activeBlock, ActiveBlockStage } from "./pipeline/stages/activeBlock.ts"
export { activeFiles, ActiveFilesStage } from "./pipeline/stages/activeFiles.ts"
export { cachedBlocks, CachedBlocksStage } from "./pipeline/stages/cachedBlocks.ts"
export { fileTiers, FileTiersStage } from "./pipeline/stages/fileTiers.ts"
export { historyEntries, historyTiers, HistoryTiersStage } from "./pipeline/stages/historyTiers.ts"
export { l0Block, L0BlockStage } from "./pipeline/stages/l0Block.ts"
export { layoutPlan, LayoutPlanStage } from "./pipeline/stages/layoutPlan.ts"
export { placement, PlacementStage } from "./pipeline/stages/providerPlacement.ts"
export { reviewContext } from "./pipeline/stages/reviewContext.ts"
export { track, TrackStage } from "./pipeline/stages/track.ts"
export { makeSymbolData, SymbolDataStage } from "./pipeline/symbolMap/symbolData.ts"
export { applyRewrite, applyTurn, emptyState, formatSessionKey, requestPage } from "./services/StateStore.ts"
export {
  parseSessionText,
  SessionId,
  SessionNotFound,
  type SessionRefusal,
  SessionStore,
  SessionStoreError,
  SessionStoreMissing
} from "./session/SessionStore.ts"
export { appendHistory, type HistoryChangeOptions, retryOnConflict, rewriteSessionHistory } from "./turn/history.ts"
export { makeMemoryStateStore, MemoryStateStore } from "./turn/MemoryStateStore.ts"
export {
  beginTurn,
  runTurn,
  turnBreakdown,
  type TurnCommitError,
  type TurnError,
  type TurnOptions,
  type TurnRequest,
  type TurnServices
} from "./turn/turn.ts"
export { ContextBuilderService, type ContextBuilderShape } from "./xml/ContextBuilderService.ts"
