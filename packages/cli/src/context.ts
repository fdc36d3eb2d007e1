// Kept for the replay folder (moving to its own package); the module is support/context.ts.
export * from "./support/context.ts"
