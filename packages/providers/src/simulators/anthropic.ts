/**
 * The Anthropic Messages prompt cache, offline: prefix `tools -> system -> messages`,
 * writes at `cache_control` markers (and the top-level automatic marker), a 20-block
 * lookback per breakpoint, per-model minimums, sliding 5 min / 1 h TTLs.
 */
import { ttlSpec, type ModelLimits, type TtlSpec } from "../models.ts"
import {
  applyMinimum,
  asArray,
  asString,
  canonicalJson,
  isRecord,
  lookbackReads,
  runCacheStep,
  writeTokensByTtl,
  type PrefixBlock,
  type WriteSpec
} from "../internal/simulators/prefixCache.ts"
import { makeContext, makeResult, neutralUsage, simulatorOf, type SimContext } from "../internal/simulators/result.ts"
import { SimulatedRejection, type SendOptions, type SimResult, type SimSkip, type Simulator, type SimulatorOptions } from "../simulation.ts"

/** `usage` of an Anthropic Messages response (also Bedrock InvokeModel with the Anthropic body). */
export interface AnthropicNativeUsage {
  readonly input_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
  readonly cache_creation: {
    readonly ephemeral_5m_input_tokens: number
    readonly ephemeral_1h_input_tokens: number
  }
  readonly output_tokens: number
}

const MARKER_KEYS: ReadonlySet<string> = new Set(["cache_control"])
const UNMARKABLE = new Set(["thinking", "redacted_thinking"])

/** A parsed body: blocks in prefix order and the breakpoints the request asks for. */
export interface MarkedPrefix {
  readonly model: string | undefined
  readonly namespace: string
  readonly blocks: ReadonlyArray<PrefixBlock>
  /** Breakpoints in prefix order (block index and TTL name). */
  readonly marks: ReadonlyArray<{ readonly block: number; readonly ttl: string }>
}

/** Tokens of an Anthropic content block, as text plus fixed image/document costs. */
const blockText = (block: Record<string, unknown>, imageTokens: number): { text: string; extra: number } => {
  switch (block["type"]) {
    case "text":
      return { text: asString(block["text"]) ?? "", extra: 0 }
    case "image":
    case "image_url":
    case "document":
      return { text: "", extra: imageTokens }
    case "thinking":
      return { text: asString(block["thinking"]) ?? "", extra: 0 }
    case "tool_use":
      return { text: `${asString(block["name"]) ?? ""} ${canonicalJson(block["input"])}`, extra: 0 }
    case "tool_result": {
      const content = block["content"]
      if (typeof content === "string") return { text: content, extra: 0 }
      let text = ""
      let extra = 0
      for (const part of asArray(content)) {
        if (!isRecord(part)) continue
        const inner = blockText(part, imageTokens)
        text += inner.text
        extra += inner.extra
      }
      return { text, extra }
    }
    default:
      return { text: canonicalJson(block, MARKER_KEYS), extra: 0 }
  }
}

/**
 * Gateways (LiteLLM, OpenRouter) accept Chat Completions bodies with `cache_control`
 * parts and forward them to Claude with leading system messages lifted into `system`.
 * A native Messages body never has a system role in `messages`, so this is unambiguous.
 */
const fromGatewayChat = (body: Record<string, unknown>): Record<string, unknown> => {
  const messages = asArray(body["messages"])
  const isSystem = (m: unknown) => isRecord(m) && (m["role"] === "system" || m["role"] === "developer")
  if (body["system"] !== undefined || !messages.some(isSystem)) return body
  const system: Array<unknown> = []
  const rest: Array<unknown> = []
  for (const m of messages) {
    if (!isSystem(m)) {
      rest.push(m)
      continue
    }
    const content = (m as Record<string, unknown>)["content"]
    if (typeof content === "string") system.push({ type: "text", text: content })
    else system.push(...asArray(content))
  }
  return { ...body, system, messages: rest }
}

const reject = (provider: string, reason: string): never => {
  throw new SimulatedRejection({ provider, reason })
}

/** A cache marker as read from the body: the block it closes and its TTL name. */
interface Mark {
  readonly block: number
  readonly ttl: string
  readonly explicit: boolean
}

/**
 * The top-level `cache_control` (automatic caching): its breakpoint lands on the last
 * block that can carry a marker, unless a marker with the same TTL is already there.
 */
const markAutomatic = (provider: string, auto: unknown, markable: ReadonlyArray<boolean>, marks: Array<Mark>, maxBreakpoints: number): void => {
  if (!isRecord(auto) || auto["type"] !== "ephemeral") reject(provider, `cache_control: type must be "ephemeral"`)
  const ttl = asString((auto as Record<string, unknown>)["ttl"]) ?? "5m"
  let at = markable.length - 1
  while (at >= 0 && markable[at] !== true) at--
  if (at < 0) return
  const existing = marks.find((m) => m.block === at)
  if (existing !== undefined && existing.ttl !== ttl) {
    reject(provider, `cache_control: the automatic breakpoint's ttl "${ttl}" conflicts with the marker on the last block (ttl "${existing.ttl}")`)
  }
  if (existing === undefined) {
    if (marks.length >= maxBreakpoints) {
      reject(provider, `A maximum of ${maxBreakpoints} blocks with cache_control may be provided. Found ${marks.length + 1}.`)
    }
    marks.push({ block: at, ttl, explicit: false })
  }
}

/**
 * Read an Anthropic Messages body (or Bedrock InvokeModel's, which is the same with
 * `anthropic_version`). `provider` names the API in rejection messages; `allowAutomatic`
 * is false for InvokeModel, which does not accept the top-level marker.
 */
export const parseAnthropicBody = (
  raw: unknown,
  provider: string,
  imageTokens: number,
  allowAutomatic: boolean,
  maxBreakpoints: number
): MarkedPrefix => {
  if (!isRecord(raw)) return reject(provider, "the request body must be a JSON object")
  const body = fromGatewayChat(raw)
  const model = asString(body["model"])
  const blocks: Array<PrefixBlock> = []
  const marks: Array<Mark> = []
  const markable: Array<boolean> = []
  const mark = (cc: unknown, where: string) => {
    if (cc === undefined) return
    if (!isRecord(cc) || cc["type"] !== "ephemeral") reject(provider, `${where}.cache_control: type must be "ephemeral"`)
    const ttl = asString((cc as Record<string, unknown>)["ttl"]) ?? "5m"
    marks.push({ block: blocks.length - 1, ttl, explicit: true })
  }
  const push = (head: string, body: string, text: string, extra: number, canMark: boolean) => {
    blocks.push({ head, body, text, extraTokens: extra })
    markable.push(canMark)
  }

  asArray(body["tools"]).forEach((tool, i) => {
    if (!isRecord(tool)) return reject(provider, `tools.${i}: must be an object`)
    const json = canonicalJson(tool, MARKER_KEYS)
    push("T", json, json, 0, true)
    mark(tool["cache_control"], `tools.${i}`)
  })

  const system = body["system"]
  if (typeof system === "string") {
    if (system.length > 0) push("S", system, system, 0, true)
  } else {
    asArray(system).forEach((block, i) => {
      if (!isRecord(block) || block["type"] !== "text") return reject(provider, `system.${i}: system blocks must be text blocks`)
      const text = asString(block["text"]) ?? ""
      if (text.length === 0) reject(provider, `system.${i}: text content blocks must be non-empty`)
      push("S", text, text, 0, true)
      mark(block["cache_control"], `system.${i}`)
    })
  }

  // Changing tool_choice or thinking invalidates the messages tier only, so they salt its first block.
  let salt = `\u0001${canonicalJson({ tool_choice: body["tool_choice"], thinking: body["thinking"] })}\u0001`
  const messages = asArray(body["messages"])
  if (messages.length === 0) reject(provider, "messages: at least one message is required")
  messages.forEach((message, i) => {
    if (!isRecord(message)) return reject(provider, `messages.${i}: must be an object`)
    const role = asString(message["role"]) ?? ""
    if (role !== "user" && role !== "assistant") reject(provider, `messages.${i}.role: must be "user" or "assistant"`)
    const head = `${salt}M\u0000${role}\u0000`
    salt = ""
    const content = message["content"]
    if (typeof content === "string") {
      if (content.length === 0 && !(role === "assistant" && i === messages.length - 1)) {
        reject(provider, `messages.${i}: all messages must have non-empty content except for the optional final assistant message`)
      }
      push(`${head}B\u0000text`, content, content, 0, true)
      return
    }
    const parts = asArray(content)
    if (parts.length === 0) reject(provider, `messages.${i}: content must not be empty`)
    parts.forEach((part, j) => {
      const where = `messages.${i}.content.${j}`
      if (!isRecord(part)) return reject(provider, `${where}: must be an object`)
      const type = asString(part["type"]) ?? ""
      if (type === "text" && (asString(part["text"]) ?? "").length === 0) reject(provider, `${where}: text content blocks must be non-empty`)
      if (UNMARKABLE.has(type) && part["cache_control"] !== undefined) reject(provider, `${where}: cache_control cannot be set on ${type} blocks`)
      const { text, extra } = blockText(part, imageTokens)
      const body = type === "text" ? text : canonicalJson(part, MARKER_KEYS)
      push(`${j === 0 ? head : ""}B\u0000${type}`, body, text, extra, !UNMARKABLE.has(type))
      mark(part["cache_control"], where)
    })
  })

  const auto = body["cache_control"]
  if (auto !== undefined) {
    if (!allowAutomatic) reject(provider, "top-level cache_control (automatic caching) is not accepted here; mark blocks instead")
    markAutomatic(provider, auto, markable, marks, maxBreakpoints)
  }
  if (marks.length > maxBreakpoints) {
    reject(provider, `A maximum of ${maxBreakpoints} blocks with cache_control may be provided. Found ${marks.length}.`)
  }
  return {
    model,
    namespace: `anthropic\u0000${model ?? ""}`,
    blocks,
    marks: marks.map(({ block, ttl }) => ({ block, ttl })).sort((a, b) => a.block - b.block)
  }
}

/** Resolve TTL names to specs and check they are offered and non-increasing along the prefix. */
export const resolveTtls = (
  provider: string,
  limits: ModelLimits,
  marks: ReadonlyArray<{ readonly block: number; readonly ttl: string }>
): Array<WriteSpec> => {
  const writes: Array<WriteSpec> = []
  let previous: TtlSpec | undefined
  for (const m of marks) {
    const spec = limits.ttls.find((t) => t.name === m.ttl)
    if (spec === undefined) {
      reject(provider, `ttl "${m.ttl}" is not supported for ${limits.model}; supported: ${limits.ttls.map((t) => t.name).join(", ")}`)
    }
    const ttl = spec ?? ttlSpec(limits)
    if (previous !== undefined && ttl.seconds > previous.seconds) {
      reject(provider, `a ttl="${ttl.name}" breakpoint must not come after a ttl="${previous.name}" breakpoint (longer TTLs must come first)`)
    }
    previous = ttl
    // Two markers on one block are one breakpoint.
    if (writes.at(-1)?.block !== m.block) writes.push({ block: m.block, ttl })
  }
  return writes
}

/** Run a parsed marker-based request through the cache; shared with Bedrock. */
export const simulateMarked = (
  ctx: SimContext,
  provider: string,
  parsed: MarkedPrefix,
  limits: ModelLimits,
  minimumRule: "cumulative" | "perCheckpoint",
  at: number,
  options: SendOptions | undefined
) => {
  ctx.store.advance(at)
  const prefix = ctx.hasher.build(`${provider}\u0000${parsed.namespace}`, parsed.blocks)
  const requested = resolveTtls(provider, limits, parsed.marks)
  const { accepted, skipped } = applyMinimum(prefix, requested, limits.minCacheTokens, minimumRule)
  const reads = lookbackReads(requested.map((w) => w.block), limits.lookback?.count ?? 20)
  const step = runCacheStep(ctx.store, prefix, reads, accepted, at, ctx.visibleAt(at, options))
  const byTtl = writeTokensByTtl(step)
  let written = 0
  for (const v of Object.values(byTtl)) written += v
  const input = prefix.total - step.hitTokens - written
  const trace = {
    blocks: parsed.blocks.length,
    promptTokens: prefix.total,
    hitBlock: step.hitBlock,
    hitTokens: step.hitTokens,
    writes: step.writes,
    skipped: skipped as ReadonlyArray<SimSkip>
  }
  return { byTtl, written, input, trace, hitTokens: step.hitTokens }
}

/** The result of a simulated Messages body, with Anthropic's native usage; shared with Bedrock InvokeModel. */
export const anthropicResult = (limits: ModelLimits, r: ReturnType<typeof simulateMarked>, output: number): SimResult<AnthropicNativeUsage> =>
  makeResult(limits, neutralUsage(r.input, r.hitTokens, r.byTtl, output), anthropicNative(r.input, r.hitTokens, r.byTtl, output), r.trace)

/** The `usage` object Anthropic returns for these counts. */
export const anthropicNative = (
  input: number,
  read: number,
  byTtl: Readonly<Record<string, number>>,
  output: number
): AnthropicNativeUsage => {
  const w5 = byTtl["5m"] ?? 0
  const w1 = byTtl["1h"] ?? 0
  return {
    input_tokens: input,
    cache_creation_input_tokens: w5 + w1,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: w5, ephemeral_1h_input_tokens: w1 },
    output_tokens: output
  }
}

/**
 * A simulator of Anthropic's prompt cache for Messages API bodies.
 *
 * @example
 * ```ts
 * import { makeAnthropicSimulator } from "@strata/providers"
 * const sim = makeAnthropicSimulator({ model: "claude-sonnet-4-6" })
 * const body = { model: "claude-sonnet-4-6", max_tokens: 512, system: [{ type: "text", text: "x".repeat(8000), cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: "hi" }] }
 * sim.send(body, 0).usage.cacheWrite // 2000 (chars/4)
 * sim.send(body, 10).usage.cacheRead // 2000
 * ```
 */
export const makeAnthropicSimulator = (options: SimulatorOptions): Simulator<AnthropicNativeUsage> => {
  const ctx = makeContext("anthropic", options)
  return simulatorOf("anthropic", ctx, (body, at, send) => {
    const model = isRecord(body) ? asString(body["model"]) : undefined
    const limits = ctx.limitsFor(model)
    const parsed = parseAnthropicBody(body, "anthropic", ctx.imageTokens, true, limits.maxBreakpoints)
    return anthropicResult(limits, simulateMarked(ctx, "anthropic", parsed, limits, "cumulative", at, send), send?.outputTokens ?? 0)
  })
}
