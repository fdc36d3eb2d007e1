/**
 * `@strata/providers`: cache-placement plugins per provider, the rules they enforce,
 * the dated model/price table, usage decoding and cost, prompt-cache simulators and
 * LLM clients (see README.md).
 */
export * from "./models.ts"
export * from "./usage.ts"
export * from "./rules/index.ts"
export * from "./plugins/index.ts"
export * from "./simulators/index.ts"
export * from "./clients/index.ts"
export * from "./miss/index.ts"
export * from "./middleware/index.ts"
export * from "./replies.ts"
export * from "./streaming.ts"
