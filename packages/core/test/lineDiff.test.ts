// unifiedDiff: zero-context unified diff hunks (`git diff -U0`), as the journal layout's
// symbol diffs carry them; applying them to the old text gives the new one.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { unifiedDiff } from "../src/index.ts"
import { applyHunks } from "./applyDiff.ts"

describe("unifiedDiff", () => {
  it("equal texts: no hunks", () => {
    expect(unifiedDiff("a\nb", "a\nb")).toBe("")
  })

  it("changed, removed and added lines, with git's -U0 headers", () => {
    expect(unifiedDiff("a.ts: ←1\nf x()\nf y()", "a.ts: ←2\nf x()\nf y()")).toBe("@@ -1 +1 @@\n-a.ts: ←1\n+a.ts: ←2")
    expect(unifiedDiff("a\nb\nc\nd", "a\nc\nd")).toBe("@@ -2 +1,0 @@\n-b")
    expect(unifiedDiff("a\nb\nc", "a\nb\nx\ny\nc")).toBe("@@ -2,0 +3,2 @@\n+x\n+y")
    expect(unifiedDiff("a\nb\nc\nd\ne", "A\nb\nc\nD\nE")).toBe("@@ -1 +1 @@\n-a\n+A\n@@ -4,2 +4,2 @@\n-d\n-e\n+D\n+E")
    expect(unifiedDiff("a", "x\na")).toBe("@@ -0,0 +1 @@\n+x")
  })

  it("a changed middle too large to compare gives no diff", () => {
    const many = (tag: string) => Array.from({ length: 600 }, (_, i) => `${tag}${i}`).join("\n")
    expect(unifiedDiff(many("a"), many("b"))).toBeUndefined()
  })

  it("applying the hunks to the old text gives the new one (property)", () => {
    const lines = fc.array(fc.constantFrom("a", "b", "c", "v x ←1", "v x ←2", ""), { maxLength: 30 })
    fc.assert(
      fc.property(lines, lines, (before, after) => {
        const hunks = unifiedDiff(before.join("\n"), after.join("\n"))
        expect(hunks).toBeDefined()
        expect(applyHunks(before.join("\n"), hunks!)).toBe(after.join("\n"))
        // Zero context: a hunk's lines are all changes.
        for (const row of hunks === "" ? [] : hunks!.split("\n")) expect(row[0]).toMatch(/[@+-]/)
      }),
      { numRuns: 500 }
    )
  })
})
