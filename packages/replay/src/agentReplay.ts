/**
 * Agent replays: `runAgentReplay` drives every agent strategy through the tasks a coding
 * agent would run on a git history (`agentSession.ts`), `runRecordedReplay` through a
 * recorded session (`recorded.ts`); both score each request with the provider's
 * prompt-cache simulator and the bound, as chat replays do. Deterministic: the same
 * inputs give the same report, byte for byte.
 */
import { readFile } from "node:fs/promises"
import { Effect } from "effect"
import { isSummaryMessage, makeTokenCounter, modelInfo, withReminder, type CompactionConfig, type LayoutMode, type Message, type SymbolMapSnapshot } from "@strata/core/effect"
import { lookupModel } from "@strata/providers"
import { SymbolIndexer } from "@strata/symbols"
import { agentSession } from "./internal/agentSession.ts"
import { finish, loadTree, send, startRun, tokenizerName, type Run, type ScoredRequest } from "./driver.ts"
import { MIDDLEWARE_PROVIDERS, type AgentRequest } from "./internal/agentStrategies.ts"
import { AGENT_TOOLS } from "./agentTools.ts"
import { listCommits } from "./internal/git.ts"
import { MemoryFileSystem } from "./internal/memfs.ts"
import { parseRecordedSession, type RecordedSession } from "./recorded.ts"
import { bundledPrompts, compactor, MEM_ROOT, strategiesToRun, type ReplayReport } from "./replay.ts"
import { makeScorer } from "./score.ts"
import { DEFAULT_COMPACTION_TOKENS, DEFAULT_REPLAY_MODELS, AGENT_STRATEGIES, makeAgentStrategy, type AgentEnv, type AgentStrategyName, type ReplayProvider, type StrategyName } from "./strategies.ts"

export type { ScoredRequest }

/** Options every agent replay takes. */
export interface AgentReplayCommonOptions {
  readonly provider?: ReplayProvider | undefined
  /** Default: the CLI's default model for the provider. */
  readonly model?: string | undefined
  /** Seconds between an agent's requests within a task (default 6); a recorded line without `t` comes this long after the previous. */
  readonly stepSeconds?: number | undefined
  /** Strategies to run (default all of agent mode's); `none` and `oracle` always run, for the ratios. */
  readonly strategies?: ReadonlyArray<StrategyName> | undefined
  /** Request layout of the `strata-<policy>` strategies (default `journal`; `strata-seed` always uses `seed`). */
  readonly layout?: LayoutMode | undefined
  /** Tracker `cacheTargetTokens` for the Strata strategies (default: the model's minimum cacheable prefix). */
  readonly cacheTargetTokens?: number | undefined
  /** Input tokens at which the transcripts compact (default: `transcriptWindow(model)`). */
  readonly transcriptWindowTokens?: number | undefined
  /** Input tokens past which `transcript-clear` clears old tool results (default 100,000, Anthropic's default trigger). */
  readonly clearTriggerTokens?: number | undefined
  /** Tool uses whose results `transcript-clear` keeps (default 3, Anthropic's default). */
  readonly clearKeepToolUses?: number | undefined
  /** Called with each request's dump line (`{"t","strategy","request"}`), in send order. */
  readonly onRequest?: ((line: string) => void | Promise<void>) | undefined
  /** Called after each request, with the requests done and (git histories) the expected total tasks. */
  readonly onProgress?: ((done: number, total: number) => void | Promise<void>) | undefined
  /**
   * Called once the session is scored, for every scored request in send order: its
   * score and where it sits in the session (for a breakdown of where the cost goes).
   */
  readonly onScore?: ((entry: ScoredRequest) => void) | undefined
}

export interface AgentReplayOptions extends AgentReplayCommonOptions {
  /** The repository whose history is replayed. */
  readonly repo: string
  /** Start revision (default: the root commit); each later first-parent commit is a task. */
  readonly from?: string | undefined
  /** Most tasks (default: every commit after `from`). */
  readonly tasks?: number | undefined
  /** Seconds between a task's last request and the next task's first (default 90). */
  readonly gapSeconds?: number | undefined
  /** History tokens at which the session's conversation is compacted between tasks (default: the CLI's, 24,000). */
  readonly compactionTokens?: number | undefined
  /** Other compaction settings of the session (default: core's, as the CLI uses them), to measure alternatives. */
  readonly compaction?: Partial<Omit<CompactionConfig, "triggerTokens">> | undefined
  /**
   * Keep each task's files in context, as a coding agent's app does (default true): every
   * strategy sends the files the task touches, as they were before it (Strata as Working
   * Files, the transcripts attached to the task's prompt, the oracle as blocks). False
   * sends the conversation, tools and map only.
   */
  readonly filesInContext?: boolean | undefined
}

export interface RecordedReplayOptions extends AgentReplayCommonOptions {
  /** The recorded session: a path to read, or its text. */
  readonly transcript: { readonly path: string } | { readonly text: string; readonly name: string }
  /** A repository whose working tree gives the symbol map and file tree (default: the files the session read). */
  readonly repo?: string | undefined
}

/** Output tokens a transcript keeps free for the reply (capped as the leading agents cap it). */
export const OUTPUT_RESERVE_TOKENS = 20_000
/** Margin below the window at which a transcript compacts (the leading agents' buffer). */
export const COMPACTION_MARGIN_TOKENS = 13_000

/**
 * Where an agent's transcript compacts: the model's input limit, minus the output
 * reserve (its maximum output, at most 20,000), minus a 13,000-token margin.
 *
 * @example
 * ```ts
 * import { transcriptWindow } from "@strata/replay"
 * transcriptWindow("claude-sonnet-4-6") // 200,000 - 20,000 - 13,000 = 167,000
 * ```
 */
export const transcriptWindow = (model: string): number => {
  const info = modelInfo(model)
  return Math.max(1, info.maxInputTokens - Math.min(info.maxOutputTokens, OUTPUT_RESERVE_TOKENS) - COMPACTION_MARGIN_TOKENS)
}

/** The agent strategies a run needs on a provider (`middleware` only where `strataCache()` places breakpoints). */
const agentStrategiesFor = (provider: ReplayProvider, requested: ReadonlyArray<StrategyName> | undefined): ReadonlyArray<AgentStrategyName> => {
  const available = AGENT_STRATEGIES.filter((s) => s !== "middleware" || MIDDLEWARE_PROVIDERS.includes(provider))
  if (requested?.includes("middleware") === true && !available.includes("middleware")) {
    throw new Error(`the middleware strategy runs on ${MIDDLEWARE_PROVIDERS.join(" and ")} only (strataCache() places no breakpoint for ${provider})`)
  }
  return strategiesToRun(requested, available)
}

/**
 * A compacted history that starts at a task's prompt: after the summary (if any), the
 * kept messages begin at the first user prompt among them. Core's compactor keeps a
 * token window aligned to a user message, but its emergency truncation drops messages
 * in user/assistant pairs and can leave a tool exchange without its call; until it keeps
 * exchanges whole, the replay drops such a leftover.
 */
export const startAtPrompt = (history: ReadonlyArray<Message>): ReadonlyArray<Message> => {
  const head = isSummaryMessage(history[0]) ? history.slice(0, 2) : []
  const kept = history.slice(head.length)
  const first = kept.findIndex((m) => m.role === "user")
  return first === 0 ? history : [...head, ...(first < 0 ? [] : kept.slice(first))]
}

/** An agent run: the session's environment, a scorer, and its strategies. */
const agentRun = async (options: AgentReplayCommonOptions, provider: ReplayProvider, model: string): Promise<Run<AgentRequest> & { readonly env: AgentEnv }> => {
  const limits = lookupModel(provider, model)
  const counter = await makeTokenCounter(model)
  const env: AgentEnv = {
    provider,
    model,
    counter,
    cacheTargetTokens: options.cacheTargetTokens ?? limits.minCacheTokens,
    layout: options.layout ?? "journal",
    transcriptWindowTokens: options.transcriptWindowTokens ?? transcriptWindow(model),
    clearTriggerTokens: options.clearTriggerTokens ?? 100_000,
    clearKeepToolUses: options.clearKeepToolUses ?? 3
  }
  const scorer = makeScorer({ provider, model, countTokens: counter.count })
  return { ...startRun(scorer, agentStrategiesFor(provider, options.strategies).map((name) => makeAgentStrategy(name, env))), env }
}

/** One agent request through every strategy (`send`), at its place in the session. */
const sendRequest = (run: Run<AgentRequest>, request: AgentRequest, options: AgentReplayCommonOptions) =>
  send(run, request, { index: request.index, t: request.t, taskStart: request.taskStart, compacted: request.conversationCompacted }, options.onRequest)

/**
 * Replay a repository's history as a coding agent's session under each agent strategy:
 * each commit one task (search, read the touched files, edit, run the tests, answer),
 * one request per step `stepSeconds` apart, tasks `gapSeconds` apart, the task's files
 * in context (`filesInContext`).
 *
 * @example
 * ```ts no-run
 * import { runAgentReplay } from "@strata/replay"
 * const report = await runAgentReplay({ repo: "examples/demo-repo", tasks: 5, provider: "anthropic" })
 * for (const row of report.rows) console.log(row.strategy, row.requests, row.vsOracle)
 * ```
 */
export const runAgentReplay = async (options: AgentReplayOptions): Promise<ReplayReport> => {
  const provider = options.provider ?? "anthropic"
  const model = options.model ?? DEFAULT_REPLAY_MODELS[provider]
  const stepSeconds = options.stepSeconds ?? 6
  const gapSeconds = options.gapSeconds ?? 90
  const compactionTokens = options.compactionTokens ?? DEFAULT_COMPACTION_TOKENS
  const { start, commits } = await listCommits(options.repo, options.from === undefined ? {} : { from: options.from })
  const total = Math.min(commits.length, options.tasks ?? commits.length)
  const run = await agentRun(options, provider, model)
  const prompts = await bundledPrompts()
  const history = await compactor(run.env.counter, compactionTokens, options.compaction)
  const fs = new MemoryFileSystem(MEM_ROOT)
  const indexer = await SymbolIndexer.create(MEM_ROOT, { fs, git: false, cache: false })
  // The session's conversation before the current task (compacted between tasks), and
  // what the next request appends (the last task's answer).
  let conversation: ReadonlyArray<Message> = []
  let pending: ReadonlyArray<Message> = []
  let t = 0
  try {
    for await (const task of agentSession(options.repo, { from: start, tasks: total })) {
      loadTree(fs, task.turn)
      const map = await indexer.refresh()
      const compacted = await Effect.runPromise(history.service.compactHistoryIfNeeded(conversation))
      if (compacted.compacted) conversation = startAtPrompt(compacted.history)
      if (task.index > 0) t += gapSeconds
      run.tasks.push({ index: task.index, t, commit: task.commit.sha, subject: task.prompt.split("\n")[0] ?? "" })
      const prompt: Message = { role: "user", content: withReminder(task.prompt, prompts.reminder) }
      const files = options.filesInContext === false ? [] : task.turn.selected.map((f) => ({ path: f.path, content: f.content }))
      const current: Array<Message> = [prompt]
      let appended: ReadonlyArray<Message> = [...pending, prompt]
      for (const [k, step] of task.steps.entries()) {
        if (k > 0) t += stepSeconds
        await sendRequest(run, {
          index: run.requests,
          task: task.index,
          t,
          tools: AGENT_TOOLS,
          systemPrompt: prompts.system,
          map,
          files,
          conversation: [...conversation, ...current],
          conversationCompacted: k === 0 && compacted.compacted,
          appended,
          taskStart: k === 0
        }, options)
        appended = step.results === undefined ? [step.reply] : [step.reply, step.results]
        current.push(...appended)
      }
      pending = appended
      conversation = [...conversation, ...current]
      if (options.onProgress !== undefined) await options.onProgress(task.index + 1, total)
    }
  } finally {
    for (const s of run.strategies) await s.dispose()
    await history.dispose()
  }
  const { rows, perTurn, failures } = finish(run, options.onScore)
  return {
    session: "agent",
    repo: options.repo,
    provider,
    model,
    start,
    turns: perTurn.length,
    requests: run.requests,
    gapSeconds,
    stepSeconds,
    costUnit: run.costUnit,
    settings: replaySettings(run.env, compactionTokens),
    rows,
    perTurn,
    ...(failures === undefined ? {} : { failures })
  }
}

/** The map of a recorded session: the repository's working tree, else the files it read; undefined when neither has a file. */
const recordedMap = async (session: RecordedSession, repo: string | undefined): Promise<SymbolMapSnapshot | undefined> => {
  if (repo !== undefined) {
    const indexer = await SymbolIndexer.create(repo, { cache: false })
    const map = await indexer.refresh()
    return map.files.length === 0 ? undefined : map
  }
  if (session.files.length === 0) return undefined
  const fs = new MemoryFileSystem(MEM_ROOT)
  fs.set(session.files.map((f, i) => ({ path: f.path, blob: `read:${i}`, content: f.content })))
  const indexer = await SymbolIndexer.create(MEM_ROOT, { fs, git: false, cache: false })
  return indexer.refresh()
}

const sameMessage = (a: Message, b: Message): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * Replay a recorded session (one request body per line, see `parseRecordedSession`)
 * under each agent strategy: every strategy sends the recorded conversation of each
 * line, with the line's tools and system prompt, at the line's time. Malformed lines
 * are skipped and listed in `problems`.
 *
 * @example
 * ```ts no-run
 * import { runRecordedReplay } from "@strata/replay"
 * const report = await runRecordedReplay({ transcript: { path: "session.jsonl" }, provider: "anthropic" })
 * report.problems // [{ line: 7, skipped: true, reason: "not JSON: ..." }]
 * ```
 */
export const runRecordedReplay = async (options: RecordedReplayOptions): Promise<ReplayReport> => {
  const provider = options.provider ?? "anthropic"
  const model = options.model ?? DEFAULT_REPLAY_MODELS[provider]
  const stepSeconds = options.stepSeconds ?? 6
  const source = options.transcript
  const text = "text" in source ? source.text : await readFile(source.path, "utf8")
  const name = "text" in source ? source.name : source.path
  const session = parseRecordedSession(text)
  if (session.requests.length === 0) {
    const first = session.problems.find((p) => p.skipped)
    throw new Error(`${name} holds no request to replay${first === undefined ? " (it is empty)" : `: line ${first.line}: ${first.reason}`}`)
  }
  const map = await recordedMap(session, options.repo)
  const run = await agentRun(options, provider, model)
  let previous: ReadonlyArray<Message> = []
  let t = 0
  let task = -1
  try {
    for (const [i, line] of session.requests.entries()) {
      t = line.t ?? (i === 0 ? 0 : t + stepSeconds)
      // Reuse the previous line's message objects where they are equal, so each is counted once.
      const extendsPrevious = previous.length <= line.messages.length && previous.every((m, k) => sameMessage(m, line.messages[k]!))
      const conversation = extendsPrevious ? [...previous, ...line.messages.slice(previous.length)] : line.messages
      const last = conversation.at(-1)
      const appended = extendsPrevious ? conversation.slice(previous.length) : conversation
      // A task starts with a user prompt that answers no tool call (a reminder sent with tool results does not start one).
      const prompted = last?.role === "user" && (task < 0 || !appended.some((m) => m.role === "tool"))
      if (prompted || task < 0) {
        task++
        run.tasks.push({ index: task, t, commit: `line ${line.line}`, subject: last?.role === "user" ? firstText(last) : "" })
      }
      await sendRequest(run, {
        index: run.requests,
        task,
        t,
        tools: line.tools,
        systemPrompt: line.systemPrompt,
        map,
        files: [],
        conversation,
        conversationCompacted: !extendsPrevious,
        appended,
        taskStart: prompted,
        ...(extendsPrevious ? {} : { rewritten: conversation })
      }, options)
      previous = conversation
      if (options.onProgress !== undefined) await options.onProgress(i + 1, session.requests.length)
    }
  } finally {
    for (const s of run.strategies) await s.dispose()
  }
  const { rows, perTurn, failures } = finish(run, options.onScore)
  return {
    session: "recorded",
    repo: options.repo === undefined ? name : `${name} (map: ${options.repo})`,
    provider,
    model,
    start: "",
    turns: perTurn.length,
    requests: run.requests,
    gapSeconds: 0,
    stepSeconds,
    costUnit: run.costUnit,
    settings: replaySettings(run.env, 0),
    rows,
    perTurn,
    problems: session.problems,
    ...(failures === undefined ? {} : { failures })
  }
}

const firstText = (m: Message): string => {
  const text = typeof m.content === "string" ? m.content : m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
  return (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 120)
}

/** The settings line of an agent or recorded replay's report. Pure. */
const replaySettings = (env: AgentEnv, compactionTokens: number) => ({
  layout: env.layout,
  compactionTokens,
  cacheTargetTokens: env.cacheTargetTokens,
  transcriptWindowTokens: env.transcriptWindowTokens,
  clearTriggerTokens: env.clearTriggerTokens,
  clearKeepToolUses: env.clearKeepToolUses,
  tokenizer: tokenizerName(env.counter)
})
