/**
 * Glob patterns for the chat tools' `glob` arguments, matched against repository-relative
 * paths with forward slashes: `*` and `?` stay inside one path segment, `**` spans
 * segments, `[abc]` is a class and `{ts,tsx}` a choice. Pure.
 */

const SPECIAL = /[\\^$.|+()[\]{}*?]/g

/**
 * A glob as an anchored regular expression over a whole path. A pattern without a `/`
 * matches the file name in any folder (`*.ts` finds `src/a.ts`), as in `.gitignore`.
 *
 * @example
 * ```ts
 * import { globToRegExp } from "@strata/cli"
 * globToRegExp("src/**\/*.{ts,tsx}").test("src/ui/app.tsx") // true
 * globToRegExp("*.md").test("docs/cli.md") // true
 * globToRegExp("src/*.ts").test("src/ui/app.ts") // false
 * ```
 */
export const globToRegExp = (glob: string): RegExp => {
  const pattern = glob.replace(/^\.\//, "")
  let out = ""
  let braces = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        // `**/` is zero or more whole folders; a trailing `**` is anything below.
        const slash = pattern[i + 2] === "/"
        out += slash ? "(?:[^/]*/)*" : ".*"
        i += slash ? 2 : 1
      } else out += "[^/]*"
    } else if (c === "?") out += "[^/]"
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2)
      if (end === -1) out += "\\["
      else {
        const body = pattern.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\")
        out += `[${body}]`
        i = end
      }
    } else if (c === "{") {
      braces++
      out += "(?:"
    } else if (c === "}" && braces > 0) {
      braces--
      out += ")"
    } else if (c === "," && braces > 0) out += "|"
    else out += c.replace(SPECIAL, "\\$&")
  }
  out += ")".repeat(braces)
  return new RegExp(pattern.includes("/") ? `^${out}$` : `^(?:.*/)?${out}$`)
}
