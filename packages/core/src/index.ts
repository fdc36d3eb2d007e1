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
