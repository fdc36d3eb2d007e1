/**
 * Flags shared by commands. `--repo`, `--json` and `--verbose` are global settings: they
 * are accepted anywhere on the command line, by every command. `--provider`, `--model`,
 * `--policy` and `--dry-run` belong to the commands that assemble requests.
 */
import { Option } from "effect"
import { Flag, GlobalFlag } from "effect/cli"
import { PolicyName, POLICIES, PROVIDERS, type ProviderName } from "./config.ts"

/** `--repo PATH`: the repository to work on (default: `$STRATA_REPO`, then the current directory). */
export const RepoFlag = GlobalFlag.Setting("repo")({
  flag: Flag.String("repo").pipe(
    Flag.withMetavar("PATH"),
    Flag.withDescription("Repository root to work on (default: $STRATA_REPO, then the current directory)"),
    Flag.optional
  )
})

/** `--json`: machine-readable output on stdout. */
export const JsonFlag = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(Flag.withDescription("Print machine-readable JSON on stdout"), Flag.withDefault(false))
})

/** `--verbose`: print the full cause of a failure, and extra detail. */
export const VerboseFlag = GlobalFlag.Setting("verbose")({
  flag: Flag.Boolean("verbose").pipe(Flag.withDescription("Show full error causes and extra detail"), Flag.withDefault(false))
})

export const GLOBAL_FLAGS = [RepoFlag, JsonFlag, VerboseFlag] as const

export const providerFlag = Flag.Literals("provider", PROVIDERS).pipe(
  Flag.withDescription(`Provider to build the request for: ${PROVIDERS.join(", ")} (default from config)`),
  Flag.optional
)

export const modelFlag = Flag.String("model").pipe(Flag.withDescription("Model id (default from config, per provider)"), Flag.optional)

export const policyFlag = Flag.Literals("policy", POLICIES).pipe(
  Flag.withDescription(`Tier promotion policy: ${POLICIES.join(", ")} (default from config)`),
  Flag.optional
)

export const dryRunFlag = Flag.Boolean("dry-run").pipe(
  Flag.withDescription("Do everything except change session state in .strata/ (and send nothing)"),
  Flag.withDefault(false)
)

/** `Option<A>` to `A | undefined`, for config overrides. */
export const opt = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

export type { PolicyName, ProviderName }
