// The docs call the oracle row what it is: a bound on the cost of the session's content as
// the oracle sends it, which strategies that send less content can go under, with the
// `vs own bound` column as the fair comparison (issue 29, item 3).
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { STRATEGY_TABLE } from "../src/strategies.ts"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))
const read = (path: string) => readFileSync(ROOT + path, "utf8")
const PAGES = ["README.md", "docs/replay.md", "docs/benchmarks.md", "docs/cli.md", "docs/concepts.md", "docs/tiers.md", "packages/replay/README.md"]

describe("the content bound in the docs", () => {
  it("no page calls it a lower bound no strategy can beat", () => {
    for (const page of PAGES) {
      const text = read(page)
      expect(text, page).not.toMatch(/lower bound/i)
      expect(text, page).not.toMatch(/no strategy can (beat|cost less)/i)
      expect(text, page).not.toMatch(/oracle bound/i)
    }
  })

  it("docs/replay.md defines the content bound, names the strategies that can go under it and why, and the fair column", () => {
    const text = read("docs/replay.md")
    const start = text.indexOf("### The content bound")
    const end = text.indexOf("## Agent sessions")
    expect(start).toBeGreaterThan(0)
    const section = text.slice(start, end)
    const under = STRATEGY_TABLE.filter((e) => e.reducesContent).map((e) => e.name)
    expect(under.length).toBeGreaterThan(0)
    for (const name of under) {
      // Named one by one, or as the `strata-*` family.
      expect(section.includes(`\`${name}\``) || (name.startsWith("strata-") && section.includes("`strata-*`")), name).toBe(true)
    }
    expect(section).toMatch(/symbol block as a diff/)
    expect(section).toMatch(/clears? old tool output/)
    expect(section).toMatch(/### The fair column: vs own bound/)
    expect(text).toMatch(/\| vs own bound \| cost relative to the content bound over the strategy's own requests/)
  })

  it("docs/benchmarks.md and the README say content bound and point at the fair column", () => {
    expect(read("docs/benchmarks.md")).toMatch(/is the content bound/)
    expect(read("docs/benchmarks.md")).toMatch(/`vs own bound`/)
    expect(read("README.md")).toMatch(/content bound/)
  })
})
