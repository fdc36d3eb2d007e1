export * from "./SessionStore.ts"
