export * from "./encoding.ts"
export * from "./TokenCounter.ts"
export * from "./Tokenizer.ts"
