/**
 * `proxy` and `proxy-edit`: what `strata proxy` (`--mode cache`, `--mode edit`) would
 * forward for the agent's own requests. The agent's requests are the `transcript`
 * strategy's bodies (an append-only conversation with the agent's trailing marker); each
 * goes through the proxy's `transformRequest` with the session state the proxy keeps (the
 * gaps seen, the previous request's blocks, the transform's ledger). Nothing is added: no
 * map, no tiers. Providers the proxy does not front (Bedrock, Gemini) get the transcript.
 */
import { anthropicBlockCount, transformRequest, type Protocol, type SessionLedger } from "@strata/proxy"
import { agentTranscriptStrategy, type AgentRequest } from "./agentStrategies.ts"
import type { AgentEnv, ReplayProvider, Strategy } from "./strategyTypes.ts"

const protocolOf = (provider: ReplayProvider): Protocol | undefined =>
  provider === "anthropic" ? "anthropic" : provider === "openai" ? "openai-chat" : undefined

/** The proxy's transform over the agent's own requests (see the module comment). */
export const proxyStrategy = (env: AgentEnv, mode: "cache" | "edit"): Strategy<AgentRequest> => {
  const transcript = agentTranscriptStrategy(env)
  const protocol = protocolOf(env.provider)
  const gaps: Array<number> = []
  let lastBlocks = 0
  let lastT: number | undefined
  let ledger: SessionLedger | undefined
  return {
    name: mode === "cache" ? "proxy" : "proxy-edit",
    request: async (request) => {
      const sent = await transcript.request(request)
      if (protocol === undefined) return sent
      if (lastT !== undefined) gaps.push(Math.max(0, request.t - lastT))
      const out = transformRequest({ protocol, mode, body: sent.body, session: { id: "replay", gaps: gaps.slice(-64), lastBlocks, ledger } })
      ledger = out.ledger
      lastT = request.t
      lastBlocks = protocol === "anthropic" ? anthropicBlockCount(sent.body) : 0
      if (mode === "cache" || (ledger.cleared ?? []).length === 0) return { ...sent, body: out.body }
      const clearedTokens = Math.max(0, env.counter.count(JSON.stringify(sent.body)) - env.counter.count(JSON.stringify(out.body)))
      return { ...sent, body: out.body, clearedTokens }
    },
    answered: transcript.answered,
    dispose: transcript.dispose
  }
}
