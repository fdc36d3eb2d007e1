// Helpers every benchmark runner shares: a seeded PRNG (the same workload on every run),
// the median of a sample, and `--name=value` arguments.
/* global process */

/** mulberry32: a deterministic PRNG over a 32-bit integer seed; returns numbers in [0, 1). */
export const rng = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** The median of a list of numbers (the mean of the middle two for an even count; NaN when empty). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** The value of `--name=value` on the command line, or `fallback`. */
export const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`))
  return hit === undefined ? fallback : hit.slice(name.length + 3)
}
