export * from "./FileContext.ts"
export * from "./requestBudget.ts"
export * from "./ContextManager.ts"
export * from "./flatRequest.ts"
