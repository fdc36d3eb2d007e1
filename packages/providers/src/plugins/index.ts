/**
 * The provider plugins: one pure function and one `Placement` Layer per target.
 */
export * from "./common.ts"
export * from "./anthropic.ts"
export * from "./bedrock.ts"
export * from "./openai.ts"
export * from "./gemini.ts"
export * from "./openaiCompatible.ts"
export * from "./aiSdk.ts"
export * from "./registry.ts"
