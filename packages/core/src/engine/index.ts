export * from "./layer.ts"
export * from "./ContextEngine.ts"
export * from "./fromSession.ts"
export * from "./session.ts"
