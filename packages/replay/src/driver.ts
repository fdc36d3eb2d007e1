/**
 * What every replay does with its strategies, whatever drives them (a chat's turns, an
 * agent's steps, a recorded session's lines): send each request through every strategy,
 * score it, dump it, tell the strategy it was answered; stop a strategy whose engine
 * refuses a request; and at the end, total the scores per strategy and per task.
 */
import type { TokenCounter } from "@strata/core/effect"
import type { RequestScore, Scorer } from "./score.ts"
import { summarize } from "./score.ts"
import { dumpLine } from "./score.ts"
import type { Strategy, StrategyName } from "./strategies.ts"
import type { MemoryFileSystem } from "./internal/memfs.ts"

/** A strategy the engine could not build a request for: where it stopped and why. */
export interface StrategyFailure {
  readonly strategy: StrategyName
  /** 0-based request and task where it stopped. */
  readonly request: number
  readonly task: number
  readonly reason: string
}

/** One task's (a chat's turn's) cost per strategy (USD when the model has a price, else equivalent tokens). */
export interface TurnCost {
  readonly index: number
  readonly t: number
  readonly commit: string
  readonly subject: string
  readonly cost: Readonly<Partial<Record<StrategyName, number>>>
}

/** One scored request and where it sits in the session. */
export interface ScoredRequest {
  readonly score: RequestScore
  /** 0-based request, task, and step within the task. */
  readonly request: number
  readonly task: number
  readonly step: number
  /** The session's conversation was compacted (or rewritten) just before it. */
  readonly compacted: boolean
}

/** Where a request sits: its number, send time, and whether it starts a task or follows a compaction. */
export interface RequestPosition {
  readonly index: number
  readonly t: number
  readonly taskStart: boolean
  readonly compacted: boolean
}

/** One replay in progress. */
export interface Run<I> {
  readonly scorer: Scorer
  readonly strategies: ReadonlyArray<Strategy<I>>
  /** Strategies whose engine refused a request: they stop, and leave the table. */
  readonly failures: Array<StrategyFailure>
  readonly costUnit: "usd" | "tokens"
  /** Where each scored request sits, in send order. */
  readonly sent: Array<Omit<ScoredRequest, "score">>
  /** The current task's first request. */
  taskStart: number
  readonly tasks: Array<Omit<TurnCost, "cost">>
  requests: number
}

export const startRun = <I>(scorer: Scorer, strategies: ReadonlyArray<Strategy<I>>): Run<I> => ({
  scorer,
  strategies,
  failures: [],
  costUnit: scorer.limits.price === undefined ? "tokens" : "usd",
  sent: [],
  taskStart: 0,
  tasks: [],
  requests: 0
})

/** Errors of the engine refusing a request (a placement it cannot build, a stage or an input it rejects). */
const ENGINE_ERRORS: ReadonlySet<string> = new Set(["PlacementError", "StageError", "InvalidInput"])

const engineRefusal = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("_tag" in error) || typeof error._tag !== "string" || !ENGINE_ERRORS.has(error._tag)) return undefined
  return error instanceof Error ? error.message : error._tag
}

/**
 * Send one request through every strategy: score it, dump it, commit it. A strategy
 * whose engine refuses the request (say, a layout that separates a tool call from its
 * result) stops there and is reported instead of scored.
 */
export const send = async <I>(run: Run<I>, input: I, at: RequestPosition, onRequest: ((line: string) => void | Promise<void>) | undefined): Promise<void> => {
  for (const strategy of run.strategies) {
    if (run.failures.some((f) => f.strategy === strategy.name)) continue
    let sent
    try {
      sent = await strategy.request(input)
    } catch (error) {
      const reason = engineRefusal(error)
      if (reason === undefined) throw error
      run.failures.push({ strategy: strategy.name, request: at.index, task: run.tasks.length - 1, reason })
      continue
    }
    run.scorer.send(strategy.name, sent.body, at.t, sent)
    if (at.taskStart) run.taskStart = at.index
    run.sent.push({ request: at.index, task: run.tasks.length - 1, step: at.index - run.taskStart, compacted: at.compacted })
    if (onRequest !== undefined) await onRequest(dumpLine(at.t, strategy.name, sent.body, sent))
    await strategy.answered(input)
  }
  run.requests++
}

/** The table and the cost per task; `onScore` sees every scored request of the strategies that finished. */
export const finish = <I>(run: Run<I>, onScore?: ((entry: ScoredRequest) => void) | undefined) => {
  const failed = new Set(run.failures.map((f) => f.strategy))
  const all = run.scorer.scores()
  const scores = all.filter((s) => !failed.has(s.strategy))
  const costs = run.tasks.map((): Partial<Record<StrategyName, number>> => ({}))
  all.forEach((score, i) => {
    if (failed.has(score.strategy)) return
    const at = run.sent[i]!
    onScore?.({ score, ...at })
    const cost = costs[at.task]!
    cost[score.strategy] = (cost[score.strategy] ?? 0) + (run.costUnit === "usd" ? (score.usd ?? 0) : score.equivalentTokens)
  })
  return {
    rows: summarize(scores),
    perTurn: run.tasks.map((task, i): TurnCost => ({ ...task, cost: costs[i]! })),
    ...(run.failures.length === 0 ? {} : { failures: run.failures })
  }
}

/** The tokenizer as a report names it. */
export const tokenizerName = (counter: TokenCounter): string => `${counter.encoding}${counter.exact ? "" : " (approximate)"}`

/** Put a commit's tree into the in-memory file system the symbol indexer reads: the text files' content, the others by path only. */
export const loadTree = (
  fs: MemoryFileSystem,
  turn: { readonly files: ReadonlyArray<{ readonly path: string; readonly blob: string; readonly content: string }>; readonly allPaths: ReadonlyArray<string> }
): void => {
  const text = new Map(turn.files.map((f) => [f.path, f]))
  fs.set(turn.allPaths.map((path) => {
    const file = text.get(path)
    return file === undefined ? { path, blob: `opaque:${path}`, content: undefined } : { path, blob: file.blob, content: file.content }
  }))
}
