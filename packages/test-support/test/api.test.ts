// The public surface of every published package, checked against the reports in `api/`:
// each entry point's exported names with their kind and type, read by the TypeScript
// compiler (the one program of ./program.ts). A change to a package's surface changes its
// report, so it is always deliberate: run `STRATA_API_UPDATE=1 npx vitest run test/api.test.ts` in
// packages/test-support and commit the report with the change.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { ENTRIES, REPO_ROOT as ROOT, typechecked } from "./program.ts"

const API_DIR = NodePath.join(ROOT, "api")
const UPDATE = process.env["STRATA_API_UPDATE"] === "1"

describe("public API reports", () => {
  it.each(ENTRIES.map((e) => [e.specifier, e] as const))("%s matches api/<entry>.api.md", (_, entry) => {
    const path = NodePath.join(API_DIR, `${entry.report}.api.md`)
    const report = typechecked().reports.get(entry)!
    if (UPDATE) {
      mkdirSync(API_DIR, { recursive: true })
      writeFileSync(path, report)
    }
    expect(existsSync(path), `${path} is missing: run STRATA_API_UPDATE=1 npx vitest run test/api.test.ts`).toBe(true)
    expect(report, `the public surface of ${entry.specifier} changed: if deliberate, rerun with STRATA_API_UPDATE=1 and commit api/`).toBe(readFileSync(path, "utf8"))
  }, 120_000)
})
