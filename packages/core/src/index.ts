/**
 * `@strata/core`: domain schemas, tokens, services and the context engine.
 * Effect users may also import `@strata/core/effect` for the services and layers.
 */
export * from "./domain/index.ts"
export * from "./tokens/index.ts"
export * from "./services/index.ts"
export * from "./assembly/headers.ts"
export * from "./compaction/index.ts"
export * from "./session/index.ts"
export * from "./xml/index.ts"
export * from "./context/FileContext.ts"
export * from "./context/requestBudget.ts"
export type { ContextManagerShape, SessionState, SessionWriteError, ShedReport, TruncationResult } from "./context/ContextManager.ts"
export type { FlatRequest, FlatRequestInput } from "./context/flatRequest.ts"
export * from "./prompts/index.ts"
export * from "./assembly/flat.ts"
export * from "./engine/ContextEngine.ts"
export type { ContextEngineOptions, EngineServices } from "./engine/layer.ts"
export * from "./assembly/tiered.ts"
export * from "./pipeline/state.ts"
export * from "./pipeline/report.ts"
export * from "./breakdown/index.ts"
export * from "./hud/index.ts"
