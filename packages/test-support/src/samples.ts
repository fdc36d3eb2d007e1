// Code samples as tests: the fenced blocks of Markdown pages and of JSDoc comments,
// extracted with their line numbers, written to a sandbox that resolves `@strata/*` to the
// packages' sources, and typechecked as one TypeScript program (strict, like the packages).
//
// A fence's info string says what happens to it:
//
//   ```ts              typechecked as a module of its own; in JSDoc also run
//   ```ts run          typechecked, then run (top-level await allowed; throw to fail)
//   ```ts no-run       typechecked only (it needs a network, credentials or a real repository)
//   ```ts fragment     an excerpt that cannot stand alone: skipped, on purpose
//   ```sh              every `strata ...` / `pnpm strata ...` line must name a real command and flags
//   ```sh run          those lines are also executed, in order, on a fresh copy of the demo repository
//   ```json config     parsed and validated as .strata/config.json
//   ```json            parsed as JSON
//   anything else      (text, diagrams, ```sh skip, other languages) is prose, not a sample
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import ts from "typescript"

export type SampleKind = "ts" | "ts-run" | "ts-no-run" | "ts-fragment" | "sh" | "sh-run" | "json" | "json-config"

export interface Sample {
  /** The file the sample is in, relative to the repository root. */
  readonly file: string
  /** 1-based line of the opening fence in that file. */
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
  if (TS_LANGS.has(l)) {
    return flags.includes("fragment") ? "ts-fragment" : flags.includes("no-run") ? "ts-no-run" : flags.includes("run") ? "ts-run" : "ts"
  }
  if (SH_LANGS.has(l)) return flags.includes("skip") ? undefined : flags.includes("run") ? "sh-run" : "sh"
  if (l === "json") return flags.includes("fragment") ? undefined : flags.includes("config") ? "json-config" : "json"
  return undefined
}

/**
 * Every sample of one Markdown text. Fences of 3+ backticks or tildes; nested shorter
 * fences stay inside. `firstLine` is the file line of the text's first line. Pure.
 */
export const extractSamples = (file: string, markdown: string, firstLine = 1): ReadonlyArray<Sample> => {
  const samples: Array<Sample> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[2]!
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`)
    const body: Array<string> = []
    let j = i + 1
    for (; j < lines.length && !close.test(lines[j]!); j++) body.push(lines[j]!)
    const kind = classifyFence(open[3]!)
    if (kind !== undefined) samples.push({ file, line: firstLine + i, kind, code: body.join("\n") + "\n" })
    i = j
  }
  return samples
}

/**
 * The doc comments (`/** ... *\/`) of a TypeScript source, each as its text without the
 * comment markers and the leading ` * ` of each line, with the file line it starts on.
 * Found through the parser, so comment-like text inside strings and regexes is not one.
 * Pure.
 */
export const docComments = (file: string, source: string): ReadonlyArray<{ readonly line: number; readonly text: string }> => {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const starts = new Set<number>()
  const comments: Array<{ readonly line: number; readonly text: string }> = []
  const collect = (node: ts.Node): void => {
    for (const range of ts.getLeadingCommentRanges(source, node.getFullStart()) ?? []) {
      if (starts.has(range.pos) || !source.startsWith("/**", range.pos)) continue
      starts.add(range.pos)
      const text = source
        .slice(range.pos + 3, range.end - 2)
        .split("\n")
        .map((l) => l.replace(/^\s*\* ?/, ""))
        .join("\n")
      comments.push({ line: sourceFile.getLineAndCharacterOfPosition(range.pos).line + 1, text })
    }
    ts.forEachChild(node, collect)
  }
  collect(sourceFile)
  collect(sourceFile.endOfFileToken)
  return comments.sort((a, b) => a.line - b.line)
}

/** Every fenced sample in the doc comments of a TypeScript source (`@example` blocks and any other). Pure. */
export const jsdocSamples = (file: string, source: string): ReadonlyArray<Sample> =>
  docComments(file, source).flatMap((c) => extractSamples(file, c.text, c.line))

/** Where a sample was written in a sandbox, and where it came from. */
export interface Sandbox {
  readonly dir: string
  readonly fileOf: ReadonlyMap<Sample, string>
  readonly dispose: () => void
}

/**
 * Write TypeScript samples to a temporary directory where `@strata/<pkg>` links to
 * `packages/<pkg>` (resolved to sources through the `@strata/source` condition).
 * `resolveFrom(sample)` names the package directory whose `node_modules` the sample's
 * other imports resolve from (e.g. the package a JSDoc example belongs to); samples
 * with the same directory share a folder. A sample without imports or exports gets an
 * `export {}`, so it is a module and not a script sharing one global scope.
 */
export const writeSandbox = (options: {
  readonly repoRoot: string
  readonly samples: ReadonlyArray<Sample>
  readonly resolveFrom: (sample: Sample) => string
  /** Extra source per sample written next to it (e.g. a runnable variant), by suffix. */
  readonly variants?: Readonly<Record<string, (sample: Sample) => string>>
}): Sandbox & { readonly variantOf: (suffix: string, sample: Sample) => string } => {
  const dir = mkdtempSync(join(tmpdir(), "strata-samples-"))
  const packagesDir = join(options.repoRoot, "packages")
  mkdirSync(join(dir, "node_modules", "@strata"), { recursive: true })
  for (const pkg of workspacePackages(options.repoRoot)) symlinkSync(join(packagesDir, pkg), join(dir, "node_modules", "@strata", pkg), "dir")
  // Below that, every dependency of any package (first package wins): an example may show
  // the SDK a user would pair a package with (core's compaction model with the Anthropic SDK).
  for (const pkg of workspacePackages(options.repoRoot)) linkDependencies(join(packagesDir, pkg, "node_modules"), join(dir, "node_modules"))
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }))
  const folders = new Map<string, string>()
  const fileOf = new Map<Sample, string>()
  const variants = new Map<string, string>()
  for (const sample of options.samples) {
    const from = options.resolveFrom(sample)
    let folder = folders.get(from)
    if (folder === undefined) {
      folder = join(dir, `p${folders.size}`)
      mkdirSync(folder)
      symlinkSync(join(from, "node_modules"), join(folder, "node_modules"), "dir")
      writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module", private: true }))
      folders.set(from, folder)
    }
    const name = `${sample.file.replace(/[^A-Za-z0-9]+/g, "_")}_L${sample.line}`
    // Relative imports of a JSDoc example mean its source file's neighbours.
    const relocate = (code: string) => (sample.file.endsWith(".ts") ? relativeImportsFrom(code, dirname(join(options.repoRoot, sample.file)), folder) : code)
    const asModule = (code: string) => (/^\s*(import|export)\s/m.test(code) ? relocate(code) : `${code}\nexport {}\n`)
    const path = join(folder, `${name}.ts`)
    writeFileSync(path, asModule(sample.code))
    fileOf.set(sample, path)
    for (const [suffix, make] of Object.entries(options.variants ?? {})) {
      const variant = join(folder, `${name}.${suffix}.ts`)
      writeFileSync(variant, asModule(make(sample)))
      variants.set(`${suffix}\0${path}`, variant)
    }
  }
  return {
    dir,
    fileOf,
    variantOf: (suffix, sample) => variants.get(`${suffix}\0${fileOf.get(sample)}`)!,
    dispose: () => rmSync(dir, { recursive: true, force: true })
  }
}

/** Link each package of `from` (a node_modules folder) into `to` unless `to` has it already. */
const linkDependencies = (from: string, to: string): void => {
  if (!existsSync(from)) return
  for (const entry of readdirSync(from)) {
    if (entry.startsWith(".")) continue
    if (entry.startsWith("@")) {
      mkdirSync(join(to, entry), { recursive: true })
      linkDependencies(join(from, entry), join(to, entry))
    } else if (!existsSync(join(to, entry))) {
      symlinkSync(realpathSync(join(from, entry)), join(to, entry), "dir")
    }
  }
}

/**
 * A sample's relative imports (`from "./serialize.ts"`), meant from the directory of the
 * file it is in, rewritten to reach the same module from `to`: an example of a module's
 * internal helper imports it the way the module's neighbours do. Pure.
 */
export const relativeImportsFrom = (code: string, from: string, to: string): string => {
  const source = ts.createSourceFile("sample.ts", code, ts.ScriptTarget.Latest, true)
  const specifiers: Array<ts.StringLiteralLike> = []
  const visit = (node: ts.Node): void => {
    const specifier = ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
      ? node.moduleSpecifier
      : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
        ? node.arguments[0]
        : undefined
    if (specifier !== undefined && ts.isStringLiteralLike(specifier) && specifier.text.startsWith(".")) specifiers.push(specifier)
    ts.forEachChild(node, visit)
  }
  visit(source)
  let out = code
  for (const s of specifiers.sort((a, b) => b.getStart() - a.getStart())) {
    const target = relative(to, join(from, s.text)).split("\\").join("/")
    out = out.slice(0, s.getStart() + 1) + (target.startsWith(".") ? target : `./${target}`) + out.slice(s.getEnd() - 1)
  }
  return out
}

/** The workspace packages: the folders of `packages/` with a package.json. */
export const workspacePackages = (repoRoot: string): ReadonlyArray<string> =>
  ts.sys.getDirectories(join(repoRoot, "packages")).filter((d) => ts.sys.fileExists(join(repoRoot, "packages", d, "package.json"))).sort()

/** The Markdown pages whose samples are checked: the root README and docs/*.md. */
export const docPages = (repoRoot: string): ReadonlyArray<{ readonly file: string; readonly text: string }> => {
  const docs = join(repoRoot, "docs")
  const pages = readdirSync(docs)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => ({ file: `docs/${f}`, text: readFileSync(join(docs, f), "utf8") }))
  return [{ file: "README.md", text: readFileSync(join(repoRoot, "README.md"), "utf8") }, ...pages]
}

/**
 * One TypeScript program over every sample of some sandboxes (and `extraRoots`, e.g. the
 * packages' entry points an API report reads), with the compiler options of `tsconfig`
 * (a package's, so strictness matches the sources) minus the unused-name checks (samples
 * show values without always using them). Building it is the cost (every package's
 * sources and effect's declarations are read): build one and ask it several questions.
 */
export const sandboxProgram = (sandboxes: ReadonlyArray<Sandbox>, tsconfig: string, repoRoot: string, extraRoots: ReadonlyArray<string> = []): ts.Program => {
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (parsed === undefined) throw new Error(`cannot read ${tsconfig}`)
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    noUnusedLocals: false,
    noUnusedParameters: false,
    typeRoots: [join(repoRoot, "node_modules", "@types")],
    types: ["node"]
  }
  delete options.rootDir
  return ts.createProgram([...extraRoots, ...sandboxes.flatMap((s) => [...s.fileOf.values()])], options)
}

/**
 * The problems of a sandbox's samples in `program` (built by `sandboxProgram`), one line
 * each, `file:line: message`, at the sample's place in its original file.
 */
export const sampleProblems = (program: ts.Program, sandbox: Sandbox): ReadonlyArray<string> => {
  const sampleOf = new Map([...sandbox.fileOf].map(([s, f]) => [f, s]))
  // Only the samples are checked (the sources they import are the typecheck's business):
  // asking per file keeps the checker from checking every body of every package.
  return program
    .getSourceFiles()
    .filter((f) => sampleOf.has(f.fileName))
    .flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)])
    .map((d) => {
      const s = sampleOf.get(d.file!.fileName)!
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
      return `${s.file}:${s.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    })
}
