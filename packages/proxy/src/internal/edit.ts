/**
 * Edit mode's change to an Anthropic Messages body: tool results the session has
 * superseded (the same file read again or edited since, the same command or search run
 * again) replaced by a short placeholder that says what was cleared and how to get it back.
 *
 * - Stable: a result cleared once is cleared in every later request with the same bytes
 *   (the ledger keeps `[tool-use id, placeholder]`), so the new prefix stays cached.
 * - Cache-aware: a new clearing rewrites the cached conversation after the system prompt,
 *   so it happens only when that prefix is lost anyway (the gap outlived the entry's
 *   lifetime), or when the reads it saves over the session's expected remaining requests
 *   pay for writing the conversation again.
 * - Never a result of the last few steps, never a thinking block, never the system
 *   prompt, tools, model, `max_tokens` or sampling fields: only the `content` of a
 *   `tool_result` block changes (its id, `is_error` and `cache_control` stay).
 */
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
}

/**
 * Clear superseded tool results (see the module comment). Pure: the same input gives the
 * same bytes.
 */
export const clearSuperseded = (input: EditInput): EditResult => {
  const { body } = input
  const messages = body["messages"]
  if (!Array.isArray(messages)) return { body, changed: [], cleared: input.cleared, saving: 0 }
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
  const fresh: Array<readonly [string, string]> = []
  let saved = 0
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
    fresh.push([u.id, placeholder])
    saved += tokens - roughTokens(placeholder)
  }

  // Worth it? The conversation after the system prompt is written again (at worst); the
  // reads it saves come back on every later request.
  let take = fresh
  const lost = input.gap !== undefined && (input.gap > ONE_HOUR + 30 || (input.gap > SURELY_EXPIRED && !input.lastBet))
  const rewrite = (WRITE_5M - READ) * roughTokens(messages)
  if (fresh.length > 0) {
    const remaining = Math.min(50, Math.max(1, input.requestsBefore)) / 2
    if (!lost && READ * saved * remaining <= rewrite) take = []
  }
  const all = [...input.cleared, ...take]
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
  const changed = take.length > 0 ? [`cleared ${take.length} superseded tool result${take.length === 1 ? "" : "s"} (${Math.round(saved)} tokens)`] : []
  const saving = (lost ? WRITE_5M : READ) * clearedTokens - (take.length > 0 && !lost ? rewrite : 0)
  return { body: { ...body, messages: out }, changed, cleared: all, saving }
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
