// Kept for the replay folder (moving to its own package); the module is support/errors.ts.
export * from "./support/errors.ts"
