/**
 * Counts in messages and warnings, grouped as `toLocaleString("en-US")` groups them.
 * ICU's formatter costs microseconds per call, and a request formats several counts.
 */

/** `n.toLocaleString("en-US")`, computed directly for safe integers (every count). */
export const formatCount = (n: number): string => {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US")
  const digits = String(n < 0 ? -n : n)
  let out = ""
  for (let end = digits.length; end > 0; end -= 3) out = (end > 3 ? "," : "") + digits.slice(Math.max(0, end - 3), end) + out
  return n < 0 ? `-${out}` : out
}
