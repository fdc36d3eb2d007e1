/**
 * Cache-aware context editing, the plan: which old tool results (and the reasoning of
 * their exchanges) a request replaces by a short placeholder, and when. Clearing a result
 * rewrites the cached prefix from its exchange on, once; it saves reading its tokens on
 * every later request. So results are cleared in batches, when the reads they cost since
 * they became clearable pay for that rewrite (rent or buy, as the journal's rebuilds), or
 * for free when the prefix is rewritten anyway. A cleared result stays cleared, with the
 * same bytes, in every later request: the memory keeps each placeholder. Pure; the
 * `contextEditing` stage runs it.
 */
import { Schema } from "effect"
import { isToolError, toolCalls, type Message, type ToolCallPart, type ToolMessage, type ToolResultPart } from "../../domain/Message.ts"
import type { TokenCounter } from "../../tokens/TokenCounter.ts"
import type { ClearedResult, ClearReason, ContextEditMemory, ContextEditPlan } from "../base/contextEditMemory.ts"
import type { HistoryEntry } from "../base/entries.ts"
import type { CachePriceRatios } from "../base/providerCache.ts"

/**
 * Context-editing settings (the `ContextEditing` reference). Old tool results are
 * cleared when the history passes `triggerTokens`; file reads a later read or edit of
 * the same file supersedes go first, at any size.
 */
export const ContextEditingSettings = Schema.Struct({
  /** Clear anything at all (default true). Off: every result is sent as it was given. */
  enabled: Schema.Boolean,
  /** History tokens from which the older tool results are cleared (default 40,000). */
  triggerTokens: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  /** The last N tool uses keep their results, whatever else happens (default 3). */
  keepToolUses: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
  /** Tools whose results are never cleared (default none). */
  neverClear: Schema.Array(Schema.String),
  /** A batch is cleared only when it frees at least this many tokens (default 1,000), so a rewrite is never spent on crumbs. */
  clearAtLeastTokens: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  /**
   * Drop the reasoning of a cleared exchange too, when it is older than the current
   * assistant turn (default true). The current turn's reasoning is always sent back
   * unchanged, as Anthropic and Gemini require.
   */
  clearReasoning: Schema.Boolean
}).annotate({ identifier: "ContextEditingSettings" })
export type ContextEditingSettings = typeof ContextEditingSettings.Type

export const DEFAULT_CONTEXT_EDITING: ContextEditingSettings = {
  enabled: true,
  triggerTokens: 40_000,
  keepToolUses: 3,
  neverClear: [],
  clearAtLeastTokens: 1_000,
  clearReasoning: true
}

/** The state of the session the plan is made in. */
export interface ContextEditContext {
  /** Every history item, in conversation order. */
  readonly entries: ReadonlyArray<HistoryEntry>
  readonly counter: TokenCounter
  readonly settings: ContextEditingSettings
  readonly prices: CachePriceRatios
  readonly memory: ContextEditMemory | undefined
  readonly now: number
  /** The `system` item's hash now. */
  readonly head: string
  /** The provider's cache lifetime (`CacheExpiryMillis`) and the long one. */
  readonly expiryMillis: number
  readonly longTtlMillis: number
}

// ---------------------------------------------------------------------------------------
// Placeholders

/**
 * The text a cleared result is replaced by: the tool, the call, why, and how to get the
 * content back. Written once, when the result is cleared; the memory keeps it.
 *
 * @example
 * ```ts
 * import { clearedPlaceholder } from "@strata/core/effect"
 * clearedPlaceholder("read_file", "call_7", "src/a.ts")
 * // "[Result of read_file (call call_7) cleared: a later call on src/a.ts supersedes it. Call the tool again for the current content.]"
 * ```
 */
export const clearedPlaceholder = (toolName: string, toolCallId: string, supersededPath?: string): string =>
  supersededPath === undefined
    ? `[Result of ${toolName} (call ${toolCallId}) cleared to save context. Call the tool again if you need it.]`
    : `[Result of ${toolName} (call ${toolCallId}) cleared: a later call on ${supersededPath} supersedes it. Call the tool again for the current content.]`

// ---------------------------------------------------------------------------------------
// File reads and edits

const PATH_KEYS = ["path", "file_path", "filePath", "file", "filename", "target_file", "uri"] as const
const READ_WORDS = /read|view|cat\b|open|get_file|show/i
const EDIT_WORDS = /edit|write|patch|replace|create|insert|apply|update|delete|remove|rename|move/i

/**
 * What a tool call does to a file, guessed from its name (or a `command` argument, as in
 * Claude's text editor tool) and its path argument: `read`, `edit`, or undefined when it
 * names no file. Reads that a later call on the same file supersedes are the first
 * results context editing clears.
 *
 * @example
 * ```ts
 * import { fileAccess } from "@strata/core/effect"
 * fileAccess({ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "./src/a.ts" } })
 * // { kind: "read", path: "src/a.ts" }
 * ```
 */
export const fileAccess = (call: ToolCallPart): { readonly kind: "read" | "edit"; readonly path: string } | undefined => {
  if (accesses.has(call)) return accesses.get(call)
  const access = accessOf(call)
  accesses.set(call, access)
  return access
}

// Calls are immutable values a session hands again on every request: each is read once.
const accesses = new WeakMap<ToolCallPart, { readonly kind: "read" | "edit"; readonly path: string } | undefined>()

const accessOf = (call: ToolCallPart): { readonly kind: "read" | "edit"; readonly path: string } | undefined => {
  let path: string | undefined
  for (const key of PATH_KEYS) {
    const value = call.input[key]
    if (typeof value === "string" && value.length > 0) {
      path = value.replace(/^\.\//, "")
      break
    }
  }
  if (path === undefined) return undefined
  const command = call.input["command"]
  const verb = typeof command === "string" ? command : call.toolName
  if (EDIT_WORDS.test(verb)) return { kind: "edit", path }
  if (READ_WORDS.test(verb)) return { kind: "read", path }
  return undefined
}

// ---------------------------------------------------------------------------------------
// The plan

/** One tool result of the history, with what clearing it would free. */
interface Candidate {
  readonly entry: number
  readonly call: ToolCallPart
  readonly result: ToolResultPart
  /** Tokens the placeholder saves (result tokens minus placeholder tokens). */
  readonly frees: number
  readonly supersededBy: string | undefined
}

// Results are immutable values handed again on every request: count each once.
const resultCounts = new WeakMap<ToolResultPart, { readonly counter: TokenCounter; readonly tokens: number }>()
const resultTokens = (result: ToolResultPart, counter: TokenCounter): number => {
  const known = resultCounts.get(result)
  if (known !== undefined && known.counter === counter) return known.tokens
  const tokens = counter.countMessage({ role: "tool", content: [result] })
  resultCounts.set(result, { counter, tokens })
  return tokens
}
const placeholderTokens = (result: ToolResultPart, placeholder: string, counter: TokenCounter): number =>
  counter.countMessage({ role: "tool", content: [{ ...result, output: { type: "text", value: placeholder } }] })

/** An exchange's tool calls (the first of each id) and the results that answer one of them. */
interface Exchange {
  readonly calls: ReadonlyArray<ToolCallPart>
  readonly answered: ReadonlyArray<{ readonly call: ToolCallPart; readonly result: ToolResultPart }>
}

// Read once per entry: `historyEntries` hands the same entry objects on every request.
const exchanges = new WeakMap<HistoryEntry, Exchange | undefined>()

const exchangeOf = (e: HistoryEntry): Exchange | undefined => {
  if (exchanges.has(e)) return exchanges.get(e)
  let exchange: Exchange | undefined
  const [first, second] = e.messages
  if (e.messages.length === 2 && first !== undefined && second?.role === "tool") {
    const byId = new Map(toolCalls(first).map((call) => [call.toolCallId, call]))
    const answered: Array<{ readonly call: ToolCallPart; readonly result: ToolResultPart }> = []
    for (const result of second.content) {
      const call = byId.get(result.toolCallId)
      if (call !== undefined) answered.push({ call, result })
    }
    exchange = { calls: [...byId.values()], answered }
  }
  exchanges.set(e, exchange)
  return exchange
}

/** Index of the first entry of the current assistant turn (after the last user message). */
const currentTurnStart = (entries: ReadonlyArray<HistoryEntry>): number => {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.messages[0]?.role === "user") return i + 1
  return 0
}

/**
 * This request's context edits: which results are shown as placeholders (every one
 * cleared before, and a new batch when it pays or comes free), and the memory to keep.
 * Pure: the same context gives the same plan.
 */
export const planContextEdits = (c: ContextEditContext): ContextEditPlan => {
  const { entries, counter, settings, prices } = c
  const previous = c.memory
  // Only results still in the history are remembered; a compaction drops the others.
  const present = new Map<string, { readonly entry: number; readonly call: ToolCallPart; readonly result: ToolResultPart }>()
  const calls: Array<{ readonly entry: number; readonly call: ToolCallPart }> = []
  entries.forEach((e, i) => {
    const exchange = exchangeOf(e)
    if (exchange === undefined) return
    for (const call of exchange.calls) calls.push({ entry: i, call })
    for (const { call, result } of exchange.answered) present.set(result.toolCallId, { entry: i, call, result })
  })
  const cleared = new Map<string, ClearedResult>()
  if (previous !== undefined) for (const [id, r] of previous.cleared) if (present.has(id)) cleared.set(id, r)

  const turnStart = currentTurnStart(entries)
  const rewritten = previous === undefined ||
    previous.head !== c.head ||
    c.now - previous.at > (previous.longTtl ? Math.max(c.longTtlMillis, c.expiryMillis) : c.expiryMillis) ||
    previous.items > entries.length ||
    (previous.items > 0 && entries[previous.items - 1]?.hash !== previous.last)

  let reason: ClearReason | undefined
  let rent = previous?.rent ?? 0
  const fresh = new Map<string, ClearedResult>()
  if (settings.enabled) {
    const kept = new Set(calls.slice(Math.max(0, calls.length - settings.keepToolUses)).map((k) => k.call.toolCallId))
    const never = new Set(settings.neverClear)
    // The last call on each path, for superseded reads.
    const lastOn = new Map<string, number>()
    calls.forEach((k, n) => {
      const access = fileAccess(k.call)
      if (access !== undefined) lastOn.set(access.path, n)
    })
    const candidates: Array<Candidate> = []
    calls.forEach((k, n) => {
      const id = k.call.toolCallId
      const found = present.get(id)
      if (found === undefined || cleared.has(id) || kept.has(id) || never.has(k.call.toolName)) return
      const access = fileAccess(k.call)
      const supersededBy = access?.kind === "read" && (lastOn.get(access.path) ?? n) > n ? access.path : undefined
      const placeholder = clearedPlaceholder(k.call.toolName, id, supersededBy)
      const frees = resultTokens(found.result, counter) - placeholderTokens(found.result, placeholder, counter)
      if (frees > 0) candidates.push({ entry: k.entry, call: k.call, result: found.result, frees, supersededBy })
    })
    // The history as the last request sent it: with every earlier clearing applied.
    const sizes = entries.map((e) => editedEntry(e, cleared, counter).tokens)
    const overTrigger = sizes.reduce((n, t) => n + t, 0) >= settings.triggerTokens
    // First to go: superseded reads (the current content is a call away); past the trigger, every older output.
    const batch = candidates.filter((k) => k.supersededBy !== undefined || overTrigger)
    const frees = batch.reduce((n, k) => n + k.frees, 0)
    if (batch.length === 0) rent = 0
    else {
      const paid = rent + prices.read * frees
      const from = Math.min(...batch.map((k) => k.entry))
      // The prefix from the first cleared exchange on is written again, without what the batch frees.
      const rewrite = sizes.slice(from).reduce((n, t) => n + t, 0) - frees
      const due = frees >= settings.clearAtLeastTokens && (rewritten || paid >= prices.write * rewrite)
      if (due) {
        reason = rewritten ? "prefix rewritten" : "rent paid"
        rent = 0
        for (const k of batch) {
          const id = k.call.toolCallId
          const reasoning = settings.clearReasoning && k.entry < turnStart
          fresh.set(id, { placeholder: clearedPlaceholder(k.call.toolName, id, k.supersededBy), reasoning })
        }
      } else rent = paid
    }
  }
  const before = freedBy(cleared, present, entries, counter)
  for (const [id, r] of fresh) cleared.set(id, r)
  const after = fresh.size === 0 ? before : freedBy(cleared, present, entries, counter)
  const last = entries.at(-1)
  return {
    toolResults: present.size,
    clearedResults: cleared.size,
    clearedTokens: after,
    newlyClearedResults: fresh.size,
    newlyClearedTokens: after - before,
    reason,
    memory: { cleared, rent, at: c.now, longTtl: false, head: c.head, items: entries.length, last: last?.hash ?? "" }
  }
}

/** Tokens the cleared results (and dropped reasoning) free, given the entries as the caller gave them. */
const freedBy = (
  cleared: ReadonlyMap<string, ClearedResult>,
  present: ReadonlyMap<string, { readonly entry: number }>,
  entries: ReadonlyArray<HistoryEntry>,
  counter: TokenCounter
): number => {
  if (cleared.size === 0) return 0
  const touched = new Set<number>()
  for (const id of cleared.keys()) {
    const at = present.get(id)
    if (at !== undefined) touched.add(at.entry)
  }
  let freed = 0
  for (const i of touched) {
    const entry = entries[i]!
    freed += entry.tokens - editedEntry(entry, cleared, counter).tokens
  }
  return freed
}

// ---------------------------------------------------------------------------------------
// Applying the plan

interface Edited {
  readonly counter: TokenCounter
  readonly edit: string
  /** The placeholders the cleared results were given, in result order. */
  readonly placeholders: string
  readonly messages: ReadonlyArray<Message>
  readonly tokens: number
}

// An exchange is edited the same way in every request until its cleared set changes:
// memoized per tool message, so later requests reuse the same message objects.
const edits = new WeakMap<Message, Edited>()

/**
 * The fingerprint of the edit applied to an entry: its cleared call ids (with `+r` when
 * its reasoning was dropped), `""` when none. A layout that keeps rendered history (the
 * journal) compares it to know which of its messages to rewrite.
 */
const editFingerprint = (entry: HistoryEntry, cleared: ReadonlyMap<string, ClearedResult>): string => {
  const tool = entry.messages[1]
  if (tool?.role !== "tool") return ""
  const ids: Array<string> = []
  let reasoning = false
  for (const r of tool.content) {
    const c = cleared.get(r.toolCallId)
    if (c === undefined) continue
    ids.push(r.toolCallId)
    if (c.reasoning) reasoning = true
  }
  return ids.length === 0 ? "" : `${ids.join(",")}${reasoning ? "+r" : ""}`
}

/**
 * An entry with its cleared results replaced by their placeholders (an error stays an
 * error) and, when asked, its reasoning parts dropped; its hash is kept (the tracker
 * follows the exchange the caller gave). The same entry when nothing of it is cleared.
 */
export const editedEntry = (entry: HistoryEntry, cleared: ReadonlyMap<string, ClearedResult>, counter: TokenCounter): HistoryEntry => {
  const tool = entry.messages[1]
  if (tool?.role !== "tool") return entry
  const last = editedEntries.get(entry)
  if (last !== undefined && last.counter === counter && sameMarks(tool, cleared, last.marks)) return last.edited
  const edited = applyEdit(entry, cleared, counter)
  editedEntries.set(entry, { counter, marks: tool.content.map((r) => cleared.get(r.toolCallId)), edited })
  return edited
}

// The plan and the stage ask for the same entries' edits several times per request, and
// `historyEntries` hands the same entry objects on every request: an entry's edit is
// applied again only when one of its results' cleared marks is not the very same value
// (marks are immutable; the memory carries them over from request to request).
const editedEntries = new WeakMap<HistoryEntry, {
  readonly counter: TokenCounter
  readonly marks: ReadonlyArray<ClearedResult | undefined>
  readonly edited: HistoryEntry
}>()

const sameMarks = (tool: ToolMessage, cleared: ReadonlyMap<string, ClearedResult>, marks: ReadonlyArray<ClearedResult | undefined>): boolean => {
  const results = tool.content
  if (results.length !== marks.length) return false
  for (let k = 0; k < results.length; k++) if (cleared.get(results[k]!.toolCallId) !== marks[k]) return false
  return true
}

// The fingerprint names the cleared calls, not their placeholders: the same call cleared
// with another placeholder (another reason, another session over the same messages) is
// another edit.
const placeholdersOf = (tool: ToolMessage, cleared: ReadonlyMap<string, ClearedResult>): string =>
  tool.content.map((r) => cleared.get(r.toolCallId)?.placeholder ?? "").join("\u0000")

const applyEdit = (entry: HistoryEntry, cleared: ReadonlyMap<string, ClearedResult>, counter: TokenCounter): HistoryEntry => {
  const edit = editFingerprint(entry, cleared)
  if (edit === "") return entry
  const [call, tool] = entry.messages as [Message, ToolMessage]
  const known = edits.get(tool)
  const placeholders = placeholdersOf(tool, cleared)
  if (known !== undefined && known.counter === counter && known.edit === edit && known.placeholders === placeholders) return { ...entry, messages: known.messages, tokens: known.tokens, edit }
  const dropReasoning = edit.endsWith("+r")
  const assistant: Message = dropReasoning && call.role === "assistant" && typeof call.content !== "string"
    ? { ...call, content: call.content.filter((p) => p.type !== "reasoning") }
    : call
  const results: ToolMessage = {
    role: "tool",
    content: tool.content.map((r) => {
      const c = cleared.get(r.toolCallId)
      if (c === undefined) return r
      return { ...r, output: isToolError(r.output) ? { type: "error-text", value: c.placeholder } : { type: "text", value: c.placeholder } }
    })
  }
  const messages = [assistant, results]
  const tokens = counter.countMessage(assistant) + counter.countMessage(results)
  edits.set(tool, { counter, edit, placeholders, messages, tokens })
  return { ...entry, messages, tokens, edit }
}
