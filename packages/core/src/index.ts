/**
 * `@strata/core`: the Promise API, domain schemas, tokens, the services the leaf packages
 * implement and the pure functions. `@strata/core/effect` adds the layers and the engine.
 */
export { FILES_ACTIVE_HEADER, formatFiles, REPO_MAP_HEADER, symbolDiffEntry, withReminder } from "./assembly/headers.ts"
export { unifiedDiff } from "./assembly/lineDiff.ts"
export { type ImageInput, imagePart, limitUrls } from "./assembly/normalize.ts"
export {
  type Content,
  conversationalBlocks,
  type Count,
  counted,
  type Counted,
  historyPart,
  type HistoryUnit,
  type LayoutBlock,
  type Part,
  userAckPart
} from "./assembly/parts.ts"
export { BreakdownBlock, BreakdownContent, BreakdownLeftOut, ContextBreakdown } from "./breakdown/index.ts"
export {
  ActiveTierInfo,
  ContextEditReport,
  L0TierInfo,
  LeftOut,
  LeftOutItem,
  MapLeftOut,
  TierInfo,
  TierReport,
  TokenCategories
} from "./breakdown/report.ts"
export {
  applyDetection,
  CompactionConfig,
  type CompactionKind,
  type CompactionOutcome,
  DEFAULT_COMPACTION_CONFIG,
  Detection,
  emergencyTruncate,
  formatDetectionTranscript,
  isTurnStart,
  parseDetection,
  shouldCompact
} from "./compaction/algorithm.ts"
export {
  cacheImpactOfHistoryPurge,
  CompactionModel,
  CompactionModelError,
  type CompactionModelRequest,
  type CompactionResult,
  compactionStatus,
  type CompactionStatus,
  HistoryCompactor
} from "./compaction/HistoryCompactor.ts"
export { compactionModelFromFunction, type CompactionModelFunction, type CompactionPrompt } from "./compaction/promiseModel.ts"
export { type EngineState, type ShedReport, type TruncationResult } from "./context/ContextManager.ts"
export { type ContextFile, FileContext, type FileError, RepoFiles } from "./context/FileContext.ts"
export { type FlatRequest, type FlatRequestInput } from "./context/flatRequest.ts"
export {
  type ShedFile,
  shedFiles,
  type ShedInput,
  type ShedResult,
  tokenBudget,
  type TokenBudget
} from "./context/requestBudget.ts"
export { Block, Breakpoint, CacheTtl, NeutralRequest } from "./domain/Block.ts"
export {
  BinaryFile,
  FileNotFound,
  FileReadError,
  FileTooLarge,
  FileWriteError,
  InvalidInput,
  PathOutsideRepo,
  PromptNotFound,
  SpecialFile,
  SpecialFileKind
} from "./domain/errors.ts"
export { ChangeReason, Item, ItemKey, ItemKeys, type ItemKind, TierChange, TrackedItem } from "./domain/Item.ts"
export {
  AssistantMessage,
  AssistantPart,
  ContentPart,
  History,
  type HistoryProblem,
  historyProblems,
  ImagePart,
  isToolError,
  Message,
  type MessagePart,
  messageParts,
  messageText,
  partImages,
  ReasoningPart,
  ReasoningProvider,
  Role,
  SystemMessage,
  TextPart,
  ToolCallPart,
  toolCalls,
  ToolMessage,
  toolOutputText,
  ToolResultOutput,
  ToolResultPart,
  UserMessage
} from "./domain/Message.ts"
export { CACHED_TIERS, CachedTier, DEFAULT_THRESHOLDS, Tier, tierRank, TIERS } from "./domain/Tier.ts"
export { JsonSchemaObject, ToolDefinition } from "./domain/Tool.ts"
export { sumUsage, Usage, usageInPromptTokens, ZERO_USAGE } from "./domain/Usage.ts"
export {
  type CallOptions,
  type CommitCallOptions,
  ContextEngine,
  createContextEngine,
  type EngineTurn,
  type HistoryContent
} from "./engine/ContextEngine.ts"
export { type ContextEngineOptions, type EngineServices, newSessionId, validateEngineOptions } from "./engine/layer.ts"
export { type EngineTurnOutcome, type EngineTurnRequest } from "./engine/session.ts"
export {
  type SendContext,
  type ToolCallContext,
  type ToolHandler,
  type ToolLoopOptions,
  type ToolLoopResult
} from "./engine/toolLoop.ts"
export {
  BARE_REPOSITORY_REASON,
  createInsideRepo,
  isBareRepository,
  isWithin,
  keepDamagedCopy,
  normalizeRepoPath,
  type PathFileSystem,
  readInsideRepo,
  type ReadInsideRepoError,
  readInsideRepoSync,
  removeInsideRepo,
  type ResolvedPath,
  resolveInsideRepoSync,
  statInsideRepo,
  unsafeNameCharacter,
  writeInsideRepo,
  type WriteInsideRepoError
} from "./files/insideRepo.ts"
export { processAlive } from "./files/process.ts"
export {
  cacheHitShare,
  formatTokens,
  type HudInput,
  type HudOptions,
  type HudUsage,
  renderCacheBlocks,
  renderHud,
  sessionHudLines
} from "./hud/index.ts"
export {
  type EncodingChoice,
  encodingForModel,
  type EncodingName,
  modelFacts,
  type ModelFacts,
  modelInfo,
  type ModelInfo,
  normalizeModelId,
  unknownModelWarning
} from "./models/modelTable.ts"
export { AssemblyInput, FileContent, RequestTooLarge, UrlContent } from "./pipeline/base/state.ts"
export {
  defaultMapTokens,
  type RequestLimitSettings,
  type ResolvedLimits,
  resolveRequestLimits
} from "./pipeline/inputLimit/requestLimits.ts"
export { assembleMessages, estimatePromptTokens, type FlatAssemblyInput } from "./pipeline/seed/flat.ts"
export { assembleTieredMessages, type TieredMessagesInput, type TieredTierContent } from "./pipeline/seed/seed.ts"
export {
  type CacheControl,
  type SeedBody,
  type SeedImageBlock,
  type SeedMessage,
  seedPlugin,
  type SeedTextBlock,
  toSeedMessages
} from "./pipeline/seed/seedPlacement.ts"
export {
  blockRoom,
  cutMap,
  fillInRankOrder,
  type MapCut,
  type MapCutInput,
  mapRanking,
  selectMapFiles
} from "./pipeline/symbolMap/mapBudget.ts"
export {
  BUNDLED_PROMPTS_DIR,
  PROMPT_PACKS,
  type PromptError,
  type PromptPack,
  Prompts,
  type PromptText
} from "./prompts/Prompts.ts"
export {
  type DecodedReply,
  type DroppedBreakpoint,
  type PlacedBreakpoint,
  Placement,
  PlacementError,
  type PlacementResult,
  type PlacementShape,
  type ProviderPlugin
} from "./services/Placement.ts"
export {
  type CommitResult,
  HistoryRewrite,
  ListedSession,
  type LoadedState,
  type RequestPage,
  type RequestRange,
  type SessionFilter,
  SessionKey,
  SessionName,
  StateConflict,
  StatePatch,
  StateSnapshot,
  StateStore,
  StateStoreError,
  type StateStorePlugin,
  StoredRequest,
  TurnCommit,
  TurnId
} from "./services/StateStore.ts"
export {
  type IndexProblem,
  type MapFocus,
  type PathAlias,
  SymbolIndex,
  SymbolIndexError,
  type SymbolMapDelta,
  type SymbolMapSnapshot
} from "./services/SymbolIndex.ts"
export {
  type InitialPlacementInput,
  type SeededTracker,
  Tracker,
  TrackerConflict,
  TrackerPersistError,
  type TrackerSnapshot,
  TrackerState,
  type TrackerUpdateInput
} from "./services/Tracker.ts"
export { type LoggedSession, type LoggedSessionSummary } from "./session/SessionStore.ts"
export { type BpeCounter, type BpeRanks, makeBpeCounter } from "./tokens/bpe.ts"
export {
  estimateTokens,
  IMAGE_TOKENS,
  makeCustomCounter,
  makeEstimatingCounter,
  makeTokenCounter,
  makeTokenCounterSync,
  partTokens,
  sha256,
  type TokenCounter,
  type TokenCounterOptions
} from "./tokens/TokenCounter.ts"
export { Tokenizer } from "./tokens/Tokenizer.ts"
export {
  decodeSessionRecord,
  EMPTY_RECORD,
  LastRequest,
  RecordedAlias,
  RecordedBlock,
  recordedRequest,
  RecordedRequest,
  type RecordedTurn,
  recordTurn,
  type RequestShape,
  type RequestShapeBlock,
  RequestSource,
  SessionRecord,
  UsageSource
} from "./turn/record.ts"
export {
  type CommitOptions,
  StaleTurn,
  type Turn,
  TurnAlreadyCommitted,
  type TurnAssembly,
  type TurnCommitted,
  type TurnOutcome
} from "./turn/turn.ts"
export {
  ContextBuilder,
  createContextBuilder,
  type MemoryHistory,
  memoryToHistory,
  memoryToNativeHistory,
  resultToHistory
} from "./xml/ContextBuilder.ts"
export {
  type ChunkFilterOptions,
  ContextBuildOptions,
  ContextBuildResult,
  ContextMessage,
  ContextMessageRole,
  KeepStrategy
} from "./xml/ContextMessage.ts"
export {
  escapeXmlAttribute,
  escapeXmlText,
  stableJson,
  toXmlCharacters,
  unescapeXml,
  xmlAttributes,
  type XmlAttributeValue,
  xmlElement
} from "./xml/escape.ts"
export {
  ChunkMetadata,
  ChunkType,
  decodeMemoryState,
  type IndexedMemoryStateInput,
  MemoryChunk,
  type MemoryChunkInput,
  MemoryState,
  type MemoryStateInput
} from "./xml/MemoryState.ts"
export { historyToMemory, type NativeMemoryHistory } from "./xml/nativeHistory.ts"
export { chunkBody, getDefaultRenderers, IChunkRenderer } from "./xml/renderers.ts"
export { type ContextTokenizer, type CountTokensLike, createTokenizer, TokenizerLike } from "./xml/tokenizer.ts"
