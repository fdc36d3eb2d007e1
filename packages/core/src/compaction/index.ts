export * from "./algorithm.ts"
export * from "./HistoryCompactor.ts"
export * from "./prompt.ts"
export * from "./promiseModel.ts"
