/**
 * The replay's strategy names and providers alone, without the lab: what a command line
 * offers as choices. `@strata/replay` loads the simulators, the agent's tools, the proxy's
 * transform and the symbol map's parsers; this entry point loads none of them.
 *
 * @example
 * ```ts
 * import { CHAT_STRATEGIES, REPLAY_PROVIDERS } from "@strata/replay/names"
 * console.log(CHAT_STRATEGIES.includes("transcript"), REPLAY_PROVIDERS[0])
 * ```
 */
export { AGENT_STRATEGIES, CHAT_STRATEGIES, REPLAY_PROVIDERS, STRATEGIES, type AgentStrategyName, type ChatStrategyName, type ReplayProvider, type StrategyName } from "./internal/strategyTypes.ts"
