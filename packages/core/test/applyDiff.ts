// Applies zero-context unified diff hunks (what `unifiedDiff` writes) to a text, strictly:
// every `-` line must be the base's line at that place, so a test reading the hunks as a
// model would checks that they say exactly how the base became the new text.

/** `base` with `hunks` applied; throws when a hunk does not fit the base. */
export const applyHunks = (base: string, hunks: string): string => {
  const lines = base.split("\n")
  const out: Array<string> = []
  let next = 0
  const rows = hunks === "" ? [] : hunks.split("\n")
  for (let r = 0; r < rows.length;) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(rows[r]!)
    if (header === null) throw new Error(`not a hunk header: ${rows[r]}`)
    const removed = header[2] === undefined ? 1 : Number(header[2])
    const added = header[4] === undefined ? 1 : Number(header[4])
    // A count of 0 names the line before the change.
    const start = removed === 0 ? Number(header[1]) : Number(header[1]) - 1
    if (start < next) throw new Error(`hunk ${rows[r]} overlaps the one before`)
    out.push(...lines.slice(next, start))
    if (out.length !== (added === 0 ? Number(header[3]) : Number(header[3]) - 1)) throw new Error(`hunk ${rows[r]}: new start is off`)
    r++
    for (let k = 0; k < removed; k++, r++) {
      if (rows[r] !== `-${lines[start + k]}`) throw new Error(`hunk line ${rows[r]} is not -${lines[start + k]}`)
    }
    for (let k = 0; k < added; k++, r++) {
      const row = rows[r]
      if (row === undefined || !row.startsWith("+")) throw new Error(`expected a + line, got ${row}`)
      out.push(row.slice(1))
    }
    next = start + removed
  }
  out.push(...lines.slice(next))
  return out.join("\n")
}
