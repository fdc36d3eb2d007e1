// Every fenced example in the JSDoc of `packages/*/src` is compiled here, as the docs'
// samples are (packages/cli/test/docs.test.ts): typechecked strictly against the packages'
// sources, all in one program. A plain ```ts example is also run, and each top-level line
// `expression // value` whose comment is a literal checks that value. Label an example
// ```ts no-run when it needs a network, credentials or a real repository, and
// ```ts fragment when it is an excerpt that cannot stand alone.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { literalOf, withValueChecks } from "../src/checks.ts"
import { docComments, jsdocSamples, relativeImportsFrom, typecheckSandbox, workspacePackages, writeSandbox, type Sample } from "../src/samples.ts"

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))

// A package without src/ (the private e2e tests) has no examples.
const sourcesOf = (dir: string): ReadonlyArray<string> =>
  !existsSync(dir) ? [] : readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesOf(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

const PACKAGES = workspacePackages(REPO_ROOT)
const samples = PACKAGES.flatMap((pkg) =>
  sourcesOf(join(REPO_ROOT, "packages", pkg, "src")).flatMap((path) => jsdocSamples(relative(REPO_ROOT, path), readFileSync(path, "utf8")))
)
const where = (s: Sample) => `${s.file}:${s.line}`
const compiled = samples.filter((s) => s.kind === "ts" || s.kind === "ts-run" || s.kind === "ts-no-run")
const runnable = compiled.filter((s) => s.kind !== "ts-no-run")

/** The package folder a sample's file belongs to: its imports resolve from there. */
const packageDir = (s: Sample): string => join(REPO_ROOT, ...s.file.split("/").slice(0, 2))

// Run variants call this for each `expression // value` line.
const CHECK = "__strataExampleCheck"
Object.assign(globalThis, { [CHECK]: (actual: unknown, expected: unknown, at: string) => expect(actual, at).toEqual(expected) })

const sandbox = writeSandbox({
  repoRoot: REPO_ROOT,
  samples: compiled,
  resolveFrom: packageDir,
  variants: { run: (s) => withValueChecks(s.code, CHECK, s.file, s.line + 1) }
})
afterAll(() => sandbox.dispose())

describe("JSDoc examples", () => {
  it("finds the examples of every package (the harness reads the real sources)", () => {
    expect(new Set(compiled.map((s) => s.file.split("/")[1])).size).toBeGreaterThanOrEqual(5)
    expect(runnable.length).toBeGreaterThan(100)
  })

  it("every ```ts example typechecks (strict, against the packages' sources)", () => {
    expect(typecheckSandbox(sandbox, join(REPO_ROOT, "packages", "cli", "tsconfig.json"), REPO_ROOT), "Fix the example, or label an excerpt ```ts fragment").toEqual([])
  }, 300_000)

  for (const s of runnable) {
    it(`runs ${where(s)}`, async () => {
      await import(pathToFileURL(sandbox.variantOf("run", s)).href)
    }, 120_000) // an example that runs the CLI in-process takes seconds, more on a loaded machine
  }

  it("every fence in a doc comment names a label the harness knows, so no example escapes it", () => {
    const unknown = PACKAGES.flatMap((pkg) =>
      sourcesOf(join(REPO_ROOT, "packages", pkg, "src")).flatMap((path) =>
        docComments(path, readFileSync(path, "utf8")).flatMap((c) =>
          c.text.split("\n").flatMap((line, i) => {
            const fence = /^ {0,3}(`{3,}|~{3,})(\S.*)$/.exec(line)
            return fence === null || /^(ts|typescript|json|text)(\s|$)/.test(fence[2]!) ? [] : [`${relative(REPO_ROOT, path)}:${c.line + i}: ${line.trim()}`]
          })
        )
      )
    )
    expect(unknown, "label the fence ts (typechecked and run), json or text").toEqual([])
  })

  for (const s of samples.filter((x) => x.kind === "json")) {
    it(`${where(s)} is valid JSON`, () => {
      expect(() => JSON.parse(s.code) as unknown).not.toThrow()
    })
  }
})

describe("value checks", () => {
  it("reads a literal from a comment, and nothing else", () => {
    expect(literalOf(" 0.75")).toBe("0.75")
    expect(literalOf(' ["a", "b"]')).toBe('["a", "b"]')
    expect(literalOf(' { type: "image", n: -1, ok: true, none: null }')).toBe('{ type: "image", n: -1, ok: true, none: null }')
    expect(literalOf(" undefined")).toBe("undefined")
    expect(literalOf(" prints the configuration, returns 0")).toBeUndefined()
    expect(literalOf(' Result.succeed("src/a.ts")')).toBeUndefined()
    expect(literalOf(" { cacheWrite: 1000, ... }")).toBeUndefined()
    expect(literalOf(" 0.75 (three quarters)")).toBeUndefined()
    expect(literalOf(' "tool result answers no tool call ..."')).toBeUndefined()
  })

  it("reads a value stated on the comment lines right below a statement", () => {
    const code = ["f(1)", "// { a: 1,", "//   b: [2] }", "f(2)", "", "// 3", "f(3)", "// not a value", ""].join("\n")
    expect(withValueChecks(code, "check", "a.ts", 1).split("\n")).toEqual([
      'check(f(1), ({ a: 1,    b: [2] }), "a.ts:1");',
      "// { a: 1,",
      "//   b: [2] }",
      "f(2)",
      "",
      "// 3",
      "f(3)",
      "// not a value",
      ""
    ])
  })

  it("rewrites `expression // literal` statements into checks, and leaves the rest", () => {
    const code = ['import { f } from "x"', "f(1) // 2", 'const url = "http://a" // "b"', "f(2) // two", "await f(3) // [3]", ""].join("\n")
    expect(withValueChecks(code, "check", "a.ts", 10).split("\n")).toEqual([
      'import { f } from "x"',
      'check(f(1), (2), "a.ts:11"); // 2',
      'const url = "http://a" // "b"',
      "f(2) // two",
      'check(await f(3), ([3]), "a.ts:14"); // [3]',
      ""
    ])
  })
})

describe("sandbox", () => {
  it("points an example's relative imports at its source file's neighbours, and nothing else", () => {
    const code = ['import { a } from "./a.ts"', 'export * from "../b.ts"', 'const c = await import("./c.ts")', 'const s = `import { d } from "./d.ts"`', ""].join("\n")
    expect(relativeImportsFrom(code, "/repo/packages/x/src/rules", "/tmp/box/p0").split("\n")).toEqual([
      'import { a } from "../../../repo/packages/x/src/rules/a.ts"',
      'export * from "../../../repo/packages/x/src/b.ts"',
      'const c = await import("../../../repo/packages/x/src/rules/c.ts")',
      'const s = `import { d } from "./d.ts"`',
      ""
    ])
  })
})
