/**
 * `@strata/symbols`: see README.md.
 */
export {}
