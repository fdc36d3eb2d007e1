/**
 * Why did this request miss the cache? `explainMiss(previous, next)` compares two
 * consecutive request bodies of one provider block by block, names the first block
 * where they diverge, and asks the provider's prompt-cache simulator what the second
 * request should read, and what it would read with each rule relaxed (no idle gap, no
 * minimum, no lookback limit), so the reason comes from the same rules the simulators
 * and plugins use. With the usage the provider reported, it also compares the two.
 */
import type { Usage } from "@strata/core"
import { lookupModel, type ModelLimits } from "../models.ts"
import { makeSimulator } from "../simulators/index.ts"
import type { SimProvider, SimResult } from "../simulation.ts"
import { promptTokens } from "../usage.ts"
import { isRecord } from "../internal/json.ts"
import { nativeBodyOf, partsOf, type NativeTarget, type Prompt, type PromptMessage } from "../middleware/prompt.ts"
import { detectFormat, walkBody, type BodyBlock, type BodyFormat, type WalkedBody } from "./blocks.ts"

/** The reason a request read less from the cache than the previous request left in it. */
export type MissReason =
  | { readonly kind: "none" }
  | { readonly kind: "model-changed"; readonly from: string; readonly to: string }
  | { readonly kind: "settings-changed"; readonly fields: ReadonlyArray<string> }
  | { readonly kind: "tools-changed"; readonly change: BlockChange }
  | { readonly kind: "system-changed"; readonly change: BlockChange }
  | { readonly kind: "message-edited"; readonly message: number; readonly change: BlockChange }
  | { readonly kind: "ttl-expired"; readonly idleSeconds: number; readonly ttlSeconds: number }
  | { readonly kind: "not-yet-written"; readonly gapSeconds: number }
  | { readonly kind: "below-minimum"; readonly prefixTokens: number; readonly minimum: number }
  | { readonly kind: "beyond-lookback"; readonly distance: number; readonly window: number }
  | { readonly kind: "no-breakpoint"; readonly request: "previous" | "next" }
  | { readonly kind: "uncached-tail"; readonly lastBreakpoint: string }

/** How the first differing block differs. */
export interface BlockChange {
  /** `edited` in place, `inserted` before the previous request's block, `removed` from the end. */
  readonly type: "edited" | "inserted" | "removed" | "appended"
  /** The block's path in the next request (or in the previous one when removed). */
  readonly path: string
  readonly kind: string
  readonly before?: string | undefined
  readonly after?: string | undefined
}

/** Token counts the explanation compares (simulated ones are in the simulator's estimate). */
export interface MissUsage {
  /** What the provider's simulator predicts for the next request, with only the previous one before it. */
  readonly expected: Usage
  /** The most the next request could read from what the previous one cached, the rules relaxed. */
  readonly attainable: number
  /** The usage the caller passed in (what the provider reported), if any. */
  readonly reported?: Usage | undefined
}

/** The answer of `explainMiss`. */
export interface MissExplanation {
  readonly format: BodyFormat
  readonly provider: SimProvider
  readonly model: string
  /** `hit`: read all the previous request cached that is still in the next; `partial`: some; `miss`: none. */
  readonly verdict: "hit" | "partial" | "miss"
  readonly reason: MissReason
  /** Index of the first block that differs, in prefix order (tools, system, messages). */
  readonly divergence: number
  /** That block, when the requests differ in a block (absent when they are identical). */
  readonly firstDifference?: BlockChange | undefined
  /** Blocks the two requests share, and their estimated tokens. */
  readonly shared: { readonly blocks: number; readonly tokens: number }
  /** The block the expected read ends at, when there is one. */
  readonly readThrough?: string | undefined
  readonly usage: MissUsage
  /** When the reported read differs from the expected one, what that suggests. */
  readonly discrepancy?: string | undefined
  /** One line for people: `message 4 edited (text at messages[4].content[0]); read 2,048 of 9,112 tokens`. */
  readonly summary: string
}

/** Options of `explainMiss`. */
export interface ExplainMissOptions {
  /** Body format; detected from the fields otherwise (see `detectFormat`). */
  readonly format?: BodyFormat | undefined
  /** For AI SDK bodies: which provider renders them (default: the one whose markers they carry, else anthropic). */
  readonly target?: NativeTarget | undefined
  /** Model id, for bodies that do not name one (Converse without `modelId`, AI SDK messages). */
  readonly model?: string | undefined
  /** Send times in seconds. Default: the next request 2 s after the previous (no expiry). */
  readonly previousAt?: number | undefined
  readonly nextAt?: number | undefined
  /** What the provider reported for the next request: neutral usage or a decoded one. */
  readonly reported?: Usage | undefined
  readonly countTokens?: ((text: string) => number) | undefined
  /** Resolve the model table as of this date (`YYYY-MM[-DD]`). */
  readonly asOf?: string | undefined
}

const SIM_PROVIDER: Readonly<Record<Exclude<BodyFormat, "ai-sdk">, SimProvider>> = {
  "anthropic": "anthropic",
  "bedrock-converse": "bedrock",
  "openai-chat": "openai",
  "openai-responses": "openai",
  "gemini": "gemini"
}

const fmt = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")

/** Provider options as the AI SDK types them: an object of objects (other members dropped). */
const providerOptionsOf = (value: Record<string, unknown>): Record<string, Record<string, unknown>> =>
  Object.fromEntries(Object.entries(value).filter((e): e is [string, Record<string, unknown>] => isRecord(e[1])))

/** Rewrite an AI SDK body (`{ system?, messages }` or a prompt array) as a native one, keeping paths to its messages. */
const fromAiSdk = (body: unknown, target: NativeTarget, model: string): { readonly native: Record<string, unknown>; readonly paths: ReadonlyArray<string> } => {
  const record = isRecord(body) ? body : {}
  const messages: Array<PromptMessage> = []
  const paths: Array<string> = []
  if (typeof record["system"] === "string") {
    messages.push({ role: "system", content: record["system"] })
    paths.push("system")
  }
  const list = Array.isArray(body) ? body : Array.isArray(record["messages"]) ? record["messages"] : []
  list.forEach((m: unknown, i: number) => {
    if (!isRecord(m) || typeof m["role"] !== "string") return
    const content = m["content"]
    const message: PromptMessage = {
      role: m["role"],
      content: typeof content === "string" ? content : Array.isArray(content) ? content.filter(isRecord).map((p) => ({ ...p, type: typeof p["type"] === "string" ? p["type"] : "unknown" })) : "",
      ...(isRecord(m["providerOptions"]) ? { providerOptions: providerOptionsOf(m["providerOptions"]) } : {})
    }
    messages.push(message)
    const parts = partsOf(message)
    if (m["role"] === "system" || typeof content === "string") paths.push(`messages[${i}].content`)
    else parts.forEach((_, j) => paths.push(`messages[${i}].content[${j}]`))
  })
  const prompt: Prompt = messages
  return { native: nativeBodyOf(prompt, target, model), paths }
}

const markersIn = (value: unknown): NativeTarget | undefined => {
  const text = JSON.stringify(value) ?? ""
  return text.includes("\"cachePoint\"") ? "bedrock" : text.includes("\"cacheControl\"") || text.includes("\"cache_control\"") ? "anthropic" : undefined
}

/** Where a change sits, for the reason's wording. */
const describeChange = (prev: WalkedBody, next: WalkedBody, d: number): BlockChange => {
  const a = prev.blocks[d]
  const b = next.blocks[d]
  if (a === undefined && b !== undefined) return { type: "appended", path: b.path, kind: b.kind, after: b.preview }
  if (b === undefined && a !== undefined) return { type: "removed", path: a.path, kind: a.kind, before: a.preview }
  // A block of the previous request that reappears later in the next one: something was inserted before it.
  const inserted = a !== undefined && next.blocks.slice(d + 1, d + 9).some((x) => x.identity === a.identity)
  const removed = b !== undefined && prev.blocks.slice(d + 1, d + 9).some((x) => x.identity === b.identity)
  const type = inserted ? "inserted" : removed ? "removed" : "edited"
  const at = type === "removed" ? a! : b!
  return { type, path: at.path, kind: at.kind, before: a?.preview, after: b?.preview }
}

const sectionOf = (block: BodyBlock | undefined): BodyBlock["section"] | undefined => block?.section

/** The reason for a content divergence at block `d`. */
const divergenceReason = (prev: WalkedBody, next: WalkedBody, d: number): MissReason => {
  const change = describeChange(prev, next, d)
  const block = next.blocks[d] ?? prev.blocks[d]
  switch (sectionOf(block)) {
    case "tools":
      return { kind: "tools-changed", change }
    case "system":
      return { kind: "system-changed", change }
    default:
      return { kind: "message-edited", message: block?.message ?? 0, change }
  }
}

const describeReason = (r: MissReason): string => {
  const where = (c: BlockChange) => `${c.kind} at ${c.path}`
  switch (r.kind) {
    case "none":
      return "nothing lost: it read all it shares with what the previous request cached"
    case "model-changed":
      return `model changed (${r.from} -> ${r.to}): caches are per model`
    case "settings-changed":
      return `request settings changed (${r.fields.join(", ")})`
    case "tools-changed":
      return `tool definitions changed: ${r.change.type} ${where(r.change)}`
    case "system-changed":
      return `system prompt changed: ${r.change.type} ${where(r.change)}`
    case "message-edited":
      return `message ${r.message} ${r.change.type === "appended" ? "appended" : r.change.type} (${where(r.change)})`
    case "ttl-expired":
      return `cache expired: ${fmt(r.idleSeconds)} s idle, longer than the ${fmt(r.ttlSeconds)} s TTL`
    case "not-yet-written":
      return `sent ${r.gapSeconds} s after the previous request, before its response started: its cache entries were not readable yet`
    case "below-minimum":
      return `prefix of ${fmt(r.prefixTokens)} tokens is below the model's ${fmt(r.minimum)}-token minimum, so it was not cached`
    case "beyond-lookback":
      return `the cached entry is ${r.distance} blocks before the next breakpoint, beyond the ${r.window}-block lookback window`
    case "no-breakpoint":
      return r.request === "previous"
        ? "the previous request had no cache breakpoint, so it wrote nothing"
        : "this request has no cache breakpoint, so it reads nothing"
    case "uncached-tail":
      return `the previous request's last breakpoint was at ${r.lastBreakpoint}; what followed it was never cached`
  }
}

/** Both bodies walked in one native format; AI SDK bodies as the provider package renders them. */
const walkPair = (previous: unknown, next: unknown, format: BodyFormat, options: ExplainMissOptions) => {
  const walkOptions = { countTokens: options.countTokens }
  if (format !== "ai-sdk") {
    return { nativeFormat: format, prevBody: previous, nextBody: next, prev: walkBody(previous, format, walkOptions), nxt: walkBody(next, format, walkOptions) }
  }
  const target = options.target ?? markersIn(previous) ?? markersIn(next) ?? "anthropic"
  const nativeFormat = target === "anthropic" ? "anthropic" as const : "bedrock-converse" as const
  const p = fromAiSdk(previous, target, options.model ?? "")
  const n = fromAiSdk(next, target, options.model ?? "")
  // Paths name the AI SDK messages when every block maps onto one of their parts.
  const relabel = (w: WalkedBody, paths: ReadonlyArray<string>): WalkedBody =>
    w.blocks.length === paths.length ? { ...w, blocks: w.blocks.map((b, i) => ({ ...b, path: paths[i]! })) } : w
  return {
    nativeFormat,
    prevBody: p.native,
    nextBody: n.native,
    prev: relabel(walkBody(p.native, nativeFormat, walkOptions), p.paths),
    nxt: relabel(walkBody(n.native, nativeFormat, walkOptions), n.paths)
  }
}

/** The first block that differs; a settings change counts from the blocks it invalidates. */
const firstDivergence = (prev: WalkedBody, nxt: WalkedBody) => {
  let content = 0
  while (content < prev.blocks.length && content < nxt.blocks.length && prev.blocks[content]!.identity === nxt.blocks[content]!.identity) content++
  const settings = Object.keys({ ...prev.settings, ...nxt.settings }).filter(
    (k) => JSON.stringify(prev.settings[k] ?? null) !== JSON.stringify(nxt.settings[k] ?? null)
  )
  const firstMessage = nxt.blocks.findIndex((b) => b.section === "messages")
  const settingsAt = settings.length === 0 ? Number.POSITIVE_INFINITY : prev.settingsScope === "all" ? 0 : Math.max(0, firstMessage)
  return { block: Math.min(content, settingsAt), settings, bySettings: settingsAt <= content }
}

/** One run of the simulator over both bodies: what each request did. */
interface PairRun {
  readonly first: SimResult | undefined
  readonly second: SimResult | undefined
  readonly error?: string
}

const readOf = (r: PairRun): number => r.second?.usage.cacheRead ?? 0

/** What the provider reported against what the simulator expects, compared as shares of the prompt (counts are estimates). */
const compareReported = (expected: Usage, reported: Usage): string | undefined => {
  const prompt = promptTokens(expected)
  const expectedShare = prompt === 0 ? 0 : expected.cacheRead / prompt
  const reportedPrompt = promptTokens(reported)
  const reportedShare = reportedPrompt === 0 ? 0 : reported.cacheRead / reportedPrompt
  const tolerance = Math.max(64, 0.05 * reportedPrompt)
  if (Math.abs(reportedShare - expectedShare) * Math.max(prompt, reportedPrompt) <= tolerance) return undefined
  const [r, e] = [Math.round(100 * reportedShare), Math.round(100 * expectedShare)]
  return reportedShare < expectedShare
    ? `the provider read ${r}% of the prompt, the simulator expected ${e}%: the entry may have been evicted early, the request may have reached another cache (region, workspace, key), or the prefix is near the minimum and the provider counts tokens differently`
    : `the provider read ${r}% of the prompt, more than the ${e}% the previous request alone explains: an earlier request (or another session with the same prefix) left an entry`
}

/** When the two requests were sent, in seconds; the next one at least `previousAt`. */
interface PairTimes {
  readonly previousAt: number
  readonly nextAt: number
}

/**
 * The simulator's view of the pair under `limits`: what the next request reads after the
 * previous one as sent, sent in time, with no minimum, with no lookback limit, and sent
 * in time with no lookback limit. The simulators make an entry readable 1 s after its
 * request; 2 s later is "in time".
 */
const simulatePair = (
  provider: SimProvider,
  model: string,
  bodies: { readonly prevBody: unknown; readonly nextBody: unknown },
  limits: ModelLimits,
  times: PairTimes,
  countTokens: ExplainMissOptions["countTokens"]
) => {
  const { previousAt, nextAt } = times
  const simulate = (l: ModelLimits, at: number): PairRun => {
    const sim = makeSimulator(provider, { model: provider === "gemini" ? model.replace(/^models\//, "") : model, limits: l, ...(countTokens === undefined ? {} : { countTokens }) })
    try {
      const first = sim.send(bodies.prevBody, previousAt)
      return { first, second: sim.send(bodies.nextBody, Math.max(at, previousAt)) }
    } catch (error) {
      return { first: undefined, second: undefined, error: error instanceof Error ? error.message : String(error) }
    }
  }
  const unlimited: ModelLimits = { ...limits, lookback: { unit: limits.lookback?.unit ?? "blocks", count: 1_000_000 } }
  const actual = simulate(limits, nextAt)
  return {
    actual,
    timely: nextAt - previousAt === 2 ? actual : simulate(limits, previousAt + 2),
    relaxedMin: simulate({ ...limits, minCacheTokens: 0 }, nextAt),
    relaxedLookback: simulate(unlimited, nextAt),
    unlimitedTimely: simulate(unlimited, previousAt + 2)
  }
}

type PairRuns = ReturnType<typeof simulatePair>

/** The first cause that explains the loss, from the widest to the narrowest. */
const missReason = (input: {
  readonly prev: WalkedBody
  readonly nxt: WalkedBody
  readonly prevModel: string
  readonly model: string
  readonly divergence: ReturnType<typeof firstDivergence>
  readonly limits: ModelLimits
  readonly runs: PairRuns
  readonly gap: number
}): MissReason => {
  const { prev, nxt, prevModel, model, divergence, limits, runs, gap } = input
  const { actual, timely, relaxedMin, relaxedLookback } = runs
  const d = divergence.block
  const read = readOf(actual)
  const more = (r: PairRun) => readOf(r) > read + 0.5
  // Marker-based caches write only at breakpoints; automatic ones at every block above the minimum.
  const markerBased = !limits.automatic
  const writes = actual.first?.trace.writes ?? []
  const lastEntry = Math.max(-1, ...writes.map((w) => w.block))
  // The prefix a skipped breakpoint would have written, as the simulator counts it with no minimum.
  const belowMinimum = (): MissReason => {
    const skipped = new Set((actual.first?.trace.skipped ?? []).map((k) => k.block))
    const relaxed = relaxedMin.first?.trace.writes ?? []
    const tokens = relaxed.filter((w) => skipped.has(w.block)).at(-1)?.tokens ?? relaxed.at(-1)?.tokens ?? readOf(relaxedMin)
    return { kind: "below-minimum", prefixTokens: tokens, minimum: limits.minCacheTokens }
  }
  // A change costs what the previous request had cached after it and the next still sends:
  // blocks past the change that the provider cannot reach any more. A new prompt in place
  // of the previous one costs nothing.
  const cachedAfterChange = new Set(prev.blocks.slice(d, (markerBased ? lastEntry : prev.blocks.length - 1) + 1).map((b) => b.identity))
  let lostToChange = 0
  for (const b of nxt.blocks.slice(d)) if (cachedAfterChange.has(b.identity)) lostToChange += b.tokens

  if (prevModel !== "" && model !== "" && prevModel !== model) return { kind: "model-changed", from: prevModel, to: model }
  if (writes.length === 0) return markerBased && prev.markers.length === 0 ? { kind: "no-breakpoint", request: "previous" } : belowMinimum()
  if (more(timely)) {
    return gap < 1.5 ? { kind: "not-yet-written", gapSeconds: gap } : { kind: "ttl-expired", idleSeconds: gap, ttlSeconds: limits.ttls[0]?.seconds ?? 300 }
  }
  if (more(relaxedLookback)) {
    const entry = relaxedLookback.second?.trace.hitBlock ?? -1
    const after = nxt.markers.filter((m) => m >= entry)
    const distance = after.length === 0 ? nxt.blocks.length - 1 - entry : Math.min(...after) - entry
    return { kind: "beyond-lookback", distance, window: limits.lookback?.count ?? 20 }
  }
  if (markerBased && nxt.markers.length === 0 && read === 0 && lastEntry < d) return { kind: "no-breakpoint", request: "next" }
  if (lostToChange > 0) return divergence.bySettings ? { kind: "settings-changed", fields: divergence.settings } : divergenceReason(prev, nxt, d)
  if (more(relaxedMin)) return belowMinimum()
  if (markerBased && lastEntry < Math.min(d, prev.blocks.length) - 1) {
    return { kind: "uncached-tail", lastBreakpoint: prev.blocks[lastEntry]?.path ?? `block ${lastEntry}` }
  }
  return { kind: "none" }
}

/**
 * Explain why a request read less from the prompt cache than the request before it
 * left there. Pure: both bodies are simulated offline, nothing is sent.
 *
 * @example
 * ```ts
 * import { explainMiss } from "@strata/providers"
 * const body = (question: string) => ({
 *   model: "claude-sonnet-4-6", max_tokens: 1024,
 *   system: [{ type: "text", text: "You review TypeScript. ".repeat(400), cache_control: { type: "ephemeral" } }],
 *   messages: [{ role: "user", content: question }]
 * })
 * const why = explainMiss(body("Review src/a.ts."), body("Review src/b.ts."), { previousAt: 0, nextAt: 420 })
 * why.reason // { kind: "ttl-expired", idleSeconds: 420, ttlSeconds: 300 }
 * why.summary // "miss: cache expired: 420 s idle, longer than the 300 s TTL; read 0 of 2,304 tokens (2,300 attainable)"
 * ```
 */
export const explainMiss = (previous: unknown, next: unknown, options: ExplainMissOptions = {}): MissExplanation => {
  const format = options.format ?? detectFormat(next)
  const { nativeFormat, prevBody, nextBody, prev, nxt } = walkPair(previous, next, format, options)
  const provider = SIM_PROVIDER[nativeFormat]
  const prevModel = prev.model ?? options.model ?? ""
  const model = nxt.model ?? options.model ?? prevModel
  const divergence = firstDivergence(prev, nxt)
  const d = divergence.block
  let sharedTokens = 0
  for (let i = 0; i < d; i++) sharedTokens += nxt.blocks[i]!.tokens

  const previousAt = options.previousAt ?? 0
  const nextAt = options.nextAt ?? previousAt + 2
  const gap = nextAt - previousAt
  const limits = lookupModel(provider, model, options.asOf === undefined ? {} : { asOf: options.asOf })
  const runs = simulatePair(provider, model, { prevBody, nextBody }, limits, { previousAt, nextAt }, options.countTokens)
  const { actual } = runs
  const read = readOf(actual)
  // What the previous request left that the next could read, were it sent in time with no lookback limit.
  const attainable = Math.max(read, readOf(runs.timely), readOf(runs.unlimitedTimely))
  const expected = actual.second?.usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
  const reason = missReason({ prev, nxt, prevModel, model, divergence, limits, runs, gap })

  const verdict: MissExplanation["verdict"] = reason.kind === "none" ? "hit" : read > 0 ? "partial" : "miss"
  const hitBlock = actual.second?.trace.hitBlock ?? -1
  const readThrough = hitBlock >= 0 ? nxt.blocks[hitBlock]?.path : undefined
  const reported = options.reported
  const discrepancy = reported === undefined ? undefined : compareReported(expected, reported)
  const firstDifference = d < Math.max(prev.blocks.length, nxt.blocks.length) ? describeChange(prev, nxt, d) : undefined
  const newFrom = reason.kind === "none" && firstDifference !== undefined ? `, new from ${firstDifference.path} on` : ""
  const summary = `${verdict}: ${describeReason(reason)}; read ${fmt(expected.cacheRead)} of ${fmt(promptTokens(expected))} tokens${newFrom}` +
    (attainable > expected.cacheRead ? ` (${fmt(attainable)} attainable)` : "") +
    (reported === undefined ? "" : `; the provider reported ${fmt(reported.cacheRead)} read`) +
    (actual.error === undefined ? "" : ` (the simulator refused a body: ${actual.error})`)
  return {
    format,
    provider,
    model,
    verdict,
    reason,
    divergence: d,
    ...(firstDifference === undefined ? {} : { firstDifference }),
    shared: { blocks: d, tokens: sharedTokens },
    ...(readThrough === undefined ? {} : { readThrough }),
    usage: { expected, attainable, ...(reported === undefined ? {} : { reported }) },
    ...(discrepancy === undefined ? {} : { discrepancy }),
    summary
  }
}

/** The one-line wording of a reason, for HUDs. */
export const describeMissReason = describeReason
