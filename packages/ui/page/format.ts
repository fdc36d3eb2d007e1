/** Number formats the dashboard and the replay page share, so a figure reads the same everywhere. */

/** USD with precision that suits the size; an em dash for "no price". */
export const usd = (value: number | null | undefined): string => {
  if (value === null || value === undefined) return "—"
  const abs = Math.abs(value)
  const digits = abs === 0 ? 2 : abs < 0.01 ? 5 : abs < 1 ? 4 : 2
  return `$${value.toFixed(digits)}`
}

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 })

/** Token counts with thousands separators (one shared formatter: `toLocaleString` builds one per call). */
export const tokens = (value: number): string => grouped.format(Math.round(value))

/** A 0..1 ratio as a percentage. */
export const percent = (value: number): string => `${(value * 100).toFixed(1)}%`

/** Epoch milliseconds as a UTC date and time. */
export const time = (ms: number | null): string => (ms === null ? "—" : new Date(ms).toISOString().replace("T", " ").slice(0, 19))
