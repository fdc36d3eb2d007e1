/**
 * The replay's content bound on input cost (the "oracle" row): the least any cache can
 * charge to send a given session's blocks at the session's request times, under the
 * provider's prices and cache lifetimes. It bounds the cost of that content, not of the
 * task: a strategy that sends less content (a journal's symbol diffs, cleared tool
 * results) can cost less than the bound over the oracle's content, never less than the
 * bound over its own (`ownBound` in the table). Pure: items, times and prices in,
 * per-request usage out. `docs/replay.md#the-content-bound` says what it assumes.
 *
 * Each copy of an item (a text block of the oracle layout) is priced on its own, and
 * everything that couples items in a real cache is dropped: prefix order, breakpoint
 * slots, lookback windows, minimum cacheable lengths. What stays binds every strategy:
 * a block can be read only from an entry a request containing it wrote and that is
 * still alive (written `visibleAfter` seconds before at least, within its lifetime), and
 * every read, write or uncached send is billed at the model's multipliers.
 */

/** One block of a request: what identifies its content, and its tokens. */
export interface BoundItem {
  readonly content: string
  readonly tokens: number
}

/** One request of the session: its send time (seconds) and blocks. */
export interface BoundRequest {
  readonly t: number
  readonly items: ReadonlyArray<BoundItem>
}

/** A cache lifetime a request can ask for, and its write price. */
export interface BoundTtl {
  readonly name: string
  /** How long an entry written with it stays readable without a hit, in seconds. */
  readonly seconds: number
  /** Write price as a multiple of the base input price. */
  readonly write: number
}

/** The cache's rules and prices the bound is computed under. */
export interface BoundPricing {
  /** The lifetimes a request can write (at least one). */
  readonly ttls: ReadonlyArray<BoundTtl>
  /** Read price as a multiple of the base input price. */
  readonly read: number
  /** Seconds from a request's send time until what it wrote can be read. */
  readonly visibleAfter: number
  /**
   * Price of one base input token of a request relative to the model's base price, from
   * the tokens the request must carry (long-context prices); default 1.
   */
  readonly rate?: ((promptTokens: number) => number) | undefined
}

/** What the bound pays for one request. */
export interface BoundUsage {
  /** Tokens of the request's own items plus those carried (see `carried`). */
  readonly promptTokens: number
  readonly uncached: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** `cacheWrite` split by lifetime name. */
  readonly cacheWriteByTtl: Readonly<Record<string, number>>
  /**
   * Tokens of items this request does not need, sent so that a later request can read
   * them: read to keep an entry alive across a gap longer than its lifetime, or written
   * ahead (a cheap short-lived write that a later read renews, or one made before
   * requests that come less than `visibleAfter` apart).
   */
  readonly carried: number
  /** Input cost in base-input tokens: uncached x1 + writes x their multiplier + reads x the read multiplier. */
  readonly equivalentTokens: number
  /** The request's price factor (`BoundPricing.rate` of its own items' tokens). */
  readonly rate: number
}

/** How one copy of an item is sent in one request. */
type Choice =
  | { readonly kind: "uncached" }
  | { readonly kind: "read" }
  | { readonly kind: "carry" }
  | { readonly kind: "write"; readonly ttl: number; readonly ahead: boolean }

interface Trail {
  readonly request: number
  readonly choice: Choice
  readonly previous: Trail | undefined
}

/** A cache state of one item: readable from `from` (inclusive) until `until` (exclusive), after paying `cost`. */
interface State {
  readonly from: number
  readonly until: number
  readonly cost: number
  readonly trail: Trail | undefined
}

const UNCACHED: Choice = { kind: "uncached" }
const READ: Choice = { kind: "read" }
const CARRY: Choice = { kind: "carry" }

/** Keep the states no other state beats on cost, readable start and end at once (stable order). */
const prune = (states: ReadonlyArray<State>): Array<State> => {
  const order = (x: number, y: number) => (x < y ? -1 : x > y ? 1 : 0)
  const sorted = [...states].sort((a, b) => order(a.cost, b.cost) || order(b.until, a.until) || order(a.from, b.from))
  const kept: Array<State> = []
  for (const s of sorted) {
    if (!kept.some((k) => k.from <= s.from && k.until >= s.until)) kept.push(s)
  }
  return kept
}

/**
 * One request's step for one copy of an item: every way to send it (or not) from every
 * state. Needed, the copy is read when an entry is readable, else sent uncached or
 * written with one lifetime; not needed, it is left out, read ("carried") to keep the
 * entry alive, or written ahead for a later request. A read may renew the entry with
 * the longest lifetime at no cost to this item (the request writes a breakpoint after
 * it; what that costs is other items'). The states are intervals of readability; where
 * two entries' intervals would leave a gap shorter than `visibleAfter`, the union is
 * taken whole (a bound may round down).
 */
const advance = (
  states: ReadonlyArray<State>,
  request: number,
  need: boolean,
  t: number,
  rate: number,
  pricing: BoundPricing,
  longest: number
): Array<State> => {
  const visible = t + pricing.visibleAfter
  const next: Array<State> = []
  for (const raw of states) {
    // Later requests are no earlier: an expired entry stays expired, a readable one stays readable until it expires.
    const s = raw.until <= t
      ? { ...raw, from: Infinity, until: -Infinity }
      : raw.from <= t ? { ...raw, from: -Infinity } : raw
    const step = (choice: Choice, cost: number, from: number, until: number) =>
      next.push({ from, until, cost: s.cost + cost * rate, trail: { request, choice, previous: s.trail } })
    if (!need) next.push(s)
    if (s.from <= t && t < s.until) {
      // A read is cheaper than any other send and renews the entry, so it is the only other choice.
      step(need ? READ : CARRY, pricing.read, s.from, Math.max(s.until, visible + longest))
      continue
    }
    if (need) step(UNCACHED, 1, s.from, s.until)
    pricing.ttls.forEach((ttl, k) => {
      // An entry written earlier that is not readable yet still becomes readable: keep the union.
      const alive = s.until > t
      step({ kind: "write", ttl: k, ahead: !need }, ttl.write, alive ? Math.min(s.from, visible) : visible, Math.max(alive ? s.until : -Infinity, visible + ttl.seconds))
    })
  }
  return prune(next)
}

/**
 * The content bound: the least input cost of sending `requests` (each request's items,
 * at its time) under `pricing`, request by request. Deterministic; identical items are matched by content,
 * the k-th copy of a content with the k-th copy of earlier requests.
 *
 * @example
 * ```ts
 * import { contentBound } from "@strata/replay"
 * const usage = contentBound(
 *   [{ t: 0, items: [{ content: "system", tokens: 1000 }, { content: "q1", tokens: 10 }] },
 *    { t: 90, items: [{ content: "system", tokens: 1000 }, { content: "q2", tokens: 10 }] }],
 *   { ttls: [{ name: "5m", seconds: 300, write: 1.25 }], read: 0.1, visibleAfter: 1 }
 * )
 * // The system prompt is written once, then read; each question is sent once, uncached:
 * usage.map((u) => [u.cacheWrite, u.cacheRead, u.uncached]) // [[1000, 0, 10], [0, 1000, 10]]
 * ```
 */
export const contentBound = (requests: ReadonlyArray<BoundRequest>, pricing: BoundPricing): ReadonlyArray<BoundUsage> => {
  if (pricing.ttls.length === 0) throw new Error("contentBound: pricing.ttls must name at least one cache lifetime")
  // A read is taken whenever one is possible: that is only the cheapest choice when reads cost less than anything else.
  if (!(pricing.read < 1 && pricing.ttls.every((t) => pricing.read < t.write))) {
    throw new Error(`contentBound: the read price (${pricing.read}x) must be below the base price and every write price`)
  }
  const longest = Math.max(...pricing.ttls.map((t) => t.seconds))
  const times = requests.map((r) => r.t)
  const own = requests.map((r) => r.items.reduce((n, item) => n + item.tokens, 0))
  const rates = own.map((tokens) => pricing.rate?.(tokens) ?? 1)
  // Where each copy of each content is needed: copy k of a content is needed by the
  // requests holding at least k + 1 copies of it.
  const copies = new Map<string, { tokens: number; needed: Array<Array<number>> }>()
  requests.forEach((request, i) => {
    const seen = new Map<string, number>()
    for (const item of request.items) {
      const k = seen.get(item.content) ?? 0
      seen.set(item.content, k + 1)
      let entry = copies.get(item.content)
      if (entry === undefined) {
        entry = { tokens: item.tokens, needed: [] }
        copies.set(item.content, entry)
      }
      const list = entry.needed[k] ?? []
      list.push(i)
      entry.needed[k] = list
    }
  })
  const usage = requests.map((_, i) => ({
    prompt: own[i]!,
    uncached: 0,
    read: 0,
    carried: 0,
    write: new Array<number>(pricing.ttls.length).fill(0)
  }))
  // Before its first need a copy is needed nowhere, so the states there are the same for
  // every copy: computed once, request by request.
  const step = (states: ReadonlyArray<State>, i: number, need: boolean) => advance(states, i, need, times[i]!, rates[i]!, pricing, longest)
  const before: Array<ReadonlyArray<State>> = [[{ from: Infinity, until: -Infinity, cost: 0, trail: undefined }]]
  for (let i = 0; i < requests.length; i++) before.push(step(before[i]!, i, false))
  const cheapest = (needed: ReadonlyArray<number>): Trail | undefined => {
    const first = needed[0]!
    const last = needed.at(-1)!
    const isNeeded = new Set(needed)
    let states = before[first]!
    for (let i = first; i <= last; i++) states = step(states, i, isNeeded.has(i))
    return states[0]?.trail
  }
  // The cheapest choices depend only on where a copy is needed, so equal patterns share them.
  const memo = new Map<string, Trail | undefined>()
  for (const { tokens, needed } of copies.values()) {
    if (tokens === 0) continue
    for (const pattern of needed) {
      const key = pattern.join(",")
      let trail = memo.get(key)
      if (!memo.has(key)) {
        trail = cheapest(pattern)
        memo.set(key, trail)
      }
      // Walking back from the last request: was the entry a write makes read before the next write?
      let used = false
      for (let step = trail; step !== undefined; step = step.previous) {
        const u = usage[step.request]!
        if (step.choice.kind === "write" && !used && !step.choice.ahead && pricing.ttls[step.choice.ttl]!.write === 1) {
          // A write nothing reads is only chosen when it ties with sending uncached (OpenAI, Gemini): say uncached.
          u.uncached += tokens
          continue
        }
        used = step.choice.kind === "write" ? false : used || step.choice.kind !== "uncached"
        switch (step.choice.kind) {
          case "uncached":
            u.uncached += tokens
            break
          case "read":
            u.read += tokens
            break
          case "carry":
            u.read += tokens
            u.carried += tokens
            u.prompt += tokens
            break
          case "write":
            u.write[step.choice.ttl]! += tokens
            if (step.choice.ahead) {
              u.carried += tokens
              u.prompt += tokens
            }
            break
        }
      }
    }
  }
  return usage.map((u, i): BoundUsage => {
    const cacheWriteByTtl: Record<string, number> = {}
    let cacheWrite = 0
    let writeCost = 0
    pricing.ttls.forEach((ttl, k) => {
      const n = u.write[k]!
      if (n === 0) return
      cacheWriteByTtl[ttl.name] = (cacheWriteByTtl[ttl.name] ?? 0) + n
      cacheWrite += n
      writeCost += n * ttl.write
    })
    return {
      promptTokens: u.prompt,
      uncached: u.uncached,
      cacheRead: u.read,
      cacheWrite,
      cacheWriteByTtl,
      carried: u.carried,
      equivalentTokens: u.uncached + writeCost + u.read * pricing.read,
      rate: rates[i]!
    }
  })
}
