export * from "./Tracker.ts"
export * from "./SymbolIndex.ts"
export * from "./Placement.ts"
export * from "./StateStore.ts"
