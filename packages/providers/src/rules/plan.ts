/**
 * The breakpoint rules every plugin enforces, as one pure planning step: move marks
 * off empty or unmarkable messages, drop those below the model's minimum prefix,
 * merge the least valuable when there are more than the provider's slots, and keep
 * TTLs non-increasing along the prefix. Each dropped breakpoint says why.
 */
import type { Breakpoint, CachedTier, CacheTtl, DroppedBreakpoint, NeutralRequest } from "@strata/core"
import type { ModelLimits } from "../models.ts"
import { cleanMessages, type CleanMessage } from "./content.ts"
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
  /** Messages a marker may sit on (default: any non-empty message). */
  readonly markable?: ((message: CleanMessage) => boolean) | undefined
  /** Why a message is not markable, for notes. */
  readonly unmarkableReason?: string | undefined
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
  /** Adjustments that did not drop anything (moved marks, raised TTLs). */
  readonly notes: ReadonlyArray<string>
}

const ttlRank = (ttl: CacheTtl | undefined): number => (ttl === "1h" ? 1 : 0)
const maxTtl = (a: CacheTtl | undefined, b: CacheTtl | undefined): CacheTtl | undefined =>
  a === undefined ? b : b === undefined ? a : ttlRank(a) >= ttlRank(b) ? a : b


interface Candidate {
  tier: CachedTier
  target: "tools" | "message"
  messageIndex: number
  requestedIndex: number
  prefixTokens: number
  ttl: CacheTtl | undefined
}

/**
 * Plan where a request's breakpoints go for one provider and model.
 *
 * @example
 * ```ts
 * import { lookupModel, planBreakpoints } from "@strata/providers"
 * const plan = planBreakpoints(request, { limits: lookupModel("anthropic", request.model) })
 * plan.breakpoints // at most 4, each at a prefix >= the model minimum
 * plan.dropped // [{ tier: "L3", reason: "prefix of 812 tokens is below ..." }]
 * ```
 */
export const planBreakpoints = (request: NeutralRequest, options: PlanOptions): BreakpointPlan => {
  const { limits } = options
  const mode = options.mode ?? "markers"
  const toolTokens = options.toolTokens ?? 0
  const messages = cleanMessages(request.messages)
  const prefix = prefixTokens(request, toolTokens)
  const dropped: Array<DroppedBreakpoint> = []
  const notes: Array<string> = []
  const ttlAware = limits.ttls.some((t) => t.name === "5m")
  const supports1h = limits.ttls.some((t) => t.name === "1h")
  const markable = options.markable ?? (() => true)

  // 1. Valid, distinct message indices, in prefix order.
  const sorted = [...request.breakpoints].sort((a, b) => a.messageIndex - b.messageIndex)
  const candidates: Array<Candidate> = []
  let previousIndex = -1
  for (const bp of sorted) {
    if (!Number.isInteger(bp.messageIndex) || bp.messageIndex < 0 || bp.messageIndex >= messages.length) {
      dropped.push({ tier: bp.tier, reason: `message index ${bp.messageIndex} is outside the request's ${messages.length} messages` })
      continue
    }
    const duplicate = candidates.find((c) => c.requestedIndex === bp.messageIndex)
    if (duplicate !== undefined) {
      dropped.push({ tier: bp.tier, reason: `marks the same message (${bp.messageIndex}) as the ${duplicate.tier} breakpoint` })
      continue
    }
    // 2. Move the mark back to the last non-empty, markable message of its block.
    let at = bp.messageIndex
    while (at > previousIndex && !(messages[at]!.parts.length > 0 && markable(messages[at]!))) at--
    if (at <= previousIndex) {
      dropped.push({
        tier: bp.tier,
        reason: `its block (messages ${previousIndex + 1}..${bp.messageIndex}) has no ${options.markable === undefined ? "non-empty" : "markable"} message${options.unmarkableReason === undefined ? "" : ` (${options.unmarkableReason})`}`
      })
      continue
    }
    if (at !== bp.messageIndex) {
      const why = messages[bp.messageIndex]!.parts.length === 0 ? "is empty" : (options.unmarkableReason ?? "cannot carry a marker")
      notes.push(`${bp.tier} breakpoint moved from message ${bp.messageIndex} to ${at}: message ${bp.messageIndex} ${why}`)
    }
    candidates.push({ tier: bp.tier, target: "message", messageIndex: at, requestedIndex: bp.messageIndex, prefixTokens: prefix[at]!, ttl: requestedTtl(bp, options.ttl, ttlAware) })
    previousIndex = bp.messageIndex
  }

  // The tool definitions come first in every provider's prefix.
  if (options.toolMarker === true && toolTokens > 0) {
    if (limits.toolBreakpoints) {
      candidates.unshift({ tier: "L0", target: "tools", messageIndex: -1, requestedIndex: -1, prefixTokens: toolTokens, ttl: ttlAware ? (options.ttl ?? "5m") : undefined })
    } else {
      notes.push(`no marker on the tool definitions: ${limits.family} does not take one`)
    }
  }

  // 3. TTLs the model does not offer fall back to its default.
  if (ttlAware && !supports1h) {
    for (const c of candidates) {
      if (c.ttl === "1h") {
        c.ttl = "5m"
        notes.push(`${c.tier} TTL lowered from 1h to 5m: ${limits.family} offers only 5m${provenanceOf(limits, "ttls")}`)
      }
    }
  }

  // 4. Minimum cacheable prefix (cumulative; stacked: the k-th marker needs k × minimum).
  const min = limits.minCacheTokens
  const stacked = options.spacing === "stacked"
  const kept: Array<Candidate> = []
  for (const c of candidates) {
    const need = stacked ? min * (kept.length + 1) : min
    if (c.prefixTokens < need) {
      const what = c.target === "tools" ? "tool definitions" : "prefix"
      const rule = stacked && kept.length > 0
        ? `${need} tokens (${kept.length + 1} × the ${min}-token minimum per checkpoint)`
        : `the ${min}-token minimum`
      dropped.push({
        tier: c.tier,
        reason: `${what} of ${c.prefixTokens} tokens is below ${rule} for ${limits.family}${provenanceOf(limits, "minCacheTokens")}; the provider would not cache it, so its content joins the next breakpoint's prefix`
      })
      continue
    }
    kept.push(c)
  }

  // 5. Slots: merge the least valuable breakpoint into the next until they fit.
  if (mode === "markers") {
    const max = options.maxBreakpoints ?? limits.maxBreakpoints
    const reserved = options.reservedSlots ?? 0
    const slots = Math.max(0, max - reserved)
    const slotText = `${slots} marker slot${slots === 1 ? "" : "s"} (${limits.family} allows ${max}${reserved > 0 ? `, ${reserved} taken by ${options.reservedFor ?? "other markers"}` : ""})`
    if (slots === 0) {
      for (const c of kept.splice(0)) dropped.push({ tier: c.tier, reason: `no marker slots left: ${slotText}` })
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
      dropped.push({
        tier: gone!.tier,
        reason: `merged into the ${next.tier} breakpoint: more breakpoints than ${slotText}, and its ${smallest}-token segment is the least valuable`
      })
    }
  }

  // 6. TTLs non-increasing along the prefix: raise earlier ones to the longest later TTL.
  if (ttlAware) {
    let longest: CacheTtl | undefined
    for (let i = kept.length - 1; i >= 0; i--) {
      const c = kept[i]!
      if (ttlRank(longest) > ttlRank(c.ttl)) {
        notes.push(`${c.tier}${c.target === "tools" ? " (tools)" : ""} TTL raised from ${c.ttl ?? "5m"} to ${longest}: a later breakpoint asks for ${longest} and TTLs must not increase along the prefix`)
        c.ttl = longest
      }
      longest = maxTtl(longest, c.ttl)
    }
  }

  return {
    messages,
    prefix,
    toolTokens,
    breakpoints: kept.map((c) => ({ tier: c.tier, target: c.target, messageIndex: c.messageIndex, prefixTokens: c.prefixTokens, ttl: c.ttl })),
    dropped,
    notes
  }
}

const requestedTtl = (bp: Breakpoint, fallback: CacheTtl | undefined, ttlAware: boolean): CacheTtl | undefined =>
  ttlAware ? (bp.ttl ?? fallback ?? "5m") : undefined

const provenanceOf = (limits: ModelLimits, field: "ttls" | "minCacheTokens"): string => {
  const p = limits.provenance[field]
  return p === undefined ? "" : ` (${p.source}, ${p.asOf})`
}
