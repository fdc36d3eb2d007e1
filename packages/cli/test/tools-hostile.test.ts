// The chat tools against hostile input: a catastrophic regular expression cannot hang the
// process (RE2, linear time, plus a time bound), and gitignored and secret files are
// refused with a reason unless the user opts in.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { tempDirs } from "@strata/test-support"
import { isSecretFile, toolOutput } from "../src/tools/index.ts"

const made = tempDirs("strata-tools-hostile-")
let root = ""
const run = (tool: string, input: unknown, allowIgnored = false) => toolOutput({ root, maxFileBytes: 1_000_000, allowIgnored }, tool, input)

beforeAll(() => {
  root = made()
  mkdirSync(NodePath.join(root, "src"))
  mkdirSync(NodePath.join(root, "keys"))
  // Lines of a's a backtracking engine needs exponential time for against ^(a+)+$.
  writeFileSync(NodePath.join(root, "src", "aaa.txt"), Array.from({ length: 50 }, () => "a".repeat(1900) + "!").join("\n"))
  writeFileSync(NodePath.join(root, "src", "app.ts"), "export const token = process.env.TOKEN\n")
  writeFileSync(NodePath.join(root, ".env"), "API_KEY=SECRET-DOTENV\n")
  writeFileSync(NodePath.join(root, ".env.local"), "API_KEY=SECRET-DOTENV-LOCAL\n")
  writeFileSync(NodePath.join(root, "keys", "server.pem"), "SECRET-PEM\n")
  writeFileSync(NodePath.join(root, "keys", "id_ed25519"), "SECRET-SSH\n")
  writeFileSync(NodePath.join(root, ".npmrc"), "//registry/:_authToken=SECRET-NPM\n")
  writeFileSync(NodePath.join(root, "build.log"), "SECRET-IGNORED-LOG\n")
  writeFileSync(NodePath.join(root, ".gitignore"), "*.log\n")
  execFileSync("git", ["init", "-q"], { cwd: root })
})

describe("search: a catastrophic regular expression", () => {
  it("^(a+)+$ over lines of a's answers within a second", () => {
    const started = performance.now()
    const out = run("search", { pattern: "^(a+)+$", regex: true })
    expect(performance.now() - started).toBeLessThan(1000)
    expect(out).toEqual({ type: "text", value: expect.stringMatching(/^No matches/) })
    // And a match is still found where there is one.
    expect(run("search", { pattern: "^(a+)+!$", regex: true }).value).toMatch(/src\/aaa\.txt:1:/)
  })

  it("a look-around (not RE2) is refused with a reason, not run", () => {
    expect(run("search", { pattern: "(?=a)a", regex: true })).toEqual({ type: "error-text", value: expect.stringMatching(/RE2 syntax/) })
  })

  it("a search past its time bound stops with what it found and says so", () => {
    const out = toolOutput({ root, maxFileBytes: 1_000_000, searchMs: 0 }, "search", { pattern: "a" })
    expect(out.value).toMatch(/search stopped after 0 ms/)
  })
})

describe("ignored and secret files", () => {
  const secrets = [".env", ".env.local", "keys/server.pem", "keys/id_ed25519", ".npmrc"]

  it("read_file refuses each secret file and each ignored file, saying why", () => {
    for (const path of secrets) {
      const out = run("read_file", { path })
      expect(out.type, path).toBe("error-text")
      expect(out.value, path).toMatch(/holds secrets.*--allow-ignored/)
    }
    const ignored = run("read_file", { path: "build.log" })
    expect(ignored).toEqual({ type: "error-text", value: expect.stringMatching(/excluded by the repository's \.gitignore.*--allow-ignored/) })
  })

  it("search and list_files never show them", () => {
    const all = [run("search", { pattern: "SECRET" }), run("list_files", {})].map((o) => String(o.value)).join("\n")
    expect(all).not.toMatch(/SECRET-|\.env|server\.pem|id_ed25519|\.npmrc|build\.log/)
    expect(all).toMatch(/src\/app\.ts/)
  })

  it("with allowIgnored they are read", () => {
    expect(run("read_file", { path: ".env" }, true).value).toMatch(/SECRET-DOTENV/)
    expect(run("read_file", { path: "build.log" }, true).value).toMatch(/SECRET-IGNORED-LOG/)
  })

  it("names: secret kinds only", () => {
    for (const name of [".env", ".env.production", "a/b/.envrc", "x.pem", "tls.KEY", "id_rsa", "id_rsa.pub", ".npmrc", ".netrc"]) expect(isSecretFile(name), name).toBe(true)
    for (const name of ["environment.ts", "src/id_generator.ts", "keys.ts", "monkey.ts", "README.md"]) expect(isSecretFile(name), name).toBe(false)
  })
})
