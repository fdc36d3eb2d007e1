/**
 * The replay's public API: run a replay, score and re-score native request bodies,
 * and format or plot a report. `strata replay` is a thin command over these.
 */
export { runReplay, strategiesToRun, replayCompactionModel, type ReplayOptions, type ReplayReport, type TurnCost } from "./replay.ts"
export { boundPricing, makeScorer, rescoreDump, parseDump, dumpLine, DumpLine, summarize, textsOf, type RequestScore, type Scorer, type ScorerOptions, type StrategyRow } from "./score.ts"
export { lowerBound, type BoundItem, type BoundPricing, type BoundRequest, type BoundTtl, type BoundUsage } from "./bound.ts"
export { formatHeading, formatReport, formatTable, plotSvg, STRATEGY_COLORS } from "./report.ts"
export { REPLAY_PROVIDERS, STRATEGIES, type ReplayProvider, type StrategyCounts, type StrategyName } from "./strategies.ts"
export { MemoryFileSystem, type MemFileInput } from "./memfs.ts"
export { replaySession, type ReplayTurn, type ReplaySessionOptions } from "./chatSession.ts"
