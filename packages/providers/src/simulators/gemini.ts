/**
 * The Gemini prompt caches, offline: implicit caching of any prefix above the model's
 * minimum for `generateContent` bodies, and explicit `cachedContents` resources with a
 * fixed expiry, creation billed as input and storage billed per token-hour.
 */
import { ttlSpec, type ModelLimits } from "../models.ts"
import { allReads, asArray, asString, automaticWrites, canonicalJson, isRecord, runCacheStep, type PrefixBlock } from "../internal/simulators/prefixCache.ts"
import { makeContext, makeResult, neutralUsage, type SimContext } from "../internal/simulators/result.ts"
import { SimulatedRejection, type SendOptions, type SimResult, type SimSkip, type Simulator, type SimulatorOptions } from "../simulation.ts"

/** `usageMetadata` of a `generateContent` response. */
export interface GeminiNativeUsage {
  readonly promptTokenCount: number
  readonly candidatesTokenCount: number
  readonly totalTokenCount: number
  readonly cachedContentTokenCount?: number
}

/** A created `cachedContents` resource, as the simulator reports it. */
export interface SimCachedContent {
  readonly name: string
  readonly model: string
  readonly tokens: number
  readonly expiresAt: number
  /** Creation (input-priced) and storage for the TTL, as a `SimResult` with `usageMetadata.totalTokenCount`. */
  readonly result: SimResult<{ readonly totalTokenCount: number }>
}

/** The Gemini simulator: `send` for `generateContent`, plus the `cachedContents` lifecycle. */
export interface GeminiSimulator extends Simulator<GeminiNativeUsage> {
  /**
   * `POST cachedContents`: body `{ model, contents?, systemInstruction?, tools?, toolConfig?, ttl? }`
   * (`ttl` as `"3600s"`, default 1 h), or `caches.create` parameters (`{ model, config }`).
   * Storage for the whole TTL is billed at creation.
   */
  readonly createCachedContent: (body: unknown, atSeconds: number) => SimCachedContent
  /** `PATCH cachedContents/{id}` with a new TTL from `atSeconds`; bills the added storage. */
  readonly updateCachedContent: (name: string, ttlSeconds: number, atSeconds: number) => SimCachedContent
  /** `DELETE cachedContents/{id}`. No refund of storage already billed. */
  readonly deleteCachedContent: (name: string) => void
}

const reject = (reason: string): never => {
  throw new SimulatedRejection({ provider: "gemini", reason })
}

const partText = (part: Record<string, unknown>, imageTokens: number): { text: string; extra: number } => {
  if (typeof part["text"] === "string") return { text: part["text"], extra: 0 }
  if (part["inlineData"] !== undefined || part["fileData"] !== undefined) return { text: "", extra: imageTokens }
  return { text: canonicalJson(part), extra: 0 }
}

// A part that is only text is its text; anything else is identified by its canonical JSON.
const isPlainText = (part: Record<string, unknown>): boolean => typeof part["text"] === "string" && Object.keys(part).length === 1
const kindOf = (part: Record<string, unknown>): string => (isPlainText(part) ? "text" : "json")
const identityOf = (part: Record<string, unknown>, text: string): string => (isPlainText(part) ? text : canonicalJson(part))

/** Blocks of tools, system instruction and contents, in that order. */
const parseGemini = (body: Record<string, unknown>, imageTokens: number): Array<PrefixBlock> => {
  const blocks: Array<PrefixBlock> = []
  const tools = [...asArray(body["tools"])]
  if (body["toolConfig"] !== undefined) tools.push({ toolConfig: body["toolConfig"] })
  for (const tool of tools) {
    const json = canonicalJson(tool)
    blocks.push({ head: "T", body: json, text: json, extraTokens: 0 })
  }
  const system = body["systemInstruction"]
  const systemParts = typeof system === "string" ? [{ text: system }] : isRecord(system) ? asArray(system["parts"]) : []
  for (const part of systemParts) {
    if (!isRecord(part)) continue
    const { text, extra } = partText(part, imageTokens)
    blocks.push({ head: `S\u0000${kindOf(part)}`, body: identityOf(part, text), text, extraTokens: extra })
  }
  asArray(body["contents"]).forEach((content, i) => {
    if (!isRecord(content)) return reject(`contents[${i}]: must be an object`)
    const role = asString(content["role"]) ?? "user"
    asArray(content["parts"]).forEach((part, j) => {
      if (!isRecord(part)) return reject(`contents[${i}].parts[${j}]: must be an object`)
      const { text, extra } = partText(part, imageTokens)
      blocks.push({ head: `${j === 0 ? `M\u0000${role}\u0000` : ""}P\u0000${kindOf(part)}`, body: identityOf(part, text), text, extraTokens: extra })
    })
  })
  return blocks
}

const parseTtl = (ttl: unknown): number => {
  if (ttl === undefined) return 3600
  const m = typeof ttl === "string" ? /^(\d+(?:\.\d+)?)s$/.exec(ttl) : null
  if (m === null) return reject(`ttl: expected a duration like "3600s", got ${JSON.stringify(ttl)}`)
  return Number(m[1])
}

const bareModel = (model: string): string => model.replace(/^models\//, "")

const CONFIG_FIELDS = ["systemInstruction", "tools", "toolConfig", "cachedContent", "contents", "ttl", "displayName"] as const

/**
 * Accept both the REST body (`systemInstruction`, `cachedContent` at the top) and the
 * `@google/genai` parameters the plugin emits (`{ model, contents, config: {...} }`,
 * `caches.create({ model, config: { contents, ... } })`).
 */
const flatten = (body: Record<string, unknown>): Record<string, unknown> => {
  const config = body["config"]
  if (!isRecord(config)) return body
  const out: Record<string, unknown> = { ...body }
  delete out["config"]
  for (const field of CONFIG_FIELDS) if (config[field] !== undefined && out[field] === undefined) out[field] = config[field]
  return out
}

/** A model's limits with its explicit-cache TTL; rejects a model without explicit caching. */
const explicitLimits = (ctx: SimContext, model: string) => {
  const limits = ctx.limitsFor(model)
  const spec = limits.ttls.find((t) => t.name === "explicit")
  if (spec === undefined) reject(`explicit caching (cachedContents) is not supported for ${model}`)
  return { limits, spec: spec! }
}

/** A `cachedContents` resource as reported: creation billed as a write, storage for `billedSeconds`. */
const cachedContentResource = (
  limits: ModelLimits,
  cache: Omit<SimCachedContent, "result">,
  billedSeconds: number,
  created: boolean
): SimCachedContent => {
  const { tokens } = cache
  const usage = neutralUsage(0, 0, {}, 0)
  const creation = created ? { ...usage, cacheWrite: tokens } : usage
  const result = makeResult(limits, creation, { totalTokenCount: tokens }, {
    blocks: 0,
    promptTokens: created ? tokens : 0,
    hitBlock: -1,
    hitTokens: 0,
    writes: created ? [{ block: -1, tokens, ttl: "explicit", charged: true }] : [],
    skipped: []
  }, { ttl: "explicit", storageTokenHours: (tokens * billedSeconds) / 3600 })
  return { ...cache, result }
}

/**
 * A `generateContent` request without `cachedContent`: implicit caching, every block
 * boundary read, the whole prompt written when it reaches the model's minimum.
 */
const sendImplicit = (ctx: SimContext, body: Record<string, unknown>, model: string, at: number, send: SendOptions | undefined): SimResult<GeminiNativeUsage> => {
  const limits = ctx.limitsFor(model)
  const blocks = parseGemini(body, ctx.imageTokens)
  if (asArray(body["contents"]).length === 0) reject("contents is not specified")
  const prefix = ctx.hasher.build(`gemini\u0000${model}`, blocks)
  const ttl = ttlSpec(limits, "implicit")
  const writes = automaticWrites(prefix, limits.minCacheTokens, ttl)
  const step = runCacheStep(ctx.store, prefix, allReads(blocks.length), writes, at, ctx.visibleAt(at, send))
  const output = send?.outputTokens ?? 0
  const usage = neutralUsage(prefix.total - step.hitTokens, step.hitTokens, {}, output)
  const native: GeminiNativeUsage = {
    promptTokenCount: prefix.total,
    candidatesTokenCount: output,
    totalTokenCount: prefix.total + output,
    ...(step.hitTokens > 0 ? { cachedContentTokenCount: step.hitTokens } : {})
  }
  const skipped: Array<SimSkip> = writes.length === 0
    ? [{ block: blocks.length - 1, reason: `prompt of ${prefix.total} tokens is below the minimum of ${limits.minCacheTokens}` }]
    : []
  const last = step.writes.at(-1)
  return makeResult(limits, usage, native, {
    blocks: blocks.length,
    promptTokens: prefix.total,
    hitBlock: step.hitBlock,
    hitTokens: step.hitTokens,
    writes: last === undefined ? [] : [last],
    skipped
  }, { ttl: "implicit" })
}

/** The content blocks of a `generateContent` body (REST or `@google/genai` shape), in prefix order (what `promptBlocks` measures). */
export const geminiPromptBlocks = (body: Record<string, unknown>, imageTokens: number): ReadonlyArray<PrefixBlock> =>
  parseGemini(flatten(body), imageTokens)

/**
 * A simulator of Gemini's implicit cache and explicit `cachedContents`.
 *
 * @example
 * ```ts
 * import { makeGeminiSimulator } from "@strata/providers"
 * const sim = makeGeminiSimulator({ model: "gemini-2.5-flash" })
 * const cache = sim.createCachedContent({ model: "models/gemini-2.5-flash", systemInstruction: { parts: [{ text: "x".repeat(20000) }] }, ttl: "600s" }, 0)
 * sim.send({ cachedContent: cache.name, contents: [{ role: "user", parts: [{ text: "hi" }] }] }, 5).usage.cacheRead // 5000
 * ```
 */
export const makeGeminiSimulator = (options: SimulatorOptions): GeminiSimulator => {
  const ctx = makeContext("gemini", options)
  const caches = new Map<string, { model: string; tokens: number; expiresAt: number }>()
  let serial = 0

  const explicitTtl = (model: string) => explicitLimits(ctx, model)
  const resource = (name: string, model: string, tokens: number, expiresAt: number, billedSeconds: number, created: boolean): SimCachedContent =>
    cachedContentResource(explicitTtl(model).limits, { name, model, tokens, expiresAt }, billedSeconds, created)

  const sendExplicit = (body: Record<string, unknown>, name: string, at: number, send: SendOptions | undefined): SimResult<GeminiNativeUsage> => {
    for (const field of ["systemInstruction", "tools", "toolConfig"]) {
      if (body[field] !== undefined) {
        reject(`CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config (found ${field}); put them in the cache instead.`)
      }
    }
    const cache = caches.get(name)
    if (cache === undefined || cache.expiresAt <= at) return reject(`403 CachedContent not found (or permission denied): ${name}`)
    const model = asString(body["model"]) === undefined ? cache.model : bareModel(asString(body["model"])!)
    if (model !== cache.model) reject(`400 model ${model} does not match the cached content's model ${cache.model}`)
    const { limits } = explicitTtl(cache.model)
    const blocks = parseGemini(body, ctx.imageTokens)
    const prefix = ctx.hasher.build(`gemini\u0000${name}`, blocks)
    const output = send?.outputTokens ?? 0
    const prompt = cache.tokens + prefix.total
    const usage = neutralUsage(prefix.total, cache.tokens, {}, output)
    const native: GeminiNativeUsage = {
      promptTokenCount: prompt,
      candidatesTokenCount: output,
      totalTokenCount: prompt + output,
      cachedContentTokenCount: cache.tokens
    }
    return makeResult(limits, usage, native, {
      blocks: blocks.length,
      promptTokens: prompt,
      hitBlock: -1,
      hitTokens: cache.tokens,
      writes: [],
      skipped: []
    }, { ttl: "explicit" })
  }

  return {
    provider: "gemini",
    model: options.model,
    limits: ctx.limits,
    send: (raw, at, send) => {
      if (!isRecord(raw)) return reject("the request body must be a JSON object")
      const body = flatten(raw)
      ctx.store.advance(at)
      const cached = asString(body["cachedContent"])
      if (cached !== undefined) return sendExplicit(body, cached, at, send)
      return sendImplicit(ctx, body, bareModel(asString(body["model"]) ?? options.model), at, send)
    },
    createCachedContent: (raw, at) => {
      if (!isRecord(raw)) return reject("the cachedContents body must be a JSON object")
      const body = flatten(raw)
      ctx.store.advance(at)
      const model = bareModel(asString(body["model"]) ?? options.model)
      const { limits } = explicitTtl(model)
      const seconds = parseTtl(body["ttl"])
      const tokens = ctx.hasher.build(`gemini-cache\u0000${model}`, parseGemini(body, ctx.imageTokens)).total
      if (tokens < limits.minCacheTokens) {
        reject(`400 Cached content is too small. total_token_count=${tokens}, min_total_token_count=${limits.minCacheTokens}`)
      }
      const name = `cachedContents/sim-${++serial}`
      caches.set(name, { model, tokens, expiresAt: at + seconds })
      return resource(name, model, tokens, at + seconds, seconds, true)
    },
    updateCachedContent: (name, ttlSeconds, at) => {
      ctx.store.advance(at)
      const cache = caches.get(name)
      if (cache === undefined || cache.expiresAt <= at) return reject(`403 CachedContent not found (or permission denied): ${name}`)
      const expiresAt = at + ttlSeconds
      const added = Math.max(0, expiresAt - cache.expiresAt)
      cache.expiresAt = expiresAt
      return resource(name, cache.model, cache.tokens, expiresAt, added, false)
    },
    deleteCachedContent: (name) => {
      caches.delete(name)
    },
    liveEntries: (at) => ctx.store.live(at) + [...caches.values()].filter((c) => c.expiresAt > at).length,
    reset: () => {
      ctx.store.clear()
      caches.clear()
      serial = 0
    }
  }
}
