// Neutral requests in the tiered layout (docs/pipeline.md#the-tiered-layout) for the plugin and rule tests.
import type { Block, Breakpoint, CachedTier, CacheTtl, Message, NeutralRequest, Tier } from "@strata/core"

/** Text of about `tokens` tokens under the chars/4 estimate, distinct per label. */
export const textOf = (label: string, tokens: number): string => {
  const unit = `${label} lorem ipsum dolor sit amet. `
  let s = ""
  while (s.length < tokens * 4) s += unit
  return s.slice(0, tokens * 4)
}

export interface TierSpec {
  readonly tokens: number
  readonly ttl?: CacheTtl
  /** Messages of the tier; default: L0 a system message, others a user/"Ok." pair. */
  readonly messages?: ReadonlyArray<Message>
}

/**
 * A request in the seeds' layout: L0 system message, L1-L3 user/assistant pairs,
 * then an active pair and the current prompt. Each cached tier ends on a breakpoint.
 */
export const seedRequest = (
  model: string,
  tiers: Partial<Record<CachedTier, TierSpec>>,
  active = 200
): NeutralRequest => {
  const blocks: Array<Block> = []
  const messages: Array<Message> = []
  const breakpoints: Array<Breakpoint> = []
  const push = (tier: Tier, ms: ReadonlyArray<Message>, tokens: number) => {
    blocks.push({ tier, messages: ms, items: [], tokens })
    messages.push(...ms)
  }
  for (const tier of ["L0", "L1", "L2", "L3"] as const) {
    const spec = tiers[tier]
    if (spec === undefined) continue
    const ms: ReadonlyArray<Message> = spec.messages ?? (tier === "L0"
      ? [{ role: "system", content: textOf(tier, spec.tokens) }]
      : [{ role: "user", content: textOf(tier, spec.tokens - 1) }, { role: "assistant", content: "Ok." }])
    push(tier, ms, spec.tokens)
    breakpoints.push(spec.ttl === undefined ? { tier, messageIndex: messages.length - 1 } : { tier, messageIndex: messages.length - 1, ttl: spec.ttl })
  }
  push("active", [
    { role: "user", content: textOf("active", active) },
    { role: "assistant", content: "Ok." },
    { role: "user", content: "What does the parser do?" }
  ], active + 8)
  return { model, blocks, messages, breakpoints }
}

/** Four tiers, each comfortably above every minimum. */
export const bigRequest = (model: string): NeutralRequest =>
  seedRequest(model, { L0: { tokens: 6000 }, L1: { tokens: 5000 }, L2: { tokens: 5000 }, L3: { tokens: 5000 } })
