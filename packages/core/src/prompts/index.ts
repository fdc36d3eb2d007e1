export * from "./Prompts.ts"
