// What context editing keeps between requests and reports per request: the data the
// assembly state carries, kept apart from the planner (contextEdits.ts) so the state
// (base/) does not depend on the contextEditing feature folder.

/** What replaced one tool result: the placeholder's text, and whether its exchange's reasoning was dropped. */
export interface ClearedResult {
  readonly placeholder: string
  readonly reasoning: boolean
}

/** What context editing remembers between requests (advanced only on commit). */
export interface ContextEditMemory {
  /** Cleared results by tool call id, in the order they were cleared. */
  readonly cleared: ReadonlyMap<string, ClearedResult>
  /** Reads spent on the clearable results since the last batch, in base-input tokens (the rent). */
  readonly rent: number
  /** When the last committed request was assembled (epoch ms), and whether its breakpoints asked for the long cache. */
  readonly at: number
  readonly longTtl: boolean
  /** The hash of its prefix head (the `system` item: system prompt and tools). */
  readonly head: string
  /** How many history items it had, and the hash of the last one: a history that no longer extends them was rewritten. */
  readonly items: number
  readonly last: string
}

/** Why this request cleared a batch, if it did. */
export type ClearReason =
  /** The reads the batch cost since it became clearable pay for rewriting the prefix after it. */
  | "rent paid"
  /** The prefix is written anyway (first request, new system prompt or tools, cache expired, history rewritten). */
  | "prefix rewritten"

/** What context editing did in one request: the figures the report shows, and the memory to keep. */
export interface ContextEditPlan {
  /** Tool results in the history. */
  readonly toolResults: number
  /** Tool results shown as placeholders in this request, and the tokens that saves. */
  readonly clearedResults: number
  readonly clearedTokens: number
  /** Of them, cleared by this request (0 unless `reason`). */
  readonly newlyClearedResults: number
  readonly newlyClearedTokens: number
  readonly reason: ClearReason | undefined
  /** The memory to keep once this request succeeds (`longTtl` is filled in at commit). */
  readonly memory: ContextEditMemory
}
