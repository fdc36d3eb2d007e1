// Every code sample in docs/ (and the root README) is run or checked here; see the fence
// markers in docs/index.md ("Writing docs"). The ```ts samples are typechecked in one
// program with the JSDoc examples (packages/test-support/test/examples.test.ts).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { classifyFence, docPages, extractSamples, writeSandbox, type Sample } from "@strata/test-support/samples"
import { afterAll, describe, expect, it } from "vitest"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { parseConfigFile } from "../src/support/config.ts"
import { strataInvocations } from "./docs-samples.ts"
import { REPO_ROOT, runBin } from "./support.ts"

describe("sample extraction", () => {
  it("classifies fences by their info string", () => {
    expect(classifyFence("ts")).toBe("ts")
    expect(classifyFence("typescript run")).toBe("ts-run")
    expect(classifyFence("ts fragment")).toBe("ts-fragment")
    expect(classifyFence("ts no-run")).toBe("ts-no-run")
    expect(classifyFence("sh")).toBe("sh")
    expect(classifyFence("bash run")).toBe("sh-run")
    expect(classifyFence("sh skip")).toBeUndefined()
    expect(classifyFence("json config")).toBe("json-config")
    expect(classifyFence("text")).toBeUndefined()
    expect(classifyFence("")).toBeUndefined()
  })

  it("extracts fenced blocks with their line numbers, keeping nested shorter fences inside", () => {
    const md = ["# T", "", "```ts run", "const a = 1", "```", "", "````md", "```ts", "inner", "```", "````", "~~~sh", "strata map", "~~~"].join("\n")
    const samples = extractSamples("x.md", md)
    expect(samples.map((s) => [s.line, s.kind, s.code])).toEqual([
      [3, "ts-run", "const a = 1\n"],
      [12, "sh", "strata map\n"]
    ])
  })

  it("finds strata invocations in shell samples", () => {
    const code = "$ pnpm strata map --budget 2000   # cap it\nNO_COLOR=1 strata hud --repo x\necho hi\nnpx --yes pnpm@10.34.9 strata tree \\\n  --json\nstrata init --bogus   # exit 2\nstrata init --yes && pnpm strata map\n"
    expect(strataInvocations(code).map((i) => [i.args, i.env, i.exit])).toEqual([
      [["map", "--budget", "2000"], {}, 0],
      [["hud", "--repo", "x"], { NO_COLOR: "1" }, 0],
      [["tree", "--json"], {}, 0],
      [["init", "--bogus"], {}, 2],
      [["init", "--yes"], {}, 0],
      [["map"], {}, 0]
    ])
  })
})

const pages = docPages(REPO_ROOT)
const samples = pages.flatMap((p) => extractSamples(p.file, p.text))
const where = (s: Sample) => `${s.file}:${s.line}`
const byKind = (...kinds: ReadonlyArray<Sample["kind"]>) => samples.filter((s) => kinds.includes(s.kind))

// Samples are written to a temp dir whose node_modules links to the workspace packages,
// so `import ... from "@strata/core"` resolves to source through the @strata/source condition.
const CLI_DIR = resolve(REPO_ROOT, "packages", "cli")
const sandbox = writeSandbox({ repoRoot: REPO_ROOT, samples: byKind("ts-run"), resolveFrom: () => CLI_DIR })
afterAll(() => sandbox.dispose())

describe("docs samples", () => {
  it("there are samples to check (the harness is wired to the real pages)", () => {
    expect(pages.length).toBeGreaterThan(1)
    expect(samples.length).toBeGreaterThan(0)
  })

  for (const s of byKind("ts-run")) {
    it(`runs ${where(s)}`, async () => {
      await import(pathToFileURL(sandbox.fileOf.get(s)!).href)
    })
  }

  for (const s of byKind("json", "json-config")) {
    it(`${where(s)} is valid ${s.kind === "json-config" ? ".strata/config.json" : "JSON"}`, () => {
      if (s.kind === "json-config") expect(() => parseConfigFile(s.code, where(s))).not.toThrow()
      else expect(() => JSON.parse(s.code) as unknown).not.toThrow()
    })
  }
})

// --- Shell samples -----------------------------------------------------------------------

/** Known flags per command, read from the real binary's --help. */
const knownFlags = new Map<string, Set<string>>()
const flagsOf = async (command: string): Promise<Set<string>> => {
  const cached = knownFlags.get(command)
  if (cached) return cached
  const r = await runBin(command === "" ? ["--help"] : [command, "--help"])
  const flags = new Set([...r.stdout.matchAll(/(?:^|\s|,\s)(--?[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!))
  knownFlags.set(command, flags)
  return flags
}

describe("docs shell samples", () => {
  const invocations = byKind("sh", "sh-run").flatMap((s) => strataInvocations(s.code).map((inv) => ({ s, inv })))

  it("every `strata` line names a real command and real flags", async () => {
    const commands = await (async () => {
      const r = await runBin(["--help"])
      const section = r.stdout.split("SUBCOMMANDS")[1]?.split(/\n\s*\n|EXAMPLES/)[0] ?? ""
      return new Set([...section.matchAll(/^\s+([a-z][a-z-]*)/gm)].map((m) => m[1]!))
    })()
    const problems: Array<string> = []
    for (const { s, inv } of invocations) {
      if (inv.exit !== 0) continue
      const [command = "", ...rest] = inv.args
      const isFlag = command.startsWith("-")
      if (!isFlag && !commands.has(command)) {
        problems.push(`${where(s)}: unknown command "${command}" in: ${inv.text}`)
        continue
      }
      const flags = await flagsOf(isFlag ? "" : command)
      for (const arg of isFlag ? inv.args : rest) {
        if (arg === "--") break
        if (!arg.startsWith("-") || /^-\d/.test(arg)) continue
        const name = arg.split("=")[0]!
        if (!flags.has(name)) problems.push(`${where(s)}: "${command}" has no flag ${name} in: ${inv.text}`)
      }
    }
    expect(problems).toEqual([])
  }, 180_000)

  // Pages run their ```sh run samples in order in a workspace whose examples/demo-repo is a
  // fresh demo repository, as `pnpm strata ... --repo examples/demo-repo` expects.
  const runnable = pages.filter((p) => extractSamples(p.file, p.text).some((s) => s.kind === "sh-run"))
  for (const page of runnable) {
    it(`runs the \`sh run\` samples of ${page.file}`, async () => {
      const workspace = mkdtempSync(join(tmpdir(), "strata-docs-ws-"))
      try {
        makeDemoRepo({ out: join(workspace, "examples", "demo-repo") })
        for (const s of extractSamples(page.file, page.text).filter((x) => x.kind === "sh-run")) {
          for (const inv of strataInvocations(s.code)) {
            const r = await runBin(inv.args, { cwd: workspace, env: { ...inv.env } })
            expect(r.code, `${where(s)}: ${inv.text}\n${r.stderr}`).toBe(inv.exit)
          }
        }
      } finally {
        rmSync(workspace, { recursive: true, force: true })
      }
    }, 300_000)
  }
})

describe("docs fences", () => {
  it("every fence names a language the harness knows, so no sample escapes it", () => {
    const known = /^(ts|typescript|tsx|sh|bash|shell|console|json|text|txt)(\s|$)/
    const unknown: Array<string> = []
    for (const page of pages) {
      const lines = page.text.split("\n")
      let open: string | undefined
      lines.forEach((line, i) => {
        const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line)
        if (m === null) return
        if (open === undefined) {
          open = m[1]!
          if (!known.test(m[2]!.trim())) unknown.push(`${page.file}:${i + 1}: \`${line.trim()}\``)
        } else if (m[1]!.startsWith(open) && m[2]!.trim() === "") open = undefined
      })
    }
    expect(unknown, "label the fence: ts (typechecked), sh, json or text (see docs/index.md)").toEqual([])
  })
})

describe("docs links", () => {
  it("every relative link in the docs points at a file that exists", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      const withoutCode = page.text.replace(/^(```|~~~)[\s\S]*?^\1/gm, "")
      for (const m of withoutCode.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/i.test(target)) continue
        const path = resolve(REPO_ROOT, dirname(page.file), target)
        if (!existsSync(path)) broken.push(`${page.file}: ${target} (${relative(REPO_ROOT, path)})`)
      }
    }
    expect(broken).toEqual([])
  })

  it("docs/benchmarks.md has a section for every benchmark under bench/", () => {
    const page = readFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8")
    const benches = readdirSync(join(REPO_ROOT, "bench"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== "out" && existsSync(join(REPO_ROOT, "bench", e.name, "run.mjs")))
      .map((e) => e.name)
    const missing = benches.filter((b) => !new RegExp(`^## ${b}$`, "m").test(page) || !page.includes(`bench/${b}/run.mjs`))
    expect(missing, "collect their figures and rerun command from bench/README.md into docs/benchmarks.md").toEqual([])
  })

  it("the README opens with exactly the two commands", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8")
    const firstBlock = readme.split("```sh\n")[1]?.split("```")[0] ?? ""
    const commands = firstBlock.split("\n").filter((l) => l.trim() !== "").map((l) => l.replace(/\s+#.*$/, "").trim())
    expect(commands).toEqual([
      "npx --yes pnpm@10.34.9 install && npx --yes pnpm@10.34.9 demo",
      "npx --yes pnpm@10.34.9 install --frozen-lockfile && npx --yes pnpm@10.34.9 test"
    ])
  })
})

