/**
 * A `.gitignore` matcher for directories outside git: patterns with `*`, `**`, `?`,
 * character classes, `!` negation, trailing-`/` directory patterns and anchoring,
 * scoped to the directory of the file that declares them.
 */

interface Rule {
  readonly regex: RegExp
  readonly negate: boolean
  readonly dirOnly: boolean
}

const escape = (c: string): string => (/[.+^${}()|\\]/.test(c) ? `\\${c}` : c)

const globToRegex = (glob: string): string => {
  let out = ""
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const before = i === 0 || glob[i - 1] === "/"
        const after = glob[i + 2] === "/" || i + 2 === glob.length
        if (before && after) {
          // `**/` matches zero or more directories; a trailing `**` matches everything inside.
          out += i + 2 === glob.length ? ".*" : "(?:.*/)?"
          i += glob[i + 2] === "/" ? 2 : 1
          continue
        }
      }
      out += "[^/]*"
    } else if (c === "?") {
      out += "[^/]"
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 2)
      if (end < 0) {
        out += "\\["
        continue
      }
      const body = glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\")
      out += `[${body}]`
      i = end
    } else if (c === "\\" && i + 1 < glob.length) {
      out += escape(glob[++i]!)
    } else {
      out += escape(c)
    }
  }
  return out
}

/**
 * Compile the rules of one `.gitignore` (its text) declared in directory `base`
 * ("" for the root).
 */
export const parseGitignore = (text: string, base = ""): Array<Rule> => {
  const rules: Array<Rule> = []
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "")
    if (line === "" || line.startsWith("#")) continue
    const negate = line.startsWith("!")
    if (negate) line = line.slice(1)
    if (line.startsWith("\\")) line = line.slice(1)
    const dirOnly = line.endsWith("/")
    if (dirOnly) line = line.slice(0, -1)
    const anchored = line.includes("/")
    if (line.startsWith("/")) line = line.slice(1)
    const prefix = base === "" ? "" : `${base.split("/").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/")}/`
    const body = globToRegex(line)
    const source = anchored ? `^${prefix}${body}$` : `^${prefix}(?:.*/)?${body}$`
    rules.push({ regex: new RegExp(source), negate, dirOnly })
  }
  return rules
}

/** A stack of `.gitignore` rule sets; later rules win, as in git. */
export class IgnoreMatcher {
  private readonly rules: Array<Rule> = []

  /** Add the rules of a `.gitignore` found in `base`. */
  add(text: string, base = ""): void {
    this.rules.push(...parseGitignore(text, base))
  }

  /** Whether the repository-relative `path` (a directory when `isDir`) is ignored. */
  ignores(path: string, isDir: boolean): boolean {
    let ignored = false
    for (const rule of this.rules) {
      if (rule.dirOnly && !isDir) continue
      if (rule.regex.test(path)) ignored = !rule.negate
    }
    return ignored
  }
}
