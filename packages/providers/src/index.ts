/**
 * `@strata/providers`: cache-placement plugins per provider, the dated model/price
 * table, usage decoding and cost (see README.md).
 */
export * from "./models.ts"
export * from "./usage.ts"
export * from "./simulators/index.ts"
