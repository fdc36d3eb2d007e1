export * from "./layer.ts"
export * from "./ContextEngine.ts"
