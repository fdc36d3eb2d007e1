/**
 * The OpenAI prompt cache, offline, for Chat Completions and Responses bodies. Before
 * GPT-5.6 caching is automatic: any cached prefix of 1,024+ tokens hits, reported in
 * 128-token steps, with no write fee. GPT-5.6+ writes at `prompt_cache_breakpoint`
 * markers (plus one implicit position in implicit mode), exact boundaries, 30 min TTL.
 */
import { ttlSpec, type ModelLimits, type TtlSpec } from "../models.ts"
import {
  allReads,
  applyMinimum,
  automaticWrites,
  asArray,
  asString,
  canonicalJson,
  isRecord,
  runCacheStep,
  writeTokensByTtl,
  type PrefixBlock,
  type WriteSpec
} from "../internal/simulators/prefixCache.ts"
import { makeContext, makeResult, neutralUsage, simulatorOf } from "../internal/simulators/result.ts"
import { SimulatedRejection, type SimResult, type SimSkip, type Simulator, type SimulatorOptions } from "../simulation.ts"

/** `usage` of a Chat Completions response (or its final streamed chunk). */
export interface OpenAIChatNativeUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  readonly prompt_tokens_details: { readonly cached_tokens: number; readonly cache_write_tokens?: number }
}

/** `usage` of a Responses API response. */
export interface OpenAIResponsesNativeUsage {
  readonly input_tokens: number
  readonly input_tokens_details: { readonly cached_tokens: number; readonly cache_write_tokens?: number }
  readonly output_tokens: number
  readonly output_tokens_details: { readonly reasoning_tokens: number }
  readonly total_tokens: number
}

export type OpenAISimUsage = OpenAIChatNativeUsage | OpenAIResponsesNativeUsage

const MARKER_KEYS: ReadonlySet<string> = new Set(["prompt_cache_breakpoint", "cache_control"])
const TEXT_TYPES: ReadonlySet<string> = new Set(["text", "input_text", "output_text"])
/** Latest breakpoints a GPT-5.6+ lookup considers (API reference; the guide says 2 + 50, a conflict). */
const LOOKUP_BREAKPOINTS_DEFAULT = 80
const MAX_WRITES_DEFAULT = 4

const reject = (reason: string): never => {
  throw new SimulatedRejection({ provider: "openai", reason })
}

/** Blocks, explicit markers and eligible implicit positions of a body. */
interface OpenAIPrefix {
  readonly blocks: Array<PrefixBlock>
  readonly markers: Array<number>
  readonly eligible: Array<number>
  readonly skipped: Array<SimSkip>
}

const partText = (part: Record<string, unknown>, imageTokens: number): { text: string; extra: number } => {
  const type = asString(part["type"]) ?? ""
  if (type === "text" || type === "input_text" || type === "output_text") return { text: asString(part["text"]) ?? "", extra: 0 }
  if (type === "refusal") return { text: asString(part["refusal"]) ?? "", extra: 0 }
  return { text: "", extra: imageTokens }
}

/** Shared walker: tools and schema first, then one entry per message or input item. */
const makeWalker = (imageTokens: number) => {
  const out: OpenAIPrefix = { blocks: [], markers: [], eligible: [], skipped: [] }
  const push = (head: string, body: string, text: string, extra = 0) => out.blocks.push({ head, body, text, extraTokens: extra })
  const content = (head: string, role: string, value: unknown, where: string) => {
    if (typeof value === "string") {
      push(`${head}B\u0000text`, value, value)
      return
    }
    asArray(value).forEach((part, j) => {
      if (!isRecord(part)) return reject(`${where}.content[${j}]: must be an object`)
      const { text, extra } = partText(part, imageTokens)
      const type = asString(part["type"]) ?? ""
      // A text part is its text; the marker never changes the prompt.
      const plain = TEXT_TYPES.has(type) && Object.keys(part).every((k) => k === "type" || k === "text" || MARKER_KEYS.has(k))
      push(`${j === 0 ? head : ""}B\u0000${plain ? type : "json"}`, plain ? text : canonicalJson(part, MARKER_KEYS), text, extra)
      if (part["prompt_cache_breakpoint"] !== undefined) {
        if (role === "assistant") out.skipped.push({ block: out.blocks.length - 1, reason: "prompt_cache_breakpoint is not allowed on assistant output" })
        else out.markers.push(out.blocks.length - 1)
      }
    })
  }
  return { out, push, content }
}

/** Read a Chat Completions body. */
const parseChat = (body: Record<string, unknown>, imageTokens: number): OpenAIPrefix => {
  const { out, push, content } = makeWalker(imageTokens)
  asArray(body["tools"]).forEach((tool) => {
    const json = canonicalJson(tool, MARKER_KEYS)
    push("T", json, json)
  })
  if (body["response_format"] !== undefined) {
    const json = canonicalJson(body["response_format"])
    push("F", json, json)
  }
  const messages = asArray(body["messages"])
  if (messages.length === 0) reject("messages: at least one message is required")
  let leading = true
  messages.forEach((message, i) => {
    if (!isRecord(message)) return reject(`messages[${i}]: must be an object`)
    const role = asString(message["role"]) ?? ""
    const head = `M\u0000${role}\u0000${asString(message["name"]) ?? ""}\u0000${asString(message["tool_call_id"]) ?? ""}\u0000`
    const before = out.blocks.length
    if (message["content"] !== undefined && message["content"] !== null) content(head, role, message["content"], `messages[${i}]`)
    asArray(message["tool_calls"]).forEach((call, k) => {
      const json = canonicalJson(call)
      push(`${k === 0 && out.blocks.length === before ? head : ""}C`, json, json)
    })
    if (out.blocks.length === before) push(`${head}E`, "", "")
    const last = out.blocks.length - 1
    const next = messages[i + 1]
    const nextRole = isRecord(next) ? next["role"] : undefined
    const isSystem = role === "system" || role === "developer"
    if (isSystem && leading && nextRole !== "system" && nextRole !== "developer") out.eligible.push(last)
    if (!isSystem) leading = false
    if (role === "user") out.eligible.push(last)
    if (role === "tool" && nextRole !== "tool") out.eligible.push(last)
  })
  return out
}

/** Read a Responses body. */
const parseResponses = (body: Record<string, unknown>, imageTokens: number): OpenAIPrefix => {
  const { out, push, content } = makeWalker(imageTokens)
  asArray(body["tools"]).forEach((tool) => {
    const json = canonicalJson(tool, MARKER_KEYS)
    push("T", json, json)
  })
  const text = body["text"]
  if (isRecord(text) && text["format"] !== undefined) {
    const json = canonicalJson(text["format"])
    push("F", json, json)
  }
  const instructions = asString(body["instructions"])
  if (instructions !== undefined && instructions.length > 0) {
    push("I", instructions, instructions)
    out.eligible.push(out.blocks.length - 1)
  }
  const input = body["input"]
  if (typeof input === "string") {
    push("M\u0000user\u0000B\u0000text", input, input)
    out.eligible.push(out.blocks.length - 1)
    return out
  }
  const items = asArray(input)
  if (items.length === 0) reject("input: at least one input item is required")
  let leading = instructions === undefined
  items.forEach((item, i) => {
    if (!isRecord(item)) return reject(`input[${i}]: must be an object`)
    const type = asString(item["type"]) ?? "message"
    const nextItem = items[i + 1]
    const nextType = isRecord(nextItem) ? (asString(nextItem["type"]) ?? "message") : undefined
    if (type === "message") {
      const role = asString(item["role"]) ?? ""
      content(`M\u0000${role}\u0000`, role, item["content"], `input[${i}]`)
      const isSystem = role === "system" || role === "developer"
      const nextRole = isRecord(nextItem) ? nextItem["role"] : undefined
      if (isSystem && leading && nextRole !== "system" && nextRole !== "developer") out.eligible.push(out.blocks.length - 1)
      if (!isSystem) leading = false
      if (role === "user") out.eligible.push(out.blocks.length - 1)
      return
    }
    leading = false
    if (type === "function_call_output" && Array.isArray(item["output"])) {
      // A list output is content parts, which may carry an explicit breakpoint.
      content(`X\u0000function_call_output\u0000${asString(item["call_id"]) ?? ""}\u0000`, "tool", item["output"], `input[${i}].output`)
    } else {
      const json = canonicalJson(item)
      const output = type === "function_call_output" ? (asString(item["output"]) ?? json) : json
      push("X", json, output)
    }
    if (type === "function_call_output" && nextType !== "function_call_output") out.eligible.push(out.blocks.length - 1)
  })
  return out
}

const isResponsesBody = (body: Record<string, unknown>): boolean => body["messages"] === undefined && body["input"] !== undefined

/** The content blocks of a Chat Completions or Responses body, in prefix order (what `promptBlocks` measures). */
export const openaiPromptBlocks = (body: Record<string, unknown>, imageTokens: number): ReadonlyArray<PrefixBlock> =>
  (isResponsesBody(body) ? parseResponses(body, imageTokens) : parseChat(body, imageTokens)).blocks

/** Settings that key the cache beside the prompt itself (routing and the documented invalidators). */
const namespaceOf = (body: Record<string, unknown>, model: string): string => {
  const reasoning = isRecord(body["reasoning"]) ? body["reasoning"]["effort"] : body["reasoning_effort"]
  const verbosity = isRecord(body["text"]) ? body["text"]["verbosity"] : body["verbosity"]
  return `openai\u0000${model}\u0000${canonicalJson({
    key: body["prompt_cache_key"],
    reasoning,
    verbosity,
    tier: body["service_tier"],
    parallel: body["parallel_tool_calls"],
    toolChoice: body["tool_choice"]
  })}`
}

const latest = (xs: ReadonlyArray<number>, n: number): Array<number> =>
  [...new Set(xs)].sort((a, b) => a - b).slice(-n)

/** Which writes and reads a GPT-5.6+ request makes, from its mode, markers and eligible positions. */
const explicitPlan = (
  limits: ModelLimits,
  mode: string,
  parsed: OpenAIPrefix,
  ttl: TtlSpec
): { reads: Array<number>; writes: Array<WriteSpec>; skipped: Array<SimSkip> } => {
  const maxWrites = limits.maxBreakpoints > 0 ? limits.maxBreakpoints : MAX_WRITES_DEFAULT
  const lookup = limits.lookback?.unit === "breakpoints" ? limits.lookback.count : LOOKUP_BREAKPOINTS_DEFAULT
  const markers = latest(parsed.markers, Number.MAX_SAFE_INTEGER)
  const skipped = [...parsed.skipped]
  if (mode === "explicit" && markers.length === 0) {
    skipped.push({ block: -1, reason: "explicit mode without prompt_cache_breakpoint markers caches nothing" })
    return { reads: [], writes: [], skipped }
  }
  const implicit = mode === "explicit" ? [] : latest(parsed.eligible, 1)
  const explicitSlots = maxWrites - implicit.length
  const kept = markers.slice(-explicitSlots)
  for (const dropped of markers.slice(0, Math.max(0, markers.length - explicitSlots))) {
    skipped.push({ block: dropped, reason: `more than ${maxWrites} cache writes requested; older markers are dropped` })
  }
  const writes = latest([...implicit, ...kept], maxWrites).map((block) => ({ block, ttl }))
  const candidates = mode === "explicit" ? markers : [...markers, ...parsed.eligible]
  const reads = latest(candidates, lookup).reverse()
  return { reads, writes, skipped }
}

/**
 * A simulator of OpenAI's prompt cache. Bodies with `messages` are Chat Completions,
 * bodies with `input` are Responses; the model table decides automatic (before
 * GPT-5.6) or explicit (GPT-5.6+) rules.
 *
 * @example
 * ```ts
 * import { makeOpenAISimulator } from "@strata/providers"
 * const sim = makeOpenAISimulator({ model: "gpt-4o" })
 * const body = { model: "gpt-4o", messages: [{ role: "system", content: "x".repeat(8000) }, { role: "user", content: "hi" }] }
 * sim.send(body, 0).usage.cacheRead // 0
 * sim.send(body, 10).usage.cacheRead // 1920 (2001 tokens, hits in 128-token steps)
 * ```
 */
export const makeOpenAISimulator = (options: SimulatorOptions): Simulator<OpenAISimUsage> => {
  const ctx = makeContext("openai", options)
  return simulatorOf("openai", ctx, (body, at, send): SimResult<OpenAISimUsage> => {
    if (!isRecord(body)) return reject("the request body must be a JSON object")
    const model = asString(body["model"]) ?? options.model
    const limits = ctx.limitsFor(model)
    const responses = isResponsesBody(body)
    const parsed = responses ? parseResponses(body, ctx.imageTokens) : parseChat(body, ctx.imageTokens)
    ctx.store.advance(at)
    const prefix = ctx.hasher.build(namespaceOf(body, model), parsed.blocks)
    const explicit = limits.maxBreakpoints > 0
    const output = send?.outputTokens ?? 0
    let cached: number
    let written = 0
    let byTtl: Record<string, number> = {}
    let trace
    if (explicit) {
      const options = isRecord(body["prompt_cache_options"]) ? body["prompt_cache_options"] : {}
      const mode = asString(options["mode"]) ?? "implicit"
      const ttl = ttlSpec(limits, asString(options["ttl"]))
      const plan = explicitPlan(limits, mode, parsed, ttl)
      const { accepted, skipped } = applyMinimum(prefix, plan.writes, limits.minCacheTokens, "cumulative")
      const step = runCacheStep(ctx.store, prefix, plan.reads, accepted, at, ctx.visibleAt(at, send))
      byTtl = writeTokensByTtl(step)
      for (const v of Object.values(byTtl)) written += v
      cached = step.hitTokens
      trace = { hitBlock: step.hitBlock, hitTokens: step.hitTokens, writes: step.writes, skipped: [...plan.skipped, ...skipped] }
    } else {
      const retention = asString(body["prompt_cache_retention"])
      const ttl = ttlSpec(limits, retention === "24h" ? "24h" : retention === "in_memory" ? "in_memory" : undefined)
      const writes = automaticWrites(prefix, limits.minCacheTokens, ttl)
      const step = runCacheStep(ctx.store, prefix, allReads(prefix.hashes.length), writes, at, ctx.visibleAt(at, send))
      const increment = limits.hitIncrementTokens ?? 1
      cached = step.hitTokens >= limits.minCacheTokens ? Math.floor(step.hitTokens / increment) * increment : 0
      const last = step.writes.at(-1)
      const skipped: Array<SimSkip> = parsed.markers.map((block) => ({ block, reason: `${limits.family} caches automatically; markers are ignored` }))
      if (writes.length === 0) skipped.push({ block: prefix.hashes.length - 1, reason: `prompt of ${prefix.total} tokens is below the minimum of ${limits.minCacheTokens}` })
      trace = { hitBlock: step.hitBlock, hitTokens: cached, writes: last === undefined ? [] : [last], skipped }
    }
    const input = prefix.total - cached - written
    // Writes are free before GPT-5.6 and not reported, so they are not usage either.
    const usage = neutralUsage(input, cached, {}, output)
    const withWrites = written > 0 ? { ...usage, cacheWrite: written } : usage
    const details = explicit ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached }
    const native: OpenAISimUsage = responses
      ? {
        input_tokens: prefix.total,
        input_tokens_details: details,
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: prefix.total + output
      }
      : {
        prompt_tokens: prefix.total,
        completion_tokens: output,
        total_tokens: prefix.total + output,
        prompt_tokens_details: details
      }
    return makeResult(limits, withWrites, native, { blocks: parsed.blocks.length, promptTokens: prefix.total, ...trace })
  })
}
