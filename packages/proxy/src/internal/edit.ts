/**
 * Edit mode's change to an Anthropic Messages body: tool results the session has
 * superseded (the same file read again or edited since, the same command or search run
 * again) replaced by a short placeholder that says what was cleared and how to get it back.
 *
 * - Stable: a result cleared once is cleared in every later request with the same bytes
 *   (the ledger keeps `[tool-use id, placeholder]`), so the new prefix stays cached.
 * - Cache-aware: a new clearing changes the conversation from the first result it clears
 *   on. It happens when that prefix is lost anyway (the gap outlived the entry's lifetime),
 *   or when the reads it saves over the session's expected remaining requests pay for what
 *   it writes again, and what it would cost if no request came after (the rewrite less this
 *   request's saved reads, with a margin) is covered by the session's credit: a bet paid
 *   from savings already made, like a 1h lifetime, so the session is never dearer than
 *   sent. What it writes again: when an earlier request of the session left a cache entry
 *   still alive at a block before the first cleared result (the ledger tracks the entries
 *   the forwarded markers wrote and read: `trackEntries`), a marker there (the transform
 *   places it in a free slot) reads the prefix up to it and only the blocks after it, up to
 *   the previous request's end, are written again; without one, the whole conversation
 *   after the system prompt.
 * - Never a result of the last few steps, never a thinking block, never the system
 *   prompt, tools, model, `max_tokens` or sampling fields: only the `content` of a
 *   `tool_result` block changes (its id, `is_error` and `cache_control` stay), and the
 *   cache-control positions (the marker at that entry, placed by the transform).
 */
import type { CacheEntry } from "./ledger.ts"

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** Steps (assistant messages) at the end of the conversation whose results are never cleared. */
export const KEEP_STEPS = 3
const WRITE_5M = 1.25
const READ = 0.1
const FIVE_MINUTES = 300
/**
 * A gap after which a 5-minute entry is surely gone: the lifetime counts from when the
 * reply was ready, not from when the request was sent (30 s of margin).
 */
export const SURELY_EXPIRED = FIVE_MINUTES + 30
const ONE_HOUR = 3600
/** Margin on the worst case of a clearing's rewrite (rough tokens against the provider's). */
const LOSS_MARGIN = 1.3
/** Results smaller than this (rough tokens) are not worth a placeholder. */
const MIN_RESULT_TOKENS = 40

/**
 * Rough tokens of a JSON value (4 characters a token), from the lengths of its strings and
 * keys without serialising it (a 200k-token body is walked in well under a millisecond).
 * Only for the rent-or-buy and clearing estimates.
 */
export const roughTokens = (v: unknown): number => Math.ceil(jsonChars(v) / 4)
const jsonChars = (v: unknown): number => {
  if (typeof v === "string") return v.length + 2
  if (typeof v === "number" || typeof v === "boolean") return 6
  if (v === null || v === undefined) return 4
  if (Array.isArray(v)) {
    let n = 2
    for (const x of v) n += jsonChars(x) + 1
    return n
  }
  if (typeof v === "object") {
    let n = 2
    // Own enumerable keys, as Object.entries lists them, without a pair array per key.
    for (const k in v) if (Object.hasOwn(v, k)) n += k.length + 4 + jsonChars((v as Json)[k])
    return n
  }
  return 0
}

/**
 * Where each message's content blocks start in the message-block order Anthropic's lookback
 * counts (a string content is one block, as `anthropicBlockCount` counts), with the total
 * at the end: `offsets[i]` is message `i`'s first block, `offsets[messages.length]` the count.
 */
export const blockOffsets = (messages: ReadonlyArray<unknown>): Array<number> => {
  const offsets: Array<number> = []
  let n = 0
  for (const m of messages) {
    offsets.push(n)
    n += blocksOf(m)
  }
  offsets.push(n)
  return offsets
}

/** A message's content blocks as Anthropic's lookback counts them: a string content is one. */
export const blocksOf = (m: unknown): number => (!isRecord(m) ? 0 : Array.isArray(m["content"]) ? m["content"].length : 1)

/** The message and index of message block `b`, and the block (a string content is its own block). */
const blockAt = (messages: ReadonlyArray<unknown>, offsets: ReadonlyArray<number>, b: number): { readonly message: number; readonly index: number; readonly block: unknown } | undefined => {
  if (b < 0 || b >= offsets[messages.length]!) return undefined
  // The last message starting at or before b (binary search; empty messages share an offset).
  let lo = 0
  let hi = messages.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid]! <= b) lo = mid
    else hi = mid - 1
  }
  const m = messages[lo]
  if (!isRecord(m)) return undefined
  const content = m["content"]
  const index = b - offsets[lo]!
  return { message: lo, index, block: Array.isArray(content) ? content[index] : content }
}

/** What identifies a block cheaply: a tool id, or a text's length and start (a string content and its text block alike). */
const fingerprintOf = (block: unknown): string => {
  if (typeof block === "string") return `t${block.length}:${block.slice(0, 32)}`
  if (!isRecord(block)) return "?"
  if (block["type"] === "text" && typeof block["text"] === "string") return `t${block["text"].length}:${block["text"].slice(0, 32)}`
  if (block["type"] === "tool_result") return `r:${String(block["tool_use_id"])}`
  if (block["type"] === "tool_use") return `u:${String(block["id"])}`
  return String(block["type"])
}

const UNMARKABLE = new Set(["thinking", "redacted_thinking"])
/** Can a marker sit on this block (a content block, not a thinking block, not an empty text)? */
export const markable = (block: unknown): boolean =>
  isRecord(block) && typeof block["type"] === "string" && !UNMARKABLE.has(block["type"]) && !(block["type"] === "text" && block["text"] === "")

/** An entry is trusted alive this long before its lifetime ends (the lifetime counts from the provider's processing, the gap from the proxy's clock). */
const ENTRY_MARGIN = 30
/** Entries a ledger keeps (the highest blocks: an anchor sits a few steps back). */
const MAX_ENTRIES = 32

/**
 * The session's cache entries still alive for this request: each aged by the gap since the
 * previous request, dropped past its lifetime (less a margin) or when the block at its
 * position is no longer the one it was written at (another conversation). Entries beyond
 * the body's blocks stay (a shorter request of the same session).
 */
export const liveEntries = (
  entries: ReadonlyArray<CacheEntry> | undefined,
  gap: number | undefined,
  messages: ReadonlyArray<unknown>,
  offsets: ReadonlyArray<number>
): Array<CacheEntry> => {
  if (entries === undefined || gap === undefined) return []
  const out: Array<CacheEntry> = []
  for (const [block, age, lifetime, fingerprint] of entries) {
    const now = age + gap
    if (now > lifetime - ENTRY_MARGIN) continue
    const at = blockAt(messages, offsets, block)
    if (at !== undefined && fingerprintOf(at.block) !== fingerprint) continue
    out.push([block, now, lifetime, fingerprint])
  }
  return out
}

/**
 * The entries after a forwarded request, as Anthropic's cache keeps them: its longest hit
 * (the first live entry in lookback order: later markers first, each looking back
 * `lookback` blocks) is read and lives on; its markers above the hit write entries (when
 * the prefix through them is surely above the model's minimum). Entries at or after `changedFrom` (the first block
 * this request changed) are gone. Only what is sure is kept: an entry is never believed
 * alive longer than it is.
 */
export const trackEntries = (input: {
  readonly body: Json
  readonly live: ReadonlyArray<CacheEntry>
  readonly offsets: ReadonlyArray<number>
  readonly changedFrom: number | undefined
  readonly lookback: number
  readonly minTokens: number
}): Array<CacheEntry> => {
  const messages = input.body["messages"]
  if (!Array.isArray(messages)) return []
  const entries = new Map<number, CacheEntry>()
  for (const e of input.live) if (input.changedFrom === undefined || e[0] < input.changedFrom) entries.set(e[0], e)
  // The markers in the messages: block, lifetime, fingerprint, whether the prefix through it surely reaches the minimum.
  const marks: Array<{ readonly block: number; readonly lifetime: number; readonly fingerprint: string; readonly cacheable: boolean }> = []
  // Rough tokens count JSON keys and quotes too: half as much again is surely above the minimum.
  const floor = 1.5 * input.minTokens
  let tokens = roughTokens(input.body["tools"]) + roughTokens(input.body["system"])
  messages.forEach((m, i) => {
    if (!isRecord(m)) return
    const content = m["content"]
    if (!Array.isArray(content)) {
      if (tokens < floor) tokens += roughTokens(content)
      return
    }
    content.forEach((block, index) => {
      if (tokens < floor) tokens += roughTokens(block)
      if (!isRecord(block) || !isRecord(block["cache_control"])) return
      marks.push({ block: input.offsets[i]! + index, lifetime: block["cache_control"]["ttl"] === "1h" ? ONE_HOUR : FIVE_MINUTES, fingerprint: fingerprintOf(block), cacheable: tokens >= floor })
    })
  })
  // The hit: later markers first, each looking back `lookback` blocks (itself included).
  let hit = -1
  const byPosition = [...marks].sort((a, b) => b.block - a.block)
  search: for (const m of byPosition) {
    for (let b = m.block; b > m.block - input.lookback && b >= 0; b--) {
      if (entries.has(b)) {
        hit = b
        break search
      }
    }
  }
  const touch = (b: number) => {
    const e = entries.get(b)
    if (e !== undefined) entries.set(b, [e[0], 0, e[2], e[3]])
  }
  // The hit lives on; markers below it may refresh their entries too, but that is not sure.
  touch(hit)
  for (const m of marks) {
    if (m.block > hit && m.cacheable) {
      const e = entries.get(m.block)
      entries.set(m.block, [m.block, 0, Math.max(m.lifetime, e?.[2] ?? 0), m.fingerprint])
    }
  }
  return [...entries.values()].sort((a, b) => a[0] - b[0]).slice(-MAX_ENTRIES)
}

/** File reads (Claude Code's `Read`, the names other agents give theirs). */
const READS = new Set(["Read", "View", "read_file", "view_file", "open_file"])
/** File writes: a read of the same path before one is stale. */
const WRITES = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit", "edit_file", "write_file"])
/** Commands and searches: the same input run again supersedes the older output. */
const RERUNS = new Set(["Bash", "Grep", "Glob", "LS", "bash", "search", "list_files", "run_tests"])

interface Use {
  readonly id: string
  readonly name: string
  readonly input: Json
  readonly step: number
}

const pathOf = (input: Json): string | undefined => {
  const p = input["file_path"] ?? input["path"] ?? input["notebook_path"]
  return typeof p === "string" ? p : undefined
}

/** Why `u`'s result is superseded by the later use `v`, or undefined. */
const supersedes = (u: Use, v: Use): string | undefined => {
  if (READS.has(u.name)) {
    const path = pathOf(u.input)
    if (path === undefined || pathOf(v.input) !== path) return undefined
    if (WRITES.has(v.name)) return `${path} was edited since; read it again to see it`
    if (READS.has(v.name) && v.input["offset"] === u.input["offset"] && v.input["limit"] === u.input["limit"]) return `${path} was read again later; read it again to see it`
    return undefined
  }
  if (RERUNS.has(u.name) && v.name === u.name && JSON.stringify(v.input) === JSON.stringify(u.input)) {
    return `${u.name} ran again later with the same input; run it again to see it`
  }
  return undefined
}

const placeholderOf = (u: Use, why: string): string => `[strata proxy: cleared the superseded result of ${u.name} (${u.id}): ${why}]`

export interface EditInput {
  readonly body: Json
  /** Seconds since the session's previous request (undefined: first request). */
  readonly gap: number | undefined
  /** The previous request's entry was bought with a 1h lifetime. */
  readonly lastBet: boolean
  /** Requests the session has made before this one. */
  readonly requestsBefore: number
  readonly cleared: ReadonlyArray<readonly [string, string]>
  /**
   * Responses only: seconds of idleness after which the provider has surely dropped the
   * cached prefix (the retention the model applies to this body, plus a margin). Default:
   * in-memory retention (`SURELY_EXPIRED`).
   */
  readonly expiresAfter?: number | undefined
  /**
   * Anthropic: the session's cache entries alive for this request (`liveEntries`), and
   * whether the request has a free marker slot to read one of them (an anchor).
   */
  readonly entries?: ReadonlyArray<CacheEntry> | undefined
  readonly anchorable?: boolean | undefined
  /** Anthropic: message blocks of the session's previous request (0: unknown). */
  readonly lastBlocks?: number | undefined
  /**
   * Anthropic: what the session's changes have saved so far (the ledger's credit): a new
   * clearing while the prefix is cached is a bet on the requests to come, paid from it.
   */
  readonly credit?: number | undefined
}

export interface EditResult {
  readonly body: Json
  readonly changed: ReadonlyArray<string>
  readonly cleared: ReadonlyArray<readonly [string, string]>
  /**
   * Base-input tokens this request is estimated to save against the body as sent (the
   * cleared tokens not read again; on a lost prefix, not written again), net of the
   * rewrite a new clearing causes when the prefix was still cached.
   */
  readonly saving: number
  /**
   * Anthropic: the first message block a new clearing changed, and the block (before it)
   * whose cache entry the request must mark to read the prefix up to it (with the rough
   * tokens of the messages through it).
   */
  readonly changedFrom?: number | undefined
  readonly anchor?: { readonly message: number; readonly index: number; readonly block: number; readonly tokens: number } | undefined
}

/** A new clearing's candidate: the tool-use id, its placeholder, its result's block and the rough tokens it removes. */
interface Candidate {
  readonly id: string
  readonly placeholder: string
  readonly block: number
  readonly saved: number
}

/**
 * Clear superseded tool results (see the module comment). Pure: the same input gives the
 * same bytes.
 */
export const clearSuperseded = (input: EditInput): EditResult => {
  const { body } = input
  const messages = body["messages"]
  if (!Array.isArray(messages)) return { body, changed: [], cleared: input.cleared, saving: 0 }
  const offsets = blockOffsets(messages)
  const uses: Array<Use> = []
  const results = new Map<string, { readonly message: number; readonly index: number; readonly block: Json }>()
  const steps: Array<number> = []
  messages.forEach((m, message) => {
    if (!isRecord(m) || !Array.isArray(m["content"])) return
    if (m["role"] === "assistant") steps.push(message)
    m["content"].forEach((block, index) => {
      if (!isRecord(block)) return
      if (m["role"] === "assistant" && block["type"] === "tool_use" && typeof block["id"] === "string" && typeof block["name"] === "string") {
        uses.push({ id: block["id"], name: block["name"], input: isRecord(block["input"]) ? block["input"] : {}, step: message })
      }
      if (m["role"] === "user" && block["type"] === "tool_result" && typeof block["tool_use_id"] === "string") results.set(block["tool_use_id"], { message, index, block })
    })
  })
  const recent = steps.length > KEEP_STEPS ? steps[steps.length - KEEP_STEPS]! : -1
  const known = new Map(input.cleared)

  // New candidates: superseded by a later use, older than the last few steps.
  const fresh: Array<Candidate> = []
  for (const [i, u] of uses.entries()) {
    if (known.has(u.id) || recent < 0 || u.step >= recent) continue
    const r = results.get(u.id)
    if (r === undefined) continue
    const tokens = roughTokens(r.block["content"])
    if (tokens < MIN_RESULT_TOKENS) continue
    let why: string | undefined
    for (const v of uses.slice(i + 1)) {
      if (v.step <= u.step) continue
      why = supersedes(u, v)
      if (why !== undefined) break
    }
    if (why === undefined) continue
    const placeholder = placeholderOf(u, why)
    fresh.push({ id: u.id, placeholder, block: offsets[r.message]! + r.index, saved: tokens - roughTokens(placeholder) })
  }

  // Worth it? What the clearing writes again (the conversation after the system prompt, or
  // after a still-cached entry before the first cleared result); the reads it saves come
  // back on every later request.
  let take: ReadonlyArray<Candidate> = fresh
  let anchor: number | undefined
  let anchorTokens = 0
  const lost = input.gap !== undefined && (input.gap > ONE_HOUR + 30 || (input.gap > SURELY_EXPIRED && !input.lastBet))
  let rewrite = 0
  if (fresh.length > 0 && !lost) {
    const remaining = Math.min(50, Math.max(1, input.requestsBefore)) / 2
    const credit = input.credit ?? 0
    const sum = (cs: ReadonlyArray<Candidate>) => cs.reduce((n, c) => n + c.saved, 0)
    // Worth it over the expected remaining requests, and affordable if the session ended
    // now: the rewrite (with a margin: rough tokens are not the provider's) less the reads
    // this request saves, paid from what the session has saved so far.
    const worth = (saved: number, again: number): number =>
      LOSS_MARGIN * (WRITE_5M - READ) * again - READ * saved > credit ? -Infinity : READ * saved * remaining - (WRITE_5M - READ) * again
    const whole = roughTokens(messages)
    let best = worth(sum(fresh), whole)
    rewrite = (WRITE_5M - READ) * whole
    const entries = input.entries ?? []
    if (input.anchorable === true && entries.length > 0) {
      // Rough tokens of each block as sent before this clearing (earlier placeholders in
      // place), summed from the start: what a read up to an entry leaves to write again.
      const before = blockTokens(messages, results, known, offsets)
      const end = Math.min(input.lastBlocks !== undefined && input.lastBlocks > 0 ? input.lastBlocks : offsets[messages.length]!, offsets[messages.length]!)
      for (const [q] of entries) {
        const at = blockAt(messages, offsets, q)
        if (at === undefined || typeof at.block === "string" || !markable(at.block) || q >= end) continue
        const cleared = fresh.filter((c) => c.block > q)
        if (cleared.length === 0) continue
        const saved = sum(cleared)
        const again = Math.max(0, before[end]! - before[q + 1]! - saved)
        const net = worth(saved, again)
        if (net > best) {
          best = net
          take = cleared
          anchor = q
          anchorTokens = before[q + 1]!
          rewrite = (WRITE_5M - READ) * again
        }
      }
    }
    if (best <= 0) {
      take = []
      anchor = undefined
    }
  }
  const all = [...input.cleared, ...take.map((c) => [c.id, c.placeholder] as const)]
  if (all.length === 0) return { body, changed: [], cleared: input.cleared, saving: 0 }

  const byMessage = new Map<number, Map<number, string>>()
  for (const [id, placeholder] of all) {
    const r = results.get(id)
    if (r === undefined || r.block["content"] === placeholder) continue
    const inMessage = byMessage.get(r.message) ?? new Map<number, string>()
    inMessage.set(r.index, placeholder)
    byMessage.set(r.message, inMessage)
  }
  if (byMessage.size === 0) return { body, changed: [], cleared: all, saving: 0 }
  let clearedTokens = 0
  const out = messages.map((m, message) => {
    const edits = byMessage.get(message)
    if (edits === undefined || !isRecord(m) || !Array.isArray(m["content"])) return m
    return {
      ...m,
      content: m["content"].map((block, index) => {
        if (!edits.has(index) || !isRecord(block)) return block
        clearedTokens += Math.max(0, roughTokens(block["content"]) - roughTokens(edits.get(index)))
        return { ...block, content: edits.get(index)! }
      })
    }
  })
  const saved = Math.round(take.reduce((n, c) => n + c.saved, 0))
  const plural = take.length === 1 ? "" : "s"
  const changed = take.length === 0 ? [] : [`cleared ${take.length} superseded tool result${plural} (${saved} tokens)`]
  const saving = (lost ? WRITE_5M : READ) * clearedTokens - (take.length > 0 && !lost ? rewrite : 0)
  const at = anchor === undefined ? undefined : blockAt(messages, offsets, anchor)
  return {
    body: { ...body, messages: out },
    changed,
    cleared: all,
    saving,
    ...(take.length === 0 ? {} : { changedFrom: Math.min(...take.map((c) => c.block)) }),
    ...(at === undefined || anchor === undefined ? {} : { anchor: { message: at.message, index: at.index, block: anchor, tokens: anchorTokens } })
  }
}

/**
 * Rough tokens of the message blocks as the session has sent them so far (results cleared
 * earlier count as their placeholders), cumulative: `sums[b]` is the tokens before block `b`.
 */
const blockTokens = (
  messages: ReadonlyArray<unknown>,
  results: ReadonlyMap<string, { readonly message: number; readonly index: number; readonly block: Json }>,
  known: ReadonlyMap<string, string>,
  offsets: ReadonlyArray<number>
): Array<number> => {
  const cleared = new Map<number, string>()
  for (const [id, placeholder] of known) {
    const r = results.get(id)
    if (r !== undefined) cleared.set(offsets[r.message]! + r.index, placeholder)
  }
  const sums = [0]
  let n = 0
  messages.forEach((m, i) => {
    if (!isRecord(m)) return
    const content = m["content"]
    if (!Array.isArray(content)) {
      n += roughTokens(content)
      sums.push(n)
      return
    }
    content.forEach((block, index) => {
      const placeholder = cleared.get(offsets[i]! + index)
      n += placeholder === undefined || !isRecord(block) ? roughTokens(block) : roughTokens(block) - roughTokens(block["content"]) + roughTokens(placeholder)
      sums.push(n)
    })
  })
  return sums
}

/** The least a new clearing of a Responses body removes (tokens; see `clearSupersededResponses`). */
const RESPONSES_MIN_CLEARED = 1500

/** Codex's shell commands that print a file: `cat F`, `sed -n 'a,bp' F`, `nl -ba F`, `head`/`tail` F. */
const shellReadPath = (cmd: string): string | undefined => {
  const m = /^\s*(?:cat|nl(?:\s+-\w+)*|head(?:\s+-n?\s*\d+)?|tail(?:\s+-n?\s*\d+)?|sed\s+-n\s+(?:'[^']*'|"[^"]*"|\S+))\s+([^\s|;&<>]+)\s*$/.exec(cmd)
  return m?.[1]
}
/** Files an `apply_patch` input touches. */
const patchedPaths = (patch: string): ReadonlyArray<string> =>
  [...patch.matchAll(/^\*\*\* (?:Update|Add|Delete) File: (.+)$/gm)].map((m) => m[1]!.trim())

const commandOf = (args: unknown): string | undefined => {
  if (typeof args !== "string") return undefined
  try {
    const parsed: unknown = JSON.parse(args)
    if (!isRecord(parsed)) return undefined
    const cmd = parsed["cmd"] ?? parsed["command"]
    return typeof cmd === "string" ? cmd : Array.isArray(cmd) && cmd.every((c) => typeof c === "string") ? cmd.join(" ") : undefined
  } catch {
    return undefined
  }
}

/**
 * Edit mode for an OpenAI Responses body (Codex: `exec_command` function calls and
 * `apply_patch` custom tool calls): a command's output superseded by the same command run
 * again later, or a file printed (`cat`, `sed -n`, `nl`, `head`, `tail`) before a patch
 * touched it, replaced by a placeholder in its `function_call_output`. OpenAI charges no
 * write premium but reads the cached prefix at a tenth, so a new clearing only happens
 * when the cache is lost anyway (a pause past the retention the model applies: in-memory
 * 5 minutes, or 24 hours when the client asked for it or the model keeps only that, as
 * GPT-5.5 does). Stable like the Anthropic form; never the last 3 calls.
 */
export const clearSupersededResponses = (input: EditInput): EditResult => {
  const { body } = input
  const items = body["input"]
  if (!Array.isArray(items)) return { body, changed: [], cleared: input.cleared, saving: 0 }
  interface Call { readonly id: string; readonly name: string; readonly cmd: string | undefined; readonly patched: ReadonlyArray<string>; readonly order: number }
  const calls: Array<Call> = []
  const outputs = new Map<string, number>()
  items.forEach((item, index) => {
    if (!isRecord(item) || typeof item["call_id"] !== "string") return
    const id = item["call_id"]
    if (item["type"] === "function_call" && typeof item["name"] === "string") calls.push({ id, name: item["name"], cmd: commandOf(item["arguments"]), patched: [], order: calls.length })
    if (item["type"] === "custom_tool_call" && typeof item["name"] === "string") calls.push({ id, name: item["name"], cmd: undefined, patched: typeof item["input"] === "string" ? patchedPaths(item["input"]) : [], order: calls.length })
    if (item["type"] === "function_call_output" && typeof item["output"] === "string") outputs.set(id, index)
  })
  const known = new Map(input.cleared)
  const lost = input.gap !== undefined && input.gap > (input.expiresAfter ?? (body["prompt_cache_retention"] === "24h" ? Infinity : SURELY_EXPIRED))
  const fresh: Array<readonly [string, string]> = []
  if (lost) {
    for (const c of calls.slice(0, Math.max(0, calls.length - KEEP_STEPS))) {
      if (known.has(c.id) || c.cmd === undefined || !outputs.has(c.id)) continue
      const output = (items[outputs.get(c.id)!] as Json)["output"]
      if (roughTokens(output) < MIN_RESULT_TOKENS) continue
      const later = calls.slice(c.order + 1)
      const path = shellReadPath(c.cmd)
      const why = later.some((v) => v.cmd === c.cmd)
        ? `\`${c.cmd}\` ran again later; run it again to see it`
        : path !== undefined && later.some((v) => v.patched.some((p) => p === path || p.endsWith(`/${path}`) || path.endsWith(`/${p}`)))
          ? `${path} was patched since; print it again to see it`
          : undefined
      if (why !== undefined) fresh.push([c.id, `[strata proxy: cleared the superseded output of ${c.name} (${c.id}): ${why}]`])
    }
  }
  // OpenAI reads its cache in 128-token steps: a shorter prefix can read up to 127 tokens
  // less on every later request. Clear only when the reads saved outweigh that (at a tenth
  // of the price, 1,500 tokens or more at once).
  const freshTokens = fresh.reduce((n, [id, placeholder]) => n + roughTokens((items[outputs.get(id)!] as Json)["output"]) - roughTokens(placeholder), 0)
  if (freshTokens < RESPONSES_MIN_CLEARED) fresh.length = 0
  const all = [...input.cleared, ...fresh]
  let clearedTokens = 0
  let touched = false
  const out = items.map((item, index) => {
    if (!isRecord(item) || item["type"] !== "function_call_output" || typeof item["call_id"] !== "string") return item
    const placeholder = known.get(item["call_id"]) ?? fresh.find(([id]) => id === item["call_id"])?.[1]
    if (placeholder === undefined || item["output"] === placeholder || outputs.get(item["call_id"]) !== index) return item
    touched = true
    clearedTokens += Math.max(0, roughTokens(item["output"]) - roughTokens(placeholder))
    return { ...item, output: placeholder }
  })
  if (!touched) return { body, changed: [], cleared: all, saving: 0 }
  const changed = fresh.length > 0 ? [`cleared ${fresh.length} superseded command output${fresh.length === 1 ? "" : "s"}`] : []
  return { body: { ...body, input: out }, changed, cleared: all, saving: READ * clearedTokens }
}
