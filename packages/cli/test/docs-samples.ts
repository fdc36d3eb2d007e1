// Extracts the code samples of the Markdown docs so the test suite can compile and run
// them. A fence's info string says what happens to it (documented in docs/index.md):
//
//   ```ts              typechecked as a module of its own (strict, against the packages' sources)
//   ```ts run          typechecked, then executed (top-level await allowed; throw to fail)
//   ```ts fragment     an excerpt that cannot stand alone: skipped, on purpose
//   ```sh              every `strata ...` / `pnpm strata ...` line must name a real command and flags
//   ```sh run          those lines are also executed, in order, on a fresh copy of the demo repository
//   ```json config     parsed and validated as .strata/config.json
//   ```json            parsed as JSON
//   anything else      (text, diagrams, ```sh skip, other languages) is prose, not a sample
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

export type SampleKind = "ts" | "ts-run" | "ts-fragment" | "sh" | "sh-run" | "json" | "json-config"

export interface Sample {
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly kind: SampleKind
  readonly code: string
}

const TS_LANGS = new Set(["ts", "typescript", "tsx"])
const SH_LANGS = new Set(["sh", "shell", "bash", "console"])

/** The kind of a fence from its info string, or undefined for prose blocks. Pure. */
export const classifyFence = (info: string): SampleKind | undefined => {
  const [lang = "", ...flags] = info.trim().split(/\s+/)
  const l = lang.toLowerCase()
  if (TS_LANGS.has(l)) return flags.includes("fragment") ? "ts-fragment" : flags.includes("run") ? "ts-run" : "ts"
  if (SH_LANGS.has(l)) return flags.includes("skip") ? undefined : flags.includes("run") ? "sh-run" : "sh"
  if (l === "json") return flags.includes("fragment") ? undefined : flags.includes("config") ? "json-config" : "json"
  return undefined
}

/** Every sample of one Markdown text. Fences of 3+ backticks or tildes; nested shorter fences stay inside. Pure. */
export const extractSamples = (file: string, markdown: string): ReadonlyArray<Sample> => {
  const samples: Array<Sample> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[2]!
    const info = open[3]!
    const body: Array<string> = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`)
      if (close.test(lines[j]!)) break
      body.push(lines[j]!)
    }
    const kind = classifyFence(info)
    if (kind !== undefined) samples.push({ file, line: i + 1, kind, code: body.join("\n") + "\n" })
    i = j
  }
  return samples
}

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

/** The Markdown pages the harness checks: docs/*.md and the root README. */
export const docPages = (repoRoot: string): ReadonlyArray<{ readonly file: string; readonly text: string }> => {
  const docs = join(repoRoot, "docs")
  const pages = readdirSync(docs)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => ({ file: `docs/${f}`, text: readFileSync(join(docs, f), "utf8") }))
  return [{ file: "README.md", text: readFileSync(join(repoRoot, "README.md"), "utf8") }, ...pages]
}
