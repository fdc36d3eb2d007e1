/**
 * The replay's strategies: one table, one entry per strategy, saying which session kinds
 * it runs in and how to build its session for each. Chat mode's baselines (`none`,
 * `trailing`, `transcript`, `segments`), agent mode's (`none`, `transcript`,
 * `transcript-clear`, `middleware`), the proxy's transform (`proxy`, `proxy-edit`), Strata's pipeline under each promotion policy
 * (`strata-*`) and the `oracle` layout the content bound is scored on. Every strategy
 * returns the provider's native body; the layouts live in `internal/chatStrategies.ts`
 * and `internal/agentStrategies.ts`, what they share in `internal/strategyParts.ts`.
 */
import { agentNoneStrategy, agentOracleStrategy, agentStrataStrategy, agentTranscriptStrategy, middlewareStrategy, transcriptClearStrategy, type AgentRequest } from "./internal/agentStrategies.ts"
import { proxyStrategy } from "./internal/proxyStrategies.ts"
import { chatFlatStrategy, chatOracleStrategy, chatSegmentsStrategy, chatStrataStrategy, chatTranscriptStrategy } from "./internal/chatStrategies.ts"
export { STRATEGIES, CHAT_STRATEGIES, AGENT_STRATEGIES, strategiesOf, REPLAY_PROVIDERS, DEFAULT_REPLAY_MODELS, DEFAULT_COMPACTION_TOKENS, type StrategyName, type ChatStrategyName, type AgentStrategyName, type ReplayProvider, type TurnInput, type SessionEnv, type StrategyCounts, type StrategyRequest, type Strategy, type AgentEnv } from "./internal/strategyTypes.ts"
import { type StrategyName, type ChatStrategyName, type AgentStrategyName, type TurnInput, type SessionEnv, type Strategy, type AgentEnv } from "./internal/strategyTypes.ts"

/** One strategy's agent session. */
export type AgentStrategy = Strategy<AgentRequest>

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
  { name: "proxy", summary: "the transcript as `strata proxy` forwards it (cache controls and lifetimes only)", reducesContent: false, agent: (env) => proxyStrategy(env, "cache") },
  { name: "proxy-edit", summary: "the transcript as `strata proxy --mode edit` forwards it (superseded tool results cleared)", reducesContent: true, agent: (env) => proxyStrategy(env, "edit") },
  { name: "segments", summary: "Aider's fixed segments, each closed by a breakpoint", reducesContent: false, chat: chatSegmentsStrategy },
  ...(["strata-threshold", "strata-gated", "strata-flux", "strata-seed"] as const).map((name): StrategyEntry => ({
    name,
    summary: name === "strata-seed" ? "Strata's pipeline in the tiered layout" : `Strata's pipeline, ${name.slice("strata-".length)} policy`,
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

