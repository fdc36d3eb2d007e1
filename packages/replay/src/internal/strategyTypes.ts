/**
 * The replay's strategy names, providers and the shapes a strategy is built from and
 * returns: what `strategies.ts` (the table) and the layouts under `internal/` share,
 * kept apart so the layouts never import the table.
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

/** Every strategy of either session kind, in the order tables list them. */
export const STRATEGIES = [
  "none",
  "trailing",
  "transcript",
  "transcript-clear",
  "middleware",
  "proxy",
  "proxy-edit",
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
  "proxy",
  "proxy-edit",
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
