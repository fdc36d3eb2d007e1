// bench/proxy/transcripts.mjs: bench/replay's recorded sessions (an agent's tasks seconds
// apart, the same with 10-minute idle gaps, superseded tool output, parallel reads past the
// lookback window) priced as the agent sent them and as `strata proxy --mode cache` would
// forward them: the same transform, the same session state, the provider's simulator.
//
//   npx --yes pnpm@10.34.9 turbo run build --filter=@strata/cli... && node bench/proxy/transcripts.mjs
//   TASKS=24 node bench/proxy/transcripts.mjs
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AGENT_TOOLS, runAgentReplay } from "../../packages/cli/dist/index.js"
import { priceTranscript } from "../../packages/proxy/dist/index.js"
import { makeDemoRepo } from "../../scripts/make-demo-repo.mjs"
import { recordedSessions } from "../replay/sessions.mjs"

const TASKS = Number(process.env.TASKS ?? 12)
const work = mkdtempSync(join(tmpdir(), "strata-bench-proxy-transcripts-"))
try {
  const demo = makeDemoRepo({ out: join(work, "demo"), replace: true }).out
  const sessions = await recordedSessions({ runAgentReplay, AGENT_TOOLS }, { demo, tasks: TASKS })
  console.log(`bench/proxy/transcripts: bench/replay's recorded sessions (${TASKS} tasks), input cost in base-input tokens, proxy (cache mode) vs as sent`)
  const ratios = []
  for (const s of sessions) {
    const lines = s.text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)).map((j) => { if ("request" in j) return j; const { t, ...request } = j; return { t, request } })
    const p = priceTranscript(lines.map((l) => ({ t: l.t ?? 0, request: l.request })), { mode: "cache" })
    ratios.push(p.ratio)
    console.log(`  ${s.name.padEnd(44)} ${String(p.requests).padStart(4)} requests  as sent ${Math.round(p.asSent).toLocaleString("en-US").padStart(12)}  proxy ${Math.round(p.forwarded).toLocaleString("en-US").padStart(12)}  ${p.ratio.toFixed(4)}x  (${p.changed} changed)`)
  }
  console.log(`  mean ${(ratios.reduce((a, b) => a + b, 0) / ratios.length).toFixed(4)}x, worst ${Math.max(...ratios).toFixed(4)}x`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
