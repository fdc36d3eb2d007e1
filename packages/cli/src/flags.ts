// Kept for the replay folder (moving to its own package); the module is support/flags.ts.
export * from "./support/flags.ts"
