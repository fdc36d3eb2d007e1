// A real browser for the page tests: Debian's chromium driven headless by playwright-core.
// Missing chromium fails the tests with the install line; it never skips them.
import { existsSync, mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { AxeBuilder } from "@axe-core/playwright"
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core"

export const CHROMIUM = process.env["STRATA_CHROMIUM"] ?? "/usr/bin/chromium"

/** Where screenshots go, for people to look at: `packages/ui/test-output/screenshots/`. */
export const SCREENSHOTS = fileURLToPath(new URL("../test-output/screenshots/", import.meta.url))

/** Launch headless chromium with a fresh profile and no network beyond what the page asks. */
export const launch = async (): Promise<{ readonly browser: Browser; readonly context: BrowserContext }> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: the dashboard's browser tests need it. Install it with: apt-get update && apt-get install -y chromium (or set STRATA_CHROMIUM to a Chromium binary).`)
  }
  mkdirSync(SCREENSHOTS, { recursive: true })
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
      // No --user-data-dir: playwright's launch passes a fresh temporary profile itself.
    ]
  })
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  return { browser, context }
}

/** A page that records console errors and uncaught exceptions. */
export const watchedPage = async (context: BrowserContext): Promise<{ readonly page: Page; readonly errors: Array<string> }> => {
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  page.on("pageerror", (e) => errors.push(e.message))
  return { page, errors }
}

/** Serious and critical accessibility violations axe finds on the page. */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  const result = await new AxeBuilder({ page }).analyze()
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact ?? "?"}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
}

/** Script the page could have run from content: the XSS payloads set `window.__pwned`. */
export const pwned = (page: Page): Promise<unknown> => page.evaluate("window.__pwned")
