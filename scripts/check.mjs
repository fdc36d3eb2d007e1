// `pnpm check`: the typecheck (`pnpm typecheck`) and the lint (`pnpm lint`) over one
// TypeScript program. Each alone builds the program of tsconfig.json (every package's
// sources and tests, and the ~700,000 lines of declarations they import); the type-aware
// lint rules then ask the checker for types the typecheck has already computed. Run
// together they cost about 60% of the two apart. Prints what each would print; exits 1
// when either finds an error.
import process from "node:process"
import { ESLint } from "eslint"
import ts from "typescript"
import { TYPED_FILES } from "../eslint.config.js"

const started = performance.now()
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`
const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined

const parsed = ts.getParsedCommandLineOfConfigFile("tsconfig.json", {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
  }
})
if (parsed === undefined) throw new Error("cannot read tsconfig.json")
const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences })
const diagnostics = [...parsed.errors, ...ts.getPreEmitDiagnostics(program)]
const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => "\n" }
if (diagnostics.length > 0) {
  process.stdout.write(color ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host) : ts.formatDiagnostics(diagnostics, host))
}
const typeErrors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length
console.log(`typecheck: ${program.getSourceFiles().length} files, ${typeErrors} error(s) (${seconds(started)})`)

const linting = performance.now()
const eslint = new ESLint({ overrideConfig: { files: TYPED_FILES, languageOptions: { parserOptions: { programs: [program] } } } })
const results = await eslint.lintFiles(["packages"])
const formatter = await eslint.loadFormatter("stylish")
const report = await formatter.format(results)
if (report !== "") process.stdout.write(report.endsWith("\n") ? report : `${report}\n`)
const lintErrors = results.reduce((n, r) => n + r.errorCount, 0)
console.log(`lint: ${results.length} files, ${lintErrors} error(s) (${seconds(linting)})`)

process.exitCode = typeErrors + lintErrors > 0 ? 1 : 0
