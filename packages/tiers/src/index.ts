/**
 * `@strata/tiers`: see README.md.
 */
export {}
