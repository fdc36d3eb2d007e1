/**
 * An exact byte-pair-encoding token counter over js-tiktoken's rank tables. It gives
 * the same counts as js-tiktoken's `encode(text, [], [])`, but merges long pieces with
 * a heap instead of js-tiktoken's quadratic rescan, so a 5,000-character run of CJK
 * text or `=` signs takes milliseconds instead of seconds.
 */

/** js-tiktoken's rank-file shape (`js-tiktoken/ranks/*`). */
export interface BpeRanks {
  readonly pat_str: string
  readonly special_tokens: Record<string, number>
  readonly bpe_ranks: string
}

/** Counts tokens of one encoding; `count` is pure and synchronous. */
export interface BpeCounter {
  readonly count: (text: string) => number
}

/** Pieces up to this many bytes are merged by a plain rescan; longer ones use the heap. */
const SMALL_PIECE_BYTES = 48

/**
 * Pieces the per-encoder memo keeps, and the longest piece it keeps (in UTF-16 units):
 * V8 takes a substring of 13 or more characters as a view of the whole text, so a
 * longer key would keep that whole text alive.
 */
const MEMO_PIECES = 50_000
const MEMO_PIECE_CHARS = 12

const isAscii = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

/**
 * Rank table keyed by "binary strings" (one char per byte). For ASCII text the piece
 * itself is its binary string, so the common case needs no UTF-8 encoding at all.
 */
const parseRanks = (bpeRanks: string): Map<string, number> => {
  const ranks = new Map<string, number>()
  for (const line of bpeRanks.split("\n")) {
    if (line.length === 0) continue
    const fields = line.split(" ")
    const offset = Number.parseInt(fields[1] ?? "0", 10)
    for (let i = 2; i < fields.length; i++) {
      ranks.set(Buffer.from(fields[i] ?? "", "base64").toString("latin1"), offset + i - 2)
    }
  }
  return ranks
}

/** Number of tokens BPE leaves for `piece` (a binary string with no rank of its own). */
const mergeSmall = (piece: string, ranks: Map<string, number>): number => {
  // Boundaries between parts; merging removes one.
  const starts: Array<number> = []
  for (let i = 0; i <= piece.length; i++) starts.push(i)
  while (starts.length > 2) {
    let best = -1
    let bestRank = Number.POSITIVE_INFINITY
    for (let i = 0; i + 2 < starts.length; i++) {
      const rank = ranks.get(piece.slice(starts[i]!, starts[i + 2]!))
      if (rank !== undefined && rank < bestRank) {
        bestRank = rank
        best = i
      }
    }
    if (best < 0) break
    starts.splice(best + 1, 1)
  }
  return starts.length - 1
}

/**
 * The same merge order as `mergeSmall` (lowest rank first, leftmost on ties) in
 * O(n log n): a binary heap of candidate pairs over a doubly linked list of parts,
 * with stale candidates skipped when popped.
 */
const mergeLarge = (piece: string, ranks: Map<string, number>): number => {
  const n = piece.length
  // Part i spans [start[i], start[next[i]]); start[n] = n closes the last part.
  const start = new Int32Array(n + 1)
  const next = new Int32Array(n + 1)
  const prev = new Int32Array(n + 1)
  const alive = new Uint8Array(n + 1)
  for (let i = 0; i <= n; i++) {
    start[i] = i
    next[i] = i + 1
    prev[i] = i - 1
    alive[i] = 1
  }
  // Heap entries: rank, left part, the right part's end when the entry was made.
  const heapRank: Array<number> = []
  const heapLeft: Array<number> = []
  const heapEnd: Array<number> = []
  const less = (a: number, b: number): boolean =>
    heapRank[a]! < heapRank[b]! || (heapRank[a] === heapRank[b] && heapLeft[a]! < heapLeft[b]!)
  const swap = (a: number, b: number): void => {
    const r = heapRank[a]!, l = heapLeft[a]!, e = heapEnd[a]!
    heapRank[a] = heapRank[b]!
    heapLeft[a] = heapLeft[b]!
    heapEnd[a] = heapEnd[b]!
    heapRank[b] = r
    heapLeft[b] = l
    heapEnd[b] = e
  }
  const push = (rank: number, left: number, end: number): void => {
    let i = heapRank.length
    heapRank.push(rank)
    heapLeft.push(left)
    heapEnd.push(end)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!less(i, parent)) break
      swap(i, parent)
      i = parent
    }
  }
  const pop = (): void => {
    const last = heapRank.length - 1
    swap(0, last)
    heapRank.pop()
    heapLeft.pop()
    heapEnd.pop()
    let i = 0
    const size = heapRank.length
    while (true) {
      const l = 2 * i + 1
      const r = l + 1
      let smallest = i
      if (l < size && less(l, smallest)) smallest = l
      if (r < size && less(r, smallest)) smallest = r
      if (smallest === i) break
      swap(i, smallest)
      i = smallest
    }
  }
  const candidate = (left: number): void => {
    const right = next[left]!
    if (right >= n) return
    const end = next[right]!
    const rank = ranks.get(piece.slice(start[left]!, end))
    if (rank !== undefined) push(rank, left, end)
  }
  for (let i = 0; i + 1 < n; i++) candidate(i)
  let parts = n
  while (heapRank.length > 0) {
    const left = heapLeft[0]!
    const end = heapEnd[0]!
    pop()
    // Stale: the left part was merged away, or its right neighbour changed.
    if (alive[left] === 0 || next[left]! >= n || next[next[left]!] !== end) continue
    const right = next[left]!
    alive[right] = 0
    next[left] = end
    prev[end] = left
    parts--
    if (prev[left]! >= 0) candidate(prev[left]!)
    candidate(left)
  }
  return parts
}

/**
 * Build an exact counter for one js-tiktoken rank table. Special-token text is
 * counted as plain text (never rejected), like `encode(text, [], [])`.
 *
 * @example
 * ```ts
 * import ranks from "js-tiktoken/ranks/o200k_base"
 * import { makeBpeCounter } from "@strata/core"
 * makeBpeCounter(ranks).count("hello world") // 2
 * ```
 */
export const makeBpeCounter = (bpeRanks: BpeRanks): BpeCounter => {
  const ranks = parseRanks(bpeRanks.bpe_ranks)
  const pattern = new RegExp(bpeRanks.pat_str, "gu")
  // Counts of recent short pieces: code and prose repeat the same identifiers and words,
  // and a repeat then costs one lookup instead of the UTF-8 encoding and the merges. The
  // count is a pure function of the piece, so the memo changes no result; it is emptied
  // when full, which bounds it to MEMO_PIECES pieces of at most MEMO_PIECE_CHARS chars.
  const memo = new Map<string, number>()
  const countPiece = (text: string): number => {
    const known = memo.get(text)
    if (known !== undefined) return known
    const piece = isAscii(text) ? text : Buffer.from(text, "utf8").toString("latin1")
    const n = ranks.has(piece) ? 1 : piece.length <= SMALL_PIECE_BYTES ? mergeSmall(piece, ranks) : mergeLarge(piece, ranks)
    if (text.length <= MEMO_PIECE_CHARS) {
      if (memo.size >= MEMO_PIECES) memo.clear()
      memo.set(text, n)
    }
    return n
  }
  const count = (text: string): number => {
    let total = 0
    pattern.lastIndex = 0
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m[0].length === 0) {
        pattern.lastIndex++
        continue
      }
      total += countPiece(m[0])
    }
    return total
  }
  return { count }
}
