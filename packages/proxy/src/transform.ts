/**
 * The proxy's change to a request, as one pure function: what `strata proxy` sends
 * upstream, and what `strata replay --transcript` measures for the `proxy` strategy.
 *
 * In `cache` mode only the provider's cache controls change:
 * - Anthropic Messages: the `ttl` of `cache_control` markers (a lifetime chosen from the
 *   session's observed gaps, rent-or-buy), a bridging marker where a step appended more
 *   blocks than the provider's lookback window (so the previous entry is still found), and,
 *   for a client that sets no marker at all, a trailing marker and one at the end of the
 *   system prompt. At most the model's marker slots, 1h before 5m, never on a thinking
 *   block, never on an empty text block.
 * - OpenAI Responses and Chat Completions: `prompt_cache_key` when the client sent none
 *   (the session's id), so its requests reach the same cache.
 * No message is added, dropped, reordered or edited; system, tools, model, `max_tokens`
 * and sampling fields stay byte-for-byte what the client sent (the proxy forwards the
 * client's own bytes with only the changed values rewritten: `internal/body.ts`).
 * `edit` mode (`proxy-edit` in the replay) adds to that the clearing of superseded tool
 * results (`internal/edit.ts`): only `tool_result` contents change, and, for a clearing
 * while the prefix is cached, one more marker, at the cache entry before the first
 * cleared result (the bridge gives way to it: the previous request's entry is behind the
 * change). `observe` returns the body unchanged.
 */
import { lookupModel, type ModelLimits } from "@strata/providers"

import { blockOffsets, blocksOf, clearSuperseded, clearSupersededResponses, liveEntries, markable, roughTokens, SURELY_EXPIRED, trackEntries } from "./internal/edit.ts"
import type { Protocol } from "./internal/protocol.ts"
import type { SessionLedger } from "./internal/ledger.ts"
export type { Protocol, SessionLedger }

/** What the proxy may do. */
export type ProxyMode = "observe" | "cache" | "edit"

/** The part of a session's history the transform reads (see `SessionRecord`). */
export interface TransformSession {
  /** Seconds between consecutive requests of the session, oldest first (bounded). */
  readonly gaps: ReadonlyArray<number>
  /** Message content blocks of the session's previous request (0: none). */
  readonly lastBlocks: number
  /** The session's id (`prompt_cache_key` for OpenAI when the client sent none). */
  readonly id: string
  /** What the transform carried over from the session's previous request (absent: a new session). */
  readonly ledger?: SessionLedger | undefined
}


export const emptyLedger: SessionLedger = { credit: 0, lastTokens: 0, lastBet: false }

export interface TransformInput {
  readonly protocol: Protocol
  readonly mode: ProxyMode
  /** The request body, parsed. */
  readonly body: unknown
  readonly session: TransformSession
  /** Use these limits instead of the model table's row for the body's `model`. */
  readonly limits?: ModelLimits | undefined
  /**
   * Force this lifetime on the markers instead of the rent-or-buy choice (benchmarks
   * measure a perfect or a predicted choice with it; the proxy never sets it).
   */
  readonly lifetime?: "5m" | "1h" | undefined
}

export interface TransformResult {
  /** The body to send (the same object as the input when nothing changed). */
  readonly body: unknown
  /** What changed, one short phrase each (empty: nothing). */
  readonly changed: ReadonlyArray<string>
  /** The lifetime chosen for the markers (Anthropic), when the transform chose one. */
  readonly ttl?: "5m" | "1h" | undefined
  /** The session state to hand back with the session's next request. */
  readonly ledger: SessionLedger
}

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** Anthropic prices (multiples of the base input price) the rent-or-buy choice uses. */
const WRITE_5M = 1.25
const WRITE_1H = 2
const READ = 0.1
const FIVE_MINUTES = 300
const ONE_HOUR = 3600
/** Gaps a session must have shown before the transform bets on a 1h lifetime. */
const MIN_GAPS = 3
/** Share of an estimated saving the credit takes (the estimate counts JSON, the bill tokens). */
const WIN_SHARE = 0.7
const BRIDGE_SHARE = 0.5
/** Margin on the worst case of a 1h bet. */
const LOSS_MARGIN = 1.3

/** Is this message a person's prompt (a user message that answers no tool call)? */
const isPrompt = (m: unknown): boolean =>
  isRecord(m) && m["role"] === "user" && (typeof m["content"] === "string" || (Array.isArray(m["content"]) && !m["content"].some((b) => isRecord(b) && b["type"] === "tool_result")))

/** Tool rounds (assistant messages) since the conversation's latest prompt. */
const stepsSincePrompt = (messages: ReadonlyArray<unknown>): number => {
  let steps = 0
  for (let k = messages.length - 1; k >= 0; k--) {
    const m = messages[k]
    if (isPrompt(m)) break
    if (isRecord(m) && m["role"] === "assistant") steps++
  }
  return steps
}

/**
 * The session's rhythm: an agent's tool steps come seconds apart, its answer waits for a
 * person. A request that has taken as many tool rounds as the session's shortest finished
 * task looks like a task's last step; when the person usually paused 5-60 minutes after
 * an answer, its entry is worth 1h. Undefined until the session finished a task.
 */
export const rhythmTtl = (rhythm: { readonly tasks: ReadonlyArray<number>; readonly answers: number; readonly pauses: number }, steps: number): "5m" | "1h" | undefined => {
  if (rhythm.tasks.length === 0) return undefined
  return rhythm.pauses * 2 >= rhythm.answers && steps >= Math.min(...rhythm.tasks) ? "1h" : "5m"
}

/**
 * Rent or buy: a 1h entry costs `2 - 1.25` more per written token than a 5m one, and
 * saves re-writing the whole prefix (`1.25 - 0.1` per token) when the next request comes
 * after 5 minutes but within the hour. The chance of that gap is the session's own share
 * of such gaps (with a prior of one short gap and one long gap out of three, so a fresh
 * session stays on 5m unless its prefix is much larger than what it writes).
 */
export const chooseTtl = (gaps: ReadonlyArray<number>, prefixTokens: number, writeTokens: number): "5m" | "1h" => {
  // Too little rhythm to bet on: the client's own lifetimes.
  if (gaps.length < MIN_GAPS) return "5m"
  const long = gaps.filter((g) => g > FIVE_MINUTES && g <= ONE_HOUR).length
  const p = long / (gaps.length + 3)
  const saving = p * prefixTokens * (WRITE_5M - READ)
  const extra = (WRITE_1H - WRITE_5M) * Math.max(writeTokens, 1)
  return saving > extra ? "1h" : "5m"
}


/** A content block in prefix order: where it is and whether a marker may sit on it. */
interface Slot {
  readonly where: "tools" | "system" | "message"
  readonly message: number
  readonly index: number
  readonly block: Json
}

const anthropicSlots = (body: Json): { tools: Array<Slot>; system: Array<Slot>; messages: Array<Slot> } => {
  const tools: Array<Slot> = []
  const system: Array<Slot> = []
  const messages: Array<Slot> = []
  const t = body["tools"]
  if (Array.isArray(t)) t.forEach((block, index) => isRecord(block) && tools.push({ where: "tools", message: -1, index, block }))
  const s = body["system"]
  if (Array.isArray(s)) s.forEach((block, index) => isRecord(block) && system.push({ where: "system", message: -1, index, block }))
  const m = body["messages"]
  if (Array.isArray(m)) {
    m.forEach((msg, message) => {
      if (!isRecord(msg)) return
      const content = msg["content"]
      if (Array.isArray(content)) content.forEach((block, index) => isRecord(block) && messages.push({ where: "message", message, index, block }))
    })
  }
  return { tools, system, messages }
}

/** Message content blocks of an Anthropic body (strings count as one block). */
export const anthropicBlockCount = (body: unknown): number => {
  if (!isRecord(body) || !Array.isArray(body["messages"])) return 0
  let n = 0
  for (const m of body["messages"]) n += blocksOf(m)
  return n
}

/** A copy of the body in which the blocks at the given slots are replaced (structural sharing elsewhere). */
const rewriteBlocks = (body: Json, edits: ReadonlyMap<Slot, Json>): Json => {
  if (edits.size === 0) return body
  const out: Json = { ...body }
  const by = (where: Slot["where"]) => [...edits].filter(([s]) => s.where === where)
  const tools = by("tools")
  if (tools.length > 0 && Array.isArray(body["tools"])) {
    const copy = [...body["tools"]]
    for (const [s, b] of tools) copy[s.index] = b
    out["tools"] = copy
  }
  const system = by("system")
  if (system.length > 0 && Array.isArray(body["system"])) {
    const copy = [...body["system"]]
    for (const [s, b] of system) copy[s.index] = b
    out["system"] = copy
  }
  const messages = by("message")
  if (messages.length > 0 && Array.isArray(body["messages"])) {
    const copy: Array<unknown> = [...body["messages"]]
    for (const [s, b] of messages) {
      const msg = copy[s.message]
      if (!isRecord(msg) || !Array.isArray(msg["content"])) continue
      const content = [...msg["content"]]
      content[s.index] = b
      copy[s.message] = { ...msg, content }
    }
    out["messages"] = copy
  }
  return out
}

/** Blocks an Anthropic breakpoint looks back for an entry (itself included). */
const lookbackOf = (limits: ModelLimits): number => (limits.lookback?.unit === "blocks" ? limits.lookback.count : 20)

/**
 * Marker slots the cache step leaves free in this body: the model's slots less the
 * client's markers (and the two the cache step adds for a client that set none); none
 * with the automatic marker, which the cache step leaves alone.
 */
const freeMarkerSlots = (body: Json, limits: ModelLimits): number => {
  if (isRecord(body["cache_control"])) return 0
  let n = 0
  const count = (blocks: unknown) => {
    if (Array.isArray(blocks)) for (const b of blocks) if (isRecord(b) && isRecord(b["cache_control"])) n++
  }
  count(body["tools"])
  count(body["system"])
  const messages = body["messages"]
  if (Array.isArray(messages)) for (const m of messages) if (isRecord(m)) count(m["content"])
  return limits.maxBreakpoints - n - (n === 0 ? 2 : 0)
}

const ttlOf = (block: Json): "5m" | "1h" | undefined => {
  const cc = block["cache_control"]
  if (!isRecord(cc)) return undefined
  return cc["ttl"] === "1h" ? "1h" : "5m"
}

/** What edit mode's clearing asks of the markers (see `clearSuperseded`). */
interface EditMarks {
  /**
   * Mark this message block: a cache entry before the first newly cleared result, read
   * instead of written again (`tokens`: rough tokens of the messages through it).
   */
  readonly anchor?: { readonly message: number; readonly index: number; readonly block: number; readonly tokens: number } | undefined
  /** The first message block this request changed: an entry at or after it is gone, so no bridge there. */
  readonly changedFrom?: number | undefined
}

const anthropicCache = (input: TransformInput, body: Json, limits: ModelLimits, edit: EditMarks = {}): TransformResult => {
  const session = input.session
  const { tools, system, messages } = anthropicSlots(body)
  const all = [...tools, ...system, ...messages]
  const marked = all.filter((s) => isRecord(s.block["cache_control"]))
  const automatic = isRecord(body["cache_control"])
  const slotsMax = limits.maxBreakpoints
  const supports1h = limits.ttls.some((t) => t.name === "1h")
  const changed: Array<string> = []
  const edits = new Map<Slot, Json>()
  const ttlNow = (s: Slot): "5m" | "1h" | undefined => ttlOf(edits.get(s) ?? s.block)
  const setMarker = (s: Slot, ttl: "5m" | "1h") => {
    const base = edits.get(s) ?? s.block
    edits.set(s, { ...base, cache_control: ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } })
  }
  let used = marked.length + (automatic ? 1 : 0)
  // Markers this transform adds (with their slot), for the TTL step.
  const added: Array<Slot> = []

  // 1. A client that caches nothing: a trailing marker and one at the end of the system prompt.
  if (marked.length === 0 && !automatic) {
    const lastMessage = [...messages].reverse().find((s) => markable(s.block))
    if (lastMessage !== undefined && used < slotsMax) {
      added.push(lastMessage)
      used++
    }
    const systemEnd = [...system].reverse().find((s) => markable(s.block)) ?? (system.length === 0 ? [...tools].reverse().find((s) => markable(s.block)) : undefined)
    if (systemEnd !== undefined && used < slotsMax) {
      added.push(systemEnd)
      used++
    }
    if (added.length > 0) changed.push(`${added.length} marker${added.length === 1 ? "" : "s"} added (the client set none)`)
  }

  // 1b. Edit mode: a new clearing reads the prefix through a still-cached entry before it.
  const anchor = edit.anchor
  if (anchor !== undefined && used < slotsMax) {
    const slot = messages.find((s) => s.message === anchor.message && s.index === anchor.index)
    if (slot !== undefined && markable(slot.block) && !isRecord(slot.block["cache_control"]) && !added.includes(slot)) {
      added.push(slot)
      used++
      changed.push(`marker at block ${anchor.block}: the prefix before the cleared results is read from the cache`)
    }
  }

  // 2. Lookback: when this step appended more blocks than the window, the previous
  // request's entry (at its last block) is out of reach of the last marker: bridge it.
  const lookback = lookbackOf(limits)
  const total = anthropicBlockCount(body)
  const lastMarkedMessageSlot = [...messages, ...added].filter((s) => s.where === "message" && (isRecord(s.block["cache_control"]) || added.includes(s)))
  const lastBlockIndex = (s: Slot): number => {
    // The block index of a message slot in the message-block order.
    let n = 0
    const ms = body["messages"]
    if (!Array.isArray(ms)) return -1
    for (let i = 0; i < s.message; i++) {
      const c = isRecord(ms[i]) ? (ms[i] as Json)["content"] : undefined
      n += Array.isArray(c) ? c.length : 1
    }
    return n + s.index
  }
  const newest = lastMarkedMessageSlot.reduce((a, s) => Math.max(a, lastBlockIndex(s)), -1)
  const previousEnd = session.lastBlocks - 1
  let bridged = false
  const previousIntact = edit.changedFrom === undefined || previousEnd < edit.changedFrom
  if (previousEnd >= 0 && previousEnd < total && previousIntact && newest - previousEnd >= lookback && used < slotsMax) {
    // The previous request's last block, or the nearest markable block before it that the
    // window of a marker placed there still reaches.
    const candidates = messages.filter((s) => lastBlockIndex(s) <= previousEnd && previousEnd - lastBlockIndex(s) < lookback && markable(s.block))
    const bridge = candidates[candidates.length - 1]
    const alreadyMarked = bridge !== undefined && (isRecord(bridge.block["cache_control"]) || added.includes(bridge))
    if (bridge !== undefined && !alreadyMarked) {
      bridged = true
      added.push(bridge)
      used++
      changed.push(`bridging marker at block ${lastBlockIndex(bridge)}: this step appended ${newest - previousEnd} blocks, past the ${lookback}-block lookback`)
    }
  }

  // 3. Lifetimes: rent or buy, from the session's gaps, paid from the session's credit.
  const prefix = roughTokens(body["tools"]) + roughTokens(body["system"]) + roughTokens(body["messages"])
  const ledger = session.ledger ?? emptyLedger
  const gap = session.gaps.at(-1)
  // What this request can read of the previous one: after a new clearing, only the prefix
  // before it (the system prompt and tools, and the messages through the marked entry).
  const readable = edit.changedFrom === undefined ? prefix : roughTokens(body["tools"]) + roughTokens(body["system"]) + (edit.anchor?.tokens ?? 0)
  const shared = Math.min(ledger.lastTokens, prefix, readable)
  let credit = ledger.credit
  // A 1h entry the proxy bought, read after an idle gap the client's 5m entry would not
  // have survived: the prefix read instead of written again.
  if (gap !== undefined && ledger.lastBet && gap > SURELY_EXPIRED && gap <= ONE_HOUR) credit += WIN_SHARE * (WRITE_5M - READ) * shared
  // A bridged read: the client's markers would have reached no further than the system prompt.
  if (bridged && gap !== undefined && gap <= FIVE_MINUTES) {
    credit += BRIDGE_SHARE * (WRITE_5M - READ) * Math.max(0, shared - roughTokens(body["tools"]) - roughTokens(body["system"]))
  }
  // The rhythm: a prompt now means the previous request's reply was an answer.
  const msgs: ReadonlyArray<unknown> = Array.isArray(body["messages"]) ? body["messages"] : []
  const steps = stepsSincePrompt(msgs)
  const answered = gap !== undefined && isPrompt(msgs[msgs.length - 1])
  const rhythm = {
    lastSteps: steps,
    tasks: answered ? [...(ledger.tasks ?? []), ledger.lastSteps ?? 0].slice(-16) : (ledger.tasks ?? []),
    answers: (ledger.answers ?? 0) + (answered ? 1 : 0),
    pauses: (ledger.pauses ?? 0) + (answered && gap > FIVE_MINUTES && gap <= ONE_HOUR ? 1 : 0)
  }
  const predicted = rhythmTtl(rhythm, steps)
  let ttl: "5m" | "1h" = "5m"
  let betCost = 0
  if (supports1h && (input.lifetime !== undefined || predicted !== undefined || session.gaps.length >= MIN_GAPS)) {
    const lastMsg = msgs[msgs.length - 1]
    const assistantBefore = msgs[msgs.length - 2]
    const want = input.lifetime ?? predicted ?? chooseTtl(session.gaps, prefix, roughTokens(lastMsg) + roughTokens(assistantBefore))
    // What the bet costs at worst: every token this request writes, at 2x instead of 1.25x.
    const cached = gap !== undefined && (gap <= FIVE_MINUTES || (ledger.lastBet && gap <= ONE_HOUR)) ? shared : 0
    const worst = LOSS_MARGIN * (WRITE_1H - WRITE_5M) * Math.max(prefix - cached, 1)
    ttl = want === "1h" && (input.lifetime !== undefined || credit >= worst) ? "1h" : "5m"
    if (ttl === "1h" && input.lifetime === undefined) credit -= worst
    betCost = ttl === "1h" && input.lifetime === undefined ? worst : 0
  }
  for (const s of added) setMarker(s, ttl)
  let raised = 0
  if (ttl === "1h") {
    // Every marker 1h (TTLs may not increase along the prefix; all equal is valid).
    for (const s of marked) {
      if (ttlNow(s) !== "1h") {
        setMarker(s, "1h")
        raised++
      }
    }
    if (raised > 0) changed.push(`ttl 1h on ${raised} marker${raised === 1 ? "" : "s"} (the session's gaps make the next read likely past 5 minutes)`)
  } else {
    // Markers added as 5m after a client's 1h marker keep the order valid; a 5m marker
    // added before a client's 1h marker takes 1h.
    const order = [...tools, ...system, ...messages]
    let longestAfter = false
    for (let i = order.length - 1; i >= 0; i--) {
      const s = order[i]!
      const t = ttlNow(s)
      if (t === undefined) continue
      if (longestAfter && t === "5m" && added.includes(s)) setMarker(s, "1h")
      if (t === "1h") longestAfter = true
    }
  }
  if (added.length > 0 && changed.length === 0) changed.push(`${added.length} marker(s) added`)
  if (automatic && edits.size > 0) {
    // The automatic marker takes a slot and must not conflict: leave the body alone.
    return { body, changed: [], ttl: undefined, ledger: { ...ledger, ...rhythm, lastTokens: prefix, lastBet: false } }
  }
  // A bet is one only when a marker the client sent as 5m (or none) now says 1h.
  const bet = ttl === "1h" && (raised > 0 || added.length > 0)
  if (!bet) credit += betCost
  return { body: rewriteBlocks(body, edits), changed, ttl: supports1h ? ttl : undefined, ledger: { ...ledger, ...rhythm, credit, lastTokens: prefix, lastBet: bet } }
}

/**
 * Seconds of idleness after which OpenAI has surely dropped a Responses body's cached
 * prefix: the retention the model applies to it (in-memory unless the body asks for 24h or
 * the model keeps only 24h), plus 30 s because the lifetime counts from the reply.
 */
const responsesExpiry = (input: TransformInput, body: Json): number => {
  const limits = input.limits ?? lookupModel("openai", typeof body["model"] === "string" ? body["model"] : "")
  const wanted = body["prompt_cache_retention"] === "24h" ? "24h" : "in_memory"
  const ttl = limits.ttls.find((t) => t.name === wanted) ?? limits.ttls[0]
  return ttl === undefined ? SURELY_EXPIRED : ttl.seconds + (SURELY_EXPIRED - FIVE_MINUTES)
}

/**
 * The proxy's change to one request. Pure and deterministic: the same input gives the
 * same bytes, which is what keeps a session's prefix stable.
 *
 * @example
 * ```ts
 * import { transformRequest } from "@strata/proxy"
 * const body = { model: "claude-sonnet-4-6", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }
 * const out = transformRequest({ protocol: "anthropic", mode: "cache", body, session: { id: "s1", gaps: [], lastBlocks: 0 } })
 * out.changed // ["1 marker added (the client set none)"]
 * ```
 */
export const transformRequest = (input: TransformInput): TransformResult => {
  const { body, mode, protocol, session } = input
  const ledger = session.ledger ?? emptyLedger
  if (mode === "observe" || !isRecord(body)) return { body, changed: [], ledger }
  switch (protocol) {
    case "anthropic": {
      if (!Array.isArray(body["messages"])) return { body, changed: [], ledger }
      const model = typeof body["model"] === "string" ? body["model"] : ""
      const limits = input.limits ?? lookupModel("anthropic", model)
      if (mode !== "edit") return anthropicCache(input, body, limits)
      const offsets = blockOffsets(body["messages"])
      const live = liveEntries(ledger.entries, session.gaps.at(-1), body["messages"], offsets)
      const edit = clearSuperseded({
        body,
        gap: session.gaps.at(-1),
        lastBet: ledger.lastBet,
        requestsBefore: session.gaps.length,
        cleared: ledger.cleared ?? [],
        entries: live,
        anchorable: freeMarkerSlots(body, limits) > 0,
        lastBlocks: session.lastBlocks,
        credit: ledger.credit
      })
      // What clearing saved funds the lifetimes (the same credit).
      const funded: SessionLedger = { ...ledger, credit: ledger.credit + (edit.saving > 0 ? WIN_SHARE * edit.saving : edit.saving), ...(edit.cleared.length === 0 ? {} : { cleared: edit.cleared }) }
      const out = anthropicCache({ ...input, session: { ...session, ledger: funded } }, edit.body, limits, { anchor: edit.anchor, changedFrom: edit.changedFrom })
      // The entries the forwarded markers leave, for the next clearing's anchor.
      const entries = isRecord(out.body)
        ? trackEntries({ body: out.body, live, offsets, changedFrom: edit.changedFrom, lookback: lookbackOf(limits), minTokens: limits.minCacheTokens })
        : []
      return { body: out.body, changed: [...edit.changed, ...out.changed], ttl: out.ttl, ledger: { ...out.ledger, entries } }
    }
    case "openai-responses":
    case "openai-chat": {
      const edit = mode === "edit" && protocol === "openai-responses"
        ? clearSupersededResponses({ body, gap: session.gaps.at(-1), lastBet: false, requestsBefore: session.gaps.length, cleared: ledger.cleared ?? [], expiresAfter: responsesExpiry(input, body) })
        : undefined
      const edited = edit?.body ?? body
      const next = edit === undefined || edit.cleared.length === 0 ? ledger : { ...ledger, cleared: edit.cleared }
      const changed = edit?.changed ?? []
      if (body["prompt_cache_key"] !== undefined) return { body: edited, changed, ledger: next }
      return { body: { ...edited, prompt_cache_key: `strata-${session.id}` }, changed: [...changed, "prompt_cache_key set to the session's id"], ledger: next }
    }
  }
}

/**
 * The body without its cache controls: every `cache_control` key (Anthropic) and the
 * `prompt_cache_key` the proxy may add (OpenAI). Two requests equal under this are the
 * same request "modulo cache controls"; the faithfulness tests compare with it.
 */
export const withoutCacheControls = (body: unknown): unknown => {
  if (Array.isArray(body)) return body.map(withoutCacheControls)
  if (!isRecord(body)) return body
  const out: Json = {}
  for (const [k, v] of Object.entries(body)) {
    if (k === "cache_control" || k === "prompt_cache_key") continue
    out[k] = withoutCacheControls(v)
  }
  return out
}
