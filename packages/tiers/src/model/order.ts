/**
 * Orderings and a small binary heap shared by the tracker and its policies. Every tie
 * is broken by key, so results never depend on Map insertion order (a state reloaded
 * from disk behaves exactly like the one that was saved).
 */
import { ItemKeys, TIERS, type CachedTier, type ItemKind, type Tier } from "@strata/core"

const HISTORY = "history:"

/**
 * The tracker's key order: code-unit order, except that `history:` keys sort by their
 * numeric index so conversation order is kept (`history:9` before `history:10`).
 *
 * @example
 * ```ts
 * import { compareKeys } from "@strata/tiers"
 * ["history:10", "history:9", "file:a"].sort(compareKeys) // ["file:a", "history:9", "history:10"]
 * ```
 */
export const compareKeys = (a: string, b: string): number => {
  if (a.startsWith(HISTORY) && b.startsWith(HISTORY)) {
    const d = historyIndex(a) - historyIndex(b)
    if (d !== 0 && !Number.isNaN(d)) return d
  }
  return a < b ? -1 : a > b ? 1 : 0
}

/** The index of a `history:<n>` key. */
export const historyIndex = (key: string): number => Number(key.slice(HISTORY.length))

/** The kind of an item key; the hot path of every update, so no allocation for the common prefixes. */
export const kindOf = (key: string): ItemKind => {
  if (key.startsWith("symbol:")) return "symbol"
  if (key.startsWith("file:")) return "file"
  if (key.startsWith("history:")) return "history"
  if (key.startsWith("url:")) return "url"
  return ItemKeys.kind(key)
}

/** Rank of a tier: 0 for L0 up to 4 for active. */
export const rankOf = (tier: Tier): number => {
  switch (tier) {
    case "L0":
      return 0
    case "L1":
      return 1
    case "L2":
      return 2
    case "L3":
      return 3
    default:
      return 4
  }
}

/** The tier of a rank (0-4). */
export const tierAt = (rank: number): Tier => TIERS[rank] ?? "active"

/** The next more stable cached tier (`active` -> L3 -> L2 -> L1 -> L0), or undefined above L0. */
export const tierAbove = (tier: Tier): CachedTier | undefined => {
  switch (tier) {
    case "active":
      return "L3"
    case "L3":
      return "L2"
    case "L2":
      return "L1"
    case "L1":
      return "L0"
    default:
      return undefined
  }
}

/** A binary min-heap under `compare`; used where a policy repeatedly takes the best candidate. */
export class Heap<A> {
  private readonly data: Array<A>
  private readonly compare: (a: A, b: A) => number
  constructor(compare: (a: A, b: A) => number, items: ReadonlyArray<A> = []) {
    this.compare = compare
    this.data = items.slice()
    for (let i = (this.data.length >> 1) - 1; i >= 0; i--) this.down(i)
  }

  get size(): number {
    return this.data.length
  }

  push(value: A): void {
    this.data.push(value)
    this.up(this.data.length - 1)
  }

  pop(): A | undefined {
    const data = this.data
    const top = data[0]
    const last = data.pop()
    if (data.length > 0 && last !== undefined) {
      data[0] = last
      this.down(0)
    }
    return top
  }

  private up(i: number): void {
    const data = this.data
    const value = data[i] as A
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = data[parent] as A
      if (this.compare(value, p) >= 0) break
      data[i] = p
      i = parent
    }
    data[i] = value
  }

  private down(i: number): void {
    const data = this.data
    const n = data.length
    const value = data[i] as A
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      let c = l
      if (r < n && this.compare(data[r] as A, data[l] as A) < 0) c = r
      if (this.compare(data[c] as A, value) >= 0) break
      data[i] = data[c] as A
      i = c
    }
    data[i] = value
  }
}
