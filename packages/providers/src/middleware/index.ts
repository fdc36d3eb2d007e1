/**
 * The AI SDK cache middleware (`strataCache`), its breakpoint planner, and the AI SDK
 * prompt's rendering as native bodies for the simulators.
 */
export { nativeBodyOf, aiSdkPromptBlocks, type NativeTarget, type Prompt, type AiSdkPromptBlock, type PromptMessage, type PromptPart, type PromptProviderOptions, type PromptTool } from "./prompt.ts"
export { makeCachePlanner, type CachePlan, type CachePlanner, type CachePlannerOptions, type MarkerRole, type PlannedMarker } from "./planner.ts"
export * from "./strataCache.ts"
