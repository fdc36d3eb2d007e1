// The heap setting `strata proxy` applies to its process (src/heap.ts). V8 reports a flag
// it does not know on stderr and carries on, so a Node that renamed or dropped one would
// leave the proxy on the defaults without a word: this fails instead.
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { PROXY_HEAP_FLAGS } from "@strata/proxy"

describe("tuneHeapForProxy", () => {
  it("sets flags this Node's V8 knows, at run time, without a warning", () => {
    expect(PROXY_HEAP_FLAGS.length).toBeGreaterThan(0)
    const script = `const v8 = require("node:v8"); for (const f of ${JSON.stringify(PROXY_HEAP_FLAGS)}) v8.setFlagsFromString(f); process.stdout.write("set")`
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.stdout).toBe("set")
    // The check itself can fail: a misspelt flag is reported.
    const bad = spawnSync(process.execPath, ["-e", `require("node:v8").setFlagsFromString("--heap-growing-percnt=100")`], { encoding: "utf8" })
    expect(bad.stderr).toMatch(/unrecognized flag/)
  })
})
