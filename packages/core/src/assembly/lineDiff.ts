/**
 * Line diffs as zero-context unified diff hunks (what `git diff -U0` prints), for the
 * journal layout's symbol diffs: a changed symbol block written as its changes against
 * the copy the model last saw whole, when that is shorter than the block. Pure.
 */

// Past this many lines compared (after the common head and tail), no diff is made: the
// caller sends the whole text, which a change that large barely exceeds anyway.
const MAX_CELLS = 250_000

/**
 * The zero-context unified diff hunks that turn `before` into `after` (both split on
 * `\n`; line 1 is the first line), one `@@ -a,b +c,d @@` header per run of changed lines
 * (`,1` left out, a count of 0 naming the line before, as `git diff -U0` does) followed
 * by its `-` and then its `+` lines. `""` when the texts are equal; `undefined` when the
 * changed middle is too large to compare.
 *
 * @example
 * ```ts
 * import { unifiedDiff } from "@strata/core"
 * unifiedDiff("a.ts: ←1\nf x()\nf y()", "a.ts: ←2\nf x()\nf y()")
 * // "@@ -1 +1 @@\n-a.ts: ←1\n+a.ts: ←2"
 * ```
 */
export const unifiedDiff = (before: string, after: string): string | undefined => {
  if (before === after) return ""
  const a = before.split("\n")
  const b = after.split("\n")
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const n = a.length - head - tail
  const m = b.length - head - tail
  if (n * m > MAX_CELLS) return undefined
  // Longest common subsequence of the middles, from the end, so the walk below goes forward.
  const lcs = new Uint32Array((n + 1) * (m + 1))
  const at = (i: number, j: number) => i * (m + 1) + j
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[at(i, j)] = a[head + i] === b[head + j] ? lcs[at(i + 1, j + 1)]! + 1 : Math.max(lcs[at(i + 1, j)]!, lcs[at(i, j + 1)]!)
    }
  }
  const hunks: Array<string> = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && a[head + i] === b[head + j]) {
      i++
      j++
      continue
    }
    const i0 = i
    const j0 = j
    while ((i < n || j < m) && !(i < n && j < m && a[head + i] === b[head + j])) {
      if (j >= m || (i < n && lcs[at(i + 1, j)]! >= lcs[at(i, j + 1)]!)) i++
      else j++
    }
    hunks.push(hunk(a, b, head + i0, i - i0, head + j0, j - j0))
  }
  return hunks.join("\n")
}

/** One hunk: `removed` lines of `a` from index `ai`, replaced by `added` lines of `b` from `bi`. */
const hunk = (a: ReadonlyArray<string>, b: ReadonlyArray<string>, ai: number, removed: number, bi: number, added: number): string => {
  const range = (index: number, count: number) => (count === 1 ? `${index + 1}` : `${count === 0 ? index : index + 1},${count}`)
  return [
    `@@ -${range(ai, removed)} +${range(bi, added)} @@`,
    ...a.slice(ai, ai + removed).map((l) => `-${l}`),
    ...b.slice(bi, bi + added).map((l) => `+${l}`)
  ].join("\n")
}
