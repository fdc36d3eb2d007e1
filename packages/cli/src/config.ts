// Kept for the replay folder (moving to its own package); the module is support/config.ts.
export * from "./support/config.ts"
