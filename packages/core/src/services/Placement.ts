/**
 * The `Placement` service: turns provider-neutral blocks and breakpoints into one
 * provider's request body, within that provider's caching rules. `@strata/providers`
 * has a layer per provider; core's default emits an OpenAI-compatible shape with `cache_control`.
 */
import { Context, Schema, type Effect } from "effect"
import type { NeutralRequest } from "../domain/Block.ts"
import type { Message } from "../domain/Message.ts"
import type { CachedTier } from "../domain/Tier.ts"
import type { Usage } from "../domain/Usage.ts"

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

/**
 * A provider request ready to send. `Body` is the provider's body type when the plugin
 * is known statically (`@strata/providers` plugins carry theirs, e.g. `AnthropicBody`),
 * `unknown` otherwise.
 */
export interface PlacementResult<Body = unknown> {
  readonly provider: string
  /** The provider's native request body (JSON-serializable, with a fixed key order). */
  readonly body: Body
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

/** What a `Placement` does, for a body type: place a neutral request as that provider's body. */
export interface PlacementShape<Body = unknown> {
  readonly provider: string
  readonly place: (request: NeutralRequest) => Effect.Effect<PlacementResult<Body>, PlacementError>
}

/**
 * The provider plugin the pipeline renders with. The service is untyped (`unknown`
 * body); the Promise API keeps the plugin value's `Body` type and gives it back on the
 * turn's `request`.
 */
export class Placement extends Context.Service<Placement, PlacementShape>()("@strata/core/Placement") {}

/** A provider's reply as Strata stores it: the messages it adds to the history, and its usage. */
export interface DecodedReply {
  /** The assistant message(s): text, reasoning and tool calls (and, for multi-step results, tool messages). */
  readonly messages: ReadonlyArray<Message>
  /** The usage the reply reports; undefined when it carries none. */
  readonly usage: Usage | undefined
}

/**
 * A provider plugin as a plain value: what the Promise API's `createContextEngine({
 * provider })` needs to render requests and read replies. `@strata/providers` exports one
 * per target (`AnthropicPlacement`, `OpenAIPlacement`, ...), each typed with its body so
 * the engine's turns carry it. Core only knows this shape; it imports no provider.
 *
 * @example
 * ```ts
 * import type { ProviderPlugin } from "@strata/core"
 * declare const plugin: ProviderPlugin<{ model: string; messages: Array<unknown> }>
 * // plugin.place(request).body.messages is typed
 * ```
 */
export interface ProviderPlugin<Body = unknown> {
  readonly provider: string
  /** Place a neutral request as this provider's body. Pure; throws `PlacementError`. */
  readonly place: (request: NeutralRequest) => PlacementResult<Body>
  /**
   * A provider response (the SDK's non-streaming result, or a stream's final message) as
   * history messages and usage. Throws when it is not a response of this provider.
   */
  readonly decodeReply: (reply: unknown) => DecodedReply
  /** A provider usage object (or a response carrying one) as neutral usage. Throws when it is not one. */
  readonly decodeUsage: (usage: unknown) => Usage
}
