/**
 * `runReplay`: drives every strategy through the same simulated session of a git
 * history and scores each request with the provider's prompt-cache simulator. The
 * session is the one a live user would have: the symbol map, file tree and tracker
 * update per turn, history is compacted at the CLI's trigger, time advances
 * `gapSeconds` per turn. Deterministic: the same repository and options give the
 * same report, byte for byte.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import {
  CompactionModel,
  type CompactionConfig,
  HistoryCompactor,
  type LayoutMode,
  makeTokenCounter,
  modelInfo,
  Prompts,
  Tokenizer,
  type Message,
  type TokenCounter
} from "@strata/core/effect"
import { lookupModel } from "@strata/providers"
import { SymbolIndexer } from "@strata/symbols"
import { listCommits } from "./internal/git.ts"
import { MemoryFileSystem } from "./internal/memfs.ts"
import { finish, loadTree, send, startRun, tokenizerName, type StrategyFailure, type TurnCost } from "./driver.ts"
import { makeScorer, type StrategyRow } from "./score.ts"
import { replaySession } from "./internal/chatSession.ts"
import { DEFAULT_COMPACTION_TOKENS, DEFAULT_REPLAY_MODELS, CHAT_STRATEGIES, makeStrategy, type ChatStrategyName, type ReplayProvider, type SessionEnv, type StrategyName, type TurnInput } from "./strategies.ts"

export interface ReplayOptions {
  /** The repository whose history is replayed. */
  readonly repo: string
  /** Start revision (default: the root commit); each later first-parent commit is a turn. */
  readonly from?: string | undefined
  /** Most turns (default: every commit after `from`). */
  readonly turns?: number | undefined
  readonly provider?: ReplayProvider | undefined
  /** Default: the CLI's default model for the provider. */
  readonly model?: string | undefined
  /** Seconds between turns (default 90). */
  readonly gapSeconds?: number | undefined
  /** Strategies to run (default all); `none` and `oracle` always run, for the ratios. */
  readonly strategies?: ReadonlyArray<StrategyName> | undefined
  /** History tokens at which the conversation is compacted (default: the CLI's, 24,000). */
  readonly compactionTokens?: number | undefined
  /** Request layout of the `strata-<policy>` strategies (default `journal`; `strata-seed` always uses `seed`). */
  readonly layout?: LayoutMode | undefined
  /** Tracker `cacheTargetTokens` for the Strata strategies (default: the model's minimum cacheable prefix). */
  readonly cacheTargetTokens?: number | undefined
  /** Tokens at which `transcript` compacts (default: 75% of the model's input window). */
  readonly transcriptWindowTokens?: number | undefined
  /** Called with each request's dump line (`{"t","strategy","request"}`), in send order. */
  readonly onRequest?: ((line: string) => void | Promise<void>) | undefined
  /** Called after each turn. */
  readonly onTurn?: ((done: number, total: number) => void | Promise<void>) | undefined
}

export type { StrategyFailure, TurnCost }

/** What a replay replays: a chat per commit, an agent's task per commit, or a recorded session. */
export type SessionKind = "chat" | "agent" | "recorded"

/** A line of a recorded session that was skipped, or replayed without some of its content. */
export interface ReplayProblem {
  readonly line: number
  readonly skipped: boolean
  readonly reason: string
}

/** What a replay measured. */
export interface ReplayReport {
  readonly session: SessionKind
  /** The repository replayed (a recorded session: the file, and the repository given for its map, if any). */
  readonly repo: string
  readonly provider: ReplayProvider
  readonly model: string
  /** The commit the session starts at (not itself a turn); "" for a recorded session. */
  readonly start: string
  /** Turns (chat) or tasks (agent, recorded: a task starts at each user prompt). */
  readonly turns: number
  /** Requests each strategy sent. */
  readonly requests: number
  /** Seconds between turns (chat) or between a task's last request and the next task's first (agent). */
  readonly gapSeconds: number
  /** Seconds between an agent's requests within a task (agent; recorded lines without `t`). */
  readonly stepSeconds?: number | undefined
  /** `usd` when the model has a price in the table, else `input-equivalent tokens`. */
  readonly costUnit: "usd" | "tokens"
  readonly settings: {
    readonly layout: LayoutMode
    readonly compactionTokens: number
    readonly cacheTargetTokens: number
    readonly transcriptWindowTokens: number
    /** Agent sessions: input tokens past which `transcript-clear` clears old tool results, and the tool uses it keeps. */
    readonly clearTriggerTokens?: number | undefined
    readonly clearKeepToolUses?: number | undefined
    readonly tokenizer: string
  }
  readonly rows: ReadonlyArray<StrategyRow>
  /** Cost per turn (chat) or per task (agent, recorded). */
  readonly perTurn: ReadonlyArray<TurnCost>
  /** Recorded sessions: lines skipped or replayed in part, with the reason. */
  readonly problems?: ReadonlyArray<ReplayProblem> | undefined
  /** Agent sessions: strategies the engine refused a request of (left out of `rows`). */
  readonly failures?: ReadonlyArray<StrategyFailure> | undefined
}

/** Root of the in-memory repository the indexer reads (no such directory exists on disk). */
export const MEM_ROOT = "/strata-replay"

/**
 * A deterministic stand-in for the compaction model (a replay makes no network calls):
 * no topic boundary, and a summary listing the subjects of the compacted prompts.
 */
export const replayCompactionModel: Layer.Layer<CompactionModel> = Layer.succeed(CompactionModel, {
  complete: (request) => {
    const subjects = [...request.user.matchAll(/^\[\d+\] USER: (.*)$/gm)].map((m) => (m[1] ?? "").slice(0, 120))
    const summary = `Earlier in this session: ${subjects.join("; ")}`.slice(0, Math.max(200, request.maxTokens * 2))
    return Effect.succeed(JSON.stringify({ boundary_index: null, boundary_reason: "", confidence: 0, summary }))
  }
})

/** A `HistoryCompactor` at `triggerTokens` (other settings: core's defaults, or `config`) over the replay's stand-in compaction model. */
export const compactor = async (counter: TokenCounter, triggerTokens: number, config: Partial<Omit<CompactionConfig, "triggerTokens">> = {}) => {
  const runtime = ManagedRuntime.make(
    HistoryCompactor.layer({ config: { ...config, triggerTokens } }).pipe(Layer.provide(Layer.mergeAll(Tokenizer.layerFrom(counter), replayCompactionModel)))
  )
  const service = await runtime.runPromise(Effect.gen(function* () {
    return yield* HistoryCompactor
  }))
  return { service, dispose: () => runtime.dispose() }
}

/** The bundled system prompt and system reminder. */
export const bundledPrompts = () =>
  Effect.runPromise(
    Effect.gen(function* () {
      const prompts = yield* Prompts
      return { system: (yield* prompts.systemPrompt).text, reminder: (yield* prompts.systemReminder).text }
    }).pipe(Effect.provide(Prompts.layer()))
  )

/**
 * The strategies a run needs: the requested ones plus `none` and `oracle`, in table
 * order, out of the session kind's strategies (default: chat's). A strategy the kind
 * does not have is an error that names the ones it has.
 */
export function strategiesToRun(requested: ReadonlyArray<StrategyName> | undefined): ReadonlyArray<ChatStrategyName>
export function strategiesToRun<S extends StrategyName>(requested: ReadonlyArray<StrategyName> | undefined, available: ReadonlyArray<S>): ReadonlyArray<S>
export function strategiesToRun(requested: ReadonlyArray<StrategyName> | undefined, available: ReadonlyArray<StrategyName> = CHAT_STRATEGIES): ReadonlyArray<StrategyName> {
  const unknown = (requested ?? []).filter((s) => !available.includes(s))
  if (unknown.length > 0) {
    throw new Error(`${unknown.join(", ")} ${unknown.length === 1 ? "is not a strategy" : "are not strategies"} of this session kind; choose from ${available.join(", ")}`)
  }
  const wanted = new Set<StrategyName>(requested ?? available)
  wanted.add("none")
  wanted.add("oracle")
  return available.filter((s) => wanted.has(s))
}

/**
 * Replay a repository's history as a coding session under each strategy and score
 * every request.
 *
 * @example
 * ```ts no-run
 * import { runReplay } from "@strata/replay"
 * const report = await runReplay({ repo: "examples/demo-repo", turns: 10, provider: "anthropic" })
 * for (const row of report.rows) console.log(row.strategy, row.hitRate, row.vsOracle)
 * ```
 */
export const runReplay = async (options: ReplayOptions): Promise<ReplayReport> => {
  const provider = options.provider ?? "anthropic"
  const model = options.model ?? DEFAULT_REPLAY_MODELS[provider]
  const gapSeconds = options.gapSeconds ?? 90
  const limits = lookupModel(provider, model)
  const compactionTokens = options.compactionTokens ?? DEFAULT_COMPACTION_TOKENS
  const cacheTargetTokens = options.cacheTargetTokens ?? limits.minCacheTokens
  const transcriptWindowTokens = options.transcriptWindowTokens ?? Math.floor(0.75 * modelInfo(model).maxInputTokens)
  const names = strategiesToRun(options.strategies)

  const { start, commits } = await listCommits(options.repo, options.from === undefined ? {} : { from: options.from })
  const total = Math.min(commits.length, options.turns ?? commits.length)
  const counter = await makeTokenCounter(model)
  const prompts = await bundledPrompts()
  const history = await compactor(counter, compactionTokens)
  const transcript = await compactor(counter, transcriptWindowTokens)
  const env: SessionEnv = {
    provider,
    model,
    systemPrompt: prompts.system,
    systemReminder: prompts.reminder,
    counter,
    cacheTargetTokens,
    layout: options.layout ?? "journal",
    transcriptCompactor: transcript.service
  }
  const scorer = makeScorer({ provider, model, countTokens: counter.count })
  const fs = new MemoryFileSystem(MEM_ROOT)
  const indexer = await SymbolIndexer.create(MEM_ROOT, { fs, git: false, cache: false })
  const run = startRun(scorer, names.map((name) => makeStrategy(name, env)))
  let conversation: ReadonlyArray<Message> = []
  try {
    for await (const turn of replaySession(options.repo, { from: start, turns: total, gapSeconds })) {
      loadTree(fs, turn)
      const map = await indexer.refresh()
      const compacted = await Effect.runPromise(history.service.compactHistoryIfNeeded(conversation))
      if (compacted.compacted) conversation = compacted.history
      const input: TurnInput = {
        index: turn.index,
        t: turn.t,
        prompt: turn.prompt,
        reply: turn.reply,
        files: turn.selected.map((f) => ({ path: f.path, content: f.content })),
        history: conversation,
        historyCompacted: compacted.compacted,
        map
      }
      run.tasks.push({ index: turn.index, t: turn.t, commit: turn.commit.sha, subject: turn.prompt.split("\n")[0] ?? "" })
      await send(run, input, { index: turn.index, t: turn.t, taskStart: true, compacted: compacted.compacted }, options.onRequest)
      conversation = [...conversation, { role: "user", content: turn.prompt }, { role: "assistant", content: turn.reply }]
      if (options.onTurn !== undefined) await options.onTurn(turn.index + 1, total)
    }
  } finally {
    for (const s of run.strategies) await s.dispose()
    await history.dispose()
    await transcript.dispose()
  }
  const { rows, perTurn, failures } = finish(run)
  return {
    session: "chat",
    repo: options.repo,
    provider,
    model,
    start,
    turns: perTurn.length,
    requests: perTurn.length,
    gapSeconds,
    costUnit: run.costUnit,
    settings: {
      layout: env.layout,
      compactionTokens,
      cacheTargetTokens,
      transcriptWindowTokens,
      tokenizer: tokenizerName(counter)
    },
    rows,
    perTurn,
    ...(failures === undefined ? {} : { failures })
  }
}
