/**
 * The AI SDK cache middleware (`strataCache`), its breakpoint planner, and the AI SDK
 * prompt's rendering as native bodies for the simulators.
 */
export { nativeBodyOf, promptBlocks, type NativeTarget, type Prompt, type PromptBlock, type PromptMessage, type PromptPart, type PromptProviderOptions } from "./prompt.ts"
export { makeCachePlanner, type CachePlan, type CachePlanner, type CachePlannerOptions, type MarkerRole, type PlannedMarker } from "./planner.ts"
export * from "./strataCache.ts"
