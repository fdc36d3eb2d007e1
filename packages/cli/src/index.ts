/**
 * `@strata/cli`: the `strata` command-line tool. The binary is `dist/bin.js`; this module
 * exports the runner and the pure pieces (configuration, error diagnosis, styling) so
 * other tools and tests can use them.
 */
export { runCli, strata, type RunOptions } from "./cli.ts"
export * from "./support/config.ts"
export { diagnose, ExitCode, UsageError, RepoNotFound, ConfigInvalid, ModelNotServed, StateError, ApiKeyMissing, Unavailable, type Diagnosis } from "./support/errors.ts"
export { makeStyle, colorEnabled, terminalSafe, renderProgress, Output, makeTestOutput, jsonDocument, JSON_SCHEMA_VERSION, type Style, type Progress, type OutputShape } from "./support/output.ts"
export { ignoresStrata, withStrataIgnored } from "./commands/init.ts"
export { configRows } from "./commands/config.ts"
export { describeBreakpoints, describeUsage } from "./run/assemble.ts"
export { hudLines, breakdownLines } from "./run/hud.ts"
export { storeChoice, sessionKey, loadForReading, loadForWriting, readOnlyCopy, type LoadedSession as LoadedCliSession, type SessionStoreChoice } from "./support/sessionState.ts"
export { makeEngine, providerPlacementLayer, simulatorFor, type Engine } from "./support/wiring.ts"
export * from "./tools/index.ts"
