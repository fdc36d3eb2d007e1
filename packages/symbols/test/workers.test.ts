// Extraction in worker threads gives what extraction in this thread gives. The workers run
// the built script (dist/internal/worker.js: Node 20 runs no TypeScript in a worker), so
// this test imports the built pool; the root compile builds it before the tests, and a
// lone `vitest run` builds it here when it is missing or older than the sources.
import { fileURLToPath, pathToFileURL } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { buildIfStale } from "@strata/test-support/build"
import type { ExtractJob } from "../src/internal/pool.ts"
import type { Language } from "../src/syntax/model.ts"

const PKG = fileURLToPath(new URL("..", import.meta.url))

type Pool = typeof import("../src/internal/pool.ts")
type Parser = typeof import("../src/syntax/parser.ts")

let pool: Pool
let parser: Parser
beforeAll(async () => {
  buildIfStale(PKG, "internal/worker.js")
  // The built modules have the sources' types (dist/ is emitted from them).
  pool = (await import(pathToFileURL(`${PKG}dist/internal/pool.js`).href)) as Pool
  parser = (await import(pathToFileURL(`${PKG}dist/syntax/parser.js`).href)) as Parser
}, 180_000)

/** Enough files of several languages to take the worker path. */
const jobs = (count: number): ReadonlyArray<ExtractJob> =>
  Array.from({ length: count }, (_, i) => {
    const kinds: ReadonlyArray<readonly [Language, string, string]> = [
      ["typescript", "ts", `import { f${i + 1} } from "./m${i + 1}"\nexport class C${i} { m(x: number): string { return String(f${i + 1}(x)) } }\nexport const k${i} = ${i}\n`],
      ["python", "py", `from m${i + 1} import f${i + 1}\n\nclass C${i}:\n    def m(self, x: int) -> str:\n        return str(f${i + 1}(x))\n`],
      ["go", "go", `package p\n\nfunc F${i}(x int) int { return x + ${i} }\n\ntype T${i} struct{ A int }\n`]
    ]
    const [language, ext, source] = kinds[i % kinds.length]!
    return { path: `src/m${i}.${ext}`, language, source }
  })

describe("extraction in worker threads", () => {
  it("gives, job for job, what this thread gives, and reports every job as the workers finish it", async () => {
    const batch = jobs(pool.WORKER_THRESHOLD + 72)
    const parsers = await parser.Parsers.load()
    const inThread = await pool.extractAll(parsers, batch, 0)
    let reported = 0
    const inWorkers = await pool.extractAll(parsers, batch, 2, (done) => (reported = Math.max(reported, done)))
    expect(inWorkers).toEqual(inThread)
    // Only replies from workers are reported on this path (a job a dead worker left is
    // extracted here without a report), so every job reported means the workers did them all.
    expect(reported).toBe(batch.length)
    expect(inThread.length).toBe(batch.length)
  }, 120_000)
})
