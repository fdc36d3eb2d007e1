/**
 * `@strata/test-support`: what every package's tests share (private, never published).
 * `it.effect` and `layer(...)` for Effect tests on vitest, and temporary directories.
 * Subpaths: `/http` a recording HTTP server on 127.0.0.1, `/samples` code samples of
 * docs and JSDoc as tests, `/build` building a package's dist/ before tests spawn it.
 */
export { it, layer, runEffectTest, type EffectIt, type EffectTest } from "./effect.ts"
export { tempDir, tempDirs, type TempDir } from "./temp.ts"
