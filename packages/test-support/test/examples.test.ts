// Every fenced example in the JSDoc of `packages/*/src` is compiled here, as the docs'
// samples are: typechecked strictly against the packages' sources, all in one program (the
// one of ./program.ts, which the docs' samples and the API reports share). A plain ```ts
// example is also run, and each top-level line `expression // value` whose comment is a
// literal checks that value. Label an example ```ts no-run when it needs a network,
// credentials or a real repository, and ```ts fragment when it is an excerpt that cannot
// stand alone. The docs' samples run in packages/cli/test/docs.test.ts.
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { literalOf, withValueChecks } from "../src/checks.ts"
import { docComments, relativeImportsFrom, writeSandbox, type Sample } from "../src/samples.ts"
import { DOC_SAMPLES, isTyped, JSDOC_SAMPLES, PACKAGES, packageDir, REPO_ROOT, sourcesOf, typechecked } from "./program.ts"

const samples = JSDOC_SAMPLES
const where = (s: Sample) => `${s.file}:${s.line}`
const compiled = samples.filter(isTyped)
const runnable = compiled.filter((s) => s.kind !== "ts-no-run")

// Run variants call this for each `expression // value` line.
const CHECK = "__strataExampleCheck"
Object.assign(globalThis, { [CHECK]: (actual: unknown, expected: unknown, at: string) => expect(actual, at).toEqual(expected) })

const sandbox = writeSandbox({
  repoRoot: REPO_ROOT,
  samples: runnable,
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
    expect(typechecked().jsdocProblems, "Fix the example, or label an excerpt ```ts fragment").toEqual([])
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

describe("docs samples", () => {
  it("there are samples to check (the harness reads the real pages)", () => {
    expect(DOC_SAMPLES.filter(isTyped).length).toBeGreaterThan(0)
  })

  it("every ```ts sample of README.md and docs/ typechecks (strict, against the packages' sources)", () => {
    expect(typechecked().docsProblems, "Fix the sample, or mark an excerpt ```ts fragment (see docs/index.md)").toEqual([])
  }, 300_000)
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
