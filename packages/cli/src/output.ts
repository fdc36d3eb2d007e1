// Kept for the replay folder (moving to its own package); the module is support/output.ts.
export * from "./support/output.ts"
