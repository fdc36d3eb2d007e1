/**
 * The rules every provider plugin enforces, exported for plugins written outside
 * this package.
 */
export * from "./content.ts"
export * from "./prefix.ts"
export * from "./plan.ts"
export * from "./serialize.ts"
