/**
 * `@strata/replay`: the benchmark lab. Replay a git history as a chat or a coding
 * agent's session, or a recorded session, under every caching strategy; score each
 * request with the provider's prompt-cache simulator and the content bound; format,
 * plot and re-score the results. `strata replay` is a thin command over `replay`.
 */
export { replay, sessionKindOf, type ReplayRunOptions } from "./run.ts"
// The report every run returns and `strata replay --json` prints (ReplayReport, its rows StrategyRow).
export { runReplay, strategiesToRun, replayCompactionModel, type ReplayOptions, type ReplayProblem, type ReplayReport, type SessionKind, type StrategyFailure, type TurnCost } from "./replay.ts"
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
export { AGENT_TOOLS, readPathOf } from "./agentTools.ts"
export { parseRecordedSession, recordedFormat, type RecordedFile, type RecordedProblem, type RecordedLine, type RecordedSession } from "./recorded.ts"
export { boundPricing, makeScorer, rescoreDump, parseDump, dumpLine, DumpLine, summarize, textsOf, type RequestScore, type Scorer, type ScorerOptions, type StrategyRow } from "./score.ts"
export { syntheticTurnsOf, SYNTHETIC_TEXTS, type SyntheticCount } from "./synthetic.ts"
export { contentBound, type BoundItem, type BoundPricing, type BoundRequest, type BoundTtl, type BoundUsage } from "./bound.ts"
export { formatHeading, formatReport, formatTable, plotSvg, STRATEGY_COLORS } from "./report.ts"
export {
  AGENT_STRATEGIES,
  CHAT_STRATEGIES,
  DEFAULT_REPLAY_MODELS,
  REPLAY_PROVIDERS,
  STRATEGIES,
  STRATEGY_TABLE,
  reducesContent,
  strategiesOf,
  type AgentStrategyName,
  type ChatStrategyName,
  type ReplayProvider,
  type StrategyCounts,
  type StrategyEntry,
  type StrategyName
} from "./strategies.ts"
