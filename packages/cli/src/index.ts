/**
 * `@strata/cli`: see README.md.
 */
export {}
