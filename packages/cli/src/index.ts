/**
 * `@strata/cli`: the `strata` command-line tool. The binary is `dist/bin.js`; this module
 * exports the runner and the pure pieces (configuration, error diagnosis, styling) so
 * other tools and tests can use them.
 */
export { runCli, strata, type RunOptions } from "./cli.ts"
export {
  Budgets,
  CONFIG_VERSION,
  ConfigFile,
  type ConfigOverrides,
  type ConfigSource,
  DEFAULT_MODELS,
  DEFAULTS,
  ENV_VARS,
  formatSchemaIssue,
  initialConfigFile,
  MapSettings,
  modelServedBy,
  parseConfigFile,
  parseStoreSetting,
  PolicyName,
  POLICIES,
  ProviderName,
  PROVIDERS,
  redactStoreSetting,
  resolveConfig,
  type ResolvedConfig,
  SessionNameText,
  type StoreSetting,
  StoreSettingText,
  validateConfigFile
} from "./support/config.ts"
export { diagnose, ExitCode, UsageError, RepoNotFound, ConfigInvalid, ModelNotServed, StateError, ApiKeyMissing, Unavailable, type Diagnosis } from "./support/errors.ts"
export { makeStyle, colorEnabled, terminalSafe, renderProgress, Output, makeTestOutput, jsonDocument, JSON_SCHEMA_VERSION, type Style, type Progress, type OutputShape } from "./support/output.ts"
export { ignoresStrata, withStrataIgnored } from "./commands/init.ts"
export { configRows } from "./commands/config.ts"
export { describeBreakpoints, describeUsage } from "./run/assemble.ts"
export { hudLines, breakdownLines } from "./run/hud.ts"
export { storeChoice, sessionKey, loadForReading, loadForWriting, readOnlyCopy, type LoadedSession as LoadedCliSession, type SessionStoreChoice } from "./support/sessionState.ts"
export { makeEngine, providerPlacementLayer, simulatorFor, type Engine } from "./support/wiring.ts"
export {
  ListFilesInput,
  objectTool,
  ReadFileInput,
  REPO_TOOLS,
  SearchInput,
  stringProperty,
  TOOL_LIMITS,
  TOOL_NAMES,
  type ToolName
} from "./tools/definitions.ts"
export { globToRegExp } from "./tools/glob.ts"
export { isSecretFile, type RepoToolsOptions, runRepoTool, toolOutput } from "./tools/repoTools.ts"
