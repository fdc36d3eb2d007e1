/**
 * `@strata/tiers`: the stability tracker (pure core), its promotion policies, initial
 * placement, and Layers for core's `Tracker` service (in memory or persisted).
 */
export * from "./model/config.ts"
export * from "./StabilityTracker.ts"
export { placeItems, type PlacementOptions } from "./tierPlacement.ts"
export { SEED_PLACEMENT, type PlacementShares, type PromotionPolicy } from "./policies/policy.ts"
export { thresholdPolicy } from "./policies/threshold.ts"
export { gatedPolicy } from "./policies/gated.ts"
export { fluxPolicy, membraneFlux } from "./policies/flux.ts"
export { UpdateWork, type BreakCause, type PendingBreaks, type UpdateStart } from "./model/work.ts"
export { compareKeys } from "./model/order.ts"
export { toSnapshot, stateOf } from "./snapshot.ts"
export * from "./persistence.ts"
export * from "./TrackerLayer.ts"
