export * from "./bpe.ts"
export * from "./TokenCounter.ts"
export * from "./Tokenizer.ts"
