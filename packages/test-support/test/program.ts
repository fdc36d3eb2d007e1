// The one TypeScript program of this package's tests: every ```ts sample of the docs
// (README.md, docs/*.md) and of the JSDoc of packages/*/src, plus the entry points of the
// published packages. Reading every package's sources and effect's declarations is what a
// program costs (about 15 CPU-seconds), so the API reports (api.test.ts) and the sample
// typechecks (examples.test.ts) ask the same one: built on first use, kept for the worker
// (tests here run with `isolate: false`, one worker runs the files one after another).
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { docPages, extractSamples, jsdocSamples, sampleProblems, sandboxProgram, workspacePackages, writeSandbox, type Sample } from "../src/samples.ts"

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))

export const PACKAGES = workspacePackages(REPO_ROOT)

// A package without src/ (the private e2e tests) has no examples.
export const sourcesOf = (dir: string): ReadonlyArray<string> =>
  !existsSync(dir) ? [] : readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesOf(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

/** Samples the compiler reads: plain, `run` and `no-run` TypeScript fences. */
export const isTyped = (s: Sample): boolean => s.kind === "ts" || s.kind === "ts-run" || s.kind === "ts-no-run"

/** Every fenced example in the JSDoc of `packages/*\/src`. */
export const JSDOC_SAMPLES: ReadonlyArray<Sample> = PACKAGES.flatMap((pkg) =>
  sourcesOf(join(REPO_ROOT, "packages", pkg, "src")).flatMap((path) => jsdocSamples(relative(REPO_ROOT, path), readFileSync(path, "utf8")))
)

/** Every fenced sample of README.md and docs/*.md. */
export const DOC_SAMPLES: ReadonlyArray<Sample> = docPages(REPO_ROOT).flatMap((p) => extractSamples(p.file, p.text))

/** The package folder a JSDoc example's file belongs to: its imports resolve from there. */
export const packageDir = (s: Sample): string => join(REPO_ROOT, ...s.file.split("/").slice(0, 2))

/** The packages with a public face: each entry point of their `exports` gets an API report. */
const PUBLISHED = ["core", "tiers", "symbols", "providers", "store"] as const

export interface EntryPoint {
  /** `@strata/core`, `@strata/core/effect`. */
  readonly specifier: string
  /** `core`, `core-effect`: the report's file name. */
  readonly report: string
  readonly file: string
}

const entryPoints = (pkg: string): ReadonlyArray<EntryPoint> => {
  const dir = join(REPO_ROOT, "packages", pkg)
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    readonly name: string
    readonly exports: Record<string, string | Record<string, string>>
  }
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    const source = typeof target === "string" ? target : target["@strata/source"]
    if (source === undefined || !source.endsWith(".ts")) return []
    const sub = subpath === "." ? "" : subpath.slice(1)
    return [{ specifier: manifest.name + sub, report: pkg + sub.replaceAll("/", "-"), file: join(dir, source) }]
  })
}

export const ENTRIES: ReadonlyArray<EntryPoint> = PUBLISHED.flatMap(entryPoints)

/** What kind of declaration a name is, as a reader would say it. */
const kindOf = (symbol: ts.Symbol): string => {
  const f = symbol.flags
  const kinds = [
    f & ts.SymbolFlags.Class ? "class" : undefined,
    f & ts.SymbolFlags.Function ? "function" : undefined,
    f & ts.SymbolFlags.Variable ? "const" : undefined,
    f & ts.SymbolFlags.Enum ? "enum" : undefined,
    f & ts.SymbolFlags.Interface ? "interface" : undefined,
    f & ts.SymbolFlags.TypeAlias ? "type" : undefined,
    f & ts.SymbolFlags.Module ? "namespace" : undefined
  ].filter((k) => k !== undefined)
  return kinds.length === 0 ? "other" : kinds.join(" + ")
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/** The report of one entry point: one line per exported name, sorted. */
const reportOf = (program: ts.Program, entry: EntryPoint): string => {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(entry.file)
  if (source === undefined) throw new Error(`${entry.file} is not in the program`)
  const moduleSymbol = checker.getSymbolAtLocation(source)
  if (moduleSymbol === undefined) throw new Error(`${entry.file} has no module symbol`)
  const lines = checker.getExportsOfModule(moduleSymbol).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const kind = kindOf(symbol)
    const decl = symbol.valueDeclaration ?? symbol.declarations?.[0]
    const type = symbol.flags & ts.SymbolFlags.Value && decl !== undefined
      ? oneLine(checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), undefined, ts.TypeFormatFlags.NoTruncation))
      : undefined
    const shown = type === undefined || type.length > 240 ? "" : `: ${type}`
    return `- \`${exported.name}\` (${kind})${shown}`
  })
  lines.sort()
  return [
    `# ${entry.specifier}`,
    "",
    `Generated by packages/test-support/test/api.test.ts from ${relative(REPO_ROOT, entry.file)}; ${lines.length} names.`,
    "Value types longer than 240 characters are left out; a change of kind or of a shown type changes the report.",
    "",
    ...lines,
    ""
  ].join("\n")
}

export interface Typechecked {
  /** The API report of each entry point (api.test.ts compares them with api/). */
  readonly reports: ReadonlyMap<EntryPoint, string>
  /** `file:line: message` per problem of a JSDoc example. */
  readonly jsdocProblems: ReadonlyArray<string>
  /** `file:line: message` per problem of a docs sample. */
  readonly docsProblems: ReadonlyArray<string>
}

let built: Typechecked | undefined

/**
 * The program, built on first use with the CLI package's compiler options (strict, as the
 * sources), and the samples' problems. The sandboxes it reads are deleted once it is built:
 * the program holds every file it needs in memory.
 */
export const typechecked = (): Typechecked => {
  if (built !== undefined) return built
  const jsdoc = writeSandbox({ repoRoot: REPO_ROOT, samples: JSDOC_SAMPLES.filter(isTyped), resolveFrom: packageDir })
  // The docs' samples resolve their imports as a user of the CLI package would.
  const cliDir = join(REPO_ROOT, "packages", "cli")
  const docs = writeSandbox({ repoRoot: REPO_ROOT, samples: DOC_SAMPLES.filter(isTyped), resolveFrom: () => cliDir })
  try {
    const program = sandboxProgram([jsdoc, docs], join(cliDir, "tsconfig.json"), REPO_ROOT, ENTRIES.map((e) => e.file))
    // The reports first: the checker numbers types in the order it meets them, and a
    // union prints its members in that order, so checking the samples first would
    // reorder unions in the reports.
    const reports = new Map(ENTRIES.map((e) => [e, reportOf(program, e)] as const))
    built = { reports, jsdocProblems: sampleProblems(program, jsdoc), docsProblems: sampleProblems(program, docs) }
    return built
  } finally {
    jsdoc.dispose()
    docs.dispose()
  }
}
