/**
 * The XML chunk context builder (docs/xml-chunk-builder.md): agent memory chunks rendered as
 * role-tagged XML messages, with the seed's public API.
 */
export * from "./escape.ts"
export * from "./MemoryState.ts"
export * from "./ContextMessage.ts"
export * from "./tokenizer.ts"
export * from "./renderers.ts"
export * from "./ContextBuilder.ts"
export * from "./nativeHistory.ts"
export * from "./ContextBuilderService.ts"
