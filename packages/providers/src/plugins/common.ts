/**
 * What every plugin shares: the tools a request renders, the options all plugins take,
 * the result type (core's `PlacementResult` plus notes), and the helper that turns a
 * pure plugin function into a Layer for core's `Placement` service.
 */
import { Effect, Layer } from "effect"
import {
  Placement,
  PlacementError,
  type CacheTtl,
  type DecodedReply,
  type DroppedBreakpoint,
  type NeutralRequest,
  type PlacedBreakpoint,
  type PlacementResult,
  type ProviderPlugin,
  type ToolDefinition
} from "@strata/core"
import { estimateTokens } from "@strata/core"
import { CachePrices, type CachePriceRatios } from "@strata/core/effect"
import { lookupModel, PROVIDER_IDS, ttlSpec, type ModelEntry, type ProviderId } from "../models.ts"
import type { BreakpointPlan } from "../rules/plan.ts"
import { canonicalize } from "../rules/serialize.ts"
import type { Usage } from "@strata/core"

// Tool definitions are core's (`ToolDefinition`, carried on `NeutralRequest.tools`); the
// names stay exported here for code written against earlier versions of this package.
export type { JsonSchemaObject, ToolDefinition } from "@strata/core"

/** A tool definition as Chat Completions `tools` take it (OpenAI and OpenAI-compatible gateways). */
export interface OpenAIChatTool {
  type: "function"
  function: { name: string; description?: string; parameters: Record<string, unknown> }
}

/** Tool definitions as Chat Completions `tools` (OpenAI and OpenAI-compatible gateways). */
export const openAIChatTools = (tools: ReadonlyArray<ToolDefinition>): Array<OpenAIChatTool> =>
  tools.map((t) => ({
    type: "function",
    function: t.description === undefined ? { name: t.name, parameters: t.inputSchema } : { name: t.name, description: t.description, parameters: t.inputSchema }
  }))

/** Options every plugin takes. */
export interface CommonOptions {
  /** Model id to send; default: the request's `model`. */
  readonly model?: string
  /** TTL for breakpoints that do not name one (providers with 5m/1h TTLs). */
  readonly ttl?: CacheTtl
  /** Tool definitions, rendered first in the prefix; used when the request carries no `tools`. */
  readonly tools?: ReadonlyArray<ToolDefinition>
  /** Tokens of the tool definitions; default: estimated from their JSON. */
  readonly toolTokens?: number
  /** Resolve model limits as the sources stood on this date (`YYYY-MM[-DD]`). */
  readonly asOf?: string
  /** Extra model-table rows searched before the built-in table. */
  readonly modelTable?: ReadonlyArray<ModelEntry>
}

/** A plugin's output: core's `PlacementResult` with a typed body and notes on adjustments. */
export interface PluginResult<Body> extends PlacementResult {
  readonly body: Body
  /** Adjustments that kept a breakpoint but changed it (moved, TTL raised or lowered). */
  readonly notes: ReadonlyArray<string>
}

/** The tools a request renders: its own `tools`, else the plugin options' (canonical key order). */
export const requestTools = (request: NeutralRequest, options: CommonOptions): ReadonlyArray<ToolDefinition> =>
  canonicalTools(request.tools ?? options.tools)

/** Tool definitions with canonical key order, so equal tools serialize to equal bytes. */
export const canonicalTools = (tools: ReadonlyArray<ToolDefinition> | undefined): ReadonlyArray<ToolDefinition> =>
  (tools ?? []).map((t) => {
    const schema = canonicalize(t.inputSchema)
    return t.description === undefined ? { name: t.name, inputSchema: schema } : { name: t.name, description: t.description, inputSchema: schema }
  })

/** Estimated tokens of tool definitions (their JSON at ~4 chars/token). */
export const toolTokenEstimate = (tools: ReadonlyArray<ToolDefinition>): number =>
  tools.length === 0 ? 0 : estimateTokens(JSON.stringify(tools))

/**
 * The tokens the tools lead the prefix with: the caller's figure, else assembly's count
 * (`request.toolTokens`, already in the first block's tokens), else an estimate.
 */
export const leadingToolTokens = (request: NeutralRequest, options: CommonOptions, tools: ReadonlyArray<ToolDefinition>): number =>
  options.toolTokens ?? (tools.length > 0 ? request.toolTokens : undefined) ?? toolTokenEstimate(tools)

/** Placed breakpoints for a plan, with a location for each. */
export const placedFrom = (
  plan: BreakpointPlan,
  locate: (messageIndex: number, target: "tools" | "message") => string
): ReadonlyArray<PlacedBreakpoint> =>
  plan.breakpoints.map((b) => {
    const base = { tier: b.tier, location: locate(b.messageIndex, b.target), prefixTokens: b.prefixTokens }
    return b.ttl === undefined ? base : { ...base, ttl: b.ttl }
  })

const isProviderId = (name: string): name is ProviderId => (PROVIDER_IDS as ReadonlyArray<string>).includes(name)

/** Assemble a plugin result. */
export const result = <Body>(
  provider: string,
  body: Body,
  breakpoints: ReadonlyArray<PlacedBreakpoint>,
  dropped: ReadonlyArray<DroppedBreakpoint>,
  notes: ReadonlyArray<string>
): PluginResult<Body> => ({ provider, body, breakpoints, dropped, notes })

/**
 * A Layer for core's `Placement` service from a pure plugin function. A thrown
 * `PlacementError` fails the effect; any other exception becomes one.
 *
 * @example
 * ```ts
 * import { placeAnthropic, placementLayer } from "@strata/providers"
 * const layer = placementLayer("anthropic", (request) => placeAnthropic(request, { ttl: "1h" }))
 * ```
 */
export const placementLayer = (
  provider: string,
  place: (request: NeutralRequest) => PlacementResult
): Layer.Layer<Placement> =>
  Layer.merge(
    Layer.succeed(Placement, {
      provider,
      place: (request) =>
        Effect.try({
          try: () => place(request),
          catch: (error) =>
            error instanceof PlacementError ? error : new PlacementError({ provider, reason: error instanceof Error ? error.message : String(error) })
        })
    }),
    // The pipeline's rent-or-buy decisions (journal rebuilds, context editing) price
    // reads and writes as this provider bills them; gateways keep core's defaults.
    isProviderId(provider) ? Layer.succeed(CachePrices, cachePricesOf(provider)) : Layer.empty
  )

/**
 * A provider's cache prices per model, from the model table: the default lifetime's read
 * and write multipliers and the 1 h write's (the default's where there is no 1 h cache).
 * What `placementLayer` gives core's `CachePrices`.
 *
 * @example
 * ```ts
 * import { cachePricesOf } from "@strata/providers"
 * cachePricesOf("openai")("gpt-4o") // { read: 0.5, write: 1, writeLong: 1 }
 * ```
 */
export const cachePricesOf = (provider: ProviderId) => (model: string): CachePriceRatios => {
  const limits = lookupModel(provider, model)
  const standard = ttlSpec(limits)
  return { read: standard.read, write: standard.write, writeLong: ttlSpec(limits, "1h").write }
}

/**
 * A provider plugin value: core's `ProviderPlugin` typed with the provider's request
 * body, and callable with options to configure it (`AnthropicPlacement({ ttl: "1h" })`;
 * options merge over the ones it already has). Give one to `createContextEngine({
 * provider })`, or take its Layer (`.layer()`) for the Effect pipeline.
 *
 * @example
 * ```ts
 * import { AnthropicPlacement } from "@strata/providers"
 * const plugin = AnthropicPlacement({ ttl: "1h", maxTokens: 2048 })
 * plugin.options // { ttl: "1h", maxTokens: 2048 }
 * const layer = plugin.layer() // core's Placement, with those options
 * ```
 */
export interface PlacementPlugin<Body, Options> extends ProviderPlugin<Body> {
  /** The same plugin with `options` merged over its own. */
  (options?: Options): PlacementPlugin<Body, Options>
  readonly options: Options
  /** Place a request with the plugin's options, `options` merged over them. Throws `PlacementError`. */
  readonly place: (request: NeutralRequest, options?: Options) => PluginResult<Body>
  /** core's `Placement` service over this plugin (`options` merged over its own). */
  readonly layer: (options?: Options) => Layer.Layer<Placement>
  readonly decodeUsage: (usage: unknown) => Usage
}

/** What a plugin value is made from. */
export interface PluginSpec<Body, Options> {
  readonly provider: string
  readonly place: (request: NeutralRequest, options: Options) => PluginResult<Body>
  readonly decodeReply: (reply: unknown, options: Options) => DecodedReply
  readonly decodeUsage: (usage: unknown) => Usage
}

/** A plugin value from its pure functions and options. */
export const makePlugin = <Body, Options extends object>(spec: PluginSpec<Body, Options>, options: Options): PlacementPlugin<Body, Options> => {
  const merged = (more: Options | undefined): Options => (more === undefined ? options : { ...options, ...more })
  const configure = (more?: Options): PlacementPlugin<Body, Options> => makePlugin(spec, merged(more))
  return Object.assign(configure, {
    provider: spec.provider,
    options,
    place: (request: NeutralRequest, more?: Options) => spec.place(request, merged(more)),
    layer: (more?: Options) => placementLayer(spec.provider, (request) => spec.place(request, merged(more))),
    decodeReply: (reply: unknown) => spec.decodeReply(reply, options),
    decodeUsage: spec.decodeUsage
  })
}
