/**
 * A request body read straight from its bytes, for the proxy's hot path.
 *
 * A 200k-token body is about 0.8 MB. Turning it into one string (`toString`), parsing
 * that, serialising messages again to hash them and serialising the whole body again to
 * forward it each allocate a fresh large object, and on a busy machine each of those costs
 * milliseconds in page faults alone. Here instead:
 * - `parseBody` builds the same JSON value `JSON.parse` would, from the bytes, and notes
 *   where every object and array sits in them. Strings are decoded one by one (small
 *   allocations); a large string seen before (a system prompt, a file read in an earlier
 *   step) is found by comparing bytes and the earlier string reused. A message (any object
 *   in a top-level array) seen before is found the same way and the earlier value reused
 *   whole, frozen (`Element`): a request re-reads only its session's new messages.
 * - `chainOfParsed` hashes the byte ranges of the conversation (cache controls cut out)
 *   with no serialisation, and a large link whose bytes it has hashed before (compared
 *   with a kept copy) is not hashed again; nor is a reused message after the same link,
 *   nor a root made of the same reused system blocks and tools. For a body written by `JSON.stringify`
 *   (compact, as Claude Code and Codex send them) the bytes are exactly what `chainOf`
 *   serialises, so the chain (and the session ids) are the same either way.
 * - `spliceBody` turns the transform's result into the original bytes with only the
 *   changed values rewritten: the pieces are forwarded as they are, nothing is copied.
 * Anything this reader does not handle (whitespace between tokens, a duplicate key, a key
 * order the transform changed) makes it answer undefined, and the caller takes the plain
 * path (`JSON.parse`, `chainOf`, `JSON.stringify`).
 */
import { createHash } from "node:crypto"
import type { Protocol } from "./protocol.ts"

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Where an object's members sit. Flat, for the heap's sake: a body's spans live as long as
 * its kept elements, and a map and a tuple per member would be most of the objects the
 * proxy keeps (and its garbage collector marks).
 */
interface ObjectSpan {
  readonly start: number
  readonly end: number
  /** Keys in the order of the bytes (a duplicate key twice). */
  readonly order: ReadonlyArray<string>
  /** Per key of `order`, three numbers: member start, value start, value end. */
  readonly at: ReadonlyArray<number>
}

/** Objects with more keys than this are looked up through an index (built when first asked). */
const SCAN_KEYS = 16
const keyIndexes = new WeakMap<ObjectSpan, Map<string, number>>()

/** Where the member `key` sits (its last occurrence, the one JSON.parse keeps), or undefined. */
const memberOf = (span: ObjectSpan, key: string): readonly [number, number, number] | undefined => {
  let i: number
  if (span.order.length <= SCAN_KEYS) i = span.order.lastIndexOf(key)
  else {
    let index = keyIndexes.get(span)
    if (index === undefined) {
      index = new Map()
      span.order.forEach((k, j) => index!.set(k, j))
      keyIndexes.set(span, index)
    }
    i = index.get(key) ?? -1
  }
  return i < 0 ? undefined : [span.at[3 * i]!, span.at[3 * i + 1]!, span.at[3 * i + 2]!]
}
/** Where an array's elements sit: `[start, end]` per element. */
interface ArraySpan {
  readonly start: number
  readonly end: number
  readonly items: ReadonlyArray<readonly [number, number]>
  /** A top-level array's elements that are objects (`Element`), by index. */
  readonly elements?: ReadonlyArray<Element | undefined>
}

export interface ParsedBody {
  readonly bytes: Buffer
  readonly value: unknown
  /** The byte range of the whole value. */
  readonly start: number
  readonly end: number
  /** The spans of the objects and arrays outside the top-level arrays' elements (those are in their `Element`). */
  readonly objects: WeakMap<object, ObjectSpan>
  readonly arrays: WeakMap<object, ArraySpan>
  /** Ranges to cut for the chain: every `cache_control` / `prompt_cache_key` member with its comma; sorted, disjoint. */
  readonly strips: ReadonlyArray<readonly [number, number]>
  /** No whitespace between tokens and no duplicate key: the bytes are what `JSON.stringify` of the value writes (for a canonical writer). */
  readonly compact: boolean
}

const STRIP_KEYS = new Set(["cache_control", "prompt_cache_key"])

const sha = (): ReturnType<typeof createHash> => createHash("sha256")

/**
 * Large strings already decoded, found by their bytes (least recently used dropped past
 * `MAX_INTERNED_BYTES`): a session sends its system prompt and every earlier tool result
 * again with each request. A lookup compares bytes (memcmp), far cheaper than decoding
 * the string again or hashing it.
 */
const INTERN_MIN_BYTES = 16 * 1024
const MAX_INTERNED_BYTES = 64 * 1024 * 1024
const interned = new Map<string, Array<{ readonly bytes: Buffer; readonly text: string }>>()
const internOrder = new Map<{ readonly bytes: Buffer; readonly text: string }, string>()
let internedBytes = 0
const EDGE = 24
const intern = (bytes: Buffer, start: number, end: number, escaped: boolean): string => {
  const key = `${end - start}:${bytes.toString("latin1", start, start + EDGE)}:${bytes.toString("latin1", end - EDGE, end)}`
  const bucket = interned.get(key)
  const hit = bucket?.find((e) => bytes.compare(e.bytes, 0, e.bytes.length, start, end) === 0)
  if (hit !== undefined) {
    internOrder.delete(hit)
    internOrder.set(hit, key)
    return hit.text
  }
  const entry = { bytes: Buffer.from(bytes.subarray(start, end)), text: decode(bytes, start, end, escaped) }
  interned.set(key, [...(bucket ?? []), entry])
  internOrder.set(entry, key)
  // The copy and the string: count both.
  internedBytes += 2 * entry.bytes.length
  while (internedBytes > MAX_INTERNED_BYTES) {
    const [oldest, k] = internOrder.entries().next().value as [{ readonly bytes: Buffer; readonly text: string }, string]
    internOrder.delete(oldest)
    const rest = (interned.get(k) ?? []).filter((e) => e !== oldest)
    if (rest.length === 0) interned.delete(k)
    else interned.set(k, rest)
    internedBytes -= 2 * oldest.bytes.length
  }
  return entry.text
}

class Malformed extends Error {}

/** A string's contents `[start, end)` (between its quotes). */
const decode = (bytes: Buffer, start: number, end: number, escaped: boolean): string => {
  if (!escaped) return bytes.toString("utf8", start, end)
  // Escapes: JSON.parse decodes them (and rejects what JSON rejects).
  const s: unknown = JSON.parse(bytes.toString("utf8", start - 1, end + 1))
  if (typeof s !== "string") throw new Malformed("not a string")
  return s
}

/**
 * Parse a JSON body from its bytes (see the module comment), or undefined when the bytes
 * are not JSON this reader handles (the caller falls back to `JSON.parse`).
 */
export const parseBody = (bytes: Buffer): ParsedBody | undefined => {
  try {
    return parse(bytes)
  } catch {
    // Malformed JSON, a nesting too deep for the stack: the plain path decides.
    return undefined
  }
}

/**
 * An object element of one of the body's top-level arrays (a message, a tool, a system
 * block), with the spans of everything in it. Once read it is kept, found by its bytes: a
 * session sends every earlier message again with each request, so all but the newest are
 * compared (memcmp) instead of decoded, and keep their identity from one request to the
 * next, which later steps memoise on (the chain's links, below; the as-sent simulator's
 * canonical JSON in @strata/providers). Its values are deeply frozen, since every body
 * that has it shares them. Its spans and cuts are in the coordinates of the body it was
 * first read from (`origin`): a body adds where the element starts in it, less `origin`.
 */
interface Element {
  readonly bytes: Buffer
  readonly value: object
  readonly origin: number
  readonly objects: Map<object, ObjectSpan>
  readonly arrays: Map<object, ArraySpan>
  readonly strips: ReadonlyArray<readonly [number, number]>
  /** No whitespace between its tokens and no duplicate key. */
  readonly compact: boolean
  /** A number no other element has. */
  readonly id: number
  /** The last parse that took it (an element has one place in a body: a second copy is read anew). */
  usedIn: number
  /** The chain link it was last hashed to, after the link `prev`. */
  link: { readonly prev: string; readonly digest: string } | undefined
  /** The element that followed it in the last body that had it: the first one tried for the next place. */
  next: Element | undefined
  /** Taken since the eviction sweep last passed it (kept for another round). */
  taken: boolean
}
/** The bytes a lookup key takes from where an element starts (elements that share these are compared in turn). */
const ELEMENT_KEY_BYTES = 128
/** Elements kept per key: distinct elements that share their first bytes (boilerplate) are compared at most this often. */
const ELEMENT_BUCKET = 8
const MAX_ELEMENT_BYTES = 32 * 1024 * 1024
const kept = new Map<string, Array<Element>>()
const keptOrder = new Map<Element, string>()
let keptBytes = 0
let elementIds = 0
let parses = 0
/**
 * Copies of kept elements' bytes come from shared slabs: a fresh buffer per element (an
 * ArrayBuffer of its own past 4 KB) costs an allocation with page faults; a slab lives
 * while any element in it does.
 */
const SLAB_BYTES = 256 * 1024
let slab = Buffer.allocUnsafeSlow(0)
let slabUsed = 0
const copyOf = (bytes: Buffer, start: number, end: number): Buffer => {
  const size = end - start
  if (size > SLAB_BYTES / 4) return Buffer.from(bytes.subarray(start, end))
  if (slabUsed + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
    slabUsed = 0
  }
  bytes.copy(slab, slabUsed, start, end)
  const out = slab.subarray(slabUsed, slabUsed + size)
  slabUsed += size
  return out
}

const forget = (entry: Element, key: string): void => {
  // An element that still points here keeps this one alive, but nothing past it.
  entry.next = undefined
  keptOrder.delete(entry)
  const rest = (kept.get(key) ?? []).filter((e) => e !== entry)
  if (rest.length === 0) kept.delete(key)
  else kept.set(key, rest)
  keptBytes -= 2 * entry.bytes.length
}
const keep = (key: string, entry: Element): void => {
  const bucket = kept.get(key) ?? []
  if (bucket.length >= ELEMENT_BUCKET) forget(bucket[0]!, key)
  kept.set(key, [...(kept.get(key) ?? []), entry])
  keptOrder.set(entry, key)
  // The copy and the value: count both.
  keptBytes += 2 * entry.bytes.length
  // The oldest go first, but one taken since the sweep last passed it gets another round.
  while (keptBytes > MAX_ELEMENT_BYTES) {
    const [oldest, k] = keptOrder.entries().next().value as [Element, string]
    keptOrder.delete(oldest)
    if (oldest.taken && oldest !== entry) {
      oldest.taken = false
      keptOrder.set(oldest, k)
    } else {
      keptOrder.set(oldest, k)
      forget(oldest, k)
    }
  }
}

const parse = (buf: Buffer): ParsedBody => {
  const n = buf.length
  let pos = 0
  let compact = true
  // Bumped each time `compact` would turn false, so an element knows whether its own bytes are compact.
  let loose = 0
  // The next backslash at or after the current string (monotonic: one pass over the body).
  let nextBackslash = -1
  const parseId = ++parses
  const objects = new WeakMap<object, ObjectSpan>()
  const arrays = new WeakMap<object, ArraySpan>()
  const strips: Array<[number, number]> = []
  // Where the spans of what is being read go: an element's own tables inside one.
  let objectSpans: { set: (o: object, span: ObjectSpan) => unknown } = objects
  let arraySpans: { set: (o: object, span: ArraySpan) => unknown } = arrays

  const ws = () => {
    const p0 = pos
    while (pos < n) {
      const c = buf[pos]!
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
      pos++
    }
    if (pos !== p0) {
      compact = false
      loose++
    }
  }

  const string = (): string => {
    // buf[pos] is the opening quote.
    const start = pos + 1
    let q = start
    for (;;) {
      q = buf.indexOf(0x22, q)
      if (q < 0) throw new Malformed("unterminated string")
      let k = q - 1
      while (k >= start && buf[k] === 0x5c) k--
      if ((q - 1 - k) % 2 === 0) break
      q++
    }
    pos = q + 1
    if (nextBackslash < start && nextBackslash !== n) {
      const b = buf.indexOf(0x5c, start)
      nextBackslash = b < 0 ? n : b
    }
    const escaped = nextBackslash < q
    if (q - start >= INTERN_MIN_BYTES) return intern(buf, start, q, escaped)
    return decode(buf, start, q, escaped)
  }

  const value = (depth: number): unknown => {
    ws()
    if (pos >= n) throw new Malformed("unexpected end")
    const c = buf[pos]!
    if (c === 0x22) return string()
    if (c === 0x7b) return object(depth)
    if (c === 0x5b) return array(depth)
    if (c === 0x74) return literal("true", true)
    if (c === 0x66) return literal("false", false)
    if (c === 0x6e) return literal("null", null)
    return number()
  }

  const literal = <T>(word: string, v: T): T => {
    if (buf.toString("latin1", pos, pos + word.length) !== word) throw new Malformed(`expected ${word}`)
    pos += word.length
    return v
  }

  const number = (): number => {
    const start = pos
    while (pos < n) {
      const c = buf[pos]!
      // 0-9 + - . e E
      if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e || c === 0x65 || c === 0x45) pos++
      else break
    }
    if (pos === start) throw new Malformed("unexpected character")
    // JSON.parse decides what a JSON number is.
    const v: unknown = JSON.parse(buf.toString("latin1", start, pos))
    if (typeof v !== "number") throw new Malformed("not a number")
    return v
  }

  const object = (depth: number): Json => {
    const start = pos
    pos++
    const out: Json = {}
    const order: Array<string> = []
    const at: Array<number> = []
    // A duplicate key: scanned for in a small object, a set past SCAN_KEYS keys.
    let seen: Set<string> | undefined
    ws()
    if (buf[pos] === 0x7d) {
      pos++
    } else {
      for (;;) {
        ws()
        if (buf[pos] !== 0x22) throw new Malformed("expected a key")
        const memberStart = pos
        const key = string()
        ws()
        if (buf[pos] !== 0x3a) throw new Malformed("expected ':'")
        pos++
        ws()
        const valueStart = pos
        const v = value(depth + 1)
        const valueEnd = pos
        if (seen === undefined && order.length >= SCAN_KEYS) seen = new Set(order)
        if (seen === undefined ? order.includes(key) : seen.has(key)) {
          compact = false
          loose++
        }
        order.push(key)
        seen?.add(key)
        at.push(memberStart, valueStart, valueEnd)
        // Like JSON.parse: an own property, even `__proto__`.
        if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
        else out[key] = v
        ws()
        const c = buf[pos]
        pos++
        if (c === 0x7d) break
        if (c !== 0x2c) throw new Malformed("expected ',' or '}'")
      }
    }
    const span: ObjectSpan = { start, end: pos, order, at }
    objectSpans.set(out, span)
    if (order.some((k) => STRIP_KEYS.has(k))) stripMembers(span)
    return out
  }

  /** The cut that removes each cache-control member with its comma (see `strips`). */
  const stripMembers = (span: ObjectSpan) => {
    const { at } = span
    const kept = span.order.map((k) => !STRIP_KEYS.has(k))
    for (let i = 0; i < kept.length; i++) {
      if (kept[i]) continue
      let before = -1
      for (let j = i - 1; j >= 0; j--) if (kept[j]) { before = j; break }
      let after = -1
      for (let j = i + 1; j < kept.length; j++) if (kept[j]) { after = j; break }
      // [member start, value end] of members i, before and after.
      if (before >= 0) strips.push([at[3 * before + 2]!, at[3 * i + 2]!])
      else if (after >= 0) strips.push([at[3 * i]!, at[3 * after]!])
      else strips.push([at[3 * i]!, at[3 * i + 2]!])
    }
  }

  // A JSON object's bytes end where it ends: equal bytes from here are this element.
  const here = (e: Element, start: number): boolean => start + e.bytes.length <= n && buf.compare(e.bytes, 0, e.bytes.length, start, start + e.bytes.length) === 0
  const take = (e: Element, start: number): Element => {
    e.usedIn = parseId
    e.taken = true
    const shift = start - e.origin
    for (const [s, t] of e.strips) strips.push([s + shift, t + shift])
    if (!e.compact) compact = false
    pos = start + e.bytes.length
    return e
  }
  /**
   * An object in a top-level array: one kept from an earlier body when its bytes are there
   * (`Element`; first the one that followed the element before it last time), else read
   * and kept.
   */
  const element = (previous: Element | undefined): Element => {
    const start = pos
    const guess = previous?.next
    if (guess !== undefined && guess.usedIn !== parseId && here(guess, start)) return take(guess, start)
    const key = buf.toString("latin1", start, Math.min(n, start + ELEMENT_KEY_BYTES))
    const bucket = kept.get(key)
    let twice = false
    if (bucket !== undefined) {
      for (const e of bucket) {
        if (!here(e, start)) continue
        if (e.usedIn === parseId) {
          twice = true
          break
        }
        return take(e, start)
      }
    }
    const s0 = strips.length
    const loose0 = loose
    const own = { objects: new Map<object, ObjectSpan>(), arrays: new Map<object, ArraySpan>() }
    objectSpans = own.objects
    arraySpans = own.arrays
    let v: Json
    try {
      v = object(2)
    } finally {
      objectSpans = objects
      arraySpans = arrays
    }
    const entry: Element = {
      bytes: copyOf(buf, start, pos),
      value: v,
      origin: start,
      objects: own.objects,
      arrays: own.arrays,
      strips: strips.slice(s0),
      compact: loose === loose0,
      id: ++elementIds,
      usedIn: parseId,
      link: undefined,
      next: undefined,
      taken: true
    }
    // Shared by every later body that has these bytes: nothing may change it.
    for (const o of own.objects.keys()) Object.freeze(o)
    for (const a of own.arrays.keys()) Object.freeze(a)
    // A second copy in one body is not kept twice.
    if (!twice) keep(key, entry)
    return entry
  }

  const array = (depth: number): Array<unknown> => {
    const start = pos
    pos++
    const out: Array<unknown> = []
    const items: Array<readonly [number, number]> = []
    const elements: Array<Element | undefined> | undefined = depth === 1 ? [] : undefined
    ws()
    if (buf[pos] === 0x5d) {
      pos++
    } else {
      for (;;) {
        ws()
        const s = pos
        if (elements !== undefined && buf[pos] === 0x7b) {
          const previous = elements[out.length - 1]
          const e = element(previous)
          if (previous !== undefined) previous.next = e
          elements[out.length] = e
          out.push(e.value)
        } else out.push(value(depth + 1))
        items.push([s, pos])
        ws()
        const c = buf[pos]
        pos++
        if (c === 0x5d) break
        if (c !== 0x2c) throw new Malformed("expected ',' or ']'")
      }
    }
    const span: ArraySpan = elements === undefined ? { start, end: pos, items } : { start, end: pos, items, elements }
    arraySpans.set(out, span)
    return out
  }

  // A UTF-8 byte order mark is not JSON (JSON.parse rejects it too).
  ws()
  const start = pos
  const v = value(0)
  const end = pos
  ws()
  if (pos !== n) throw new Malformed("trailing bytes")
  return { bytes: buf, value: v, start, end, objects, arrays, strips: mergeRanges(strips), compact }
}

const mergeRanges = (ranges: Array<[number, number]>): ReadonlyArray<readonly [number, number]> => {
  if (ranges.length === 0) return ranges
  ranges.sort((a, b) => a[0] - b[0])
  const out: Array<[number, number]> = [[ranges[0]![0], ranges[0]![1]]]
  for (const [s, e] of ranges.slice(1)) {
    const last = out[out.length - 1]!
    if (s <= last[1]) last[1] = Math.max(last[1], e)
    else out.push([s, e])
  }
  return out
}

/** The byte ranges of `[start, end)` without the cuts (when `strip`). */
const segments = (p: ParsedBody, start: number, end: number, strip: boolean): Array<readonly [number, number]> => {
  if (!strip || p.strips.length === 0) return [[start, end]]
  // First cut ending after start.
  let lo = 0
  let hi = p.strips.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (p.strips[mid]![1] <= start) lo = mid + 1
    else hi = mid
  }
  const out: Array<readonly [number, number]> = []
  let at = start
  for (let i = lo; i < p.strips.length && p.strips[i]![0] < end; i++) {
    const [s, e] = p.strips[i]!
    if (s > at) out.push([at, s])
    at = Math.max(at, e)
  }
  if (at < end) out.push([at, end])
  return out
}

/** What one chain link hashes: short strings and byte ranges of the body, in order. */
type Piece = string | readonly [number, number]

/**
 * Digests of large links already hashed, found by their bytes (a session's system prompt
 * and its earlier messages come back with every request): comparing the bytes with a kept
 * copy is an order of magnitude cheaper than hashing them again.
 */
const MEMO_MIN_BYTES = 32 * 1024
const MAX_MEMO_BYTES = 64 * 1024 * 1024
interface Memo {
  readonly bytes: Buffer
  readonly digest: string
}
const memos = new Map<string, Array<Memo>>()
const memoOrder = new Map<Memo, string>()
let memoBytes = 0

const hex16 = (h: ReturnType<typeof createHash>): string => h.digest("hex").slice(0, 16)

/** The first 16 hex digits of the SHA-256 of the pieces (as `chainOf` hashes a link). */
const digestOf = (p: ParsedBody, pieces: ReadonlyArray<Piece>): string => {
  let size = 0
  let shape = ""
  for (const x of pieces) {
    if (typeof x === "string") shape += `${x}\u0001`
    else {
      size += x[1] - x[0]
      shape += `#${x[1] - x[0]}`
    }
  }
  const hash = () => {
    const h = sha()
    for (const x of pieces) h.update(typeof x === "string" ? x : p.bytes.subarray(x[0], x[1]))
    return hex16(h)
  }
  if (size < MEMO_MIN_BYTES) return hash()
  const bucket = memos.get(shape)
  const same = (m: Memo): boolean => {
    let off = 0
    for (const x of pieces) {
      if (typeof x === "string") continue
      const n = x[1] - x[0]
      if (p.bytes.compare(m.bytes, off, off + n, x[0], x[1]) !== 0) return false
      off += n
    }
    return true
  }
  const hit = bucket?.find(same)
  if (hit !== undefined) {
    memoOrder.delete(hit)
    memoOrder.set(hit, shape)
    return hit.digest
  }
  const bytes = Buffer.allocUnsafe(size)
  let off = 0
  for (const x of pieces) {
    if (typeof x === "string") continue
    off += p.bytes.copy(bytes, off, x[0], x[1])
  }
  const memo: Memo = { bytes, digest: hash() }
  memos.set(shape, [...(bucket ?? []), memo])
  memoOrder.set(memo, shape)
  memoBytes += size
  while (memoBytes > MAX_MEMO_BYTES) {
    const [oldest, k] = memoOrder.entries().next().value as [Memo, string]
    memoOrder.delete(oldest)
    const rest = (memos.get(k) ?? []).filter((m) => m !== oldest)
    if (rest.length === 0) memos.delete(k)
    else memos.set(k, rest)
    memoBytes -= oldest.bytes.length
  }
  return memo.digest
}

/**
 * The root links of Anthropic bodies whose system and tools are arrays of kept elements
 * (or absent), by the elements' ids: a compact body's bytes there are those elements'
 * bytes between brackets and commas, and its cuts lie inside them, so the same ids hash to
 * the same root. A session's system prompt (often most of the body) is not compared again.
 */
const MAX_ROOTS = 4096
const roots = new Map<string, string>()

/** A member's value range, or undefined (absent). */
const memberRange = (p: ParsedBody, body: Json, key: string): readonly [number, number] | undefined => {
  const span = p.objects.get(body)
  const m = span === undefined ? undefined : memberOf(span, key)
  return m === undefined ? undefined : [m[1], m[2]]
}

/**
 * `chainOf` computed from the body's bytes (see the module comment): the same strings for
 * a compact body, or undefined when the body is not compact (the caller uses `chainOf`).
 */
export const chainOfParsed = (protocol: Protocol, p: ParsedBody): Array<string> | undefined => {
  if (!p.compact || !isRecord(p.value)) return undefined
  const body = p.value
  const root: Array<Piece> = [`${protocol}\u0000`]
  const part = (key: string, strip: boolean) => {
    const r = memberRange(p, body, key)
    // `body[key] ?? null`: an absent key serialises as null.
    if (r === undefined) root.push("null")
    else root.push(...segments(p, r[0], r[1], strip))
  }
  // Anthropic's system and tools as the elements they are made of, when they are (see `roots`).
  let rootKey: string | undefined
  const elementIds = (v: unknown): string | undefined => {
    if (v === undefined || v === null) return "n"
    const span = Array.isArray(v) ? p.arrays.get(v) : undefined
    if (span === undefined) return undefined
    let ids = "["
    for (let i = 0; i < span.items.length; i++) {
      const e = span.elements?.[i]
      if (e === undefined) return undefined
      ids += `${e.id},`
    }
    return ids
  }
  let messages: ReadonlyArray<readonly [number, number]>
  // The messages' elements (`Element`), in the order of `messages`.
  let kept: ReadonlyArray<Element | undefined> = []
  const elements = (key: string): ReadonlyArray<readonly [number, number]> | undefined => {
    const v = body[key]
    const span = Array.isArray(v) ? p.arrays.get(v) : undefined
    kept = span?.elements ?? []
    return span?.items
  }
  switch (protocol) {
    case "anthropic": {
      root.push("[")
      part("system", true)
      root.push(",")
      part("tools", true)
      root.push("]")
      const system = elementIds(body["system"])
      const tools = elementIds(body["tools"])
      if (system !== undefined && tools !== undefined) rootKey = `${system}|${tools}`
      const items = elements("messages")
      if (Array.isArray(body["messages"]) && items === undefined) return undefined
      messages = items ?? []
      break
    }
    case "openai-responses": {
      root.push("[")
      part("instructions", false)
      root.push(",")
      part("tools", false)
      root.push("]")
      const input = body["input"]
      if (Array.isArray(input)) {
        const items = elements("input")
        if (items === undefined) return undefined
        messages = items
      } else {
        const r = memberRange(p, body, "input")
        messages = r === undefined ? [] : [r]
      }
      break
    }
    case "openai-chat": {
      part("tools", false)
      const items = elements("messages")
      if (Array.isArray(body["messages"]) && items === undefined) return undefined
      messages = items ?? []
      break
    }
  }
  let prev = rootKey === undefined ? undefined : roots.get(rootKey)
  if (prev === undefined) {
    prev = digestOf(p, root)
    if (rootKey !== undefined) {
      if (roots.size >= MAX_ROOTS) roots.delete(roots.keys().next().value ?? "")
      roots.set(rootKey, prev)
    }
  }
  const out: Array<string> = []
  for (let i = 0; i < messages.length; i++) {
    const [s, e] = messages[i]!
    // An element stands for its bytes: after the same link, it hashes to the same link.
    const element = kept[i]
    const known = element?.link
    if (known !== undefined && known.prev === prev) prev = known.digest
    else {
      const next = digestOf(p, [`${prev}\u0000`, ...segments(p, s, e, true)])
      if (element !== undefined) element.link = { prev, digest: next }
      prev = next
    }
    out.push(prev)
  }
  if (out.length === 0) out.push(prev)
  return out
}

interface Edit {
  readonly start: number
  readonly end: number
  readonly text: string
}

/**
 * The bytes of `next` (the transform's result for `p.value`, sharing every value it did
 * not change) as pieces of the original bytes and the rewritten values, in order; or
 * undefined when the change is not one this can splice (a removed key, a reordered
 * object): the caller serialises `next` whole.
 */
export const spliceBody = (p: ParsedBody, next: unknown): ReadonlyArray<Buffer> | undefined => {
  const edits: Array<Edit> = []
  // Where the spans of `a` are (the body's, or an element's) and what to add to them.
  type Spans = { readonly objects: { get: (o: object) => ObjectSpan | undefined }; readonly arrays: { get: (o: object) => ArraySpan | undefined } }
  const diff = (a: unknown, b: unknown, start: number, end: number, spans: Spans, shift: number): boolean => {
    if (a === b) return true
    if (isRecord(a) && isRecord(b)) {
      const span = spans.objects.get(a)
      if (span === undefined) return false
      const keys = Object.keys(b)
      for (const k of span.order) if (!Object.hasOwn(b, k)) return false
      let last = -1
      let inserted = ""
      let count = span.order.length
      for (const k of keys) {
        const v = b[k]
        if (v === undefined) return false
        const m = memberOf(span, k)
        if (m === undefined) {
          const text = JSON.stringify(v)
          inserted += `${count === 0 ? "" : ","}${JSON.stringify(k)}:${text}`
          count++
          last = Infinity
          continue
        }
        // Keys the original has keep their order, new ones come after them (as JSON.stringify writes a spread).
        if (m[0] < last) return false
        last = m[0]
        if (!diff(a[k], v, m[1] + shift, m[2] + shift, spans, shift)) return false
      }
      if (inserted !== "") edits.push({ start: span.end - 1 + shift, end: span.end - 1 + shift, text: inserted })
      return true
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      const span = spans.arrays.get(a)
      if (span === undefined) return false
      for (let i = 0; i < a.length; i++) {
        const [s, e] = span.items[i]!
        const element = span.elements?.[i]
        const ok = element === undefined ? diff(a[i], b[i], s + shift, e + shift, spans, shift) : diff(a[i], b[i], s + shift, e + shift, element, s + shift - element.origin)
        if (!ok) return false
      }
      return true
    }
    const text = JSON.stringify(b)
    if (text === undefined) return false
    edits.push({ start, end, text })
    return true
  }
  if (!diff(p.value, next, p.start, p.end, p, 0)) return undefined
  const pieces: Array<Buffer> = []
  let at = 0
  for (const e of edits) {
    if (e.start < at) return undefined
    if (e.start > at) pieces.push(p.bytes.subarray(at, e.start))
    pieces.push(Buffer.from(e.text, "utf8"))
    at = e.end
  }
  if (at < p.bytes.length) pieces.push(p.bytes.subarray(at))
  return pieces
}
