/**
 * `strataCache()`: a language-model middleware for the AI SDK's `wrapLanguageModel`,
 * for applications that keep their own messages. Per conversation it follows the
 * prompts' stable prefix and places the provider's cache breakpoints through
 * `providerOptions` (Anthropic `cacheControl`, Bedrock `cachePoint`, OpenAI
 * `promptCacheKey`) within the model's rules, and keeps a usage report.
 *
 * Typed structurally (no `@ai-sdk/provider` import): it fits ai 6's V3 and ai 7's V4
 * middleware types, whose prompts share the shape it reads.
 */
import { sumUsage, ZERO_USAGE, type Usage } from "@strata/core"
import { hash } from "node:crypto"
import type { ModelLimits } from "../models.ts"
import { cacheHitRate, decodeAiSdkUsage, promptTokens } from "../usage.ts"
import { isRecord } from "../internal/json.ts"
import { makeCachePlanner, type CachePlan, type CachePlanner, type PlannedMarker } from "./planner.ts"
import { nativeBodyOf, type NativeTarget, type Prompt, type PromptMessage, type PromptPart, type PromptProviderOptions, type PromptTool } from "./prompt.ts"

/** Which provider's cache options the middleware sets. */
export type CacheTargetName = NativeTarget | "openai" | "none"

/** The part of a language model the middleware reads. */
export interface ModelRef {
  readonly provider: string
  readonly modelId: string
}

/** The part of a call's parameters the middleware reads and rewrites. */
export interface CallParams {
  readonly prompt: Prompt
  /** The call's tool definitions: they come first in the cached prefix. */
  readonly tools?: ReadonlyArray<PromptTool> | undefined
  readonly providerOptions?: PromptProviderOptions | undefined
}

/** Options of `strataCache`. */
export interface StrataCacheOptions {
  /** Default: from the model's provider id (`anthropic.*`, `amazon-bedrock`, `openai.*`); other providers pass through (their usage is still reported). */
  readonly target?: CacheTargetName | undefined
  /** TTL of the conversation's breakpoints (Anthropic only). Default `5m`. */
  readonly ttl?: "5m" | "1h" | undefined
  /** TTL of the system and stable-prefix breakpoints. Default: `ttl`. */
  readonly prefixTtl?: "5m" | "1h" | undefined
  /**
   * Which conversation a call belongs to. Default: one conversation per wrapped model.
   * Give one per user or thread when a model serves several at once.
   */
  readonly sessionKey?: ((params: CallParams) => string | undefined) | undefined
  /** OpenAI `promptCacheKey`; default: the session key, else a hash of the system messages. */
  readonly promptCacheKey?: string | undefined
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly now?: (() => number) | undefined
  /** Limits to plan with instead of the model table's. */
  readonly limits?: ModelLimits | undefined
  readonly countTokens?: ((text: string) => number) | undefined
}

/** Usage and hit rate of one conversation, or of all of them. */
export interface CacheReportEntry {
  readonly requests: number
  readonly usage: Usage
  /** Share of prompt tokens read from the cache, as the provider billed it. */
  readonly hitRate: number
  /** Breakpoints placed on the last call (absent for OpenAI and pass-through models). */
  readonly lastPlan?: CachePlan | undefined
}

export interface CacheReport extends CacheReportEntry {
  readonly sessions: Readonly<Record<string, CacheReportEntry>>
}

/** The middleware value: pass it to `wrapLanguageModel`. */
export interface StrataCacheMiddleware {
  readonly specificationVersion: "v3"
  readonly transformParams: <P extends CallParams>(options: { readonly type: "generate" | "stream"; readonly params: P; readonly model: ModelRef }) => Promise<P>
  readonly wrapGenerate: <R extends { readonly usage: unknown }>(options: {
    readonly doGenerate: () => PromiseLike<R>
    readonly params: CallParams
    readonly model: ModelRef
  }) => Promise<R>
  readonly wrapStream: <S extends { readonly stream: ReadableStream<unknown> }>(options: {
    readonly doStream: () => PromiseLike<S>
    readonly params: CallParams
    readonly model: ModelRef
  }) => Promise<S>
  /** Totals and hit rate over every call so far, and per conversation. */
  readonly report: () => CacheReport
}

/** The cache target of an AI SDK provider id. */
export const cacheTargetOf = (provider: string): CacheTargetName =>
  provider.startsWith("anthropic") ? "anthropic" : provider.includes("bedrock") ? "bedrock" : provider.startsWith("openai") ? "openai" : "none"

const withOptions = (options: PromptProviderOptions | undefined, provider: string, set: Readonly<Record<string, unknown>>): PromptProviderOptions => ({
  ...options,
  [provider]: { ...options?.[provider], ...set }
})

const markerOptions = (target: NativeTarget, marker: PlannedMarker): Readonly<Record<string, unknown>> =>
  target === "bedrock"
    ? { cachePoint: { type: "default" } }
    : { cacheControl: marker.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } }

/**
 * The prompt with the plan's markers as `providerOptions`: on the message for a
 * message-end marker, on the part for a part-level one. Nothing else changes.
 */
export const applyPlan = (prompt: Prompt, plan: CachePlan, target: NativeTarget): Array<PromptMessage> =>
  prompt.map((message, m): PromptMessage => {
    const here = plan.markers.filter((k) => k.message === m)
    if (here.length === 0) return message
    const provider = target === "bedrock" ? "bedrock" : "anthropic"
    let out: PromptMessage = message
    for (const k of here) {
      if (k.part < 0 || typeof out.content === "string") {
        out = { ...out, providerOptions: withOptions(out.providerOptions, provider, markerOptions(target, k)) }
      } else {
        const parts = out.content.map((p, i): PromptPart => (i === k.part ? { ...p, providerOptions: withOptions(p.providerOptions, provider, markerOptions(target, k)) } : p))
        out = { ...out, content: parts }
      }
    }
    return out
  })

interface Session {
  readonly label: string
  planner: CachePlanner | undefined
  requests: number
  usage: Usage
  lastPlan: CachePlan | undefined
}

const systemText = (prompt: Prompt): string =>
  prompt.filter((m) => m.role === "system").map((m) => (typeof m.content === "string" ? m.content : "")).join("\n")

/**
 * A cache middleware for the AI SDK. One line to adopt:
 *
 * @example
 * ```ts no-run
 * import { anthropic } from "@ai-sdk/anthropic"
 * import { generateText, wrapLanguageModel } from "ai"
 * import { strataCache } from "@strata/providers"
 *
 * const cache = strataCache()
 * const model = wrapLanguageModel({ model: anthropic("claude-sonnet-4-6"), middleware: cache })
 * await generateText({ model, messages: [{ role: "user", content: "What does src/a.ts export?" }] })
 * cache.report() // { requests: 1, usage: { input, cacheRead, cacheWrite, output }, hitRate, sessions }
 * ```
 */
export const strataCache = (options: StrataCacheOptions = {}): StrataCacheMiddleware => {
  const byModel = new WeakMap<object, Session>()
  const byKey = new Map<string, Session>()
  const all: Array<Session> = []
  // The params object transformParams returns is the one wrapGenerate/wrapStream receive.
  const calls = new WeakMap<object, { readonly session: Session; readonly plan: CachePlan | undefined }>()
  const now = options.now ?? Date.now

  const sessionOf = (params: CallParams, model: ModelRef): Session => {
    const key = options.sessionKey?.(params)
    const existing = key === undefined ? byModel.get(model) : byKey.get(key)
    if (existing !== undefined) return existing
    const fresh: Session = { label: key ?? `${model.provider}:${model.modelId}`, planner: undefined, requests: 0, usage: ZERO_USAGE, lastPlan: undefined }
    if (key === undefined) byModel.set(model, fresh)
    else byKey.set(key, fresh)
    all.push(fresh)
    return fresh
  }

  const record = (params: CallParams, raw: unknown) => {
    const call = calls.get(params)
    if (call === undefined) return
    const usage = decodeAiSdkUsage(raw)
    call.session.requests++
    call.session.usage = sumUsage(call.session.usage, usage)
    if (call.plan !== undefined && call.session.planner !== undefined) call.session.planner.calibrate(call.plan.promptTokens, promptTokens(usage))
  }

  const observe = (params: CallParams) =>
    new TransformStream<unknown, unknown>({
      transform: (part, controller) => {
        if (isRecord(part) && part["type"] === "finish") {
          try {
            record(params, part["usage"])
          } catch {
            // A usage shape this version does not know is left out of the report, never thrown into the stream.
          }
        }
        controller.enqueue(part)
      }
    })

  return {
    specificationVersion: "v3",
    transformParams: async ({ params, model }) => {
      const target = options.target ?? cacheTargetOf(model.provider)
      const session = sessionOf(params, model)
      if (target === "none") {
        // Nothing to place, but the call's usage still goes into the report.
        const same = { ...params }
        calls.set(same, { session, plan: undefined })
        return same
      }
      if (target === "openai") {
        const existing = params.providerOptions?.["openai"]?.["promptCacheKey"]
        const key = options.promptCacheKey ?? options.sessionKey?.(params) ?? `strata-${hash("sha256", systemText(params.prompt), "hex").slice(0, 16)}`
        const next = existing === undefined ? { ...params, providerOptions: withOptions(params.providerOptions, "openai", { promptCacheKey: key }) } : { ...params }
        calls.set(next, { session, plan: undefined })
        return next
      }
      session.planner ??= makeCachePlanner({
        target,
        model: model.modelId,
        limits: options.limits,
        ttl: options.ttl,
        prefixTtl: options.prefixTtl,
        countTokens: options.countTokens
      })
      const plan = session.planner.plan(params.prompt, now() / 1000, params.tools)
      session.lastPlan = plan
      const next = { ...params, prompt: applyPlan(params.prompt, plan, target) }
      calls.set(next, { session, plan })
      return next
    },
    wrapGenerate: async ({ doGenerate, params }) => {
      const result = await doGenerate()
      try {
        record(params, result.usage)
      } catch {
        // As in streams: an unknown usage shape is not the caller's failure.
      }
      return result
    },
    wrapStream: async ({ doStream, params }) => {
      const result = await doStream()
      return { ...result, stream: result.stream.pipeThrough(observe(params)) }
    },
    report: () => {
      const sessions: Record<string, CacheReportEntry> = {}
      let usage = ZERO_USAGE
      let requests = 0
      for (const s of all) {
        sessions[s.label] = { requests: s.requests, usage: s.usage, hitRate: cacheHitRate(s.usage), ...(s.lastPlan === undefined ? {} : { lastPlan: s.lastPlan }) }
        usage = sumUsage(usage, s.usage)
        requests += s.requests
      }
      return { requests, usage, hitRate: cacheHitRate(usage), sessions }
    }
  }
}

/** Options of `cachedPromptBodies`. */
export interface CachedBodiesOptions extends Omit<StrataCacheOptions, "target" | "sessionKey" | "now" | "promptCacheKey"> {
  readonly target: NativeTarget
  readonly model: string
  /** Send time of each prompt in seconds; default 30 s apart. */
  readonly times?: ReadonlyArray<number> | undefined
  /** Fields every body carries besides the prompt (`max_tokens`, `tools`...). */
  readonly extra?: Readonly<Record<string, unknown>> | undefined
  /** The calls' tool definitions as the AI SDK hands them to the model, for the planner (render them in `extra` as the provider takes them). */
  readonly tools?: ReadonlyArray<PromptTool> | undefined
}

/**
 * The native bodies the middleware would send for a sequence of prompts: each prompt
 * planned in order (one conversation), marked, and rendered as `@ai-sdk/anthropic`
 * or `@ai-sdk/amazon-bedrock` would send it. For replays and simulators.
 *
 * @example
 * ```ts
 * import { cachedPromptBodies, makeSimulator } from "@strata/providers"
 * const system = { role: "system", content: "You review TypeScript. ".repeat(400) }
 * const prompts = [
 *   [system, { role: "user", content: [{ type: "text", text: "Review src/a.ts." }] }],
 *   [system, { role: "user", content: [{ type: "text", text: "Review src/b.ts." }] }]
 * ]
 * const bodies = cachedPromptBodies(prompts, { target: "anthropic", model: "claude-sonnet-4-6", extra: { max_tokens: 1024 } })
 * const sim = makeSimulator("anthropic", { model: "claude-sonnet-4-6" })
 * bodies.map((body, i) => sim.send(body, i * 30).usage.cacheRead > 0) // [false, true]
 * ```
 */
export const cachedPromptBodies = (prompts: ReadonlyArray<Prompt>, options: CachedBodiesOptions): Array<Record<string, unknown>> => {
  const planner = makeCachePlanner({ ...options })
  return prompts.map((prompt, i) => {
    const at = options.times?.[i] ?? i * 30
    return nativeBodyOf(applyPlan(prompt, planner.plan(prompt, at, options.tools), options.target), options.target, options.model, options.extra)
  })
}
