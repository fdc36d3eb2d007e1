// Shared fixtures for the simulator tests: a 1-char = 1-token counter and text of an exact size.

/** Every character is one token, so block sizes in tests are exact. */
export const chars = (text: string): number => text.length

/** A string of exactly `n` characters, distinct per `seed`. */
export const text = (n: number, seed: string | number = "x"): string => {
  const head = `<${seed}>`
  if (n <= head.length) return head.slice(0, n)
  return head + ".".repeat(n - head.length)
}

/** Anthropic text block, optionally marked. */
export const tb = (n: number, seed: string | number, ttl?: "5m" | "1h" | true) =>
  ttl === undefined
    ? { type: "text", text: text(n, seed) }
    : { type: "text", text: text(n, seed), cache_control: ttl === true ? { type: "ephemeral" } : { type: "ephemeral", ttl } }

/** Text of about `tokens` tokens under the default chars/4 estimate, distinct per label. */
export const prose = (label: string, tokens: number): string => {
  const unit = `${label} tells how the parser walks the tree. `
  let s = ""
  while (s.length < tokens * 4) s += unit
  return s.slice(0, tokens * 4)
}

/**
 * A seeds-layout neutral request (L0 system, L1-L3 user/assistant pairs with a
 * breakpoint each, then the active turn), whose active part changes with `turn`.
 */
export const neutralRequest = (
  model: string,
  turn: number,
  sizes: { readonly L0: number; readonly L1: number; readonly L2: number; readonly L3: number } = { L0: 6000, L1: 3000, L2: 2000, L3: 1500 }
) => {
  const blocks: Array<{ tier: "L0" | "L1" | "L2" | "L3" | "active"; messages: Array<{ role: "system" | "user" | "assistant"; content: string }>; items: Array<never>; tokens: number }> = []
  const messages: Array<{ role: "system" | "user" | "assistant"; content: string }> = []
  const breakpoints: Array<{ tier: "L0" | "L1" | "L2" | "L3"; messageIndex: number }> = []
  for (const tier of ["L0", "L1", "L2", "L3"] as const) {
    const ms = tier === "L0"
      ? [{ role: "system" as const, content: prose(tier, sizes[tier]) }]
      : [{ role: "user" as const, content: prose(tier, sizes[tier]) }, { role: "assistant" as const, content: "Ok." }]
    blocks.push({ tier, messages: ms, items: [], tokens: sizes[tier] })
    messages.push(...ms)
    breakpoints.push({ tier, messageIndex: messages.length - 1 })
  }
  const active = [
    { role: "user" as const, content: prose(`active ${turn}`, 300) },
    { role: "assistant" as const, content: `Answer ${turn}.` },
    { role: "user" as const, content: `Question ${turn}: what does the parser do?` }
  ]
  blocks.push({ tier: "active", messages: active, items: [], tokens: 320 })
  messages.push(...active)
  return { model, blocks, messages, breakpoints }
}
