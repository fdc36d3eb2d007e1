/**
 * `@strata/core/effect`: the Effect API (services, layers, stages).
 */
export * from "./domain/index.ts"
export * from "./tokens/index.ts"
export * from "./services/index.ts"
export * from "./assembly/headers.ts"
export * from "./compaction/index.ts"
export * from "./session/index.ts"
export * from "./xml/index.ts"
export * from "./context/index.ts"
export * from "./prompts/index.ts"
export * from "./assembly/flat.ts"
export * from "./engine/index.ts"
export * from "./assembly/tiered.ts"
export * from "./pipeline/index.ts"
export * from "./pipeline/assemble.ts"
export * from "./breakdown/index.ts"
export * from "./hud/index.ts"
