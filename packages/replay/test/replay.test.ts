// `strata replay`: deterministic tables, dumps that re-score to the same table, awkward
// histories, the oracle and baseline layouts, the in-memory file system and the plot.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SymbolIndexer } from "@strata/symbols"
import { makeDemoRepo } from "../../../scripts/make-demo-repo.mjs"
import { MemoryFileSystem } from "../src/internal/memfs.ts"
import { runReplay, type ReplayReport } from "../src/replay.ts"
import { formatReport, formatTable, plotSvg, STRATEGY_COLORS } from "../src/report.ts"
import { dumpLine, makeScorer, parseDump, rescoreDump, summarize, textsOf } from "../src/score.ts"
import { CHAT_STRATEGIES, reducesContent, STRATEGIES } from "../src/strategies.ts"
import { tempDir } from "@strata/test-support"

const demo = tempDir("strata-replay-demo-")
const awkward = tempDir("strata-replay-awkward-")
afterAll(() => [demo, awkward].forEach((d) => d.cleanup()))

const MODEL = "claude-sonnet-4-5"

beforeAll(() => {
  makeDemoRepo({ out: demo.path, replace: true })
  // Renames, deletions, a binary file changed and deleted, and a merge commit.
  const repo = awkward.path
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@example.com",
    GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z"
  }
  const git = (...args: Array<string>) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", env })
  const write = (path: string, content: string | Buffer) => {
    mkdirSync(join(repo, path, ".."), { recursive: true })
    writeFileSync(join(repo, path), content)
  }
  git("init", "-q", "-b", "main")
  write("src/a.ts", "export const a = 1\nexport function f(x: number): number {\n  return x\n}\n")
  write("src/b.py", "def g(y):\n    return y\n")
  git("add", "-A"); git("commit", "-qm", "initial")
  write("src/a.ts", "export const a = 2\nexport function f(x: number): number {\n  return x + a\n}\n")
  write("logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]))
  git("add", "-A"); git("commit", "-qm", "change a, add a binary")
  git("mv", "src/a.ts", "src/renamed.ts"); git("commit", "-qm", "rename a")
  write("logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 3, 4]))
  git("add", "-A"); git("commit", "-qm", "change the binary")
  git("checkout", "-qb", "side"); write("side.go", "package side\n\nfunc Side() int { return 1 }\n"); git("add", "-A"); git("commit", "-qm", "side work")
  git("checkout", "-q", "main"); write("main.txt", "main\n"); git("add", "-A"); git("commit", "-qm", "main work")
  git("merge", "-q", "--no-ff", "-m", "merge side", "side")
  git("rm", "-q", "logo.png", "src/b.py"); git("commit", "-qm", "delete the binary and the python file")
})

const replayDemo = async (lines?: Array<string>): Promise<ReplayReport> =>
  runReplay({
    repo: demo.path,
    turns: 10,
    provider: "anthropic",
    model: MODEL,
    ...(lines === undefined ? {} : { onRequest: (line: string) => void lines.push(line) })
  })

describe("replay of the example repository's first 10 commits", () => {
  let first: ReplayReport
  const lines: Array<string> = []
  beforeAll(async () => {
    first = await replayDemo(lines)
  }, 120_000)

  it("is deterministic: the same table twice", async () => {
    const second = await replayDemo()
    expect(formatTable(second.rows)).toBe(formatTable(first.rows))
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    expect(first.turns).toBe(10)
    expect(first.rows.map((r) => r.strategy)).toEqual([...CHAT_STRATEGIES])
    expect(first.rows.every((r) => r.requests === 10)).toBe(true)
  })

  it("has a sane table: none reads nothing, the oracle costs least, ratios are against none and oracle", () => {
    const row = (s: string) => first.rows.find((r) => r.strategy === s)!
    expect(row("none")).toMatchObject({ cacheRead: 0, cacheWrite: 0, hitRate: 0, vsNone: 1 })
    expect(row("none").uncached).toBe(row("none").inputTokens)
    expect(row("oracle").vsOracle).toBe(1)
    for (const r of first.rows) {
      expect(r.cacheRead + r.cacheWrite + r.uncached).toBe(r.inputTokens)
      expect(r.vsOracle).toBeCloseTo((r.vsNone ?? 0) / (row("oracle").vsNone ?? 1), 9)
      // The oracle is a lower bound: no strategy costs less.
      expect(r.vsOracle!).toBeGreaterThanOrEqual(1)
      expect(r.clearedTokens).toBe(0)
    }
    // Superseded copies: the transcript keeps every earlier copy, the journal layout keeps
    // them until a rebuild pays off; layouts rendered afresh each request carry none.
    expect(row("transcript").supersededTokens).toBeGreaterThan(row("strata-flux").supersededTokens)
    expect(row("strata-flux").supersededTokens).toBeGreaterThan(0)
    for (const s of ["none", "trailing", "segments", "strata-seed", "oracle"]) expect(row(s).supersededTokens).toBe(0)
    // Every strategy sends the same information. The transcript and Strata's journal layout
    // also keep superseded copies (the journal until a rebuild pays off, so fewer).
    const base = row("none").inputTokens
    for (const s of ["trailing", "segments", "strata-seed", "oracle"]) {
      expect(Math.abs(row(s).inputTokens - base) / base).toBeLessThan(0.05)
    }
    for (const s of ["strata-threshold", "strata-gated", "strata-flux"]) {
      expect(row(s).inputTokens).toBeGreaterThan(0.95 * base)
      expect(row(s).inputTokens).toBeLessThan(row("transcript").inputTokens)
    }
    // The journal layout is the product's claim: below every baseline, within 1.5x of the oracle.
    for (const s of ["strata-threshold", "strata-gated", "strata-flux"]) {
      for (const baseline of ["none", "trailing", "transcript", "segments", "strata-seed"]) expect(row(s).vsNone!).toBeLessThan(row(baseline).vsNone!)
      expect(row(s).vsOracle!).toBeLessThan(1.5)
    }
    // The fair column: each strategy against the content bound over its own requests.
    expect(row("oracle").vsOwnBound).toBeCloseTo(1, 12)
    expect(row("oracle").ownBound).toBeCloseTo(row("oracle").usd!, 12)
    for (const r of first.rows) {
      expect(r.vsOwnBound!, r.strategy).toBeGreaterThanOrEqual(1 - 1e-9)
      expect(r.vsOwnBound).toBeCloseTo(r.usd! / r.ownBound, 9)
    }
    // The trailing breakpoint writes every request and reads nothing back (the flat layout is not append-only).
    expect(row("trailing").vsNone).toBeGreaterThan(1)
    expect(row("oracle").vsNone).toBeLessThan(0.5)
  })

  it("re-scoring the dump with the simulators reproduces the table", async () => {
    expect(lines).toHaveLength(10 * CHAT_STRATEGIES.length)
    const parsed = parseDump(lines.join("\n"))
    expect(parsed[0]).toMatchObject({ t: 0, strategy: "none" })
    expect(parsed.at(-1)).toMatchObject({ t: 9 * 90, strategy: "oracle" })
    const { rows } = await rescoreDump(lines.join("\n") + "\n", { provider: "anthropic", model: MODEL })
    expect(rows).toEqual(first.rows)
    expect(formatTable(rows)).toBe(formatTable(first.rows))
  })

  it("dumps native Anthropic bodies, with cache_control only where a strategy places breakpoints", () => {
    const bodies = parseDump(lines.join("\n"))
    const marks = (b: unknown) => JSON.stringify(b).split('"cache_control"').length - 1
    for (const { strategy, request } of bodies) {
      expect(request).toMatchObject({ model: MODEL, messages: expect.any(Array) })
      if (strategy === "none" || strategy === "oracle") expect(marks(request)).toBe(0)
      if (strategy === "trailing" || strategy === "transcript") expect(marks(request)).toBeLessThanOrEqual(1)
      expect(marks(request)).toBeLessThanOrEqual(4)
    }
  })

  it("each turn's file tree and symbol map follow the history (files added by earlier commits are there)", () => {
    const oracle = parseDump(lines.join("\n")).filter((l) => l.strategy === "oracle")
    const shas = execFileSync("git", ["-C", demo.path, "rev-list", "--first-parent", "--reverse", "HEAD"], { encoding: "utf8" }).trim().split("\n")
    // turn 9 sees the tree of commit 9 (the tenth commit's parent)
    const tree = execFileSync("git", ["-C", demo.path, "ls-tree", "-r", "--name-only", shas[9]!], { encoding: "utf8" }).trim().split("\n")
    const texts = textsOf(oracle[9]!.request).join("\n")
    for (const path of tree) expect(texts).toContain(path)
    const typescript = tree.filter((p) => p.endsWith(".ts") && !first.perTurn[9]!.subject.includes(p))
    expect(typescript.length).toBeGreaterThan(3)
    for (const path of typescript) expect(texts).toMatch(new RegExp(`(^|\\n)${path.replace(/[.]/g, "\\.")}(:| )`, "m"))
  })

  it("the transcript is append-only: each request extends the previous one", () => {
    const transcript = parseDump(lines.join("\n")).filter((l) => l.strategy === "transcript").map((l) => textsOf(l.request))
    for (let i = 1; i < transcript.length; i++) {
      const previous = transcript[i - 1]!
      // the previous request's texts are a prefix of this one's (the prompt gained the reply after it)
      expect(transcript[i]!.slice(0, previous.length)).toEqual(previous)
    }
  })

  it("says under the table what the bound columns compare and which strategies can go under the content bound", () => {
    const note = formatTable(first.rows).split("\n").slice(first.rows.length + 1)
    expect(note[0]).toMatch(/^vs bound: cost \/ the content bound \(the oracle row/)
    const under = CHAT_STRATEGIES.filter((s) => reducesContent(s))
    expect(under).toEqual(["strata-threshold", "strata-gated", "strata-flux", "strata-seed"])
    expect(note[1]).toBe(`${under.join(", ")} can send less content (symbol diffs, cleared tool results) and so go under 1.`)
    expect(note[2]).toMatch(/^vs own bound: /)
    // Without the oracle row there is no bound to explain.
    expect(formatTable(first.rows.filter((r) => r.strategy !== "oracle"))).not.toMatch(/vs bound:/)
  })

  it("prints a heading, the settings and the table; plots every strategy", () => {
    const text = formatReport(first)
    expect(text).toContain("10 turns of")
    expect(text).toMatch(/strata-gated +10 +[\d,]+ +[\d,]+/)
    expect(text.split("\n").find((l) => l.startsWith("strategy"))).toMatch(/requests +input +read +write +uncached +hit rate +cost \(USD\) +vs none +vs bound +vs own bound +cleared +superseded +synthetic$/)
    const svg = plotSvg(first)
    expect(svg.startsWith("<svg")).toBe(true)
    expect(svg.trim().endsWith("</svg>")).toBe(true)
    // Two panels (cumulative and per turn), one line per strategy in each, one distinct colour per strategy.
    expect(svg.match(/<polyline /g)).toHaveLength(2 * CHAT_STRATEGIES.length)
    expect(svg).toContain("Cumulative input cost")
    expect(new Set(STRATEGIES.map((s) => STRATEGY_COLORS[s])).size).toBe(STRATEGIES.length)
    expect(plotSvg(first)).toBe(svg)
    for (const s of CHAT_STRATEGIES) expect(svg).toMatch(new RegExp(`>${s}  \\d+\\.\\d\\dx bound<`))
    // The legend fits: the picture is wide enough for its longest label.
    const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)![1])
    const legend = [...svg.matchAll(/<text x="(\d+)" y="\d+(?:\.\d)?" dominant-baseline="middle">([^<]*)</g)]
    expect(legend).toHaveLength(CHAT_STRATEGIES.length)
    for (const [, x, label] of legend) expect(Number(x) + label!.length * 7.2).toBeLessThanOrEqual(width)
  })
})

describe("replay of an awkward history", () => {
  it("replays renames, deletions, binary files and a merge commit without error", async () => {
    const lines: Array<string> = []
    const report = await runReplay({ repo: awkward.path, provider: "bedrock", onRequest: (l) => void lines.push(l) })
    // the side branch's commit is not on the first-parent line: 6 turns after the initial commit
    expect(report.turns).toBe(6)
    expect(report.rows.every((r) => r.requests === 6)).toBe(true)
    // The binary file is listed in the tree but never read as text.
    expect(lines.join("\n")).toContain("logo.png")
    expect(lines.join("\n")).not.toContain("\\u0000")
    const { rows } = await rescoreDump(lines.join("\n"), { provider: "bedrock", model: report.model })
    expect(rows).toEqual(report.rows)
  }, 120_000)

  it("honours --from and --turns, and runs only the requested strategies plus none and oracle", async () => {
    const head = execFileSync("git", ["-C", awkward.path, "rev-list", "--first-parent", "--reverse", "HEAD"], { encoding: "utf8" }).trim().split("\n")
    const report = await runReplay({ repo: awkward.path, from: head[2], turns: 2, strategies: ["segments"], provider: "openai", gapSeconds: 400 })
    expect(report.start).toBe(head[2])
    expect(report.perTurn.map((t) => [t.commit, t.t])).toEqual([[head[3], 0], [head[4], 400]])
    expect(report.rows.map((r) => r.strategy)).toEqual(["none", "segments", "oracle"])
  }, 120_000)
})

describe("scoring", () => {
  const body = (texts: ReadonlyArray<string>) => ({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: texts.map((text) => ({ type: "text", text })) }] })

  it("oracle: the lower bound over the oracle bodies' blocks, priced once the session is known", () => {
    const scorer = makeScorer({ provider: "anthropic", model: MODEL, countTokens: (t) => t.length })
    scorer.send("oracle", body(["aaaa", "bb", "bb"]), 0)
    scorer.send("oracle", body(["aaaa", "bb", "cc", "dddddd"]), 90)
    const [a, b] = scorer.scores()
    // "aaaa" and one "bb" are reused: written, then read; the second "bb", "cc" and "dddddd" are sent once, uncached.
    expect(a).toMatchObject({ strategy: "oracle", cacheRead: 0, cacheWrite: 6, uncached: 2, promptTokens: 8 })
    expect(b).toMatchObject({ cacheRead: 6, cacheWrite: 0, uncached: 8, promptTokens: 14 })
    // Sonnet 4.5: reads at 0.1, 5-minute writes at 1.25
    expect(a!.equivalentTokens).toBeCloseTo(6 * 1.25 + 2, 9)
    expect(b!.equivalentTokens).toBeCloseTo(6 * 0.1 + 8, 9)
  })

  it("none: every input token at the base price, whatever the body asks for", () => {
    const scorer = makeScorer({ provider: "anthropic", model: MODEL, countTokens: (t) => t.length })
    const marked = { ...body(["x".repeat(5000)]), system: [{ type: "text", text: "y".repeat(3000), cache_control: { type: "ephemeral" } }] }
    scorer.send("none", marked, 0)
    scorer.send("none", marked, 10)
    // the same body as another strategy is cached by that strategy's own simulator
    scorer.send("segments", marked, 0)
    scorer.send("segments", marked, 10, { supersededTokens: 7 })
    const [first, again, written, read] = scorer.scores()
    expect(again).toMatchObject({ cacheRead: 0, cacheWrite: 0, uncached: 8000, equivalentTokens: 8000 })
    expect(again!.usd).toBeCloseTo(first!.usd ?? 0, 12)
    expect(written!.cacheWrite).toBe(3000)
    expect(read).toMatchObject({ cacheRead: 3000, supersededTokens: 7, clearedTokens: 0 })
  })

  it("textsOf finds the text of every provider's body shape", () => {
    expect(textsOf({ system: [{ text: "s" }], messages: [{ role: "user", content: [{ text: "u" }, { cachePoint: { type: "default" } }] }] })).toEqual(["s", "u"])
    expect(textsOf({ systemInstruction: { parts: [{ text: "s" }] }, contents: [{ role: "user", parts: [{ text: "u" }] }] })).toEqual(["s", "u"])
  })

  it("summarize orders rows by strategy and relates costs to none, oracle and each strategy's own bound", () => {
    const score = (strategy: "none" | "oracle" | "segments", usd: number, supersededTokens = 0, ownBoundUsd = usd) =>
      ({ t: 0, strategy, promptTokens: 10, uncached: 10, cacheRead: 0, cacheWrite: 0, equivalentTokens: usd * 100, usd, supersededTokens, clearedTokens: 0, syntheticMessages: 0, syntheticTokens: 0, ownBoundTokens: ownBoundUsd * 100, ownBoundUsd })
    const rows = summarize([score("oracle", 1), score("segments", 2, 5, 0.5), score("none", 4), score("segments", 2, 6, 0.5)])
    expect(rows.map((r) => [r.strategy, r.requests, r.vsNone, r.vsOracle, r.supersededTokens])).toEqual([["none", 1, 1, 4, 0], ["segments", 2, 1, 4, 11], ["oracle", 1, 0.25, 1, 0]])
    expect(rows.map((r) => [r.strategy, r.ownBound, r.vsOwnBound])).toEqual([["none", 4, 1], ["segments", 1, 4], ["oracle", 1, 1]])
  })

  it("parseDump refuses malformed lines with their line number", () => {
    expect(() => parseDump(`${dumpLine(0, "none", {})}\nnot json`)).toThrow(/line 2/)
    expect(() => parseDump(`{"t":0,"strategy":"bogus","request":{}}`)).toThrow(/line 1/)
    expect(() => parseDump(`{"t":0,"strategy":"none"}`)).toThrow(/line 1/)
    expect(parseDump(dumpLine(5, "transcript", { x: 1 }, { supersededTokens: 3 }))).toEqual([{ t: 5, strategy: "transcript", request: { x: 1 }, supersededTokens: 3 }])
  })
})

describe("the in-memory file system the symbol index reads", () => {
  it("indexes a turn's files, re-parses only what changed, and lists binary files in the tree only", async () => {
    const fs = new MemoryFileSystem("/virtual/repo")
    fs.set([
      { path: "src/a.ts", blob: "1", content: "export function a(): number {\n  return 1\n}\n" },
      { path: "src/b.ts", blob: "2", content: "import { a } from \"./a\"\nexport const b = a()\n" },
      { path: "img/logo.png", blob: "3", content: undefined }
    ])
    expect(fs.readdir("/virtual/repo").map((e) => [e.name, e.isDirectory()])).toEqual([["src", true], ["img", true]])
    expect(() => fs.stat("/virtual/repo/missing.ts")).toThrow(/ENOENT/)
    expect(() => fs.writeFile("/virtual/repo/x")).toThrow(/EROFS/)
    const indexer = await SymbolIndexer.create("/virtual/repo", { fs, git: false, cache: false })
    const first = await indexer.refresh()
    expect(first.files).toEqual(["img/logo.png", "src/a.ts", "src/b.ts"])
    expect(first.symbolFiles).toEqual(["src/a.ts", "src/b.ts"])
    const mtime = fs.stat("/virtual/repo/src/b.ts").mtimeMs
    const srcTime = fs.stat("/virtual/repo/src").mtimeMs
    fs.set([
      { path: "src/a.ts", blob: "1b", content: "export function a(x: number): number {\n  return x\n}\n" },
      { path: "src/b.ts", blob: "2", content: "import { a } from \"./a\"\nexport const b = a()\n" }
    ])
    expect(fs.stat("/virtual/repo/src/b.ts").mtimeMs).toBe(mtime)
    expect(fs.stat("/virtual/repo/src").mtimeMs).toBe(srcTime) // same entries
    const second = await indexer.refresh()
    expect(second.stats.parsed).toBe(1)
    expect(second.files).toEqual(["src/a.ts", "src/b.ts"])
    expect(second.block("src/a.ts")).toContain("a(x)")
    expect(second.legend).toBe(first.legend)
    // A new file moves its directory's mtime, so the indexer lists the tree again and sees it.
    fs.set([
      { path: "src/a.ts", blob: "1b", content: "export function a(x: number): number {\n  return x\n}\n" },
      { path: "src/b.ts", blob: "2", content: "import { a } from \"./a\"\nexport const b = a()\n" },
      { path: "src/c.ts", blob: "4", content: "export class C {}\n" }
    ])
    expect(fs.stat("/virtual/repo/src").mtimeMs).toBeGreaterThan(srcTime)
    const third = await indexer.refresh()
    expect(third.symbolFiles).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"])
  })
})
