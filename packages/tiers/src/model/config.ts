/**
 * Tracker configuration: thresholds, the promotion policy and its parameters. The
 * schema is the boundary type (CLI flags, config files); `resolveTrackerConfig` fills defaults
 * and rejects settings the algorithms cannot work with.
 */
import { DEFAULT_THRESHOLDS, InvalidInput, type CachedTier } from "@strata/core"
import { Schema } from "effect"

/**
 * The promotion policies. `threshold` is the plain cascade, `gated` promotes only
 * into tiers that are rewritten anyway, `flux` is the mass-balance controller.
 */
export const PolicyName = Schema.Literals(["threshold", "gated", "flux"])

/**
 * The default promotion policy, chosen by `node bench/replay/run.mjs` (docs/benchmarks.md,
 * "replay"): in the default journal layout the three policies cost the same (within 0.1%) on both
 * replayed histories, and in the seed layout `flux` costs least relative to the oracle.
 */
export const DEFAULT_POLICY = "flux" as const
export type PolicyName = typeof PolicyName.Type

const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
const Positive = Schema.Number.check(Schema.isGreaterThan(0))

/** Parameters of the `flux` policy (defaults from the reference implementation's tuner). */
export const FluxParams = Schema.Struct({
  /** P: how easily items cross a membrane. */
  permeability: Schema.optionalKey(Positive),
  /** V_T: the token imbalance at which mass starts to dominate item counts. */
  thermalVoltage: Schema.optionalKey(Positive),
  /** A membrane fires when its flux reaches this value (one item moves). */
  deadband: Schema.optionalKey(Positive),
  /** Upper bound on passes over the membranes per update. */
  maxPasses: Schema.optionalKey(Count)
})
export type FluxParams = typeof FluxParams.Type

/**
 * Configuration of a stability tracker. Every field is optional.
 *
 * @example
 * ```ts
 * import { StabilityTracker } from "@strata/tiers"
 * const tracker = StabilityTracker.make({ policy: "gated", cacheTargetTokens: 1126 })
 * ```
 */
export const StabilityTrackerConfig = Schema.Struct({
  /** Consecutive unchanged appearances needed to enter each cached tier. Default L3=3, L2=6, L1=9, L0=12. */
  thresholds: Schema.optionalKey(
    Schema.Struct({
      L0: Schema.optionalKey(Count),
      L1: Schema.optionalKey(Count),
      L2: Schema.optionalKey(Count),
      L3: Schema.optionalKey(Count)
    })
  ),
  /** Promotion policy. Default `flux` (`DEFAULT_POLICY`). */
  policy: Schema.optionalKey(PolicyName),
  /** Smallest useful tier size in tokens (the provider's cache minimum, say); 0 turns anchoring off. Default 0. */
  cacheTargetTokens: Schema.optionalKey(Count),
  /** Newest history kept verbatim in active by `gated` and `flux`. Default: `cacheTargetTokens`. 0 keeps all history active. */
  historyWindowTokens: Schema.optionalKey(Count),
  flux: Schema.optionalKey(FluxParams)
})
export type StabilityTrackerConfig = typeof StabilityTrackerConfig.Type

/** A configuration with every default filled in. */
export interface ResolvedTrackerConfig {
  readonly thresholds: Readonly<Record<CachedTier, number>>
  readonly policy: PolicyName
  readonly cacheTargetTokens: number
  readonly historyWindowTokens: number
  readonly flux: {
    readonly permeability: number
    readonly thermalVoltage: number
    readonly deadband: number
    readonly maxPasses: number
  }
}

/** Flux defaults: P and V_T from the reference implementation's tuned parameters. */
export const DEFAULT_FLUX = {
  permeability: 1.616399379428934e-6,
  thermalVoltage: 98952.34312610888,
  deadband: 1,
  maxPasses: 1000
} as const

const decodeConfig = Schema.decodeUnknownResult(StabilityTrackerConfig)

/**
 * Fill defaults and validate. Throws `InvalidInput` (from `@strata/core`) when a field
 * has the wrong type or the thresholds are not strictly increasing from L3 to L0.
 *
 * @example
 * ```ts
 * import { resolveTrackerConfig } from "@strata/tiers"
 * resolveTrackerConfig({ policy: "gated", cacheTargetTokens: 1024 }).historyWindowTokens // 1024
 * ```
 */
export const resolveTrackerConfig = (config: StabilityTrackerConfig = {}): ResolvedTrackerConfig => {
  const decoded = decodeConfig(config)
  if (decoded._tag === "Failure") {
    throw new InvalidInput({ what: "tracker config", issue: decoded.failure.message })
  }
  const c = decoded.success
  const thresholds = { ...DEFAULT_THRESHOLDS, ...c.thresholds }
  if (!(thresholds.L3 >= 1 && thresholds.L3 < thresholds.L2 && thresholds.L2 < thresholds.L1 && thresholds.L1 < thresholds.L0)) {
    throw new InvalidInput({
      what: "tracker thresholds",
      issue: `need 1 <= L3 < L2 < L1 < L0, got L3=${thresholds.L3} L2=${thresholds.L2} L1=${thresholds.L1} L0=${thresholds.L0}`
    })
  }
  const cacheTargetTokens = c.cacheTargetTokens ?? 0
  return {
    thresholds,
    policy: c.policy ?? DEFAULT_POLICY,
    cacheTargetTokens,
    historyWindowTokens: c.historyWindowTokens ?? cacheTargetTokens,
    flux: { ...DEFAULT_FLUX, ...c.flux }
  }
}

/**
 * The serializable form of a resolved configuration (what `make` would accept to rebuild it).
 *
 * @example
 * ```ts
 * import { configOf, resolveTrackerConfig } from "@strata/tiers"
 * configOf(resolveTrackerConfig()).policy // "flux"
 * ```
 */
export const configOf = (config: ResolvedTrackerConfig): StabilityTrackerConfig => ({
  thresholds: { ...config.thresholds },
  policy: config.policy,
  cacheTargetTokens: config.cacheTargetTokens,
  historyWindowTokens: config.historyWindowTokens,
  flux: { ...config.flux }
})
