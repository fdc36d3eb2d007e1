/**
 * The provider-independent core of the cache simulators: a canonical prefix hashed at
 * every block boundary, a store of cache entries with TTLs and visibility times, and
 * one read/write step that every provider's rules are expressed in.
 */
import { hash } from "node:crypto"
import type { TtlSpec } from "../../models.ts"
import { SimulatorInputError, type SimSkip, type SimWrite } from "../../simulation.ts"

/** One content block of a request's canonical prefix, as a provider adapter describes it. */
export interface PrefixBlock {
  /** Short framing that changes the prompt: message start and role, block type, salts. */
  readonly head: string
  /**
   * The block's content identity, without cache markers. Pass the body's own string where
   * there is one (a text block's text): V8 caches a string's hash, so an unchanged block
   * costs one map lookup per request instead of re-hashing its content.
   */
  readonly body: string
  /** The text whose tokens count, a function of `body`; empty for none. */
  readonly text: string
  /** Tokens on top of `text` (images, documents). */
  readonly extraTokens: number
}

/** A request's prefix: per-block chained hashes and cumulative token counts. */
export interface Prefix {
  /** `hashes[i]` identifies the prefix through block i (namespace included). */
  readonly hashes: ReadonlyArray<string>
  /** `cumulative[i]` is the prompt tokens through block i. */
  readonly cumulative: ReadonlyArray<number>
  readonly total: number
}

/** Measures and hashes prefixes, memoizing each distinct block so replays stay fast. */
export interface PrefixHasher {
  readonly build: (namespace: string, blocks: ReadonlyArray<PrefixBlock>) => Prefix
  readonly tokens: (text: string) => number
}

const MEMO_LIMIT = 200_000
/** Characters of block bodies a shared memo keeps before it starts again. */
const SHARED_MEMO_CHARS = 32 * 1024 * 1024

// One-shot hashing: about 3x cheaper than createHash().update().digest() for the short
// chain inputs hashed at every block of every request.
const sha256 = (text: string): string => hash("sha256", text, "hex")

interface Measured {
  readonly digest: string
  readonly tokens: number
}
interface BlockMemo {
  readonly blocks: Map<string, Measured>
  /** Chain steps already hashed: the text `build` would hash, to its hash. */
  readonly links: Map<string, string>
  chars: number
}
const newMemo = (): BlockMemo => ({ blocks: new Map(), links: new Map(), chars: 0 })

/**
 * Memos shared by every hasher of one adapter (`scope`) over one token counter: a block's
 * digest and tokens are functions of its body there, so the simulators of many sessions
 * (a proxy's) measure a system prompt they all send once, not once each.
 */
const shared = new WeakMap<(text: string) => number, Map<string, BlockMemo>>()
const sharedMemo = (countTokens: (text: string) => number, scope: string): BlockMemo => {
  let byScope = shared.get(countTokens)
  if (byScope === undefined) shared.set(countTokens, (byScope = new Map()))
  let memo = byScope.get(scope)
  if (memo === undefined) byScope.set(scope, (memo = newMemo()))
  return memo
}

/**
 * A hasher over a token-count function. With a `scope` (the adapter's name), its memo is
 * shared with every other hasher of that scope and function.
 */
export const makePrefixHasher = (countTokens: (text: string) => number, scope?: string): PrefixHasher => {
  const memo = scope === undefined ? newMemo() : sharedMemo(countTokens, scope)
  const measure = (block: PrefixBlock) => {
    const known = memo.blocks.get(block.body)
    if (known !== undefined) return known
    // A replay sees a bounded set of blocks; a runaway one is cut back, not grown forever.
    if (memo.blocks.size >= MEMO_LIMIT || memo.chars >= SHARED_MEMO_CHARS) {
      memo.blocks.clear()
      memo.chars = 0
    }
    const fresh = { digest: sha256(block.body), tokens: block.text.length === 0 ? 0 : countTokens(block.text) }
    memo.blocks.set(block.body, fresh)
    memo.chars += block.body.length
    return fresh
  }
  // The chain's hash of one more block; a pure function, kept for the prefixes seen again.
  const link = (text: string): string => {
    const known = memo.links.get(text)
    if (known !== undefined) return known
    if (memo.links.size >= MEMO_LIMIT / 2) memo.links.clear()
    const h = sha256(text)
    memo.links.set(text, h)
    return h
  }
  // The previous build: a session's next request repeats its blocks up to the newest ones.
  let last: { readonly namespace: string; readonly blocks: ReadonlyArray<PrefixBlock>; readonly prefix: Prefix } | undefined
  return {
    tokens: countTokens,
    build: (namespace, blocks) => {
      const hashes: Array<string> = []
      const cumulative: Array<number> = []
      let h = link(namespace)
      let total = 0
      let i = 0
      if (last !== undefined && last.namespace === namespace) {
        const before = last.blocks
        while (i < blocks.length && i < before.length) {
          const a = blocks[i]!
          const b = before[i]!
          if (a.head !== b.head || a.body !== b.body || a.extraTokens !== b.extraTokens) break
          i++
        }
        if (i > 0) {
          h = last.prefix.hashes[i - 1]!
          total = last.prefix.cumulative[i - 1]!
          for (let j = 0; j < i; j++) {
            hashes.push(last.prefix.hashes[j]!)
            cumulative.push(last.prefix.cumulative[j]!)
          }
        }
      }
      for (; i < blocks.length; i++) {
        const block = blocks[i]!
        const m = measure(block)
        h = link(`${h}${block.head}\u0000${m.digest}`)
        total += m.tokens + block.extraTokens
        hashes.push(h)
        cumulative.push(total)
      }
      const prefix = { hashes, cumulative, total }
      last = { namespace, blocks, prefix }
      return prefix
    }
  }
}

/** One cached prefix: its size, TTL, and when it becomes readable and expires. */
export interface CacheEntry {
  readonly tokens: number
  ttl: TtlSpec
  readonly createdAt: number
  visibleAt: number
  lastUsed: number
  expiresAt: number
}

const expiryOf = (e: CacheEntry): number => {
  const base = e.ttl.sliding ? e.lastUsed + e.ttl.seconds : e.createdAt + e.ttl.seconds
  return e.ttl.maxSeconds === undefined ? base : Math.min(base, e.createdAt + e.ttl.maxSeconds)
}

/** The cache entries of one simulated account, keyed by prefix hash. */
export interface CacheStore {
  /** A live entry readable at `at` (its writer's response has started). */
  readonly lookup: (hash: string, at: number) => CacheEntry | undefined
  /** Restart a sliding entry's lifetime. */
  readonly touch: (entry: CacheEntry, at: number) => void
  /** Create or extend an entry written by a request sent at `at` whose response starts at `visibleAt`. */
  readonly write: (hash: string, tokens: number, ttl: TtlSpec, at: number, visibleAt: number) => void
  readonly live: (at: number) => number
  /** Check that time does not run backwards, and drop expired entries now and then. */
  readonly advance: (at: number) => void
  readonly clear: () => void
}

const SWEEP_EVERY = 256

/** An empty store. */
export const makeCacheStore = (): CacheStore => {
  const entries = new Map<string, CacheEntry>()
  let now = Number.NEGATIVE_INFINITY
  let sends = 0
  const sweep = (at: number) => {
    for (const [k, e] of entries) if (e.expiresAt <= at) entries.delete(k)
  }
  return {
    lookup: (hash, at) => {
      const e = entries.get(hash)
      if (e === undefined) return undefined
      if (e.expiresAt <= at) {
        entries.delete(hash)
        return undefined
      }
      return e.visibleAt <= at ? e : undefined
    },
    touch: (e, at) => {
      e.lastUsed = Math.max(e.lastUsed, at)
      e.expiresAt = expiryOf(e)
    },
    write: (hash, tokens, ttl, at, visibleAt) => {
      const e = entries.get(hash)
      if (e === undefined || e.expiresAt <= at) {
        const fresh: CacheEntry = { tokens, ttl, createdAt: visibleAt, visibleAt, lastUsed: visibleAt, expiresAt: 0 }
        fresh.expiresAt = expiryOf(fresh)
        entries.set(hash, fresh)
        return
      }
      // A parallel writer's entry, or a shorter TTL upgraded: keep the earliest visibility, the longest life.
      e.visibleAt = Math.min(e.visibleAt, visibleAt)
      if (ttl.seconds > e.ttl.seconds) e.ttl = ttl
      e.lastUsed = Math.max(e.lastUsed, visibleAt)
      e.expiresAt = Math.max(e.expiresAt, expiryOf(e))
    },
    live: (at) => {
      let n = 0
      for (const e of entries.values()) if (e.expiresAt > at) n++
      return n
    },
    advance: (at) => {
      if (!Number.isFinite(at)) throw new SimulatorInputError({ reason: `request time ${at} is not a finite number of seconds` })
      if (at < now) {
        throw new SimulatorInputError({ reason: `request time ${at}s is before the previous request (${now}s); send requests in time order` })
      }
      now = at
      if (++sends % SWEEP_EVERY === 0) sweep(at)
    },
    clear: () => {
      entries.clear()
      now = Number.NEGATIVE_INFINITY
      sends = 0
    }
  }
}

/** A position the request asks the provider to write, with the TTL that applies there. */
export interface WriteSpec {
  readonly block: number
  readonly ttl: TtlSpec
}

/** What one read/write step did. */
export interface CacheStep {
  /** Block of the longest hit, or -1. */
  readonly hitBlock: number
  /** Cumulative tokens through the hit block (before any provider rounding). */
  readonly hitTokens: number
  /** Writes in prefix order; those at or below the hit are free refreshes (`charged: false`). */
  readonly writes: ReadonlyArray<SimWrite>
}

/**
 * One request against the store: the first of `reads` (in preference order) with a
 * readable entry is the hit and is refreshed; every `writes` position above the hit
 * is written (charged), those at or below it are refreshed if present.
 */
export const runCacheStep = (
  store: CacheStore,
  prefix: Prefix,
  reads: ReadonlyArray<number>,
  writes: ReadonlyArray<WriteSpec>,
  at: number,
  visibleAt: number
): CacheStep => {
  let hitBlock = -1
  for (const block of reads) {
    const hash = prefix.hashes[block]
    if (hash === undefined) continue
    const e = store.lookup(hash, at)
    if (e !== undefined) {
      store.touch(e, at)
      hitBlock = block
      break
    }
  }
  const hitTokens = hitBlock < 0 ? 0 : prefix.cumulative[hitBlock]!
  const done: Array<SimWrite> = []
  for (const w of writes) {
    const hash = prefix.hashes[w.block]!
    const tokens = prefix.cumulative[w.block]!
    if (w.block <= hitBlock) {
      const e = store.lookup(hash, at)
      if (e !== undefined) {
        store.touch(e, at)
        done.push({ block: w.block, tokens, ttl: w.ttl.name, charged: false })
      }
      continue
    }
    store.write(hash, tokens, w.ttl, at, visibleAt)
    done.push({ block: w.block, tokens, ttl: w.ttl.name, charged: true })
  }
  return { hitBlock, hitTokens, writes: done }
}

/**
 * Split charged write tokens by TTL: each segment from the previous boundary (the hit
 * or the previous write) to a written breakpoint is billed at that breakpoint's TTL.
 * With TTLs non-increasing along the prefix this is Anthropic's rule: 1 h writes
 * `B - A`, 5 min writes `C - B`.
 */
export const writeTokensByTtl = (step: CacheStep): Record<string, number> => {
  const byTtl: Record<string, number> = {}
  let from = step.hitTokens
  for (const w of step.writes) {
    if (!w.charged || w.tokens <= from) continue
    byTtl[w.ttl] = (byTtl[w.ttl] ?? 0) + (w.tokens - from)
    from = w.tokens
  }
  return byTtl
}

/**
 * Positions to check for a hit, best first, for breakpoints with a per-breakpoint
 * lookback window of `lookback` blocks counting the breakpoint itself. Later
 * breakpoints come first, so the first hit found is the longest.
 */
export const lookbackReads = (breakpoints: ReadonlyArray<number>, lookback: number): Array<number> => {
  const reads: Array<number> = []
  const sorted = [...breakpoints].sort((a, b) => b - a)
  for (const bp of sorted) {
    for (let j = bp; j > bp - lookback && j >= 0; j--) reads.push(j)
  }
  return reads
}

/** Every block boundary from the end back, for automatic (marker-free) caches. */
export const allReads = (blocks: number): Array<number> => {
  const reads: Array<number> = []
  for (let j = blocks - 1; j >= 0; j--) reads.push(j)
  return reads
}

/** For automatic caches: a write at every block boundary whose prefix reaches `minTokens`. */
export const automaticWrites = (prefix: Prefix, minTokens: number, ttl: TtlSpec): Array<WriteSpec> => {
  const writes: Array<WriteSpec> = []
  for (let i = 0; i < prefix.cumulative.length; i++) {
    if (prefix.cumulative[i]! >= minTokens) writes.push({ block: i, ttl })
  }
  return writes
}

/**
 * Apply a minimum cacheable length to requested writes. `cumulative` compares the
 * whole prefix (Anthropic); `perCheckpoint` requires `min` tokens since the previous
 * accepted breakpoint (AWS's reading for Bedrock).
 */
export const applyMinimum = (
  prefix: Prefix,
  writes: ReadonlyArray<WriteSpec>,
  min: number,
  rule: "cumulative" | "perCheckpoint"
): { readonly accepted: Array<WriteSpec>; readonly skipped: Array<SimSkip> } => {
  const accepted: Array<WriteSpec> = []
  const skipped: Array<SimSkip> = []
  let previous = 0
  for (const w of writes) {
    const tokens = prefix.cumulative[w.block] ?? 0
    const measured = rule === "cumulative" ? tokens : tokens - previous
    if (measured >= min) {
      accepted.push(w)
      previous = tokens
    } else {
      skipped.push({
        block: w.block,
        reason: rule === "cumulative"
          ? `prefix of ${tokens} tokens is below the model's minimum of ${min}`
          : `${measured} tokens since the previous checkpoint is below the model's minimum of ${min} per checkpoint`
      })
    }
  }
  return { accepted, skipped }
}

/**
 * JSON with object keys sorted and some keys left out, so a block's identity does not
 * depend on key order or on cache markers.
 *
 * A deeply frozen value (it and every object and array in it frozen, as a caller that
 * reuses parsed messages from one request to the next makes them) cannot change, so its
 * text is kept (per object, per set of omitted keys) and the same string returned each
 * time: the simulator's block memo then finds it without hashing it again.
 */
export const canonicalJson = (value: unknown, omit: ReadonlySet<string> = NO_KEYS): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  let memo = frozenTexts.get(omit)
  if (memo === undefined) frozenTexts.set(omit, (memo = new WeakMap()))
  deepFrozen = true
  return canonical(value, omit, memo)
}

const frozenTexts = new WeakMap<ReadonlySet<string>, WeakMap<object, string>>()
/** Whether every object and array `canonical` has read since it was last set is frozen. */
let deepFrozen = true

const canonical = (value: unknown, omit: ReadonlySet<string>, memo: WeakMap<object, string>): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  // Only a deeply frozen value is ever kept.
  const kept = memo.get(value)
  if (kept !== undefined) return kept
  const outer = deepFrozen
  deepFrozen = true
  let out: string
  if (Array.isArray(value)) {
    out = "["
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonical(value[i], omit, memo)
    out += "]"
  } else {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).sort()
    out = "{"
    let first = true
    for (const k of keys) {
      const v = record[k]
      if (v === undefined || omit.has(k)) continue
      out += `${first ? "" : ","}${JSON.stringify(k)}:${canonical(v, omit, memo)}`
      first = false
    }
    out += "}"
  }
  const frozen = deepFrozen && Object.isFrozen(value)
  if (frozen) memo.set(value, out)
  deepFrozen = outer && frozen
  return out
}

const NO_KEYS: ReadonlySet<string> = new Set()

/** Narrowing helpers for reading provider bodies, which arrive as `unknown`. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
export const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
