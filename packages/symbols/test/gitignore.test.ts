// `.gitignore` matching outside git: the cases the hand-written matcher handled, and a
// property test against git itself on generated trees with nested .gitignore files.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { nodeFileSystem, rebaseGitignore } from "../src/index.ts"
import { walkFiles } from "../src/files.ts"
import { IgnoreMatcher } from "../src/gitignore.ts"
import { tempDir } from "./helpers.ts"

const matcher = (files: ReadonlyArray<readonly [string, string]>): IgnoreMatcher => {
  const m = new IgnoreMatcher()
  for (const [base, text] of files) m.add(text, base)
  return m
}

describe("IgnoreMatcher", () => {
  it("matches unanchored patterns at any depth and anchored ones from their file's directory", () => {
    const m = matcher([["", "*.log\n/top.ts\ndocs/*.md\n"], ["src", "gen-*.ts\n/local.ts\n"]])
    expect(m.ignores("a.log", false)).toBe(true)
    expect(m.ignores("deep/er/a.log", false)).toBe(true)
    expect(m.ignores("top.ts", false)).toBe(true)
    expect(m.ignores("src/top.ts", false)).toBe(false)
    expect(m.ignores("docs/a.md", false)).toBe(true)
    expect(m.ignores("docs/sub/a.md", false)).toBe(false)
    expect(m.ignores("src/gen-1.ts", false)).toBe(true)
    expect(m.ignores("src/x/gen-2.ts", false)).toBe(true)
    expect(m.ignores("gen-3.ts", false)).toBe(false)
    expect(m.ignores("src/local.ts", false)).toBe(true)
    expect(m.ignores("src/x/local.ts", false)).toBe(false)
  })

  it("applies directory patterns to directories only", () => {
    const m = matcher([["", "build/\n"]])
    expect(m.ignores("build", true)).toBe(true)
    expect(m.ignores("src/build", true)).toBe(true)
    expect(m.ignores("build", false)).toBe(false)
  })

  it("lets a later negation re-include, and deeper files override shallower ones", () => {
    const m = matcher([["", "*.log\n!keep.log\nsrc/gen/\n"], ["src", "!gen/\n*.tmp\n"]])
    expect(m.ignores("a.log", false)).toBe(true)
    expect(m.ignores("keep.log", false)).toBe(false)
    expect(m.ignores("src/gen", true)).toBe(false)
    expect(m.ignores("src/gen/x.ts", false)).toBe(false)
    expect(m.ignores("src/gen/x.tmp", false)).toBe(true)
    expect(m.ignores("x.tmp", false)).toBe(false)
  })

  it("handles **, ?, character classes, escapes, comments, trailing spaces and case", () => {
    const m = matcher([["", "# a comment\na/**/z.ts\nlogs/**\nf?.txt\n[ab]-[!c].md\n\\#hash\n\\!bang\ntrail.txt   \n"]])
    expect(m.ignores("a/z.ts", false)).toBe(true)
    expect(m.ignores("a/b/c/z.ts", false)).toBe(true)
    expect(m.ignores("logs/x/y.txt", false)).toBe(true)
    expect(m.ignores("f1.txt", false)).toBe(true)
    expect(m.ignores("f12.txt", false)).toBe(false)
    expect(m.ignores("a-d.md", false)).toBe(true)
    expect(m.ignores("a-c.md", false)).toBe(false)
    expect(m.ignores("#hash", false)).toBe(true)
    expect(m.ignores("# a comment", false)).toBe(false)
    expect(m.ignores("!bang", false)).toBe(true)
    expect(m.ignores("trail.txt", false)).toBe(true)
    expect(m.ignores("F1.txt", false)).toBe(false)
  })

  it("escapes glob characters in the directory a .gitignore sits in", () => {
    expect(rebaseGitignore("build/\n!keep.log\n/top.ts\n# c\n\n", "src")).toEqual(["src/**/build/", "!src/**/keep.log", "src/top.ts"])
    const m = matcher([["[x]", "*.ts\n"]])
    expect(m.ignores("[x]/a.ts", false)).toBe(true)
    expect(m.ignores("x/a.ts", false)).toBe(false)
  })
})

// Property: walking a generated tree lists what git itself lists as untracked and not ignored.
const NAMES = ["a", "b", "src", "build", "gen", "x.ts", "y.log", "keep.log", "A.ts"] as const
const PARTS = ["a", "b", "src", "build", "gen", "*.ts", "*.log", "keep.log", "**", "*", "?", "[ab]", "x.ts", "A.ts"] as const
const pattern = fc.tuple(fc.boolean(), fc.boolean(), fc.array(fc.constantFrom(...PARTS), { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([negate, lead, parts, dir]) => `${negate ? "!" : ""}${lead ? "/" : ""}${parts.join("/")}${dir ? "/" : ""}`)
  .filter((p) => p.replace(/[!/]/g, "") !== "**" || p.includes("/"))
const tree = fc.record({
  files: fc.uniqueArray(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).map((p) => p.join("/")), { minLength: 1, maxLength: 20 }),
  // .gitignore files go in the root and in directories the files create (picked by index).
  ignores: fc.array(fc.tuple(fc.nat(), fc.array(pattern, { minLength: 1, maxLength: 4 })), { minLength: 1, maxLength: 4 })
})

describe("walking outside git", () => {
  it("lists what git lists, for nested .gitignore files with negations and directory patterns", () => {
    fc.assert(fc.property(tree, ({ files, ignores }) => {
      const root = tempDir()
      // A path cannot be both a file and a directory: keep the files no other file lives under.
      const kept = files.filter((f) => !files.some((g) => g.startsWith(`${f}/`)))
      for (const f of kept) {
        mkdirSync(dirname(join(root, f)), { recursive: true })
        writeFileSync(join(root, f), "x")
      }
      const dirs = ["", ...new Set(kept.flatMap((f) => f.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))))]
      for (const [pick, patterns] of ignores) {
        writeFileSync(join(root, dirs[pick % dirs.length]!, ".gitignore"), patterns.join("\n") + "\n")
      }
      const walked = walkFiles(root, nodeFileSystem, { git: false }, []).sort()
      // No template: copying git's sample hooks was most of each init.
      execFileSync("git", ["init", "-q", "--template="], { cwd: root })
      const listed = execFileSync("git", ["ls-files", "--others", "--exclude-standard", "-z"], { cwd: root, encoding: "utf8" })
        .split("\0").filter((p) => p !== "").sort()
      expect(walked).toEqual(listed)
    }), { numRuns: 20, seed: 17 })
    // 40 git processes: about 2 s alone, over 30 s when the test command loads both cores.
  }, 120_000)
})
