// The chat tools' executors on a real directory: reads, searches and listings inside the
// repository work; every path that leads out of it (`..`, absolute, links, Strata's and
// git's folders, special files) is answered with an error result and never read. The
// property test draws paths from the pieces such escapes are made of and checks that no
// byte of the files outside the project ever reaches an output.
import { execFileSync } from "node:child_process"
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { tempDirs } from "@strata/test-support"
import { globToRegExp, REPO_TOOLS, runRepoTool, TOOL_LIMITS, toolOutput } from "../src/tools/index.ts"
import { describeToolCall, withUniqueIds } from "../src/run/chat.ts"

const made = tempDirs("strata-tools-")
let base = ""
let root = ""
const MAX_BYTES = 20_000
const run = (tool: string, input: unknown) => toolOutput({ root, maxFileBytes: MAX_BYTES }, tool, input)

beforeAll(() => {
  base = made()
  root = NodePath.join(base, "repo")
  const outside = NodePath.join(base, "outside")
  mkdirSync(NodePath.join(outside, "dir"), { recursive: true })
  writeFileSync(NodePath.join(outside, "secret.txt"), "SECRET-OUTSIDE quote(\n")
  writeFileSync(NodePath.join(outside, "dir", "secret.txt"), "SECRET-OUTSIDE-DIR quote(\n")
  mkdirSync(NodePath.join(root, "src", "ui"), { recursive: true })
  mkdirSync(NodePath.join(root, ".strata"))
  mkdirSync(NodePath.join(root, ".git"))
  writeFileSync(NodePath.join(root, ".strata", "state.json"), "SECRET-STRATA quote(\n")
  writeFileSync(NodePath.join(root, ".git", "config"), "SECRET-GIT quote(\n")
  writeFileSync(NodePath.join(root, "src", "pricing.ts"), "export const quote = (w: number) => w * 2\nexport const Quote = 1\n")
  writeFileSync(NodePath.join(root, "src", "ui", "app.tsx"), "import { quote } from '../pricing'\nexport const App = () => quote(3)\n")
  writeFileSync(NodePath.join(root, "README.md"), "# Demo\n\nCall quote() for a price.\n")
  writeFileSync(NodePath.join(root, "long.txt"), Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join("\n"))
  writeFileSync(NodePath.join(root, "big.txt"), "x".repeat(MAX_BYTES + 1))
  writeFileSync(NodePath.join(root, "wide.txt"), Array.from({ length: 200 }, (_, i) => `${i + 1}`.padEnd(1500, "w")).join("\n"))
  writeFileSync(NodePath.join(root, "logo.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01]))
  symlinkSync("../outside/secret.txt", NodePath.join(root, "out-link"))
  symlinkSync("../outside", NodePath.join(root, "out-dir"))
  symlinkSync(".strata/state.json", NodePath.join(root, "strata-link"))
  symlinkSync("README.md", NodePath.join(root, "readme-link.md"))
  execFileSync("mkfifo", [NodePath.join(root, "pipe")])
})

const ok = (output: ReturnType<typeof run>): string => {
  expect(output.type, JSON.stringify(output)).toBe("text")
  return String(output.value)
}
const refused = (output: ReturnType<typeof run>): string => {
  expect(output.type, JSON.stringify(output)).toBe("error-text")
  return String(output.value)
}

describe("read_file", () => {
  it("gives the lines with their numbers, a range of them, and says how to read on", () => {
    expect(ok(run("read_file", { path: "src/pricing.ts" }))).toBe("src/pricing.ts, lines 1-2 of 2:\n1\texport const quote = (w: number) => w * 2\n2\texport const Quote = 1")
    expect(ok(run("read_file", { path: "./src//ui/../pricing.ts", startLine: 2 }))).toBe("src/pricing.ts, lines 2-2 of 2:\n2\texport const Quote = 1")
    const long = ok(run("read_file", { path: "long.txt" }))
    expect(long.split("\n")).toHaveLength(TOOL_LIMITS.readLines + 2)
    expect(long.split("\n").at(-1)).toBe("(lines 2001-2500 not shown; call read_file again with startLine 2001)")
    expect(ok(run("read_file", { path: "long.txt", startLine: 2499, endLine: 9999 }))).toBe("long.txt, lines 2499-2500 of 2500:\n2499\tl2499\n2500\tl2500")
    // Long lines end a page before the line limit, within the character limit.
    const wide = toolOutput({ root, maxFileBytes: 1_000_000 }, "read_file", { path: "wide.txt" })
    expect(String(wide.value).length).toBeLessThan(TOOL_LIMITS.readChars + 200)
    expect(String(wide.value)).toMatch(/^wide\.txt, lines 1-66 of 200:\n/)
    expect(String(wide.value).split("\n").at(-1)).toBe("(lines 67-200 not shown; call read_file again with startLine 67)")
    // An absolute path inside the repository is the same file; a link inside it is followed.
    expect(ok(run("read_file", { path: NodePath.join(root, "README.md") }))).toMatch(/^README\.md, lines 1-3 of 3:/)
    expect(ok(run("read_file", { path: "readme-link.md" }))).toMatch(/^readme-link\.md, lines 1-3 of 3:\n1\t# Demo/)
  })

  it("answers paths outside the repository with an error, whatever leads there", () => {
    expect(refused(run("read_file", { path: "../outside/secret.txt" }))).toBe("\"../outside/secret.txt\" is outside the repository; name paths relative to the repository root (e.g. src/index.ts).")
    expect(refused(run("read_file", { path: "/etc/passwd" }))).toMatch(/is outside the repository/)
    expect(refused(run("read_file", { path: "src/../../outside/secret.txt" }))).toMatch(/is outside the repository/)
    expect(refused(run("read_file", { path: "out-link" }))).toBe("\"out-link\" leads outside the repository through the link out-link; the tools only read inside it.")
    expect(refused(run("read_file", { path: "out-dir/dir/secret.txt" }))).toMatch(/leads outside the repository through the link out-dir;/)
  })

  it("does not read Strata's or git's folders, special files, binaries, big files or missing ones", () => {
    expect(refused(run("read_file", { path: ".strata/state.json" }))).toBe("\".strata/state.json\" is inside .strata/, which holds Strata's own state, not the project; the tools do not read it.")
    expect(refused(run("read_file", { path: ".git/config" }))).toMatch(/inside \.git\/, which holds git's internals/)
    expect(refused(run("read_file", { path: "strata-link" }))).toBe("\"strata-link\" leads into .strata/, which is not part of the project; the tools do not read it.")
    expect(refused(run("read_file", { path: "pipe" }))).toBe("\"pipe\" is not a regular file (FIFO); the tools only read regular files.")
    expect(refused(run("read_file", { path: "src" }))).toBe("\"src\" is a folder; list_files lists what is in it.")
    expect(refused(run("read_file", { path: "logo.bin" }))).toBe("\"logo.bin\" is a binary file; the tools only read text.")
    expect(refused(run("read_file", { path: "big.txt" }))).toBe("\"big.txt\" is 20,001 bytes, over the 20,000 bytes limit for reading a file.")
    expect(refused(run("read_file", { path: "src/nope.ts" }))).toBe("There is no file \"src/nope.ts\" in the repository; list_files shows what exists.")
    expect(refused(run("read_file", { path: "src/a\nb.ts" }))).toMatch(/control character U\+000A/)
  })

  it("refuses bad arguments and unknown tools, naming what is wrong", () => {
    expect(refused(run("read_file", {}))).toMatch(/^Invalid arguments for read_file: .*path/s)
    expect(refused(run("read_file", { path: "README.md", startLine: 0 }))).toMatch(/^Invalid arguments for read_file: .*startLine/s)
    expect(refused(run("read_file", { path: "README.md", startLine: 9 }))).toBe("README.md has 3 lines; startLine 9 is past its end.")
    expect(refused(run("read_file", { path: "README.md", startLine: 3, endLine: 2 }))).toBe("endLine 2 is before startLine 3.")
    expect(refused(run("write_file", { path: "README.md" }))).toBe("There is no tool named \"write_file\"; the tools are read_file, search, list_files.")
  })
})

describe("search", () => {
  it("finds literal text and regular expressions, in path order, with case as asked", () => {
    expect(ok(run("search", { pattern: "quote(" }))).toBe(
      [
        "README.md:3: Call quote() for a price.",
        "readme-link.md:3: Call quote() for a price.",
        "src/ui/app.tsx:2: export const App = () => quote(3)",
        "(5 files not searched: binary, over the size limit, or leading outside the repository)"
      ].join("\n")
    )
    expect(ok(run("search", { pattern: "^export const [QA]", regex: true, glob: "src/**/*.{ts,tsx}" }))).toBe(
      ["src/pricing.ts:2: export const Quote = 1", "src/ui/app.tsx:2: export const App = () => quote(3)"].join("\n")
    )
    expect(ok(run("search", { pattern: "QUOTE =", caseSensitive: false, path: "src" }))).toBe(["src/pricing.ts:1: export const quote = (w: number) => w * 2", "src/pricing.ts:2: export const Quote = 1"].join("\n"))
    expect(ok(run("search", { pattern: "l2", path: ".", glob: "long.txt", maxResults: 3 }))).toBe(
      ["long.txt:2: l2", "long.txt:20: l20", "long.txt:21: l21", `(more matches not shown; narrow with path or glob, or raise maxResults up to ${TOOL_LIMITS.searchResultsMax})`].join("\n")
    )
    expect(ok(run("search", { pattern: "nowhere", path: "src" }))).toBe("No matches for \"nowhere\" in 2 files.")
  })

  it("never finds what lies outside the project, and refuses folders that lead there", () => {
    expect(ok(run("search", { pattern: "SECRET" }))).toMatch(/^No matches for "SECRET" in \d+ files\.\n\(5 files not searched/)
    expect(refused(run("search", { pattern: "x", path: "../outside" }))).toMatch(/is outside the repository/)
    expect(refused(run("search", { pattern: "x", path: "out-dir" }))).toMatch(/leads outside the repository/)
    expect(refused(run("search", { pattern: "x", path: ".strata" }))).toMatch(/inside \.strata\//)
    expect(refused(run("search", { pattern: "(", regex: true }))).toMatch(/^"\(" is not a valid regular expression \(RE2 syntax[^)]*\): /)
    expect(refused(run("search", { pattern: "" }))).toMatch(/^Invalid arguments for search: .*pattern/s)
  })
})

describe("list_files", () => {
  it("lists the project's files, by folder and glob, bounded", () => {
    const all = ok(run("list_files", {})).split("\n")
    expect(all).toContain("src/pricing.ts")
    expect(all.some((f) => f.startsWith(".strata") || f.startsWith(".git/"))).toBe(false)
    expect(ok(run("list_files", { path: "src" }))).toBe("src/pricing.ts\nsrc/ui/app.tsx")
    expect(ok(run("list_files", { glob: "*.tsx" }))).toBe("src/ui/app.tsx")
    expect(ok(run("list_files", { glob: "src/*.ts" }))).toBe("src/pricing.ts")
    expect(ok(run("list_files", { maxResults: 2 })).split("\n").at(-1)).toMatch(/^\(\d+ more files not shown; narrow with path or glob\)$/)
    expect(ok(run("list_files", { glob: "*.nothing" }))).toBe("No files match.")
  })

  it("refuses folders outside the project, internal ones and files", () => {
    expect(refused(run("list_files", { path: "/" }))).toMatch(/is outside the repository/)
    expect(refused(run("list_files", { path: ".git" }))).toMatch(/inside \.git\//)
    expect(refused(run("list_files", { path: "README.md" }))).toBe("\"README.md\" is a file, not a folder; read_file reads it.")
    expect(refused(run("list_files", { path: "missing" }))).toBe("There is no folder \"missing\" in the repository.")
  })
})

describe("the tool set", () => {
  it("runs a call into the tool-result that answers it", () => {
    const result = Effect.runSync(runRepoTool({ root, maxFileBytes: MAX_BYTES }, { type: "tool-call", toolCallId: "c7", toolName: "list_files", input: { glob: "src/*.ts" } }))
    expect(result).toEqual({ type: "tool-result", toolCallId: "c7", toolName: "list_files", output: { type: "text", value: "src/pricing.ts" } })
    expect(REPO_TOOLS.map((t) => t.name)).toEqual(["read_file", "search", "list_files"])
  })

  it("gives every call an id unique in the history and the reply, keeping the model's where it is", () => {
    const call = (toolCallId: string) => ({ type: "tool-call" as const, toolCallId, toolName: "search", input: { pattern: "x" } })
    const history = [
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: [call("a"), call("strata_2_2")] },
      { role: "tool" as const, content: [{ type: "tool-result" as const, toolCallId: "a", toolName: "search", output: { type: "text" as const, value: "" } }, { type: "tool-result" as const, toolCallId: "strata_2_2", toolName: "search", output: { type: "text" as const, value: "" } }] }
    ]
    expect(withUniqueIds([call("b"), call(""), call("a"), call("b")], history, 2).map((c) => c.toolCallId)).toEqual(["b", "strata_2_2_1", "strata_2_3", "strata_2_4"])
    expect(describeToolCall(call("b"), { type: "error-text", value: "no\nmore" })).toBe("tool search {\"pattern\":\"x\"} -> error: no")
    expect(describeToolCall(call("b"), { type: "text", value: "a\nb" })).toBe("tool search {\"pattern\":\"x\"} -> 2 lines")
  })

  it("globs: * and ? stay in a segment, ** spans them, classes and choices work, a bare name matches in any folder", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["src/**/*.ts", "src/a.ts", true],
      ["src/**/*.ts", "src/x/y/a.ts", true],
      ["src/**/*.ts", "lib/a.ts", false],
      ["src/*.ts", "src/x/a.ts", false],
      ["*.md", "docs/cli.md", true],
      ["a?.ts", "ab.ts", true],
      ["a?.ts", "a/.ts", false],
      ["[ab].ts", "b.ts", true],
      ["[!ab].ts", "b.ts", false],
      ["**/*.{ts,tsx}", "x/y.tsx", true],
      ["src/**", "src/x/y.ts", true],
      ["a+b(c).ts", "a+b(c).ts", true],
      ["./README.md", "README.md", true]
    ]
    for (const [glob, path, expected] of cases) expect([glob, path, globToRegExp(glob).test(path)]).toEqual([glob, path, expected])
  })
})

describe("no path outside the project is ever read (property)", () => {
  const pieces = ["..", ".", "", "src", "ui", "pricing.ts", "secret.txt", "dir", "outside", "out-link", "out-dir", "strata-link", "readme-link.md", ".strata", "state.json", ".git", "config", "pipe", "*", "**"]
  // Mostly short paths (one or two pieces), so the escapes are drawn often, some longer.
  const pathArb = fc
    .tuple(
      fc.constantFrom("", "", "", "/", "ABS_ROOT/", "ABS_BASE/", "./"),
      fc.oneof({ arbitrary: fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 2 }), weight: 3 }, { arbitrary: fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 6 }), weight: 1 }),
      fc.constantFrom("/", "/", "\\")
    )
    .map(([head, parts, sep]) => head.replace("ABS_ROOT", root).replace("ABS_BASE", base) + parts.join(sep))
  const optional = fc.option(pathArb, { nil: undefined })
  const callArb = fc.oneof(
    pathArb.map((path) => ["read_file", { path }] as const),
    fc.tuple(optional, optional).map(([path, glob]) => ["search", { pattern: "SECRET", ...(path === undefined ? {} : { path }), ...(glob === undefined ? {} : { glob }) }] as const),
    fc.tuple(optional, optional).map(([path, glob]) => ["list_files", { ...(path === undefined ? {} : { path }), ...(glob === undefined ? {} : { glob }) }] as const)
  )

  it("no output holds a byte of a file outside the project; a path lexically outside is always an error", () => {
    fc.assert(
      fc.property(callArb, ([tool, input]) => {
        const output = run(tool, input)
        expect(JSON.stringify(output)).not.toMatch(/SECRET-/)
        const path = "path" in input && typeof input.path === "string" ? input.path : undefined
        if (path !== undefined) {
          const relative = NodePath.relative(root, NodePath.resolve(root, path.replaceAll("\\", "/")))
          if (relative === ".." || relative.startsWith("../") || NodePath.isAbsolute(relative)) expect(output.type).toBe("error-text")
        }
      }),
      { numRuns: 400 }
    )
  })
})
