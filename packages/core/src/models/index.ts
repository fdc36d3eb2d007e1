export * from "./modelTable.ts"
