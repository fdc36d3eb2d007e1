// The dashboard and the replay report in a real browser (headless chromium): over sessions
// recorded through core's Promise API into the file store, the page shows the endpoints'
// numbers, follows a commit without a reload, shows hostile content as text, reaches every
// session by keyboard, has no console errors and no serious axe violations. Screenshots of
// each view go to test-output/screenshots/.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { tempDirs } from "@strata/test-support"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { renderReplayHtml, serveDashboard, type DashboardServer, type DashboardSessionSummary as SessionSummary, type SessionView } from "../src/index.ts"
import { launch, pwned, SCREENSHOTS, seriousViolations, watchedPage } from "./browser.ts"
import { copyAsProxySession, makeRepo, openStore, recordSession, XSS_IMG, XSS_SCRIPT } from "./sessions.ts"

const dirs = tempDirs("strata-ui-page-")
let root = ""
let server: DashboardServer
let browser: Browser
let context: BrowserContext

const api = async <A>(path: string): Promise<A> => (await fetch(new URL(`/_strata/api/${path}`, server.url))).json() as Promise<A>

/** The number cells of a table row, as `data-value` strings. */
const values = (page: Page, selector: string): Promise<ReadonlyArray<string>> =>
  page.locator(`${selector} [data-value]`).evaluateAll((cells) => cells.map((c) => c.getAttribute("data-value") ?? ""))

const num = (v: number | null): string => (v === null ? "" : String(v))

beforeAll(async () => {
  root = dirs()
  makeRepo(root)
  await recordSession(root, "chat", { turns: 8, gaps: (i) => (i === 4 ? 400 : 30) })
  await recordSession(root, "agent", { turns: 12, agent: true })
  await recordSession(root, "review", { turns: 3 })
  const stores = await openStore(root)
  await copyAsProxySession(stores.store, "chat", "agent-proxy")
  await copyAsProxySession(stores.store, "chat", "long", 90)
  server = await serveDashboard({ ...stores, port: 0, pollMs: 50 })
  ;({ browser, context } = await launch())
})

afterAll(async () => {
  await context?.close()
  await browser?.close()
  await server?.close()
})

describe("the dashboard in chromium", () => {
  it("lists the sessions with the endpoint's numbers, reachable by keyboard, accessible", async () => {
    const { page, errors } = await watchedPage(context)
    await page.goto(server.url)
    await page.locator("#sessions tbody tr").first().waitFor()
    const { sessions } = await api<{ sessions: ReadonlyArray<SessionSummary> }>("sessions")
    expect(await page.locator("#sessions tbody tr").count()).toBe(sessions.length)
    for (const s of sessions) {
      expect(await values(page, `tr[data-session="${s.id}"]`)).toEqual([num(s.requests), num(s.cost), num(s.uncachedCost), num(s.saved), num(s.hitRate)])
    }
    // Tab from the top reaches every session's link.
    const reached = new Set<string>()
    for (let i = 0; i < 20 && reached.size < sessions.length; i++) {
      await page.keyboard.press("Tab")
      const href = await page.evaluate("document.activeElement && document.activeElement.getAttribute('href')")
      if (typeof href === "string" && href.startsWith("#/s/")) reached.add(decodeURIComponent(href.slice(4)))
    }
    expect([...reached].sort()).toEqual(sessions.map((s) => s.id).sort())
    // Enter on a focused link opens the session.
    await page.keyboard.press("Enter")
    await page.locator("#requests").waitFor()
    await page.goBack()
    await page.locator("#sessions").waitFor()
    await page.screenshot({ path: join(SCREENSHOTS, "sessions.png"), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  it("shows a session: figures and per-request rows equal the endpoint, misses and the ledger as text", async () => {
    const { page, errors } = await watchedPage(context)
    const { sessions } = await api<{ sessions: ReadonlyArray<SessionSummary> }>("sessions")
    for (const name of ["chat", "agent", "agent-proxy"]) {
      const id = sessions.find((s) => s.name === name)!.id
      await page.goto(`${server.url}#/s/${encodeURIComponent(id)}`)
      await page.locator("#requests tbody tr").first().waitFor()
      const view = await api<SessionView>(`sessions/${encodeURIComponent(id)}`)
      const s = view.summary
      const asSent = s.asSentCost === null ? [] : [num(s.asSentCost)]
      expect(await values(page, "#session-facts")).toEqual([num(s.requests), num(s.cost), num(s.uncachedCost), num(s.saved), num(s.hitRate), ...asSent])
      expect(asSent.length).toBe(name === "agent-proxy" ? 1 : 0)
      expect(await page.locator("#requests tbody tr").count()).toBe(view.requests.length)
      for (const r of view.requests) {
        expect(await values(page, `tr[data-request="${r.index}"]`)).toEqual([r.tokens.read, r.tokens.write5m, r.tokens.write1h, r.tokens.uncached, r.tokens.output, r.cost, r.uncachedCost].map((v) => num(v)))
      }
      expect(await page.locator("canvas").count()).toBe(3)
      if (name === "chat") {
        // The miss explanation carries an <img onerror>: it shows as text.
        await expect.poll(() => page.locator(".misses").innerText()).toContain(XSS_IMG)
      } else if (name === "agent") {
        expect(await page.locator("#ledger tbody tr").count()).toBe(view.ledger.length)
        expect(view.ledger.length).toBeGreaterThan(0)
      }
      expect(await pwned(page)).toBeUndefined()
      expect(await page.locator("img").count()).toBe(0)
      await page.screenshot({ path: join(SCREENSHOTS, `session-${name}.png`), fullPage: true })
      expect(await seriousViolations(page)).toEqual([])
    }
    expect(errors).toEqual([])
  })

  it("shows a request's blocks in order with the rendered body escaped", async () => {
    const { page, errors } = await watchedPage(context)
    const { sessions } = await api<{ sessions: ReadonlyArray<SessionSummary> }>("sessions")
    const agent = sessions.find((s) => s.name === "agent")!
    const last = agent.requests - 1
    await page.goto(`${server.url}#/s/${encodeURIComponent(agent.id)}/r/${last}`)
    await page.locator("#blocks li").first().waitFor()
    const detail = await api<{ blocks: ReadonlyArray<{ tier: string; tokens: number; text: string | null }> }>(`sessions/${encodeURIComponent(agent.id)}/requests/${last}`)
    expect(await page.locator("#blocks li").count()).toBe(detail.blocks.length)
    expect(await page.locator("#blocks .block").allInnerTexts()).toEqual(detail.blocks.map((b) => b.tier))
    // Open every block: its text is the endpoint's, the tool result's <script> as characters.
    for (const d of await page.locator("#blocks details").all()) await d.evaluate((el) => el.setAttribute("open", ""))
    const bodies = await page.locator("#blocks pre.body").allTextContents()
    expect(bodies).toEqual(detail.blocks.flatMap((b) => (b.text === null ? [] : [b.text])))
    expect(bodies.join("\n")).toContain(XSS_SCRIPT)
    expect(await pwned(page)).toBeUndefined()
    expect(await page.locator("#blocks script, #blocks img").count()).toBe(0)
    await page.screenshot({ path: join(SCREENSHOTS, "request.png"), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
  })

  it("renders only the rows in view of a long session and reads earlier ones as they scroll in", async () => {
    const { page, errors } = await watchedPage(context)
    const { sessions } = await api<{ sessions: ReadonlyArray<SessionSummary> }>("sessions")
    const long = sessions.find((s) => s.name === "long")!
    await page.goto(`${server.url}#/s/${encodeURIComponent(long.id)}`)
    // It starts at the latest request; the first is not in the DOM, nor most of the others.
    await page.locator('#requests tr[data-request="89"]').waitFor()
    expect(await page.locator('#requests tr[data-request="0"]').count()).toBe(0)
    expect(await page.locator("#requests tbody tr").count()).toBeLessThan(50)
    const view = await api<SessionView>(`sessions/${encodeURIComponent(long.id)}`)
    expect(view.total).toBe(90)
    expect(view.requests.at(-1)!.index).toBe(89)
    expect(view.requests[0]!.index).toBeGreaterThan(0)
    // Scrolled to the top (the region is a reversed column: its scrollTop is negative upwards), the first rows are read and shown.
    await page.locator("#requests").evaluate((table) => table.closest(".scroll")?.scrollTo({ top: -1e6 }))
    await page.locator('#requests tr[data-request="0"]').waitFor()
    const first = await api<{ requests: ReadonlyArray<SessionView["requests"][number]> }>(`sessions/${encodeURIComponent(long.id)}/requests?from=0&limit=1`)
    const r = first.requests[0]!
    expect(await values(page, 'tr[data-request="0"]')).toEqual([r.tokens.read, r.tokens.write5m, r.tokens.write1h, r.tokens.uncached, r.tokens.output, r.cost, r.uncachedCost].map((v) => num(v)))
    expect(await page.locator('#requests tr[data-request="89"]').count()).toBe(0)
    expect(errors).toEqual([])
  })

  it("shows a request committed during the test without a reload", async () => {
    const { page, errors } = await watchedPage(context)
    const { sessions } = await api<{ sessions: ReadonlyArray<SessionSummary> }>("sessions")
    const review = sessions.find((s) => s.name === "review")!
    await page.goto(`${server.url}#/s/${encodeURIComponent(review.id)}`)
    await page.locator(".live.on").waitFor()
    await page.locator(`#requests tr[data-request="${review.requests - 1}"]`).waitFor()
    await page.evaluate("window.__sameDocument = true")
    await recordSession(root, "review", { turns: 1, start: 1_767_400_000 })
    await page.locator(`#requests tr[data-request="${review.requests}"]`).waitFor({ timeout: 10_000 })
    expect(await page.evaluate("window.__sameDocument")).toBe(true)
    const view = await api<SessionView>(`sessions/${encodeURIComponent(review.id)}`)
    expect(await values(page, "#session-facts")).toEqual([num(view.summary.requests), num(view.summary.cost), num(view.summary.uncachedCost), num(view.summary.saved), num(view.summary.hitRate)])
    expect(errors).toEqual([])
  })
})

describe("the replay report page in chromium", () => {
  it("opens offline with the report's figures, log scale, per-strategy panels, the price table, content as text", async () => {
    const report = JSON.parse(readFileSync(new URL("./fixtures/replay-agent.json", import.meta.url), "utf8")) as { repo: string; rows: ReadonlyArray<{ strategy: string; usd: number; cacheRead: number; cacheWrite: number; uncached: number; hitRate: number }> }
    const html = renderReplayHtml({ ...report, repo: `repo ${XSS_SCRIPT} ${XSS_IMG}` }, { title: `Replay ${XSS_IMG}` })
    const file = join(dirs(), "replay.html")
    writeFileSync(file, html)
    const offline = await browser.newContext({ offline: true, viewport: { width: 1280, height: 900 } })
    try {
      const { page, errors } = await watchedPage(offline)
      await page.goto(`file://${file}`)
      await page.locator("#totals tbody tr").first().waitFor()
      for (const r of report.rows) {
        expect(await values(page, `tr[data-strategy="${r.strategy}"]`)).toEqual([r.usd, r.hitRate, r.cacheRead, r.cacheWrite, r.uncached].map(String))
      }
      // Cumulative, relative to the cheapest, split by billing, and one panel per strategy.
      expect(await page.locator("canvas").count()).toBe(3 + report.rows.length)
      expect(await page.locator("#prices tbody tr").count()).toBeGreaterThan(0)
      expect(await page.locator("main > p").first().innerText()).toContain(XSS_SCRIPT)
      expect(await page.title()).toBe(`Replay ${XSS_IMG}`)
      expect(await pwned(page)).toBeUndefined()
      expect(await page.locator("main img").count()).toBe(0)
      await page.locator("input[type=checkbox]").press("Space")
      expect(await page.locator("input[type=checkbox]").isChecked()).toBe(false)
      await page.screenshot({ path: join(SCREENSHOTS, "replay.png"), fullPage: true })
      expect(await seriousViolations(page)).toEqual([])
      expect(errors).toEqual([])
    } finally {
      await offline.close()
    }
  })
})
