/**
 * The replay's public API: run a replay (a chat or an agent session over a git history,
 * or a recorded session), score and re-score native request bodies, and format or plot
 * a report. `strata replay` is a thin command over these.
 */
export { runReplay, strategiesToRun, replayCompactionModel, type ReplayOptions, type ReplayProblem, type ReplayReport, type SessionKind, type TurnCost } from "./replay.ts"
export {
  runAgentReplay,
  runRecordedReplay,
  startAtPrompt,
  transcriptWindow,
  COMPACTION_MARGIN_TOKENS,
  OUTPUT_RESERVE_TOKENS,
  type AgentReplayCommonOptions,
  type AgentReplayOptions,
  type RecordedReplayOptions,
  type ScoredRequest
} from "./agentReplay.ts"
export { agentSession, taskSteps, type AgentSessionOptions, type AgentStep, type AgentTask } from "./agentSession.ts"
export { agentOracleRequest, clearOldToolResults, CLEARED_PLACEHOLDER, makeAgentStrategy, type AgentEnv, type AgentRequest, type AgentStrategy } from "./agentStrategies.ts"
export { AGENT_TOOLS, readPathOf } from "./agentTools.ts"
export { parseRecordedSession, recordedFormat, type RecordedFile, type RecordedProblem, type RecordedRequest, type RecordedSession } from "./recorded.ts"
export { boundPricing, makeScorer, rescoreDump, parseDump, dumpLine, DumpLine, summarize, textsOf, type RequestScore, type Scorer, type ScorerOptions, type StrategyRow } from "./score.ts"
export { lowerBound, type BoundItem, type BoundPricing, type BoundRequest, type BoundTtl, type BoundUsage } from "./bound.ts"
export { formatHeading, formatReport, formatTable, plotSvg, STRATEGY_COLORS } from "./report.ts"
export {
  AGENT_STRATEGIES,
  CHAT_STRATEGIES,
  REPLAY_PROVIDERS,
  STRATEGIES,
  type AgentStrategyName,
  type ChatStrategyName,
  type ReplayProvider,
  type StrategyCounts,
  type StrategyName
} from "./strategies.ts"
export { MemoryFileSystem, type MemFileInput } from "./memfs.ts"
export { replaySession, type ReplayTurn, type ReplaySessionOptions } from "./chatSession.ts"
