/**
 * The replay's strategies: one table, one entry per strategy, saying which session kinds
 * it runs in and how to build its session for each. Chat mode's baselines (`none`,
 * `trailing`, `transcript`, `segments`), agent mode's (`none`, `transcript`,
 * `transcript-clear`, `middleware`), Strata's pipeline under each promotion policy
 * (`strata-*`) and the `oracle` layout the content bound is scored on. Every strategy
 * returns the provider's native body; the layouts live in `internal/chatStrategies.ts`
 * and `internal/agentStrategies.ts`, what they share in `internal/strategyParts.ts`.
 */
import {
  DEFAULT_COMPACTION_CONFIG,
  type AssemblyResult,
  type FileContent,
  type HistoryCompactor,
  type LayoutMode,
  type Message,
  type SymbolMapSnapshot,
  type TokenCounter
} from "@strata/core/effect"
import { agentNoneStrategy, agentOracleStrategy, agentStrataStrategy, agentTranscriptStrategy, middlewareStrategy, transcriptClearStrategy, type AgentRequest } from "./internal/agentStrategies.ts"
import { chatFlatStrategy, chatOracleStrategy, chatSegmentsStrategy, chatStrataStrategy, chatTranscriptStrategy } from "./internal/chatStrategies.ts"

/** Every strategy of either session kind, in the order tables list them. */
export const STRATEGIES = [
  "none",
  "trailing",
  "transcript",
  "transcript-clear",
  "middleware",
  "segments",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const
export type StrategyName = (typeof STRATEGIES)[number]

/** The strategies of a chat replay (`--session chat`), in table order. */
export const CHAT_STRATEGIES = [
  "none",
  "trailing",
  "transcript",
  "segments",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const satisfies ReadonlyArray<StrategyName>
export type ChatStrategyName = (typeof CHAT_STRATEGIES)[number]

/** The strategies of an agent replay (`--session agent`, `--transcript`), in table order. */
export const AGENT_STRATEGIES = [
  "none",
  "transcript",
  "transcript-clear",
  "middleware",
  "strata-threshold",
  "strata-gated",
  "strata-flux",
  "strata-seed",
  "oracle"
] as const satisfies ReadonlyArray<StrategyName>
export type AgentStrategyName = (typeof AGENT_STRATEGIES)[number]

/** The strategies of a session kind, in table order: chat's, or agent mode's (agent and recorded sessions). Pure. */
export const strategiesOf = (kind: "chat" | "agent" | "recorded"): ReadonlyArray<StrategyName> => (kind === "chat" ? CHAT_STRATEGIES : AGENT_STRATEGIES)

/** Providers the replay scores (one placement plugin and one simulator each). */
export const REPLAY_PROVIDERS = ["anthropic", "bedrock", "openai", "gemini"] as const
export type ReplayProvider = (typeof REPLAY_PROVIDERS)[number]

/** The model a replay prices when none is given: the CLI's default model per provider. */
export const DEFAULT_REPLAY_MODELS: Readonly<Record<ReplayProvider, string>> = {
  anthropic: "claude-sonnet-5",
  bedrock: "anthropic.claude-sonnet-5-v1:0",
  openai: "gpt-5.4",
  gemini: "gemini-2.5-flash"
}

/** History tokens at which a replayed conversation is compacted when no trigger is given (core's default, as the CLI's). */
export const DEFAULT_COMPACTION_TOKENS = DEFAULT_COMPACTION_CONFIG.triggerTokens

/** What one turn gives every strategy: the same files, history, map and prompt. */
export interface TurnInput {
  readonly index: number
  /** Seconds since the session started. */
  readonly t: number
  readonly prompt: string
  readonly reply: string
  /** Selected files with their content before the commit, sorted by path. */
  readonly files: ReadonlyArray<FileContent>
  /** Conversation so far (compacted like a live session's). */
  readonly history: ReadonlyArray<Message>
  /** True when `history` was compacted just before this turn. */
  readonly historyCompacted: boolean
  /** The symbol map of the repository before the commit. */
  readonly map: SymbolMapSnapshot
}

/** What does not change during a session. */
export interface SessionEnv {
  readonly provider: ReplayProvider
  readonly model: string
  readonly systemPrompt: string
  readonly systemReminder: string
  readonly counter: TokenCounter
  /** Tracker setting for the Strata strategies (the provider minimum, say; 0 turns anchoring off). */
  readonly cacheTargetTokens: number
  /** Layout of the `strata-<policy>` strategies. */
  readonly layout: LayoutMode
  /** Compacts the transcript strategy's conversation once it passes its window. */
  readonly transcriptCompactor: HistoryCompactor["Service"]
}

/**
 * What a strategy reports about one request beside its body (0 when it does not know).
 * Recorded in the dump, so re-scoring reproduces them.
 */
export interface StrategyCounts {
  /**
   * Tokens of superseded copies the request still carries: an earlier copy of an item (a
   * file, a symbol block, the file tree) that a newer copy later in the request replaced.
   */
  readonly supersededTokens?: number | undefined
  /** Tokens context editing cleared from the request (old tool results dropped); 0 without context editing. */
  readonly clearedTokens?: number | undefined
}

/** One request of a strategy: the provider's native body and what the strategy counted. */
export interface StrategyRequest extends StrategyCounts {
  readonly body: unknown
}

/** One strategy's session, driven by a chat's turns (`TurnInput`) or an agent's requests (`AgentRequest`). */
export interface Strategy<I = TurnInput> {
  readonly name: StrategyName
  /** This turn's or step's request. */
  readonly request: (input: I) => Promise<StrategyRequest>
  /** The request was sent and answered: advance session state (tracker commit, transcript reply). */
  readonly answered: (input: I) => Promise<void>
  readonly dispose: () => Promise<void>
  /** Strata strategies: the last request's tier report and where its breakpoints landed. */
  readonly inspect?: () => AssemblyResult | undefined
}

/** One strategy's agent session. */
export type AgentStrategy = Strategy<AgentRequest>

/** What does not change during an agent session. */
export interface AgentEnv {
  readonly provider: ReplayProvider
  readonly model: string
  readonly counter: TokenCounter
  /** Tracker setting for the Strata strategies (the provider minimum, say). */
  readonly cacheTargetTokens: number
  /** Layout of the `strata-<policy>` strategies. */
  readonly layout: LayoutMode
  /** Input tokens at which the transcripts compact (the model's input limit minus the output reserve minus a margin). */
  readonly transcriptWindowTokens: number
  /** Input tokens past which `transcript-clear` clears old tool results. */
  readonly clearTriggerTokens: number
  /** Tool uses whose results `transcript-clear` keeps. */
  readonly clearKeepToolUses: number
}

/** One entry of the strategy table. */
export interface StrategyEntry {
  readonly name: StrategyName
  /** What it does, in one line (docs/replay.md has the long form). */
  readonly summary: string
  /**
   * True when the strategy can send less content than the oracle (a journal's symbol
   * diffs, tool results cleared by context editing): its cost can go under the content
   * bound, and the table's `vs own bound` column is the fair comparison for it.
   */
  readonly reducesContent: boolean
  /** Its session in a chat replay; absent when it has no chat form. */
  readonly chat?: ((env: SessionEnv) => Strategy<TurnInput>) | undefined
  /** Its session in an agent or recorded replay; absent when it has no agent form. */
  readonly agent?: ((env: AgentEnv) => Strategy<AgentRequest>) | undefined
}

/**
 * Every strategy, one entry each, in table order. A new strategy (say, a proxy's
 * transform) is one entry here plus its name in `STRATEGIES` and the session kinds'
 * lists.
 */
export const STRATEGY_TABLE: ReadonlyArray<StrategyEntry> = [
  { name: "none", summary: "the flat layout, priced with caching off", reducesContent: false, chat: (env) => chatFlatStrategy(env, "none"), agent: agentNoneStrategy },
  { name: "trailing", summary: "the flat layout with one breakpoint on the last message", reducesContent: false, chat: (env) => chatFlatStrategy(env, "trailing") },
  { name: "transcript", summary: "an append-only conversation with one trailing breakpoint", reducesContent: false, chat: chatTranscriptStrategy, agent: agentTranscriptStrategy },
  { name: "transcript-clear", summary: "the transcript with old tool results cleared past a trigger", reducesContent: true, agent: transcriptClearStrategy },
  { name: "middleware", summary: "the transcript through the strataCache() AI SDK middleware", reducesContent: false, agent: middlewareStrategy },
  { name: "segments", summary: "Aider's fixed segments, each closed by a breakpoint", reducesContent: false, chat: chatSegmentsStrategy },
  ...(["strata-threshold", "strata-gated", "strata-flux", "strata-seed"] as const).map((name): StrategyEntry => ({
    name,
    summary: name === "strata-seed" ? "Strata's pipeline in seed 002's layout" : `Strata's pipeline, ${name.slice("strata-".length)} policy`,
    reducesContent: true,
    chat: (env) => chatStrataStrategy(env, name),
    agent: (env) => agentStrataStrategy(env, name)
  })),
  { name: "oracle", summary: "every item in its own block, priced by the content bound", reducesContent: false, chat: chatOracleStrategy, agent: agentOracleStrategy }
]

const entryOf = (name: StrategyName): StrategyEntry => {
  const entry = STRATEGY_TABLE.find((e) => e.name === name)
  if (entry === undefined) throw new Error(`replay: no strategy table entry for ${name}`)
  return entry
}

/** Whether a strategy can send less content than the oracle (see `StrategyEntry.reducesContent`). Pure. */
export const reducesContent = (name: StrategyName): boolean => entryOf(name).reducesContent

/** A chat session of one strategy. */
export const makeStrategy = (name: ChatStrategyName, env: SessionEnv): Strategy<TurnInput> => {
  const make = entryOf(name).chat
  if (make === undefined) throw new Error(`replay: ${name} is not a chat strategy`)
  return make(env)
}

/** An agent session of one strategy. */
export const makeAgentStrategy = (name: AgentStrategyName, env: AgentEnv): Strategy<AgentRequest> => {
  const make = entryOf(name).agent
  if (make === undefined) throw new Error(`replay: ${name} is not an agent strategy`)
  return make(env)
}

