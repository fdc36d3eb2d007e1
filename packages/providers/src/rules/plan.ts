/**
 * The breakpoint rules every plugin enforces, as one pure planning step: move marks
 * off empty or unmarkable messages (and off thinking blocks), drop those below the
 * model's minimum prefix, merge the least valuable when there are more than the
 * provider's slots, keep TTLs non-increasing along the prefix, and say where a
 * breakpoint is too many content blocks from the previous one for the provider's
 * lookback. Each dropped breakpoint says why.
 */
import type { Breakpoint, CachedTier, CacheTtl, DroppedBreakpoint, NeutralRequest } from "@strata/core"
import type { ModelLimits } from "../models.ts"
import { cleanMessages, markablePart, type CleanMessage, type KeepReasoning } from "./content.ts"
import { prefixTokens } from "./prefix.ts"

/** How a plugin's provider takes markers. */
export interface PlanOptions {
  readonly limits: ModelLimits
  /** TTL for breakpoints that do not name one. */
  readonly ttl?: CacheTtl | undefined
  /** Tokens of the tool definitions, which render before everything else. */
  readonly toolTokens?: number | undefined
  /** Put a marker on the tool definitions; it takes a slot like any other. */
  readonly toolMarker?: boolean | undefined
  /** Slots taken by markers the plugin adds itself (Anthropic's automatic marker, OpenAI's implicit breakpoint). */
  readonly reservedSlots?: number | undefined
  /** What the reserved slots are, for drop reasons. */
  readonly reservedFor?: string | undefined
  /** Override the model's marker count (e.g. a gateway that uses only the last marker). */
  readonly maxBreakpoints?: number | undefined
  /**
   * `markers` (default): explicit markers, capped by slots. `automatic`: the provider
   * caches prefixes by itself; breakpoints are reported where the prefix is cacheable
   * and never capped.
   */
  readonly mode?: "markers" | "automatic" | undefined
  /** `stacked`: the k-th marker needs k × the minimum (Bedrock's per-checkpoint rule). */
  readonly spacing?: "cumulative" | "stacked" | undefined
  /** Messages a marker may sit on (default: any message with a part that is not reasoning). */
  readonly markable?: ((message: CleanMessage) => boolean) | undefined
  /** Why a message is not markable, for notes. */
  readonly unmarkableReason?: string | undefined
  /** Which reasoning parts the provider takes back; the others are left out of `messages` (default: none). */
  readonly reasoning?: KeepReasoning | undefined
}

/** A breakpoint the plugin will emit. `messageIndex` is -1 for the tool definitions. */
export interface PlannedBreakpoint {
  readonly tier: CachedTier
  readonly target: "tools" | "message"
  readonly messageIndex: number
  readonly prefixTokens: number
  /** Anthropic-style TTL; undefined for providers whose TTLs are not 5m/1h. */
  readonly ttl: CacheTtl | undefined
}

/** The outcome of planning: cleaned messages, the breakpoints to emit, the dropped ones. */
export interface BreakpointPlan {
  readonly messages: ReadonlyArray<CleanMessage>
  /** Cumulative prefix tokens through each message (tools included). */
  readonly prefix: ReadonlyArray<number>
  readonly toolTokens: number
  readonly breakpoints: ReadonlyArray<PlannedBreakpoint>
  readonly dropped: ReadonlyArray<DroppedBreakpoint>
  /** Adjustments that did not drop anything (moved marks, raised TTLs, lookback warnings). */
  readonly notes: ReadonlyArray<string>
}

interface Candidate {
  tier: CachedTier
  target: "tools" | "message"
  messageIndex: number
  requestedIndex: number
  prefixTokens: number
  ttl: CacheTtl | undefined
}

/** What the steps share: the request's cleaned messages and the running report. */
interface Planning {
  readonly options: PlanOptions
  readonly limits: ModelLimits
  readonly messages: ReadonlyArray<CleanMessage>
  readonly prefix: ReadonlyArray<number>
  readonly toolTokens: number
  readonly ttlAware: boolean
  readonly dropped: Array<DroppedBreakpoint>
  readonly notes: Array<string>
}

const ttlRank = (ttl: CacheTtl | undefined): number => (ttl === "1h" ? 1 : 0)
const maxTtl = (a: CacheTtl | undefined, b: CacheTtl | undefined): CacheTtl | undefined =>
  a === undefined ? b : b === undefined ? a : ttlRank(a) >= ttlRank(b) ? a : b

const requestedTtl = (bp: Breakpoint, fallback: CacheTtl | undefined, ttlAware: boolean): CacheTtl | undefined =>
  ttlAware ? (bp.ttl ?? fallback ?? "5m") : undefined

const provenanceOf = (limits: ModelLimits, field: "ttls" | "minCacheTokens"): string => {
  const p = limits.provenance[field]
  return p === undefined ? "" : ` (${p.source}, ${p.asOf})`
}

/**
 * Plan where a request's breakpoints go for one provider and model.
 *
 * @example
 * ```ts
 * import type { NeutralRequest } from "@strata/core"
 * import { lookupModel, planBreakpoints } from "@strata/providers"
 * const system = { role: "system", content: "You review TypeScript. ".repeat(400) } as const
 * const notes = { role: "user", content: "Notes: keep edits small." } as const
 * const request: NeutralRequest = {
 *   model: "claude-sonnet-4-6",
 *   blocks: [
 *     { tier: "L0", messages: [system], items: [], tokens: 2000 },
 *     { tier: "L1", messages: [notes], items: [], tokens: 10 }
 *   ],
 *   messages: [system, notes, { role: "user", content: "Review src/a.ts." }],
 *   breakpoints: [{ tier: "L0", messageIndex: 0 }, { tier: "L1", messageIndex: 1 }]
 * }
 * const plan = planBreakpoints(request, { limits: lookupModel("anthropic", request.model) })
 * plan.breakpoints.map((b) => b.tier) // at most 4, each at a prefix >= the model minimum
 * plan.dropped.map((d) => d.tier) // a block too small to be worth a cache entry of its own
 * ```
 */
export const planBreakpoints = (request: NeutralRequest, options: PlanOptions): BreakpointPlan => {
  const { limits } = options
  const toolTokens = options.toolTokens ?? 0
  const p: Planning = {
    options,
    limits,
    messages: cleanMessages(request.messages, options.reasoning),
    prefix: prefixTokens(request, toolTokens),
    toolTokens,
    ttlAware: limits.ttls.some((t) => t.name === "5m"),
    dropped: [],
    notes: []
  }
  const candidates = messageCandidates(p, request.breakpoints)
  addToolCandidate(p, candidates)
  lowerUnofferedTtls(p, candidates)
  const kept = applyMinimum(p, candidates)
  if ((options.mode ?? "markers") === "markers") fitSlots(p, kept)
  raiseEarlierTtls(p, kept)
  noteLookback(p, kept)
  return {
    messages: p.messages,
    prefix: p.prefix,
    toolTokens,
    breakpoints: kept.map((c) => ({ tier: c.tier, target: c.target, messageIndex: c.messageIndex, prefixTokens: c.prefixTokens, ttl: c.ttl })),
    dropped: p.dropped,
    notes: p.notes
  }
}

/** Steps 1-2: valid, distinct message indices in prefix order, each moved back to a message (and part) that can carry a marker. */
const messageCandidates = (p: Planning, breakpoints: ReadonlyArray<Breakpoint>): Array<Candidate> => {
  const { messages, options } = p
  const markable = options.markable ?? (() => true)
  const canMark = (m: CleanMessage) => markablePart(m) >= 0 && markable(m)
  const sorted = [...breakpoints].sort((a, b) => a.messageIndex - b.messageIndex)
  const candidates: Array<Candidate> = []
  let previousIndex = -1
  for (const bp of sorted) {
    if (!Number.isInteger(bp.messageIndex) || bp.messageIndex < 0 || bp.messageIndex >= messages.length) {
      p.dropped.push({ tier: bp.tier, reason: `message index ${bp.messageIndex} is outside the request's ${messages.length} messages` })
      continue
    }
    const duplicate = candidates.find((c) => c.requestedIndex === bp.messageIndex)
    if (duplicate !== undefined) {
      p.dropped.push({ tier: bp.tier, reason: `marks the same message (${bp.messageIndex}) as the ${duplicate.tier} breakpoint` })
      continue
    }
    let at = bp.messageIndex
    while (at > previousIndex && !canMark(messages[at]!)) at--
    if (at <= previousIndex) {
      p.dropped.push({
        tier: bp.tier,
        reason: `its block (messages ${previousIndex + 1}..${bp.messageIndex}) has no ${options.markable === undefined ? "non-empty" : "markable"} message${options.unmarkableReason === undefined ? "" : ` (${options.unmarkableReason})`}`
      })
      continue
    }
    if (at !== bp.messageIndex) p.notes.push(`${bp.tier} breakpoint moved from message ${bp.messageIndex} to ${at}: message ${bp.messageIndex} ${whyUnmarkable(messages[bp.messageIndex]!, options)}`)
    const part = markablePart(messages[at]!)
    if (part !== messages[at]!.parts.length - 1) {
      p.notes.push(`${bp.tier} breakpoint moved to part ${part} of message ${at}: a breakpoint may not sit on a thinking block`)
    }
    candidates.push({ tier: bp.tier, target: "message", messageIndex: at, requestedIndex: bp.messageIndex, prefixTokens: p.prefix[at]!, ttl: requestedTtl(bp, options.ttl, p.ttlAware) })
    previousIndex = bp.messageIndex
  }
  return candidates
}

const whyUnmarkable = (m: CleanMessage, options: PlanOptions): string =>
  m.parts.length === 0
    ? "is empty"
    : markablePart(m) < 0
      ? "holds only reasoning (a breakpoint may not sit on a thinking block)"
      : (options.unmarkableReason ?? "cannot carry a marker")

/** The tool definitions come first in every provider's prefix; a marker there takes a slot. */
const addToolCandidate = (p: Planning, candidates: Array<Candidate>): void => {
  if (p.options.toolMarker !== true || p.toolTokens <= 0) return
  if (!p.limits.toolBreakpoints) {
    p.notes.push(`no marker on the tool definitions: ${p.limits.family} does not take one`)
    return
  }
  candidates.unshift({ tier: "L0", target: "tools", messageIndex: -1, requestedIndex: -1, prefixTokens: p.toolTokens, ttl: p.ttlAware ? (p.options.ttl ?? "5m") : undefined })
}

/** Step 3: TTLs the model does not offer fall back to its default. */
const lowerUnofferedTtls = (p: Planning, candidates: ReadonlyArray<Candidate>): void => {
  if (!p.ttlAware || p.limits.ttls.some((t) => t.name === "1h")) return
  for (const c of candidates) {
    if (c.ttl !== "1h") continue
    c.ttl = "5m"
    p.notes.push(`${c.tier} TTL lowered from 1h to 5m: ${p.limits.family} offers only 5m${provenanceOf(p.limits, "ttls")}`)
  }
}

/** Step 4: the minimum cacheable prefix (cumulative; stacked: the k-th marker needs k × minimum). */
const applyMinimum = (p: Planning, candidates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const min = p.limits.minCacheTokens
  const stacked = p.options.spacing === "stacked"
  const kept: Array<Candidate> = []
  for (const c of candidates) {
    const need = stacked ? min * (kept.length + 1) : min
    if (c.prefixTokens >= need) {
      kept.push(c)
      continue
    }
    const what = c.target === "tools" ? "tool definitions" : "prefix"
    const rule = stacked && kept.length > 0
      ? `${need} tokens (${kept.length + 1} × the ${min}-token minimum per checkpoint)`
      : `the ${min}-token minimum`
    p.dropped.push({
      tier: c.tier,
      reason: `${what} of ${c.prefixTokens} tokens is below ${rule} for ${p.limits.family}${provenanceOf(p.limits, "minCacheTokens")}; the provider would not cache it, so its content joins the next breakpoint's prefix`
    })
  }
  return kept
}

/** Step 5: merge the least valuable breakpoint into the next until they fit the slots. */
const fitSlots = (p: Planning, kept: Array<Candidate>): void => {
  const max = p.options.maxBreakpoints ?? p.limits.maxBreakpoints
  const reserved = p.options.reservedSlots ?? 0
  const slots = Math.max(0, max - reserved)
  const slotText = `${slots} marker slot${slots === 1 ? "" : "s"} (${p.limits.family} allows ${max}${reserved > 0 ? `, ${reserved} taken by ${p.options.reservedFor ?? "other markers"}` : ""})`
  if (slots === 0) {
    for (const c of kept.splice(0)) p.dropped.push({ tier: c.tier, reason: `no marker slots left: ${slotText}` })
  }
  while (kept.length > slots) {
    // Never the last: it covers the most content. Among the rest, the breakpoint with
    // the smallest segment since the previous one saves the least when merged away.
    let victim = 0
    let smallest = Number.POSITIVE_INFINITY
    for (let i = 0; i < kept.length - 1; i++) {
      const segment = kept[i]!.prefixTokens - (i === 0 ? 0 : kept[i - 1]!.prefixTokens)
      if (segment <= smallest) {
        smallest = segment
        victim = i
      }
    }
    const [gone] = kept.splice(victim, 1)
    const next = kept[victim]!
    next.ttl = maxTtl(next.ttl, gone!.ttl)
    p.dropped.push({
      tier: gone!.tier,
      reason: `merged into the ${next.tier} breakpoint: more breakpoints than ${slotText}, and its ${smallest}-token segment is the least valuable`
    })
  }
}

/** Step 6: TTLs non-increasing along the prefix: raise earlier ones to the longest later TTL. */
const raiseEarlierTtls = (p: Planning, kept: ReadonlyArray<Candidate>): void => {
  if (!p.ttlAware) return
  let longest: CacheTtl | undefined
  for (let i = kept.length - 1; i >= 0; i--) {
    const c = kept[i]!
    if (ttlRank(longest) > ttlRank(c.ttl)) {
      p.notes.push(`${c.tier}${c.target === "tools" ? " (tools)" : ""} TTL raised from ${c.ttl ?? "5m"} to ${longest}: a later breakpoint asks for ${longest} and TTLs must not increase along the prefix`)
      c.ttl = longest
    }
    longest = maxTtl(longest, c.ttl)
  }
}

/**
 * Step 7: a breakpoint finds earlier cache entries only within the provider's lookback
 * (Anthropic and Bedrock: 20 content blocks, the breakpoint's own included). Every part
 * renders as one block: text, image, tool_use, tool_result and thinking alike, so a tool
 * loop fills the window fast. Say where a segment is longer than the window.
 */
const noteLookback = (p: Planning, kept: ReadonlyArray<Candidate>): void => {
  const lookback = p.limits.lookback
  if (lookback?.unit !== "blocks") return
  const blockEnd: Array<number> = []
  let blocks = 0
  for (const m of p.messages) blockEnd.push((blocks += m.parts.length))
  let previous: Candidate | undefined
  for (const c of kept) {
    if (c.target === "tools") continue
    const partsBefore = p.messages[c.messageIndex]!.parts.length - 1 - markablePart(p.messages[c.messageIndex]!)
    const at = blockEnd[c.messageIndex]! - partsBefore
    const from = previous === undefined ? 0 : blockEnd[previous.messageIndex]!
    const span = at - from
    if (span > lookback.count) {
      p.notes.push(
        `${c.tier} breakpoint is ${span} content blocks after ${previous === undefined ? "the start of the messages" : `the ${previous.tier} breakpoint`} (tool_use, tool_result and thinking blocks count); ${p.limits.family} looks back ${lookback.count} blocks from a breakpoint, so a cache entry written more than ${lookback.count} blocks before it is not found`
      )
    }
    previous = c
  }
}
