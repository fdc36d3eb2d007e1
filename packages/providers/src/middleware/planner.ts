/**
 * Where to put cache breakpoints in an application's own prompts, call after call: a
 * pure planner that follows the prompts' stable prefix and mirrors the entries its
 * breakpoints wrote, so each call reads the longest live entry (bridging the lookback
 * window with a breakpoint on it when needed) and writes where the next call will read.
 * Rules come from the model table: marker slots, minimum prefix, lookback, TTLs. It never
 * leaves out the trailing breakpoint a plain transcript sets for want of a token estimate:
 * the provider ignores a breakpoint on a prefix it finds too short, at no charge.
 */
import { hash } from "node:crypto"
import { lookupModel, type ModelLimits } from "../models.ts"
import { markerOf, aiSdkPromptBlocks, toolsPrefix, type NativeTarget, type Prompt, type AiSdkPromptBlock, type PromptTool } from "./prompt.ts"

/** Why a breakpoint was placed. */
export type MarkerRole =
  /** On the longest live cache entry, which no later breakpoint's lookback window reaches. */
  | "read"
  /** On the last message, so the next call can read everything sent now. */
  | "trailing"
  /** On the end of the prefix the recent calls kept, when they rewrite what follows. */
  | "stable"
  /** On the last system message: a long-lived anchor that survives history rewrites. */
  | "system"

/** A breakpoint the planner places. */
export interface PlannedMarker {
  readonly role: MarkerRole
  /** Message index in the prompt. */
  readonly message: number
  /** Part index for a part-level marker (Anthropic), or -1 for the message's end. */
  readonly part: number
  /** Block index in the prompt's prefix (see `aiSdkPromptBlocks`). */
  readonly block: number
  /** Estimated prefix tokens through the marker. */
  readonly tokens: number
  /** `5m` or `1h` (Bedrock through the AI SDK: always the default). */
  readonly ttl: "5m" | "1h"
  /** The estimate puts this trailing breakpoint under the model's minimum: placed, not counted on as an entry. */
  readonly tentative?: boolean
}

/** What the planner decided for one call. */
export interface CachePlan {
  readonly markers: ReadonlyArray<PlannedMarker>
  /** Markers the application had already set (they take slots first). */
  readonly existing: number
  /** Blocks the prompt shares with the previous call's. */
  readonly sharedBlocks: number
  /** The block of the longest live entry this call should read, or -1. */
  readonly readBlock: number
  /** Estimated prompt tokens, tool definitions included (calibrated). */
  readonly promptTokens: number
  /** Why candidate positions were not used. */
  readonly skipped: ReadonlyArray<string>
}

export interface CachePlannerOptions {
  readonly target: NativeTarget
  /** Model id, for the model table's limits. */
  readonly model: string
  /** Use these limits instead of looking the model up. */
  readonly limits?: ModelLimits | undefined
  /** TTL of the conversation's breakpoints. Default `5m`. */
  readonly ttl?: "5m" | "1h" | undefined
  /** TTL of the system and stable-prefix breakpoints. Default: `ttl`. */
  readonly prefixTtl?: "5m" | "1h" | undefined
  readonly countTokens?: ((text: string) => number) | undefined
  readonly imageTokens?: number | undefined
  /**
   * Consecutive calls that rewrote the previous call's messages (rather than appending
   * to them) after which the trailing breakpoint is left out: its write would not be
   * read. Default 2.
   */
  readonly rewritesBeforeNoTrailing?: number | undefined
}

/** A stateful planner for one conversation (one model instance or session key). */
export interface CachePlanner {
  readonly limits: ModelLimits
  /**
   * Plan the breakpoints of a prompt sent at `atSeconds` with these tool definitions (the
   * call's `tools`, which the provider caches ahead of the prompt) and remember what they write.
   */
  readonly plan: (prompt: Prompt, atSeconds: number, tools?: ReadonlyArray<PromptTool> | undefined) => CachePlan
  /** Scale token estimates by what the provider reported: the plan's `promptTokens` against the prompt tokens it billed. */
  readonly calibrate: (estimatedPromptTokens: number, reportedPromptTokens: number) => void
}

interface Entry {
  expiresAt: number
  readonly seconds: number
}

const TTL_SECONDS = { "5m": 300, "1h": 3600 } as const

/**
 * Per-checkpoint minimum (Bedrock): how far above the minimum the estimated segment of a
 * trailing checkpoint that follows another must be. The estimate counts the AI SDK's parts,
 * not the provider's rendering of them, and can be that far off.
 */
const TRAILING_MARGIN = 1.5

const sha = (text: string): string => hash("sha256", text, "hex")

/** Chained hashes: `hashes[i]` identifies the prefix through block i, after the tool definitions. */
const chain = (tools: string, blocks: ReadonlyArray<AiSdkPromptBlock>): ReadonlyArray<string> => {
  const out: Array<string> = []
  let h = tools === "" ? "" : sha(`tools\u0000${tools}`)
  for (const b of blocks) {
    h = sha(`${h}\u0000${b.identity}`)
    out.push(h)
  }
  return out
}

const countMarkers = (prompt: Prompt, tools: ReadonlyArray<PromptTool>, target: NativeTarget): number => {
  let n = 0
  for (const tool of tools) if (markerOf(tool.providerOptions, target) !== undefined) n++
  for (const message of prompt) {
    if (markerOf(message.providerOptions, target) !== undefined) n++
    if (typeof message.content !== "string") for (const part of message.content) if (markerOf(part.providerOptions, target) !== undefined) n++
  }
  return n
}

/** A marker the planner would like to set: its role and the block it would sit on (-1: none). */
interface Candidate {
  readonly role: MarkerRole
  readonly block: number
  /** Placed although the estimate puts it under the minimum (see `chooseMarkers`). */
  readonly tentative?: boolean
}

type Block = AiSdkPromptBlock & { readonly tokens: number }

/** Forget expired entries, then the newest block whose prefix is still cached (-1: none). */
const newestCachedBlock = (entries: Map<string, Entry>, hashes: ReadonlyArray<string>, at: number): number => {
  for (const [key, e] of entries) if (e.expiresAt <= at) entries.delete(key)
  for (let i = hashes.length - 1; i >= 0; i--) if (entries.has(hashes[i]!)) return i
  return -1
}

/**
 * The markers worth setting, most valuable first: on the cached prefix read back, at the
 * end (unless recent calls kept rewriting), where a rewrite left the prefix stable, and at
 * the end of the system prompt. Bedrock takes markers at message ends only; thinking
 * blocks cannot carry one.
 */
const candidatesFor = (
  state: {
    readonly prompt: Prompt
    readonly blocks: ReadonlyArray<Block>
    readonly target: NativeTarget
    readonly readBlock: number
    readonly shared: number
    readonly previous: ReadonlyArray<string> | undefined
    readonly trailing: boolean
    readonly lookback: number
  }
): Array<Candidate> => {
  const { blocks, readBlock, shared, previous, trailing } = state
  const markable = (i: number) =>
    i >= 0 && i < blocks.length && blocks[i]!.kind !== "reasoning" && (state.target === "anthropic" || blocks[i]!.messageEnd)
  const lastMarkableBefore = (end: number) => {
    let i = end - 1
    while (i >= 0 && !markable(i)) i--
    return i
  }
  const candidates: Array<Candidate> = []
  const last = blocks.length - 1
  if (readBlock >= 0 && markable(readBlock) && !(trailing && last - readBlock < state.lookback)) candidates.push({ role: "read", block: readBlock })
  if (trailing && markable(last)) candidates.push({ role: "trailing", block: last })
  if (previous !== undefined && shared < previous.length && shared > 0) candidates.push({ role: "stable", block: lastMarkableBefore(shared) })
  let systemEnd = -1
  for (let i = 0; i < blocks.length && state.prompt[blocks[i]!.message]!.role === "system"; i++) systemEnd = i
  if (systemEnd >= 0) candidates.push({ role: "system", block: systemEnd })
  return candidates
}

/**
 * The candidates that fit, in order, each noted in `skipped` when it does not: a free
 * slot, and the model's minimum, which applies to the whole prefix (Anthropic) or to
 * each checkpoint's segment since the previous one (Bedrock); a set is kept only if
 * every marker passes. The trailing candidate is the exception: when the estimate puts
 * it under the minimum it still takes a free slot, as `tentative` (the provider caches
 * nothing there and charges nothing if the prefix is that short, and writes what the
 * next call reads if the estimate was short: tool framing, another tokenizer), so the
 * plan never caches less than one trailing breakpoint would. Sorted by block.
 */
const chooseMarkers = (
  candidates: ReadonlyArray<Candidate>,
  cumulative: ReadonlyArray<number>,
  limits: ModelLimits,
  perCheckpoint: boolean,
  slots: number,
  skipped: Array<string>
): Array<Candidate> => {
  const fits = (set: ReadonlyArray<Candidate>): boolean => {
    let before = 0
    for (const { block: b, role } of [...set].sort((x, y) => x.block - y.block)) {
      const tokens = cumulative[b]!
      // Per checkpoint, a marker before the trailing one shortens the trailing one's
      // segment: it must clear the minimum with a margin for the estimate, or the provider
      // may drop the write the next call reads, which a lone trailing checkpoint keeps.
      const minimum = perCheckpoint && role === "trailing" && before > 0 ? limits.minCacheTokens * TRAILING_MARGIN : limits.minCacheTokens
      if ((perCheckpoint ? tokens - before : tokens) < minimum) return false
      before = tokens
    }
    return true
  }
  const chosen: Array<Candidate> = []
  for (const c of candidates) {
    if (c.block < 0 || chosen.some((m) => m.block === c.block)) continue
    if (slots === 0) {
      skipped.push(`${c.role}: no marker slot left (${limits.family} allows ${limits.maxBreakpoints})`)
      continue
    }
    if (!fits([...chosen.filter((m) => m.tentative !== true), c])) {
      const tokens = Math.round(cumulative[c.block]!)
      if (c.role === "trailing") {
        const what = perCheckpoint ? `its checkpoint (prefix ${tokens} tokens) holds less than ${limits.family}'s ${limits.minCacheTokens}-token minimum per checkpoint` : `the prefix of ${tokens} tokens is below ${limits.family}'s ${limits.minCacheTokens}-token minimum`
        skipped.push(`trailing: by the estimate ${what}; placed anyway (the provider ignores it at no charge if so) and not counted on`)
        chosen.push({ ...c, tentative: true })
        slots--
        continue
      }
      skipped.push(perCheckpoint
        ? `${c.role}: with the breakpoints kept, a checkpoint (prefix ${tokens} tokens) would hold less than ${limits.family}'s ${limits.minCacheTokens}-token minimum per checkpoint`
        : `${c.role}: the prefix of ${tokens} tokens is below ${limits.family}'s ${limits.minCacheTokens}-token minimum`)
      continue
    }
    chosen.push(c)
    slots--
  }
  return chosen.sort((a, b) => a.block - b.block)
}

/** The chosen markers with their TTLs, which must not increase along the prefix: an earlier marker takes the longest later TTL. */
const withTtls = (
  chosen: ReadonlyArray<Candidate>,
  blocks: ReadonlyArray<Block>,
  cumulative: ReadonlyArray<number>,
  ttl: "5m" | "1h",
  prefixTtl: "5m" | "1h"
): Array<PlannedMarker> => {
  const ttls = chosen.map((c) => (c.role === "system" || c.role === "stable" ? prefixTtl : ttl))
  for (let i = ttls.length - 2; i >= 0; i--) if (ttls[i + 1] === "1h") ttls[i] = "1h"
  return chosen.map((c, i): PlannedMarker => {
    const b = blocks[c.block]!
    const messageLevel = b.messageEnd
    return {
      role: c.role,
      message: b.message,
      part: messageLevel ? -1 : b.part,
      block: c.block,
      tokens: Math.round(cumulative[c.block]!),
      ttl: ttls[i]!,
      ...(c.tentative === true ? { tentative: true } : {})
    }
  })
}

/** What the provider will do with the request: refresh the entry it reads and write one at every marker above it. */
const recordEntries = (entries: Map<string, Entry>, markers: ReadonlyArray<PlannedMarker>, hashes: ReadonlyArray<string>, readBlock: number, at: number): void => {
  for (const m of markers) {
    if (m.tentative === true) continue
    const seconds = TTL_SECONDS[m.ttl]
    const key = hashes[m.block]!
    const e = entries.get(key)
    if (e === undefined || e.seconds <= seconds) entries.set(key, { expiresAt: at + seconds, seconds })
    else e.expiresAt = at + e.seconds
  }
  if (readBlock >= 0) {
    const e = entries.get(hashes[readBlock]!)
    if (e !== undefined) e.expiresAt = Math.max(e.expiresAt, at + e.seconds)
  }
}

/**
 * Make a planner. It keeps the previous call's blocks and the entries its markers
 * wrote (with their expiry), and nothing else.
 *
 * @example
 * ```ts
 * import { makeCachePlanner } from "@strata/providers"
 * const planner = makeCachePlanner({ target: "anthropic", model: "claude-sonnet-4-6" })
 * const prompt = [
 *   { role: "system", content: "You review TypeScript. ".repeat(400) },
 *   { role: "user", content: [{ type: "text", text: "Review src/a.ts." }] }
 * ]
 * planner.plan(prompt, Date.now() / 1000).markers.map((m) => m.message) // [0, 1]
 * ```
 */
export const makeCachePlanner = (options: CachePlannerOptions): CachePlanner => {
  const limits = options.limits ?? lookupModel(options.target, options.model)
  const supports1h = options.target === "anthropic" && limits.ttls.some((t) => t.name === "1h")
  const ttl = supports1h ? (options.ttl ?? "5m") : "5m"
  const prefixTtl = supports1h ? (options.prefixTtl ?? ttl) : "5m"
  const lookback = limits.lookback?.unit === "blocks" ? limits.lookback.count : 20
  const rewritesLimit = options.rewritesBeforeNoTrailing ?? 2
  const perCheckpoint = options.target === "bedrock"
  const entries = new Map<string, Entry>()
  let previous: ReadonlyArray<string> | undefined
  let rewrites = 0
  let scale = 1

  const plan = (prompt: Prompt, at: number, tools: ReadonlyArray<PromptTool> = []): CachePlan => {
    const raw = aiSdkPromptBlocks(prompt, { countTokens: options.countTokens, imageTokens: options.imageTokens })
    const blocks = raw.map((b) => ({ ...b, tokens: b.tokens * scale }))
    // The tool definitions come first in the provider's prefix: they count toward every
    // breakpoint's minimum, and a change to them is a change to every prefix.
    const definitions = toolsPrefix(tools, { countTokens: options.countTokens })
    const hashes = chain(definitions.identity, blocks)
    const cumulative: Array<number> = []
    let total = definitions.tokens * scale
    for (const b of blocks) cumulative.push((total += b.tokens))
    const skipped: Array<string> = []

    // How this prompt relates to the previous one: appended to it, or rewrote part of it.
    let shared = 0
    if (previous !== undefined) {
      while (shared < previous.length && shared < hashes.length && previous[shared] === hashes[shared]) shared++
      if (shared < previous.length) rewrites++
      else rewrites = 0
    }

    const readBlock = newestCachedBlock(entries, hashes, at)
    const trailing = rewrites < rewritesLimit
    if (!trailing) skipped.push(`trailing: the last ${rewrites} calls rewrote the previous call's messages, so a write at the end would not be read`)
    const candidates = candidatesFor({ prompt, blocks, target: options.target, readBlock, shared, previous, trailing, lookback })

    const existing = countMarkers(prompt, tools, options.target)
    const slots = Math.max(0, limits.maxBreakpoints - existing)
    if (existing > 0) skipped.push(`${existing} marker${existing === 1 ? "" : "s"} set by the application take${existing === 1 ? "s" : ""} ${existing} of ${limits.maxBreakpoints} slots`)

    const chosen = chooseMarkers(candidates, cumulative, limits, perCheckpoint, slots, skipped)
    const markers = withTtls(chosen, blocks, cumulative, ttl, prefixTtl)
    recordEntries(entries, markers, hashes, readBlock, at)
    previous = hashes
    return { markers, existing, sharedBlocks: shared, readBlock, promptTokens: Math.round(total), skipped }
  }

  return {
    limits,
    plan,
    calibrate: (estimated, reported) => {
      // Reported prompts include tool definitions and framing, so the factor is kept within reason.
      if (estimated > 0 && reported > 0) scale = Math.min(2, Math.max(0.5, (scale * reported) / estimated))
    }
  }
}
