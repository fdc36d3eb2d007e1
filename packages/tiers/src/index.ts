/**
 * `@strata/tiers`: the stability tracker (pure core), its promotion policies, initial
 * placement, and Layers for core's `Tracker` service (in memory or persisted).
 */
export {
  configOf,
  DEFAULT_POLICY,
  FluxParams,
  PolicyName,
  type ResolvedTrackerConfig,
  resolveTrackerConfig,
  StabilityTrackerConfig
} from "./model/config.ts"
export { compareKeys } from "./model/order.ts"
export { type BreakCause, type PendingBreaks, type UpdateStart, UpdateWork } from "./model/work.ts"
export {
  decodeTrackerFile,
  decodeTrackerState,
  encodeTrackerFile,
  encodeTrackerState,
  TRACKER_FILE_FORMAT,
  TRACKER_SCHEMA_VERSION,
  TrackerFile,
  type TrackerFileProblem,
  type TrackerStateDecoded
} from "./persistence.ts"
export { fluxPolicy, membraneFlux } from "./policies/flux.ts"
export { gatedPolicy } from "./policies/gated.ts"
export { type PlacementShares, type PromotionPolicy, SEED_PLACEMENT } from "./policies/policy.ts"
export { thresholdPolicy } from "./policies/threshold.ts"
export { stateOf, toSnapshot } from "./snapshot.ts"
export { PROMOTION_POLICIES, StabilityTracker } from "./StabilityTracker.ts"
export { placeItems, type PlacementOptions } from "./tierPlacement.ts"
export {
  makeMemoryTracker,
  makeTrackerState,
  type MemoryTrackerOptions,
  type PersistentTrackerOptions,
  type StateTrackerOptions,
  TrackerLayer,
  type TrackerStateWarning
} from "./TrackerLayer.ts"
