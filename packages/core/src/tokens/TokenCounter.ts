/**
 * Pure, synchronous token counting. A `TokenCounter` counts strings, messages and
 * message lists for one model, memoizes counts by content hash so unchanged content
 * is never re-tokenized, and falls back to chars/4 if the encoder fails.
 */
import { hash } from "node:crypto"
import { createRequire } from "node:module"
import { partImages, partText, type Message, type MessagePart } from "../domain/Message.ts"
import { makeBpeCounter, type BpeCounter, type BpeRanks } from "./bpe.ts"
import { encodingForModel, type EncodingName } from "../models/modelTable.ts"

/** Tokens charged per message for role and framing, as OpenAI's chat format does. */
export const MESSAGE_OVERHEAD_TOKENS = 4
/** Tokens charged once per message list (reply priming). */
export const LIST_OVERHEAD_TOKENS = 3
/** Tokens charged per image part; providers vary, this is a conservative middle. */
export const IMAGE_TOKENS = 1000

/** The chars/4 estimate used when no encoder is available. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * Tokens of one message part: its text (a tool call's name and JSON input, a result's
 * text or JSON) through `count`, plus `IMAGE_TOKENS` per image.
 *
 * @example
 * ```ts
 * import { estimateTokens, partTokens } from "@strata/core"
 * partTokens({ type: "tool-call", toolCallId: "c1", toolName: "ls", input: { path: "src" } }, estimateTokens) // 5
 * ```
 */
export const partTokens = (part: MessagePart, count: (text: string) => number): number =>
  part.type === "image" ? IMAGE_TOKENS : count(partText(part)) + partImages(part) * IMAGE_TOKENS

/** SHA-256 hex digest of a string (UTF-8). */
// One-shot `crypto.hash` (Node 20.12+) skips the Hash object; about 2x faster on short texts.
export const sha256 = (text: string): string => hash("sha256", text, "hex")

// One encoder per encoding per process, shared by the async and sync loaders.
const encoders = new Map<EncodingName, BpeCounter>()
// In-flight async loads, so concurrent first calls parse the rank table once.
const loading = new Map<EncodingName, Promise<BpeCounter>>()

const loadEncoder = (name: EncodingName): Promise<BpeCounter> => {
  const ready = encoders.get(name)
  if (ready) return Promise.resolve(ready)
  const inFlight = loading.get(name)
  if (inFlight) return inFlight
  const load = (async () => {
    const ranks: BpeRanks = name === "o200k_base"
      ? (await import("js-tiktoken/ranks/o200k_base")).default
      : (await import("js-tiktoken/ranks/cl100k_base")).default
    const encoder = encoders.get(name) ?? makeBpeCounter(ranks)
    encoders.set(name, encoder)
    return encoder
  })().finally(() => loading.delete(name))
  loading.set(name, load)
  return load
}

// The CommonJS builds of the rank tables load synchronously, for callers that cannot await.
const requireRanks = createRequire(import.meta.url)

const loadEncoderSync = (name: EncodingName): BpeCounter => {
  const ready = encoders.get(name)
  if (ready) return ready
  const ranks = (name === "o200k_base"
    ? requireRanks("js-tiktoken/ranks/o200k_base")
    : requireRanks("js-tiktoken/ranks/cl100k_base")) as BpeRanks
  const encoder = makeBpeCounter(ranks)
  encoders.set(name, encoder)
  return encoder
}

/** A synchronous counter for one model. */
export interface TokenCounter {
  readonly model: string
  readonly encoding: EncodingName | "chars/4"
  /** True when counts are the model's own tokenizer's (OpenAI models), false for approximations. */
  readonly exact: boolean
  readonly count: (text: string) => number
  readonly countMessage: (message: Message) => number
  readonly countMessages: (messages: ReadonlyArray<Message>) => number
  /** How many counts were served from the memo (for tests and benchmarks). */
  readonly stats: () => { readonly hits: number; readonly misses: number }
}

export interface TokenCounterOptions {
  /** Largest number of memoized counts kept by content hash; the least recently used is evicted first. Default 100,000. */
  readonly memoSize?: number
  /**
   * Characters of recently counted texts kept for the fast path (a lookup by the text
   * itself, no hashing). Default 8,000,000 (about 16 MB); 0 turns the fast path off.
   */
  readonly memoChars?: number
}

interface TextEntry {
  readonly text: string
  readonly n: number
  alive: boolean
}

/** Texts of one length the fast memo keeps; more distinct same-length texts evict the oldest. */
const TEXT_BUCKET_SIZE = 8

/**
 * Recently counted texts, bucketed by length, so a repeat count needs no hash: `===` on
 * the very same string is a pointer check, and on an equal copy a memcmp, both far
 * cheaper than SHA-256 (or V8's own string hash, which a Map keyed by text would compute
 * over every new copy). Keeps at most `memoChars` characters, oldest evicted first.
 */
const makeTextMemo = (memoChars: number) => {
  const byLength = new Map<number, Array<TextEntry>>()
  const queue: Array<TextEntry> = []
  let queueHead = 0
  let textChars = 0
  const findText = (text: string): number | undefined => {
    const bucket = byLength.get(text.length)
    if (bucket === undefined) return undefined
    for (const entry of bucket) if (entry.text === text) return entry.n
    return undefined
  }
  const forget = (entry: TextEntry): void => {
    entry.alive = false
    textChars -= entry.text.length
    const bucket = byLength.get(entry.text.length)
    if (bucket === undefined) return
    const rest = bucket.filter((e) => e !== entry)
    if (rest.length === 0) byLength.delete(entry.text.length)
    else byLength.set(entry.text.length, rest)
  }
  const remember = (text: string, n: number): void => {
    // A text larger than a quarter of the budget would flush everything else.
    if (text.length > memoChars / 4 || findText(text) !== undefined) return
    const entry: TextEntry = { text, n, alive: true }
    const bucket = byLength.get(text.length)
    if (bucket === undefined) byLength.set(text.length, [entry])
    else {
      bucket.push(entry)
      if (bucket.length > TEXT_BUCKET_SIZE) forget(bucket[0]!)
    }
    queue.push(entry)
    textChars += text.length
    while (textChars > memoChars && queueHead < queue.length) {
      const oldest = queue[queueHead++]!
      if (oldest.alive) forget(oldest)
    }
    if (queueHead > 1024 && queueHead * 2 > queue.length) {
      queue.splice(0, queueHead)
      queueHead = 0
    }
  }
  return { find: findText, remember }
}

/** Texts shorter than this are memoized by themselves, not by hash. */
const SHORT_TEXT = 64
/** Short texts a counter remembers; the memo is emptied when full (at most about 2.5 MB). */
const SHORT_MEMO_SIZE = 20_000

/**
 * A copy of `text` that does not keep a larger string alive: V8 takes a substring of 13
 * or more characters as a view of the whole string it came from.
 */
const ownCopy = (text: string): string => (text.length < 13 ? text : ` ${text}`.slice(1))

/** Build a counter around an encode function (or none, for the chars/4 estimate). */
const makeCounter = (
  model: string,
  encoding: EncodingName | "chars/4",
  exact: boolean,
  encode: ((text: string) => number) | undefined,
  options: TokenCounterOptions
): TokenCounter => {
  const memoSize = options.memoSize ?? 100_000
  // Two memos over the same counts. `byHash` (SHA-256 -> count) is small per entry and
  // long-lived; `recent` answers a repeat count of a recently counted text without hashing.
  const byHash = new Map<string, number>()
  const recent = makeTextMemo(options.memoChars ?? 8_000_000)
  let hits = 0
  let misses = 0
  let broken = false
  const short = new Map<string, number>()
  const count = (text: string): number => {
    if (text.length === 0) return 0
    if (encode === undefined || broken) return encodeSafe(text)
    // Short strings are cheaper to look up by themselves than to hash, and cheaper to hash
    // than to count: the pre-tokenizer's regex alone costs about a microsecond per piece,
    // and headers, separators and prompts come back on every request.
    if (text.length < SHORT_TEXT) {
      const known = short.get(text)
      if (known !== undefined) return known
      const n = encodeSafe(text)
      if (broken) return n
      if (short.size >= SHORT_MEMO_SIZE) short.clear()
      short.set(ownCopy(text), n)
      return n
    }
    const seen = recent.find(text)
    if (seen !== undefined) {
      hits++
      return seen
    }
    const key = sha256(text)
    const known = byHash.get(key)
    if (known !== undefined) {
      hits++
      // Re-insert so eviction drops the least recently used count, not the oldest.
      byHash.delete(key)
      byHash.set(key, known)
      recent.remember(text, known)
      return known
    }
    misses++
    const n = encodeSafe(text)
    if (broken) return n
    if (byHash.size >= memoSize) {
      const oldest = byHash.keys().next()
      if (!oldest.done) byHash.delete(oldest.value)
    }
    byHash.set(key, n)
    recent.remember(text, n)
    return n
  }
  const encodeSafe = (text: string): number => {
    if (encode === undefined || broken) return estimateTokens(text)
    try {
      return encode(text)
    } catch {
      // An encoder that throws once is not trusted again for this counter.
      broken = true
      return estimateTokens(text)
    }
  }
  const countMessage = (message: Message): number => {
    if (typeof message.content === "string") return MESSAGE_OVERHEAD_TOKENS + count(message.content)
    let total = MESSAGE_OVERHEAD_TOKENS
    for (const part of message.content) total += partTokens(part, count)
    return total
  }
  const countMessages = (messages: ReadonlyArray<Message>): number =>
    messages.length === 0 ? 0 : messages.reduce((sum, m) => sum + countMessage(m), LIST_OVERHEAD_TOKENS)
  return {
    model,
    encoding,
    // A counter whose encoder failed is estimating from then on.
    get exact() {
      return exact && !broken
    },
    count,
    countMessage,
    countMessages,
    stats: () => ({ hits, misses })
  }
}

/**
 * Make a token counter for a model. Loads the encoding once per process; OpenAI
 * models get exact counts, other families a cl100k_base approximation.
 *
 * @example
 * ```ts
 * import { makeTokenCounter } from "@strata/core"
 * const counter = await makeTokenCounter("gpt-4o")
 * counter.count("hello world") // 2
 * ```
 */
export const makeTokenCounter = async (model: string, options: TokenCounterOptions = {}): Promise<TokenCounter> => {
  const choice = encodingForModel(model)
  try {
    const encoder = await loadEncoder(choice.encoding)
    return makeCounter(model, choice.encoding, choice.exact, encoder.count, options)
  } catch {
    return makeCounter(model, "chars/4", false, undefined, options)
  }
}

/**
 * The synchronous twin of `makeTokenCounter`, for APIs that cannot await (the XML
 * chunk builder's `createTokenizer`). Same encodings, memo and chars/4 fallback;
 * the first call per encoding blocks while the ranks load (about half a second).
 *
 * @example
 * ```ts
 * import { makeTokenCounterSync } from "@strata/core"
 * makeTokenCounterSync("gpt-4o").count("hello world") // 2
 * ```
 */
export const makeTokenCounterSync = (model: string, options: TokenCounterOptions = {}): TokenCounter => {
  const choice = encodingForModel(model)
  try {
    const encoder = loadEncoderSync(choice.encoding)
    return makeCounter(model, choice.encoding, choice.exact, encoder.count, options)
  } catch {
    return makeCounter(model, "chars/4", false, undefined, options)
  }
}

/**
 * A counter that only estimates (chars/4), with no encoder at all. Counts are
 * flagged `exact: false`.
 */
export const makeEstimatingCounter = (model = "estimate"): TokenCounter =>
  makeCounter(model, "chars/4", false, undefined, {})

/**
 * A counter around a caller-supplied encode function; used by tests to prove the
 * fallback and memo behaviour, and by users with their own tokenizer.
 */
export const makeCustomCounter = (
  model: string,
  encode: (text: string) => number,
  options: TokenCounterOptions & { readonly exact?: boolean } = {}
): TokenCounter => makeCounter(model, "cl100k_base", options.exact ?? false, encode, options)
