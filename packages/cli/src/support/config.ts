/**
 * The CLI's configuration: the `.strata/config.json` schema, the `STRATA_*` environment
 * variables, and the pure merge that applies the precedence flags > env > file > defaults.
 * Loading and writing the file are Effects; everything else is plain data.
 */
import { Effect, Result, Schema } from "effect"
import { SessionName } from "@strata/core"
import { findModel, PROVIDER_IDS, type ProviderId } from "@strata/providers"
import { ConfigInvalid, ModelNotServed } from "./errors.ts"
import { DEFAULT_POLICY, PolicyName } from "@strata/tiers"
import { redactSecrets } from "@strata/store"

/** Providers the CLI can build requests for (one placement plugin each). */
export const PROVIDERS = ["anthropic", "bedrock", "openai", "gemini", "openai-compatible", "ai-sdk"] as const
export const ProviderName = Schema.Literals(PROVIDERS)
export type ProviderName = typeof ProviderName.Type

/** Promotion policies of the stability tracker (the tiers package's `PolicyName`). */
export { PolicyName }
export const POLICIES = PolicyName.literals

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Token and size budgets. Every field is optional in the file. */
export const Budgets = Schema.Struct({
  /** Token budget of the repository map (legend, file tree, symbol blocks); absent means derived from the model's input limit. */
  mapTokens: Schema.optionalKey(PositiveInt),
  /** The model's input limit; absent means the model table's (set it for a model the table does not know). */
  maxInputTokens: Schema.optionalKey(PositiveInt),
  /** Largest file (bytes) that may be added to context. */
  maxFileBytes: Schema.optionalKey(PositiveInt),
  /** History tokens that trigger compaction; 0 turns compaction off. */
  compactionTokens: Schema.optionalKey(NonNegativeInt),
  /** Minimum tokens per cached tier the `gated` policy keeps (0: off). */
  cacheTargetTokens: Schema.optionalKey(NonNegativeInt)
})
export type Budgets = typeof Budgets.Type

/**
 * What the repository map covers and how a map over its budget chooses. Patterns are in
 * `.gitignore` syntax, relative to the repository root.
 */
export const MapSettings = Schema.Struct({
  /** Only files matching one of these are in the map (default: every file git lists). */
  include: Schema.optionalKey(Schema.Array(Schema.NonEmptyString)),
  /** Files matching one of these are left out of the map (benchmarks, fixtures, generated code). */
  exclude: Schema.optionalKey(Schema.Array(Schema.NonEmptyString)),
  /**
   * Which blocks a map over its budget keeps: `references` (default; the most referenced
   * files, an order that stays put) or `focus` (ranked around the files in context).
   */
  ranking: Schema.optionalKey(Schema.Literals(["references", "focus"]))
})
export type MapSettings = typeof MapSettings.Type

/**
 * Where session state is kept: `file` (files under `.strata/state/`, the default), a
 * folder inside the repository for the file store, `memory` (nothing kept between
 * commands) or a `postgres://` / `postgresql://` URL. Pure.
 *
 * @example
 * ```ts
 * import { parseStoreSetting } from "@strata/cli"
 * parseStoreSetting("postgres://strata@db/strata") // { kind: "postgres", url: "postgres://strata@db/strata" }
 * parseStoreSetting(".strata/shared") // { kind: "file", directory: ".strata/shared" }
 * ```
 */
export const parseStoreSetting = (setting: string): StoreSetting | undefined => {
  const s = setting.trim()
  if (s === "" || s === "file") return { kind: "file" }
  if (s === "memory") return { kind: "memory" }
  if (/^postgres(ql)?:\/\/./.test(s)) return { kind: "postgres", url: s }
  // Anything else with a scheme is a typo of a URL, not a folder.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) || s.includes("\0")) return undefined
  // A folder is written as a path (`.strata/shared`, `./state`): a bare word such as
  // `garbage` or `postgress` is a mistyped setting, not a folder to create.
  // A ":" or "@" is a mistyped URL (`postgres//u:pw@db`), not a folder.
  if (!s.includes("/") || /[:@]/.test(s)) return undefined
  return { kind: "file", directory: s }
}

/**
 * A store setting for messages and `strata config`: every credential form of a database
 * URL hidden (`user:password@`, `?password=`, a mistyped scheme too). Pure.
 *
 * @example
 * ```ts
 * import { redactStoreSetting } from "@strata/cli"
 * redactStoreSetting("postgres://strata:hunter2@db/strata") // "postgres://strata:***@db/strata"
 * redactStoreSetting("postgres://strata@db/strata?password=hunter2") // "postgres://strata@db/strata?password=***"
 * ```
 */
export const redactStoreSetting = (setting: string): string => redactSecrets(setting)

/** A store setting, parsed. */
export type StoreSetting =
  | { readonly kind: "file"; readonly directory?: string }
  | { readonly kind: "memory" }
  | { readonly kind: "postgres"; readonly url: string }

/** A `store` value: one `parseStoreSetting` accepts. */
export const StoreSettingText = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      parseStoreSetting(s) !== undefined ||
      `Expected "file", "memory", a folder inside the repository written as a path (such as .strata/shared) or a postgres:// URL, got ${JSON.stringify(redactSecrets(s))}`
  )
)

/** A session name: letters, digits, `.`, `_`, `-`, not starting with a dot, so never a path like `../../x`. */
export const SessionNameText = SessionName

/** The current config file format version. */
export const CONFIG_VERSION = 1

/**
 * `.strata/config.json`. Unknown keys are rejected so a typo is reported, not ignored.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ConfigFile } from "@strata/cli"
 * Schema.decodeUnknownSync(ConfigFile)({ version: 1, provider: "openai", model: "gpt-4o" })
 * ```
 */
export const ConfigFile = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  version: Schema.Literal(CONFIG_VERSION),
  provider: Schema.optionalKey(ProviderName),
  model: Schema.optionalKey(Schema.NonEmptyString),
  policy: Schema.optionalKey(PolicyName),
  budgets: Schema.optionalKey(Budgets),
  /** The repository map: `include`/`exclude` patterns and the `ranking` of a map over its budget. */
  map: Schema.optionalKey(MapSettings),
  /** Prompts folder (system.md, system_extra.md, system_reminder.md), relative to the repository. */
  prompts: Schema.optionalKey(Schema.NonEmptyString),
  /** How long `chat` waits for the provider: for the response to start, and between stream events (ms). */
  timeoutMs: Schema.optionalKey(PositiveInt),
  /** Where session state is kept (see `parseStoreSetting`); default the file store under `.strata/state/`. */
  store: Schema.optionalKey(StoreSettingText),
  /** The session's name in the store (default `cli`). */
  session: Schema.optionalKey(SessionNameText),
  /** Let chat's read-only tools read gitignored and secret files (`.env*`, `*.pem`, ...). Default false. */
  allowIgnored: Schema.optionalKey(Schema.Boolean)
})
export type ConfigFile = typeof ConfigFile.Type

/** Where a resolved value came from. */
export type ConfigSource = "flag" | "env" | "file" | "default"

/** The configuration every command runs with: every field present. */
export interface ResolvedConfig {
  readonly provider: ProviderName
  readonly model: string
  readonly policy: PolicyName
  readonly budgets: {
    /** null: derived from the model's input limit. */
    readonly mapTokens: number | null
    /** null: the model table's limit. */
    readonly maxInputTokens: number | null
    readonly maxFileBytes: number
    readonly compactionTokens: number
    readonly cacheTargetTokens: number
  }
  /** The repository map's files and ranking (`.strata/config.json` only). */
  readonly map: {
    readonly include: ReadonlyArray<string>
    readonly exclude: ReadonlyArray<string>
    readonly ranking: "references" | "focus"
  }
  /** Prompts folder relative to the repository; null means the bundled defaults. */
  readonly prompts: string | null
  /** How long `chat` waits for the provider to start answering, and between stream events (ms). */
  readonly timeoutMs: number
  /** Where session state is kept (`parseStoreSetting`'s text). */
  readonly store: string
  /** The session's name in the store. */
  readonly session: string
  /** Where each value came from, by dotted key (`provider`, `budgets.mapTokens`, ...). */
  readonly sources: Readonly<Record<string, ConfigSource>>
}

/** A model each provider is tried with when none is configured. */
export const DEFAULT_MODELS: Readonly<Record<ProviderName, string>> = {
  anthropic: "claude-sonnet-5",
  bedrock: "anthropic.claude-sonnet-5-v1:0",
  openai: "gpt-5.4",
  gemini: "gemini-2.5-flash",
  "openai-compatible": "anthropic/claude-sonnet-5",
  "ai-sdk": "claude-sonnet-5"
}

export const DEFAULTS = {
  provider: "anthropic" as ProviderName,
  policy: DEFAULT_POLICY satisfies PolicyName as PolicyName,
  budgets: { mapTokens: null, maxInputTokens: null, maxFileBytes: 1024 * 1024, compactionTokens: 24_000, cacheTargetTokens: 0 },
  map: { include: [] as ReadonlyArray<string>, exclude: [] as ReadonlyArray<string>, ranking: "references" as "references" | "focus" },
  prompts: null,
  timeoutMs: 60_000,
  store: "file",
  session: "cli"
} as const

/** The providers whose model table lists `model` (empty when no table knows it). */
const modelTableProviders = (model: string): Array<ProviderId> => PROVIDER_IDS.filter((p) => findModel(p, model) !== undefined)

/**
 * Whether `provider` serves `model`. Gateways (`openai-compatible`, `ai-sdk`) route any id;
 * a direct provider serves the models its table lists, and any id no table knows (a model
 * newer than the table), but not another provider's model. Pure.
 *
 * @example
 * ```ts
 * import { modelServedBy } from "@strata/cli"
 * modelServedBy("openai", "gpt-4.1") // true
 * modelServedBy("openai", "claude-sonnet-5") // false
 * modelServedBy("ai-sdk", "claude-sonnet-5") // true
 * ```
 */
export const modelServedBy = (provider: ProviderName, model: string): boolean => {
  if (provider === "openai-compatible" || provider === "ai-sdk") return true
  const owners = modelTableProviders(model)
  return owners.length === 0 || owners.includes(provider)
}

/** Values given as command-line flags (only the ones the user passed). */
export interface ConfigOverrides {
  readonly provider?: ProviderName | undefined
  readonly model?: string | undefined
  readonly policy?: PolicyName | undefined
  readonly mapTokens?: number | undefined
  readonly prompts?: string | undefined
  readonly timeoutMs?: number | undefined
  /** The session's name (`chat --session NAME`). */
  readonly session?: string | undefined
}

/** Environment variables the CLI reads, by config key. */
export const ENV_VARS = {
  repo: "STRATA_REPO",
  provider: "STRATA_PROVIDER",
  model: "STRATA_MODEL",
  policy: "STRATA_POLICY",
  mapTokens: "STRATA_MAP_TOKENS",
  maxInputTokens: "STRATA_MAX_INPUT_TOKENS",
  maxFileBytes: "STRATA_MAX_FILE_BYTES",
  compactionTokens: "STRATA_COMPACTION_TOKENS",
  cacheTargetTokens: "STRATA_CACHE_TARGET_TOKENS",
  prompts: "STRATA_PROMPTS",
  timeoutMs: "STRATA_TIMEOUT_MS",
  store: "STRATA_STORE",
  session: "STRATA_SESSION"
} as const

/** A one-line "field: problem" from a Schema error message ("Expected x\n  at ["a"]["b"]"). */
export const formatSchemaIssue = (message: string): string => {
  const lines = message.split("\n")
  const atLine = lines.find((l) => l.trim().startsWith("at "))
  const what = lines.filter((l) => !l.trim().startsWith("at ")).map((l) => l.trim()).filter(Boolean).join("; ")
  if (atLine === undefined) return what
  const path = [...atLine.matchAll(/\[("(?:[^"\\]|\\.)*"|\d+)\]/g)]
    .map((m) => (m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : `[${m[1]}]`))
    .join(".")
    .replace(/\.\[/g, "[")
  return `${path}: ${what}`
}

const decodeFile = Schema.decodeUnknownResult(ConfigFile)

/**
 * Parse the text of a config file. Pure; the error names the bad field.
 *
 * @example
 * ```ts
 * import { parseConfigFile } from "@strata/cli"
 * parseConfigFile('{"version":1,"policy":"gated"}', ".strata/config.json").policy // "gated"
 * ```
 */
export const parseConfigFile = (text: string, path: string): ConfigFile => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ConfigInvalid({ path, issue: `not valid JSON (${error instanceof Error ? error.message : String(error)})` })
  }
  const decoded = decodeFile(json, { onExcessProperty: "error" })
  if (Result.isFailure(decoded)) throw new ConfigInvalid({ path, issue: formatSchemaIssue(decoded.failure.message) })
  return decoded.success
}

const envInt = (env: Readonly<Record<string, string | undefined>>, name: string, min: number): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  // Plain decimal digits only, within a safe integer: `0x10`, `1e3` and
  // 99999999999999999999 are refused as the config file refuses them.
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(n) || n < min) {
    throw new ConfigInvalid({ path: `$${name}`, issue: `expected an integer >= ${min}, got ${JSON.stringify(raw)}` })
  }
  return n
}

const envChoice = <T extends string>(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  choices: ReadonlyArray<T>
): T | undefined => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  if (!(choices as ReadonlyArray<string>).includes(raw)) {
    throw new ConfigInvalid({ path: `$${name}`, issue: `expected one of ${choices.join(", ")}, got ${JSON.stringify(raw)}` })
  }
  return raw as T
}

/** An environment value decoded with `schema`; a bad one is `ConfigInvalid` naming the variable, before anything is written. */
const envChecked = (env: Readonly<Record<string, string | undefined>>, name: string, schema: Schema.Codec<string>): string | undefined => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  const decoded = Schema.decodeUnknownResult(schema)(raw)
  if (Result.isFailure(decoded)) throw new ConfigInvalid({ path: `$${name}`, issue: formatSchemaIssue(decoded.failure.message) })
  return decoded.success
}

/** A flag's value decoded with `schema`; a bad one is `ConfigInvalid` naming the flag. */
const checkedFlag = (flag: string, raw: string, schema: Schema.Codec<string>): string => {
  const decoded = Schema.decodeUnknownResult(schema)(raw)
  if (Result.isFailure(decoded)) throw new ConfigInvalid({ path: flag, issue: formatSchemaIssue(decoded.failure.message) })
  return decoded.success
}

const envString = (env: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const raw = env[name]
  return raw === undefined || raw.trim() === "" ? undefined : raw
}

/**
 * Merge flags, environment, file and defaults (in that order of precedence). A model set
 * alongside one provider does not carry over to another set at a higher level: the new
 * provider's default model applies. Pure; throws `ConfigInvalid` naming the variable when
 * an environment value is malformed, `ModelNotServed` when the model is another provider's.
 *
 * @example
 * ```ts
 * import { resolveConfig } from "@strata/cli"
 * const config = resolveConfig({
 *   flags: { model: "gpt-4.1" },
 *   env: { STRATA_PROVIDER: "openai" },
 *   file: { version: 1, provider: "anthropic", policy: "gated" }
 * })
 * // config.provider === "openai" (env beats file), config.model === "gpt-4.1" (flag),
 * // config.policy === "gated" (file), config.sources.provider === "env"
 * ```
 */
export const resolveConfig = (input: {
  readonly flags?: ConfigOverrides
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly file?: ConfigFile | undefined
}): ResolvedConfig => {
  const flags = input.flags ?? {}
  const env = input.env ?? {}
  const file = input.file
  const sources: Record<string, ConfigSource> = {}
  const pick = <T>(key: string, flag: T | undefined, fromEnv: T | undefined, fromFile: T | undefined, fallback: T): T => {
    if (flag !== undefined) {
      sources[key] = "flag"
      return flag
    }
    if (fromEnv !== undefined) {
      sources[key] = "env"
      return fromEnv
    }
    if (fromFile !== undefined) {
      sources[key] = "file"
      return fromFile
    }
    sources[key] = "default"
    return fallback
  }
  const providers = { flag: flags.provider, env: envChoice(env, ENV_VARS.provider, PROVIDERS), file: file?.provider }
  const provider = pick("provider", providers.flag, providers.env, providers.file, DEFAULTS.provider)
  // A model is kept only where it was set for the provider in force: one set at a level
  // whose provider was then overridden (`--provider openai` over a file's Claude model)
  // gives way to the new provider's default.
  const providerAt = (level: "flag" | "env" | "file"): ProviderName =>
    (level === "flag" ? providers.flag : undefined) ?? (level !== "file" ? providers.env : undefined) ?? providers.file ?? DEFAULTS.provider
  const models = { flag: flags.model, env: envString(env, ENV_VARS.model), file: file?.model }
  const keep = (level: "flag" | "env" | "file") => (providerAt(level) === provider ? models[level] : undefined)
  const model = pick("model", keep("flag"), keep("env"), keep("file"), DEFAULT_MODELS[provider])
  const source = sources["model"]
  if (source !== "default" && !modelServedBy(provider, model)) {
    throw new ModelNotServed({
      provider,
      model,
      servedBy: modelTableProviders(model),
      setIn: source === "flag" ? "--model" : source === "env" ? `$${ENV_VARS.model}` : ".strata/config.json",
      defaultModel: DEFAULT_MODELS[provider]
    })
  }
  const policy = pick("policy", flags.policy, envChoice(env, ENV_VARS.policy, POLICIES), file?.policy, DEFAULTS.policy)
  const b = file?.budgets
  const mapTokens = pick<number | null>("budgets.mapTokens", flags.mapTokens, envInt(env, ENV_VARS.mapTokens, 1), b?.mapTokens, DEFAULTS.budgets.mapTokens)
  const maxInputTokens = pick<number | null>("budgets.maxInputTokens", undefined, envInt(env, ENV_VARS.maxInputTokens, 1), b?.maxInputTokens, DEFAULTS.budgets.maxInputTokens)
  const maxFileBytes = pick("budgets.maxFileBytes", undefined, envInt(env, ENV_VARS.maxFileBytes, 1), b?.maxFileBytes, DEFAULTS.budgets.maxFileBytes)
  const compactionTokens = pick("budgets.compactionTokens", undefined, envInt(env, ENV_VARS.compactionTokens, 0), b?.compactionTokens, DEFAULTS.budgets.compactionTokens)
  const cacheTargetTokens = pick("budgets.cacheTargetTokens", undefined, envInt(env, ENV_VARS.cacheTargetTokens, 0), b?.cacheTargetTokens, DEFAULTS.budgets.cacheTargetTokens)
  const m = file?.map
  const map = {
    include: pick<ReadonlyArray<string>>("map.include", undefined, undefined, m?.include, DEFAULTS.map.include),
    exclude: pick<ReadonlyArray<string>>("map.exclude", undefined, undefined, m?.exclude, DEFAULTS.map.exclude),
    ranking: pick<"references" | "focus">("map.ranking", undefined, undefined, m?.ranking, DEFAULTS.map.ranking)
  }
  const prompts = pick<string | null>("prompts", flags.prompts, envString(env, ENV_VARS.prompts), file?.prompts, DEFAULTS.prompts)
  const timeoutMs = pick("timeoutMs", flags.timeoutMs, envInt(env, ENV_VARS.timeoutMs, 1), file?.timeoutMs, DEFAULTS.timeoutMs)
  const store = pick("store", undefined, envChecked(env, ENV_VARS.store, StoreSettingText), file?.store, DEFAULTS.store)
  const sessionFlag = flags.session === undefined ? undefined : checkedFlag("--session", flags.session, SessionName)
  const session = pick("session", sessionFlag, envChecked(env, ENV_VARS.session, SessionName), file?.session, DEFAULTS.session)
  return { provider, model, policy, budgets: { mapTokens, maxInputTokens, maxFileBytes, compactionTokens, cacheTargetTokens }, map, prompts, timeoutMs, store, session, sources }
}

/** The file `strata init` writes: every field explicit, so a user sees what they can change. */
export const initialConfigFile = (config: ResolvedConfig): ConfigFile => ({
  version: CONFIG_VERSION,
  provider: config.provider,
  model: config.model,
  policy: config.policy,
  budgets: {
    ...(config.budgets.mapTokens === null ? {} : { mapTokens: config.budgets.mapTokens }),
    ...(config.budgets.maxInputTokens === null ? {} : { maxInputTokens: config.budgets.maxInputTokens }),
    maxFileBytes: config.budgets.maxFileBytes,
    compactionTokens: config.budgets.compactionTokens,
    cacheTargetTokens: config.budgets.cacheTargetTokens
  },
  map: { include: config.map.include, exclude: config.map.exclude, ranking: config.map.ranking },
  prompts: config.prompts ?? ".strata/prompts",
  timeoutMs: config.timeoutMs
})

/** Decode a value a command is about to write, so a bad file is never written. */
export const validateConfigFile = (value: unknown): Effect.Effect<ConfigFile, ConfigInvalid> =>
  Effect.try({
    try: () => parseConfigFile(JSON.stringify(value), ".strata/config.json"),
    catch: (e) => (e instanceof ConfigInvalid ? e : new ConfigInvalid({ path: ".strata/config.json", issue: String(e) }))
  })
