export * from "./FileContext.ts"
export * from "./budget.ts"
export * from "./ContextManager.ts"
export * from "./flatRequest.ts"
