/**
 * The CLI's own tagged errors, and how any failure is shown to a user: one readable
 * line, a hint saying what to do, and an exit code (2 for a wrong command line, 1 for
 * everything else). Errors from other packages are recognised by their `_tag`.
 */
import { Cause, Schema } from "effect"

/** The command line is wrong in a way the parser cannot see (a bad value, a path outside the repo). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  reason: Schema.String,
  hint: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    return this.reason
  }
}

/** `--repo` does not name a readable directory. */
export class RepoNotFound extends Schema.TaggedError<RepoNotFound>()("RepoNotFound", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Repository ${this.path} ${this.reason}`
  }
}

/** `.strata/config.json` or a `STRATA_*` variable is malformed; `path` names the file or `$VAR`. */
export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", {
  path: Schema.String,
  issue: Schema.String
}) {
  override get message(): string {
    return `Invalid configuration in ${this.path}: ${this.issue}`
  }
}

/** A file the CLI owns could not be read or written. */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not use ${this.path}: ${this.reason}`
  }
}

/** `chat` was asked to send a request but the provider's credentials are not in the environment. */
export class ApiKeyMissing extends Schema.TaggedError<ApiKeyMissing>()("ApiKeyMissing", {
  provider: Schema.String,
  variables: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `No credentials for ${this.provider}: set ${this.variables.join(" or ")} to send real requests`
  }
}

/** A feature whose package has not been wired in this build. */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  feature: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.feature} is not available: ${this.reason}`
  }
}

/** The configured model is one another provider serves (the model table says whose it is). */
export class ModelNotServed extends Schema.TaggedError<ModelNotServed>()("ModelNotServed", {
  provider: Schema.String,
  model: Schema.String,
  /** The providers whose table lists the model. */
  servedBy: Schema.Array(Schema.String),
  /** Where the model was set: `--model`, `$STRATA_MODEL` or `.strata/config.json`. */
  setIn: Schema.String,
  /** The provider's default model. */
  defaultModel: Schema.String
}) {
  override get message(): string {
    return `Model ${this.model} (set in ${this.setIn}) is not served by provider ${this.provider}; the model table lists it under ${this.servedBy.join(", ")}`
  }
  get hint(): string {
    const drop = this.setIn === "--model" ? "drop --model" : `remove it from ${this.setIn}`
    return `${drop} to use ${this.provider}'s default model (${this.defaultModel}), pass --model with one of ${this.provider}'s models, or pass --provider ${this.servedBy[0] ?? this.provider}`
  }
}

/** Exit codes: 0 ok, 1 failure, 2 usage. 130 after Ctrl-C, as shells expect. */
export const ExitCode = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** What the user sees for one failure. */
export interface Diagnosis {
  readonly message: string
  readonly hint: string | undefined
  readonly exitCode: ExitCode
}

const USAGE_TAGS = new Set(["UsageError", "ModelNotServed", "RepoNotFound", "PathOutsideRepo", "FileNotFound", "BinaryFile", "SpecialFile", "InvalidInput"])

const HINTS: Readonly<Record<string, string>> = {
  RepoNotFound: "pass --repo PATH naming a directory (it defaults to the current directory)",
  PathOutsideRepo: "pass paths inside the repository, relative to its root (see --repo); a link under .strata/ that leads out must be removed (docs/errors.md)",
  SpecialFile: "only regular files can be read; leave the FIFO, socket or device out, or replace it with a file (docs/errors.md)",
  FileNotFound: "paths are relative to the repository root; `strata tree` lists the files",
  BinaryFile: "only text files can be put in context; leave this one out",
  FileTooLarge: "raise budgets.maxFileBytes in .strata/config.json (or $STRATA_MAX_FILE_BYTES), or leave the file out",
  ConfigInvalid: "fix that field, or run `strata init --force` to write a fresh .strata/config.json",
  ApiKeyMissing: "export the variable, or run with --dry-run to see the request without sending it",
  StateError: "check permissions on the .strata/ folder; deleting it starts a fresh session",
  FileWriteError: "check permissions and free space on the .strata/ folder",
  TrackerPersistError: "check permissions on the .strata/ folder; deleting it starts a fresh session",
  SymbolIndexError: "check that --repo points at a readable directory",
  PlacementError: "try another --provider, or fewer files",
  RequestTooLarge: "if the history is the large part, start a new conversation (remove .strata/session.json; the old history stays in .strata/sessions/); otherwise leave files out (--no-files), lower budgets.mapTokens, shorten the prompt, or set budgets.maxInputTokens if the model accepts more (docs/errors.md)",
  Unavailable: "run with --dry-run to see the requests without sending them",
  LlmHttpError: "the provider refused the request; --verbose shows the full error",
  LlmTimeout: "the provider did not answer in time: raise --timeout-ms (or timeoutMs in .strata/config.json, $STRATA_TIMEOUT_MS), or try again",
  LlmConnectionError: "check the network, or STRATA_BASE_URL if you set it",
  LlmMissingCredentials: "export the API key, or run with --dry-run",
  LlmSdkMissing: "install the provider's SDK next to Strata (see docs/providers.md)",
  LlmInvalidRequest: "the provider rejected the request body; --verbose shows the full error",
  LlmStreamError: "the reply stream broke off; nothing was recorded, so the same prompt can simply be sent again",
  LlmIncompleteReply: "the provider did not finish its reply (a cut stream or an empty or broken 200); nothing was recorded, so the same prompt can simply be sent again"
}

const firstLine = (text: string): string => text.split("\n").find((l) => l.trim() !== "")?.trim() ?? text.trim()

/**
 * Turn a failure into a one-line message, a hint and an exit code.
 *
 * @example
 * ```ts
 * import { diagnose, UsageError } from "@strata/cli"
 * diagnose(new UsageError({ reason: "--budget must be positive" })).exitCode // 2
 * ```
 */
export const diagnose = (error: unknown): Diagnosis => {
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined
  const raw = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  const ownHint = typeof error === "object" && error !== null && "hint" in error && typeof error.hint === "string" ? error.hint : undefined
  return {
    message: firstLine(raw === "" ? (tag ?? "unknown error") : raw),
    hint: ownHint ?? (tag === undefined ? undefined : HINTS[tag]),
    exitCode: tag !== undefined && USAGE_TAGS.has(tag) ? ExitCode.usage : ExitCode.failure
  }
}

/** The first failure of a cause, or its defect, for `diagnose`. */
export const primaryError = (cause: Cause.Cause<unknown>): unknown => Cause.squash(cause)
