// The docs-specific part of the sample harness: the `strata` lines of shell samples. The
// pages, fence labels, extraction and typechecking are shared with the JSDoc examples
// (`@strata/test-support/samples`, labels documented in docs/index.md).

/**
 * The `strata` invocations of a shell sample: lines (after `$ ` prompts and `VAR=x`
 * assignments) whose command is `strata` or `pnpm strata`, split into arguments with
 * simple quoting. Continuation lines ending in `\` are joined. Pure.
 */
export interface Invocation {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** The exit code the line expects: 0 unless it ends with a `# exit N` comment. */
  readonly exit: number
  readonly text: string
}

export const strataInvocations = (code: string): ReadonlyArray<Invocation> => {
  const joined = code.replace(/\\\n\s*/g, " ")
  const out: Array<Invocation> = []
  for (const raw of joined.split("\n").flatMap((l) => l.split(" && "))) {
    const expected = /#\s*exit\s+(\d+)\s*$/.exec(raw)
    const text = raw.replace(/^\s*\$\s+/, "").replace(/\s+#.*$/, "").trim()
    if (text === "" || text.startsWith("#")) continue
    const words = splitWords(text)
    const env: Record<string, string> = {}
    while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
      const w = words.shift()!
      env[w.slice(0, w.indexOf("="))] = w.slice(w.indexOf("=") + 1)
    }
    if (words[0] === "npx" && words[1]?.startsWith("--yes")) words.splice(0, 2)
    if (words[0]?.startsWith("pnpm") && words[1] === "strata") words.splice(0, 2)
    else if (words[0] === "strata") words.splice(0, 1)
    else continue
    // `pnpm strata -- --flag` forwards everything after `--`.
    if (words[0] === "--") words.shift()
    out.push({ args: words, env, exit: expected === null ? 0 : Number(expected[1]), text })
  }
  return out
}

const splitWords = (text: string): Array<string> => {
  const words: Array<string> = []
  let current = ""
  let quote: string | undefined
  let inWord = false
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined
      else current += ch
    } else if (ch === "'" || ch === '"') {
      quote = ch
      inWord = true
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current)
      current = ""
      inWord = false
    } else {
      current += ch
      inWord = true
    }
  }
  if (inWord) words.push(current)
  return words
}
