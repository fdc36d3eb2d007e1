/**
 * `.gitignore` matching for directories outside git, on the `ignore` package (the
 * matcher ESLint uses). Each file's patterns are rebased onto the repository root and
 * stacked in one matcher, so deeper files override shallower ones as in git.
 */
import ignore, { type Ignore } from "ignore"

/** Escape the glob characters of a directory name used as a pattern prefix. */
const escapeGlob = (path: string): string => path.replace(/[\\*?[\]!#]/g, "\\$&")

/**
 * The patterns of one `.gitignore` (its text) declared in directory `base` ("" for the
 * root), rewritten relative to the root: a pattern with a slash before its end is
 * anchored to `base`, one without matches at any depth below it. Comments and blank
 * lines are dropped; negation and directory-only markers are kept.
 *
 * @example
 * ```ts
 * import { rebaseGitignore } from "@strata/symbols"
 * rebaseGitignore("build/\n!keep.log\n/top.ts\n", "src") // ["src/**\/build/", "!src/**\/keep.log", "src/top.ts"]
 * ```
 */
export const rebaseGitignore = (text: string, base = ""): Array<string> => {
  const patterns: Array<string> = []
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === "" || raw.startsWith("#")) continue
    if (base === "") {
      patterns.push(raw)
      continue
    }
    const negate = raw.startsWith("!")
    const body = negate ? raw.slice(1) : raw
    const trimmed = body.replace(/\/+\s*$/, "")
    if (trimmed.replace(/^\/+/, "").trim() === "") continue
    // A slash anywhere but at the end anchors the pattern to its file's directory.
    const anchored = trimmed.includes("/")
    const prefix = escapeGlob(base)
    const rebased = anchored ? `${prefix}/${body.replace(/^\//, "")}` : `${prefix}/**/${body}`
    patterns.push(negate ? `!${rebased}` : rebased)
  }
  return patterns
}

/** A stack of `.gitignore` files; later (deeper) patterns win, as in git. */
export class IgnoreMatcher {
  // Case-sensitive, as git is by default on Linux.
  private readonly matcher: Ignore = ignore({ ignorecase: false })

  /** Add the patterns of a `.gitignore` found in `base`. */
  add(text: string, base = ""): void {
    this.matcher.add(rebaseGitignore(text, base))
  }

  /** Whether the repository-relative `path` (a directory when `isDir`) is ignored. */
  ignores(path: string, isDir: boolean): boolean {
    return ignore.isPathValid(path) && this.matcher.ignores(isDir ? `${path}/` : path)
  }
}
