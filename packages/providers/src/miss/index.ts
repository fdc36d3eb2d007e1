/**
 * Miss explanations: two consecutive request bodies compared block by block, and the
 * reason the second read less from the prompt cache than the first left there.
 */
export * from "./blocks.ts"
export * from "./explain.ts"
