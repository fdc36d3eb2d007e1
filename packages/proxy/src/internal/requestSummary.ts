/**
 * What the proxy commits with each request for the dashboard (`TurnCommit.request`, core's
 * `RecordedRequest` shape): the usage the provider reported, and `asSent`, the usage the
 * request as the agent sent it would have had, from the provider's cache simulator fed the
 * session's original bodies in order. The dashboard prices both, so a session shows its
 * cumulative cost against what the agent alone would have paid.
 */
import { RecordedRequest, type TokenCategories, type Usage } from "@strata/core"
import { makeSimulator } from "@strata/providers"
import { Schema } from "effect"
import type { Protocol } from "./protocol.ts"

const NO_CONTENT: TokenCategories = { tools: 0, system: 0, legend: 0, symbols: 0, files: 0, tree: 0, urls: 0, review: 0, history: 0, prompt: 0, other: 0, framing: 0 }

/** The simulators of the original bodies, one per session and model (in memory: a restart starts them cold). */
export interface AsSentSimulators {
  /** The usage `body` (as the agent sent it) would have had at `atSeconds`, or undefined when the simulator cannot read it. */
  readonly send: (session: string, protocol: Protocol, model: string, body: unknown, atSeconds: number, outputTokens: number) => Usage | undefined
}

/** Simulators kept for the latest `max` sessions (the proxy's `maxSessionsInMemory`). */
export const makeAsSentSimulators = (max: number): AsSentSimulators => {
  const sims = new Map<string, { readonly send: (body: unknown, at: number, options?: { readonly outputTokens?: number }) => { readonly usage: Usage } }>()
  return {
    send: (session, protocol, model, body, atSeconds, outputTokens) => {
      const key = `${session}\u0000${model}`
      let sim = sims.get(key)
      try {
        if (sim === undefined) {
          sim = makeSimulator(protocol === "anthropic" ? "anthropic" : "openai", { model })
          if (sims.size >= max) sims.delete(sims.keys().next().value ?? "")
        }
        sims.delete(key)
        sims.set(key, sim)
        return sim.send(body, atSeconds, { outputTokens }).usage
      } catch {
        // A model the simulator has no table for, a body it refuses: no as-sent figure.
        return undefined
      }
    }
  }
}

const encode = Schema.encodeSync(RecordedRequest)

/** The request summary of one proxied exchange, as JSON for the store. Pure. */
export const proxyRequestSummary = (exchange: {
  readonly protocol: Protocol
  readonly model: string
  /** Unix seconds. */
  readonly at: number
  readonly usage: Usage | undefined
  readonly asSent: Usage | undefined
  readonly miss: string | undefined
}): Schema.Json => {
  const u = exchange.usage
  const json: Schema.Json = encode({
    at: Math.round(exchange.at * 1000),
    provider: exchange.protocol === "anthropic" ? "anthropic" : "openai",
    model: exchange.model,
    promptTokens: u === undefined ? 0 : u.input + u.cacheRead + u.cacheWrite,
    ...(u === undefined ? {} : { usage: u }),
    usageSource: u === undefined ? "none" : "provider",
    content: NO_CONTENT,
    blocks: [],
    ...(exchange.miss === undefined ? {} : { miss: exchange.miss }),
    source: "proxy",
    ...(exchange.asSent === undefined ? {} : { asSent: exchange.asSent })
  })
  return json
}
