/**
 * `@strata/providers`: cache-placement plugins per provider, the rules they enforce,
 * the dated model/price table, usage decoding and cost, prompt-cache simulators and
 * LLM clients (see README.md).
 */
export { simpleBody, type SimpleChat } from "./clients/bodies.ts"
export { compactionModelLayer } from "./clients/compaction.ts"
export {
  LlmConnectionError,
  type LlmError,
  LlmHttpError,
  LlmIncompleteReply,
  LlmInvalidRequest,
  LlmMissingCredentials,
  LlmSdkMissing,
  LlmStreamError,
  LlmTimeout
} from "./clients/errors.ts"
export { LlmClient, type LlmClientShape, type LlmEvent, type LlmRequest, type LlmResponse } from "./clients/LlmClient.ts"
export { retryAfterMs } from "./clients/retry.ts"
export { collectToolCalls } from "./clients/toolCalls.ts"
export { type Failure, type LlmProvider, type ToolCallDelta } from "./driver.ts"
export {
  type CachePlan,
  type CachePlanner,
  type CachePlannerOptions,
  makeCachePlanner,
  type MarkerRole,
  type PlannedMarker
} from "./middleware/planner.ts"
export {
  nativeBodyOf,
  type NativeTarget,
  type Prompt,
  type PromptMessage,
  type PromptPart,
  type PromptProviderOptions,
  type PromptTool
} from "./middleware/prompt.ts"
export {
  applyPlan,
  type CachedBodiesOptions,
  cachedPromptBodies,
  type CacheReport,
  type CacheReportEntry,
  type CacheTargetName,
  type CallParams,
  type ModelRef,
  strataCache,
  type StrataCacheMiddleware,
  type StrataCacheOptions
} from "./middleware/strataCache.ts"
export { type BlockSection, type BodyBlock, type BodyFormat, walkBody, type WalkedBody, type WalkOptions } from "./miss/blocks.ts"
export {
  type BlockChange,
  describeMissReason,
  explainMiss,
  type ExplainMissOptions,
  type MissExplanation,
  type MissReason,
  type MissUsage
} from "./miss/explain.ts"
export {
  findModel,
  type Lookback,
  lookupModel,
  type LookupOptions,
  MODEL_TABLE,
  type ModelEntry,
  type ModelField,
  type ModelFields,
  type ModelLimits,
  type Price,
  type Provenance,
  PROVIDER_IDS,
  type ProviderId,
  type Revision,
  ttlSpec,
  type TtlSpec
} from "./models.ts"
export {
  type AiSdkAssistantPart,
  type AiSdkBody,
  type AiSdkImagePart,
  type AiSdkJson,
  type AiSdkJsonObject,
  type AiSdkMessage,
  type AiSdkOptions,
  AiSdkPlacement,
  type AiSdkProviderOptions,
  type AiSdkReasoningPart,
  type AiSdkSystemMessage,
  type AiSdkTarget,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolContent,
  type AiSdkToolResultOutput,
  type AiSdkToolResultPart,
  placeAiSdk
} from "./plugins/aiSdk.ts"
export {
  type AnthropicBody,
  type AnthropicCacheControl,
  type AnthropicContentBlock,
  type AnthropicImageBlock,
  type AnthropicImageMediaType,
  type AnthropicMessage,
  type AnthropicOptions,
  AnthropicPlacement,
  type AnthropicRedactedThinkingBlock,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicTool,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  cacheControl,
  defaultMaxTokens,
  NON_STREAMING_MAX_TOKENS,
  placeAnthropic
} from "./plugins/anthropic.ts"
export {
  type BedrockCachePoint,
  type BedrockContentBlock,
  type BedrockConverseBody,
  type BedrockDocument,
  type BedrockImageBlock,
  type BedrockImageFormat,
  type BedrockInvokeBody,
  type BedrockMessage,
  type BedrockOptions,
  BedrockPlacement,
  type BedrockSystemBlock,
  type BedrockTool,
  type BedrockToolResultContent,
  invokeModelInput,
  placeBedrockConverse,
  placeBedrockInvoke
} from "./plugins/bedrock.ts"
export {
  cachePricesOf,
  type CommonOptions,
  type JsonSchemaObject,
  makePlugin,
  type OpenAIChatTool,
  placementLayer,
  type PlacementPlugin,
  type PluginResult,
  type PluginSpec,
  type ToolDefinition
} from "./plugins/common.ts"
export {
  type GeminiBody,
  type GeminiCacheCreate,
  type GeminiConfig,
  type GeminiContent,
  type GeminiFunctionCall,
  type GeminiFunctionResponse,
  type GeminiOptions,
  type GeminiPart,
  GeminiPlacement,
  type GeminiResult,
  type GeminiTool,
  placeGemini
} from "./plugins/gemini.ts"
export {
  type OpenAIBreakpoint,
  type OpenAIChatBody,
  type OpenAIChatImagePart,
  type OpenAIChatMessage,
  type OpenAIChatTextPart,
  type OpenAIChatToolCall,
  type OpenAIFunctionCall,
  type OpenAIFunctionCallOutput,
  type OpenAIInputImage,
  type OpenAIInputText,
  type OpenAIOptions,
  OpenAIPlacement,
  type OpenAIPromptCacheOptions,
  type OpenAIReasoningItem,
  type OpenAIResponsesBody,
  type OpenAIResponsesInput,
  OpenAIResponsesPlacement,
  type OpenAIResponsesTool,
  placeOpenAIChat,
  placeOpenAIResponses
} from "./plugins/openai.ts"
export {
  type CompatBody,
  type CompatImagePart,
  type CompatMessage,
  type CompatOptions,
  type CompatTextPart,
  OpenAICompatiblePlacement,
  placeOpenAICompatible,
  upstreamOf
} from "./plugins/openaiCompatible.ts"
export { placementLayerFor, placeWith, PLUGIN_NAMES, type PluginName, type PluginOptionsByName } from "./plugins/registry.ts"
export {
  decodeAiSdkReply,
  decodeAnthropicReply,
  decodeBedrockConverseReply,
  decodeGeminiReply,
  decodeOpenAIChatReply,
  decodeOpenAIResponsesReply
} from "./replies.ts"
export { type CleanMessage, cleanParts, type KeepReasoning } from "./rules/content.ts"
export { type BreakpointPlan, planBreakpoints, type PlannedBreakpoint, type PlanOptions } from "./rules/plan.ts"
export { prefixTokens } from "./rules/prefix.ts"
export { canonicalize, serializeBody } from "./rules/serialize.ts"
export {
  type SendOptions,
  type SimCost,
  type SimProvider,
  type SimResult,
  type SimSkip,
  type SimTrace,
  SimulatedRejection,
  type Simulator,
  SimulatorInputError,
  type SimulatorOptions,
  type SimWrite
} from "./simulation.ts"
export { type AnthropicNativeUsage, makeAnthropicSimulator } from "./simulators/anthropic.ts"
export { type BedrockNativeUsage, type BedrockSimUsage, makeBedrockSimulator } from "./simulators/bedrock.ts"
export { type GeminiNativeUsage, type GeminiSimulator, makeGeminiSimulator, type SimCachedContent } from "./simulators/gemini.ts"
export { makeSimulator, type PromptBlock, promptBlocks, type SimulatorFor } from "./simulators/index.ts"
export {
  makeOpenAISimulator,
  type OpenAIChatNativeUsage,
  type OpenAIResponsesNativeUsage,
  type OpenAISimUsage
} from "./simulators/openai.ts"
export {
  type AiSdkTextStream,
  type AnthropicMessageStream,
  streamAiSdkTurn,
  streamAnthropicTurn,
  type StreamedTurn,
  type StreamOptions
} from "./streaming.ts"
export {
  computeCost,
  type Cost,
  costOf,
  type CostOptions,
  decodeAiSdkResultUsage,
  decodeAiSdkUsage,
  decodeAnthropicUsage,
  decodeBedrockUsage,
  decodeGeminiUsage,
  decodeOpenAIChatUsage,
  decodeOpenAIResponsesUsage,
  decodeUsage,
  foldStreamUsage,
  type UsageFormat,
  usageFromStream
} from "./usage.ts"
