// Assembly latency: a generated repository of 5,000 TypeScript files indexed by the real
// @strata/symbols indexer, tiers from the real @strata/tiers tracker, and a 40-turn
// history. One cold first request, then warm requests with one file changed per turn.
// Reports the median warm assembly time and, in the same run, the time to
// JSON.stringify the assembled request body (the floor), as a ratio. Then an agent
// session on the same repository: 200 steps, each a tool call and a result of 200 to
// 5,000 tokens appended to the history (context editing clears old results), timed the
// same way, with the context-editing stage's own time.
//
// Run: npx --yes pnpm@10.34.9 --filter @strata/core --filter @strata/tiers --filter @strata/symbols build && node bench/assemble/run.mjs
// Options: --files=5000 --turns=40 --warm=40 --selected=5 --hot=0 --tool-steps=200 --policy=threshold|gated|flux --model=claude-sonnet-4-5 --json
// --digest also prints one SHA-256 over every request body the run built (the same
// inputs every run), so a performance change can show that it changed no byte.
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, Layer, ManagedRuntime } from "../../packages/core/node_modules/effect/dist/index.js"
import * as Core from "../../packages/core/dist/effect.js"
const { assemble, makeTokenCounter, Pipeline, SymbolIndex, Tokenizer } = Core
import { SymbolIndexer } from "../../packages/symbols/dist/index.js"
import { TrackerLayer } from "../../packages/tiers/dist/index.js"
import { arg, median, rng } from "../support.mjs"

const FILES = Number(arg("files", "5000"))
const TURNS = Number(arg("turns", "40"))
const WARM = Number(arg("warm", "40"))
const SELECTED = Number(arg("selected", "5"))
// 0: the changed file is any file; N: one of N "hot" files, as real sessions edit a few files.
const HOT = Number(arg("hot", "0"))
const MODEL = arg("model", "claude-sonnet-4-5")
// The tracker's promotion policy (@strata/tiers); default: the tracker's own default.
const POLICY = arg("policy", "")
// Steps of the agent session (0: skip it).
const TOOL_STEPS = Number(arg("tool-steps", "200"))
const JSON_OUT = process.argv.includes("--json")
const digest = process.argv.includes("--digest") ? createHash("sha256") : undefined
const TARGET_MS = 25
const TARGET_RATIO = 5

// Deterministic PRNG (mulberry32): every run generates the same repository and history.
const random = rng(42)
const pick = (xs) => xs[Math.floor(random() * xs.length)]
const WORDS = "parse token tree node visit walk emit cache prefix block tier symbol file import export value key hash index range line error retry stream usage".split(" ")
const name = () => pick(WORDS) + pick(WORDS).replace(/^./, (c) => c.toUpperCase())

// 50 packages of 100 modules; each module imports two or three siblings and calls them.
const PER_PACKAGE = 100
const pathOf = (i) => `packages/pkg${Math.floor(i / PER_PACKAGE)}/src/mod${i % PER_PACKAGE}.ts`
const exportsOf = new Map()
const importsOf = new Map()
// An edit appends declarations and keeps the imports, as most edits do.
const moduleText = (i, edit = 0) => {
  const pkg = Math.floor(i / PER_PACKAGE)
  const imports = importsOf.get(i) ?? []
  if (!importsOf.has(i)) {
    for (let k = 0; k < 2 + (i % 2); k++) {
      const j = pkg * PER_PACKAGE + Math.floor(random() * PER_PACKAGE)
      if (j !== i && j < i && !imports.includes(j)) imports.push(j)
    }
    importsOf.set(i, imports)
  }
  const lines = []
  for (const j of imports) lines.push(`import { ${exportsOf.get(j)[0]} } from "./mod${j % PER_PACKAGE}"`)
  const names = exportsOf.get(i) ?? Array.from({ length: 2 + Math.floor(random() * 4) }, (_, k) => `${name()}${i}_${k}`)
  exportsOf.set(i, names)
  for (const fn of names) {
    const callee = imports.length > 0 ? exportsOf.get(imports[0])[0] : undefined
    lines.push(`export function ${fn}(input: string, limit?: number): string {`, `  const out = ${callee ? `${callee}(input, limit)` : "input.trim()"}`, `  return out.slice(0, limit ?? 80)`, "}", "")
  }
  lines.push(`export class ${name().replace(/^./, (c) => c.toUpperCase())}${i} {`, "  private count = 0", "  next(): number {", "    return ++this.count", "  }", "}")
  for (let e = 0; e < edit; e++) lines.push(`export const edit${e} = ${e}`)
  return lines.join("\n") + "\n"
}

const ms = (x) => `${x.toFixed(2)} ms`
// Wall time, and this process's CPU time (user + system), which other processes' load
// on the shared machine disturbs much less.
const time = async (f) => {
  const cpu = process.cpuUsage()
  const t = performance.now()
  const value = await f()
  const used = process.cpuUsage(cpu)
  return { value, ms: performance.now() - t, cpu: (used.user + used.system) / 1000 }
}

const root = mkdtempSync(join(os.tmpdir(), "strata-bench-assemble-"))
try {
  const gen = await time(() => {
    for (let i = 0; i < FILES; i++) {
      const path = join(root, pathOf(i))
      mkdirSync(join(path, ".."), { recursive: true })
      writeFileSync(path, moduleText(i))
    }
  })

  const selected = Array.from({ length: SELECTED }, (_, k) => pathOf(Math.floor(((k + 0.5) * FILES) / SELECTED)))
  const history = []
  for (let t = 0; t < TURNS; t++) {
    history.push({ role: "user", content: `Turn ${t}: please look at ${pick(selected)} and ${Array.from({ length: 20 }, () => pick(WORDS)).join(" ")}.` })
    history.push({ role: "assistant", content: `Here is what I found.\n\n${Array.from({ length: 40 }, () => Array.from({ length: 8 }, () => pick(WORDS)).join(" ")).join("\n")}` })
  }
  const inputFor = (prompt) => ({
    model: MODEL,
    prompt,
    systemPrompt: "You are an expert coding agent. Use the repository map to find code; ask for files you need; edit with EDIT/REPLACE blocks.",
    systemReminder: "Close every edit block; copy the anchor text exactly.",
    files: selected.map((path) => ({ path, content: readFileSync(join(root, path), "utf8") })),
    history: [...history]
  })

  // The real indexer, refreshed explicitly so its cost is measured apart from assembly.
  const indexer = await SymbolIndexer.create(root, { cache: false, git: false })
  let map
  const coldIndex = await time(async () => (map = await indexer.refresh()))
  const counter = await makeTokenCounter(MODEL)
  const layer = Layer.mergeAll(
    Pipeline.layer,
    Tokenizer.layerFrom(counter),
    TrackerLayer.memory(POLICY === "" ? {} : { config: { policy: POLICY } }),
    Layer.succeed(SymbolIndex, { snapshot: Effect.sync(() => map) })
  )
  // Every stage wrapped with a timer (replacing a stage is one Layer each), so the run
  // also reports where warm assembly time goes.
  const stageTimes = new Map()
  const timed = (tag, stage) =>
    Layer.succeed(tag, {
      name: stage.name,
      run: (state) =>
        Effect.suspend(() => {
          const t = performance.now()
          return Effect.tap(stage.run(state), () => Effect.sync(() => {
            const list = stageTimes.get(stage.name) ?? []
            list.push(performance.now() - t)
            stageTimes.set(stage.name, list)
          }))
        })
    })
  const stages = [
    [Core.ActiveFilesStage, Core.activeFiles],
    [Core.FileTiersStage, Core.fileTiers],
    [Core.SymbolDataStage, Core.makeSymbolData()],
    [Core.HistoryTiersStage, Core.historyTiers],
    [Core.ContextEditingStage, Core.contextEditing],
    [Core.LayoutPlanStage, Core.layoutPlan],
    [Core.InputLimitStage, Core.inputLimit],
    [Core.L0BlockStage, Core.l0Block],
    [Core.CachedBlocksStage, Core.cachedBlocks],
    [Core.ActiveBlockStage, Core.activeBlock],
    [Core.PlacementStage, Core.placement],
    [Core.TrackStage, Core.track]
  ]
  const runtime = ManagedRuntime.make(Layer.mergeAll(layer, ...stages.map(([tag, stage]) => timed(tag, stage))))
  const run = (effect) => runtime.runPromise(effect)
  // One warm request: assembly, the stringify floor (second call, on flat strings) and the commit.
  const measure = async (input) => {
    const assembled = await time(() => run(assemble(input)))
    const body = assembled.value.placed.body
    const serialize = await time(() => JSON.stringify(body))
    const floor = await time(() => JSON.stringify(body))
    digest?.update(floor.value)
    const commit = await time(() => run(assembled.value.commit))
    return { assembled, body, serialize, floor, commit }
  }

  const cold = await time(() => run(assemble(inputFor("Where is the cache invalidated?"))))
  const coldBody = cold.value.placed.body
  digest?.update(JSON.stringify(coldBody))
  await run(cold.value.commit)

  const hot = Array.from({ length: HOT }, () => Math.floor(random() * FILES))
  const rows = []
  let previous = coldBody.messages
  for (let turn = 0; turn < WARM; turn++) {
    // One file changes on disk per turn (never a selected one).
    let changed
    do changed = HOT > 0 ? hot[Math.floor(random() * HOT)] : Math.floor(random() * FILES)
    while (selected.includes(pathOf(changed)))
    writeFileSync(join(root, pathOf(changed)), moduleText(changed, turn + 1))
    const index = await time(async () => (map = await indexer.refresh()))
    const input = inputFor(`Turn ${TURNS + turn}: what changed in ${pathOf(changed)}?`)
    // The first serialization also flattens the strings assembly linked together; the
    // second one serializes flat strings: that is the floor the ratio uses.
    const { assembled, body, serialize, floor, commit } = await measure(input)
    // Share of this request's tokens in cached blocks whose bytes equal the previous request's.
    const { request } = assembled.value
    let offset = 0
    let stableTokens = 0
    for (const block of request.blocks) {
      const same = block.tier !== "active" && block.messages.every((_, i) => JSON.stringify(body.messages[offset + i]) === JSON.stringify(previous[offset + i]))
      if (same) stableTokens += block.tokens
      else if (block.tier !== "active") break
      offset += block.messages.length
    }
    previous = body.messages
    rows.push({
      index: index.ms,
      indexCpu: index.cpu,
      assemble: assembled.ms,
      assembleCpu: assembled.cpu,
      floor: floor.ms,
      floorCpu: floor.cpu,
      serialize: serialize.ms,
      serializeCpu: serialize.cpu,
      commit: commit.ms,
      bytes: floor.value.length,
      tokens: assembled.value.report.totalTokens,
      cached: assembled.value.report.cachedTokens,
      stable: stableTokens / assembled.value.report.totalTokens,
      promotions: assembled.value.report.promotions.length,
      demotions: assembled.value.report.demotions.length
    })
    history.push({ role: "user", content: input.prompt }, { role: "assistant", content: `Turn ${TURNS + turn} answer.` })
  }
  await runtime.dispose()
  // Warm turns only: drop the cold request's sample.
  const stageMedians = Object.fromEntries([...stageTimes.entries()].map(([n, xs]) => [n, median(xs.slice(1))]))
  const agent = TOOL_STEPS > 0 ? await agentSession() : undefined

  // ---------------------------------------------------------------------------------------
  // The agent session: a fresh session on the same repository, one task prompt, then
  // TOOL_STEPS steps of one tool call and its result (200 to 5,000 tokens) each; an edit
  // changes a file on disk. Every request is timed like the warm turns above.
  async function agentSession() {
    stageTimes.clear()
    const agentRuntime = ManagedRuntime.make(Layer.mergeAll(
      Pipeline.layer,
      Tokenizer.layerFrom(counter),
      TrackerLayer.memory(POLICY === "" ? {} : { config: { policy: POLICY } }),
      Layer.succeed(SymbolIndex, { snapshot: Effect.sync(() => map) }),
      ...stages.map(([tag, stage]) => timed(tag, stage))
    ))
    const tools = [
      { name: "read_file", description: "Read a file of the repository", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
      { name: "search", description: "Search the repository", inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
      { name: "edit_file", description: "Replace text in a file", inputSchema: { type: "object", properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } }, required: ["path", "old", "new"] } }
    ]
    const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(" ")
    const history = [{ role: "user", content: `Task: rename every ${pick(WORDS)} helper in ${pick(selected)} and fix the callers.` }]
    const inputOf = () => ({
      model: MODEL,
      prompt: "Continue.",
      systemPrompt: "You are an expert coding agent. Use the tools to read, search and edit the repository.",
      systemReminder: "Call a tool or answer.",
      files: selected.map((path) => ({ path, content: readFileSync(join(root, path), "utf8") })),
      history: [...history],
      tools
    })
    const measureIn = async (input) => {
      const assembled = await time(() => agentRuntime.runPromise(assemble(input)))
      const body = assembled.value.placed.body
      const serialize = await time(() => JSON.stringify(body))
      const floor = await time(() => JSON.stringify(body))
      digest?.update(floor.value)
      const commit = await time(() => agentRuntime.runPromise(assembled.value.commit))
      return { assembled, body, serialize, floor, commit }
    }
    const first = await measureIn(inputOf())
    const out = []
    for (let step = 0; step < TOOL_STEPS; step++) {
      const roll = random()
      const id = `call_${step}`
      let call
      if (roll < 0.15) {
        let changed
        do changed = Math.floor(random() * FILES)
        while (selected.includes(pathOf(changed)))
        writeFileSync(join(root, pathOf(changed)), moduleText(changed, 100 + step))
        map = await indexer.refresh()
        call = { type: "tool-call", toolCallId: id, toolName: "edit_file", input: { path: pathOf(changed), old: pick(WORDS), new: pick(WORDS) } }
      } else if (roll < 0.4) call = { type: "tool-call", toolCallId: id, toolName: "search", input: { query: pick(WORDS) } }
      else call = { type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: pathOf(Math.floor(random() * FILES)) } }
      const size = 200 + Math.floor(random() * 4801)
      history.push({ role: "assistant", content: [{ type: "text", text: `Step ${step}: ${words(12)}.` }, call] })
      history.push({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: call.toolName, output: { type: "text", value: words(size) } }] })
      const m = await measureIn(inputOf())
      const edits = m.assembled.value.report.contextEditing
      out.push({
        assemble: m.assembled.ms,
        assembleCpu: m.assembled.cpu,
        floor: m.floor.ms,
        floorCpu: m.floor.cpu,
        tokens: m.assembled.value.report.totalTokens,
        bytes: m.floor.value.length,
        cleared: edits?.clearedTokens ?? 0,
        clearedResults: edits?.clearedResults ?? 0,
        batch: (edits?.newlyClearedResults ?? 0) > 0
      })
    }
    await agentRuntime.dispose()
    const stage = (name) => median((stageTimes.get(name) ?? []).slice(1))
    const last = out.at(-1)
    return {
      steps: TOOL_STEPS,
      coldAssembleMs: first.assembled.ms,
      warmAssembleMedianMs: median(out.map((r) => r.assemble)),
      warmAssembleCpuMedianMs: median(out.map((r) => r.assembleCpu)),
      stringifyFloorMedianMs: median(out.map((r) => r.floor)),
      stringifyFloorCpuMedianMs: median(out.map((r) => r.floorCpu)),
      contextEditingMedianMs: stage("contextEditing"),
      historyTiersMedianMs: stage("historyTiers"),
      stageMediansMs: Object.fromEntries([...stageTimes.entries()].map(([n, xs]) => [n, median(xs.slice(1))])),
      requestTokensMedian: median(out.map((r) => r.tokens)),
      requestTokensLast: last?.tokens ?? 0,
      requestBytesMedian: median(out.map((r) => r.bytes)),
      clearedTokensLast: last?.cleared ?? 0,
      clearedResultsLast: last?.clearedResults ?? 0,
      batches: out.filter((r) => r.batch).length
    }
  }

  const warmAssemble = median(rows.map((r) => r.assemble))
  const warmFloor = median(rows.map((r) => r.floor))
  const ratio = warmAssemble / warmFloor
  const warmAssembleCpu = median(rows.map((r) => r.assembleCpu))
  const warmFloorCpu = median(rows.map((r) => r.floorCpu))
  const last = cold.value.report
  const result = {
    files: FILES,
    historyTurns: TURNS,
    warmTurns: WARM,
    model: MODEL,
    policy: POLICY || "default",
    encoding: counter.encoding,
    generateMs: gen.ms,
    coldIndexMs: coldIndex.ms,
    coldAssembleMs: cold.ms,
    warmAssembleMedianMs: warmAssemble,
    stringifyFloorMedianMs: warmFloor,
    ratio,
    warmAssembleCpuMedianMs: warmAssembleCpu,
    stringifyFloorCpuMedianMs: warmFloorCpu,
    firstStringifyMedianMs: median(rows.map((r) => r.serialize)),
    firstStringifyCpuMedianMs: median(rows.map((r) => r.serializeCpu)),
    cpuRatio: warmAssembleCpu / warmFloorCpu,
    loadAverage: os.loadavg()[0],
    warmIndexRefreshMedianMs: median(rows.map((r) => r.index)),
    warmCommitMedianMs: median(rows.map((r) => r.commit)),
    requestBytesMedian: median(rows.map((r) => r.bytes)),
    requestTokensMedian: median(rows.map((r) => r.tokens)),
    cachedShareMedian: median(rows.map((r) => r.cached / r.tokens)),
    unchangedPrefixShareMedian: median(rows.map((r) => r.stable)),
    stageMediansMs: stageMedians,
    coldTiers: Object.fromEntries(Object.entries(last.tiers).map(([t, v]) => [t, v.tokens])),
    ...(agent === undefined ? {} : { agent }),
    ...(digest === undefined ? {} : { bodiesSha256: digest.digest("hex") })
  }
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
  } else {
    if (result.bodiesSha256 !== undefined) console.log(`request bodies (every one this run built): sha256 ${result.bodiesSha256}`)
    const fmt = (n) => Math.round(n).toLocaleString("en-US")
    console.log(`bench/assemble  files=${FILES} history=${TURNS} turns, warm turns=${WARM} (changed file: ${HOT > 0 ? `one of ${HOT} hot files` : "any file"}), policy=${POLICY || "default"}, model=${MODEL} (${counter.encoding})`)
    console.log(`generate repository                      ${ms(gen.ms)}`)
    console.log(`cold: index all files (tree-sitter)      ${ms(coldIndex.ms)}`)
    console.log(`cold: first assembly (count, place)      ${ms(cold.ms)}`)
    console.log(`     tiers: ${Object.entries(result.coldTiers).map(([t, v]) => `${t} ${fmt(v)}`).join(", ")} tokens`)
    console.log(`warm: index refresh, 1 file changed      ${ms(result.warmIndexRefreshMedianMs)}   (median of ${WARM}; @strata/symbols, not part of assembly)`)
    console.log(`warm: assembly (pipeline, all stages)    ${ms(warmAssemble)}   (median of ${WARM}; CPU ${ms(warmAssembleCpu)})`)
    console.log(`     by stage: ${Object.entries(stageMedians).map(([n, v]) => `${n} ${v.toFixed(2)}`).join(", ")} ms`)
    console.log(`warm: JSON.stringify(request), first     ${ms(result.firstStringifyMedianMs)}   (median of ${WARM}; CPU ${ms(result.firstStringifyCpuMedianMs)}; flattens linked strings)`)
    console.log(`warm: JSON.stringify(request) floor      ${ms(warmFloor)}   (median of ${WARM}; CPU ${ms(warmFloorCpu)}; flat strings)`)
    console.log(`warm: tracker commit                     ${ms(result.warmCommitMedianMs)}`)
    console.log(`request: ${fmt(result.requestBytesMedian)} bytes, ${fmt(result.requestTokensMedian)} tokens; cached share ${(100 * result.cachedShareMedian).toFixed(1)}%, byte-identical cached prefix ${(100 * result.unchangedPrefixShareMedian).toFixed(1)}% of tokens`)
    const cpuRatio = result.cpuRatio
    console.log(`ratio assembly / floor: ${cpuRatio.toFixed(2)}x CPU, ${ratio.toFixed(2)}x wall (load average ${result.loadAverage.toFixed(1)} on ${os.cpus().length} cores)`)
    console.log(`target (CPU time): warm median ${ms(warmAssembleCpu)} < ${TARGET_MS} ms: ${warmAssembleCpu < TARGET_MS ? "PASS" : "FAIL"}; ratio ${cpuRatio.toFixed(2)}x < ${TARGET_RATIO}x: ${cpuRatio < TARGET_RATIO ? "PASS" : "FAIL"}`)
    console.log(`target (wall time):  warm median ${ms(warmAssemble)} < ${TARGET_MS} ms: ${warmAssemble < TARGET_MS ? "PASS" : "FAIL"}; ratio ${ratio.toFixed(2)}x < ${TARGET_RATIO}x: ${ratio < TARGET_RATIO ? "PASS" : "FAIL"}`)
    if (agent !== undefined) {
      const a = agent
      const cpuRatioA = a.warmAssembleCpuMedianMs / a.stringifyFloorCpuMedianMs
      const ratioA = a.warmAssembleMedianMs / a.stringifyFloorMedianMs
      console.log(`\nagent session: ${a.steps} steps (a tool call and a 200-5,000-token result each), 3 tools, same repository`)
      console.log(`agent: first request                     ${ms(a.coldAssembleMs)}`)
      console.log(`agent: assembly per step                 ${ms(a.warmAssembleMedianMs)}   (median of ${a.steps}; CPU ${ms(a.warmAssembleCpuMedianMs)})`)
      console.log(`     context editing stage ${a.contextEditingMedianMs.toFixed(2)} ms, historyTiers ${a.historyTiersMedianMs.toFixed(2)} ms; by stage: ${Object.entries(a.stageMediansMs).map(([n, v]) => `${n} ${v.toFixed(2)}`).join(", ")} ms`)
      console.log(`agent: JSON.stringify(request) floor     ${ms(a.stringifyFloorMedianMs)}   (median; CPU ${ms(a.stringifyFloorCpuMedianMs)})`)
      console.log(`agent: request ${fmt(a.requestTokensMedian)} tokens median, ${fmt(a.requestTokensLast)} at the last step; ${fmt(a.clearedResultsLast)} results (${fmt(a.clearedTokensLast)} tokens) cleared at the last step, in ${a.batches} batches`)
      console.log(`agent ratio assembly / floor: ${cpuRatioA.toFixed(2)}x CPU, ${ratioA.toFixed(2)}x wall`)
      console.log(`agent target (CPU time): median ${ms(a.warmAssembleCpuMedianMs)} < ${TARGET_MS} ms: ${a.warmAssembleCpuMedianMs < TARGET_MS ? "PASS" : "FAIL"}; ratio ${cpuRatioA.toFixed(2)}x < ${TARGET_RATIO}x: ${cpuRatioA < TARGET_RATIO ? "PASS" : "FAIL"}`)
    }
  }
  // The verdict uses CPU time: on the shared machine wall time mostly measures other processes.
  if (!(warmAssembleCpu < TARGET_MS && warmAssembleCpu / warmFloorCpu < TARGET_RATIO)) process.exitCode = 1
  if (agent !== undefined && !(agent.warmAssembleCpuMedianMs < TARGET_MS && agent.warmAssembleCpuMedianMs / agent.stringifyFloorCpuMedianMs < TARGET_RATIO)) process.exitCode = 1
} finally {
  rmSync(root, { recursive: true, force: true })
}
