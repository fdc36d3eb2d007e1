/**
 * The `Placement` service: turns provider-neutral blocks and breakpoints into one
 * provider's request body, within that provider's caching rules. `@strata/providers`
 * has a layer per provider; core's default emits the seeds' OpenAI-compatible shape.
 */
import { Context, Schema, type Effect } from "effect"
import type { NeutralRequest } from "../domain/Block.ts"
import type { CachedTier } from "../domain/Tier.ts"

/** Where a breakpoint landed in the provider's body. */
export interface PlacedBreakpoint {
  readonly tier: CachedTier
  /** Human-readable location, e.g. `system[0]` or `messages[3].content[0]`. */
  readonly location: string
  /** Cumulative prefix tokens at this breakpoint. */
  readonly prefixTokens: number
  readonly ttl?: "5m" | "1h" | undefined
}

/** A breakpoint the plugin did not emit, and why. */
export interface DroppedBreakpoint {
  readonly tier: CachedTier
  readonly reason: string
}

/** A provider request ready to send. */
export interface PlacementResult {
  readonly provider: string
  /** The provider's native request body (JSON-serializable, with a fixed key order). */
  readonly body: unknown
  readonly breakpoints: ReadonlyArray<PlacedBreakpoint>
  readonly dropped: ReadonlyArray<DroppedBreakpoint>
}

/** A request cannot be expressed for this provider. */
export class PlacementError extends Schema.TaggedError<PlacementError>()("PlacementError", {
  provider: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot build a ${this.provider} request: ${this.reason}`
  }
}

export class Placement extends Context.Service<Placement, {
  readonly provider: string
  readonly place: (request: NeutralRequest) => Effect.Effect<PlacementResult, PlacementError>
}>()("@strata/core/Placement") {}
