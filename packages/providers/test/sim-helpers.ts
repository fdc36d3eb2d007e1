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
