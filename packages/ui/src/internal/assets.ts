/**
 * The page's bundled files (`dist/page/`, written by `scripts/bundle.mjs` at build time),
 * read once and kept in memory. `src/` and `dist/` are siblings, so one relative URL finds
 * them from either.
 */
import { readFileSync } from "node:fs"

const PAGE_DIR = new URL("../../dist/page/", import.meta.url)
const PAGE_DIR_FROM_DIST = new URL("../page/", import.meta.url)

const cache = new Map<string, string>()

/** The bundled asset `name` (`boot.js`, `app.js`, `app.css`, `replay.js`, `replay.css`); throws with a fix when the build has not run. */
export const asset = (name: "boot.js" | "app.js" | "app.css" | "replay.js" | "replay.css"): string => {
  const hit = cache.get(name)
  if (hit !== undefined) return hit
  for (const dir of [PAGE_DIR, PAGE_DIR_FROM_DIST]) {
    try {
      const text = readFileSync(new URL(name, dir), "utf8")
      cache.set(name, text)
      return text
    } catch {
      // try the next place
    }
  }
  throw new Error(`The dashboard's page bundle (${name}) is missing: build @strata/ui first (pnpm turbo run build --filter=@strata/ui).`)
}
