/**
 * `@strata/providers`: see README.md.
 */
export {}
