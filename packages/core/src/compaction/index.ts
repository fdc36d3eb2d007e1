export * from "./algorithm.ts"
export * from "./HistoryCompactor.ts"
