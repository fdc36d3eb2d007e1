export * from "./record.ts"
export * from "./MemoryStateStore.ts"
export * from "./turn.ts"
export * from "./history.ts"
