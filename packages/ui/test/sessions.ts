// Sessions recorded through core's real Promise API into the real file store: an engine
// per session (Anthropic placement, memory tracker whose state lives in the store), each
// request's usage from the offline Anthropic cache simulator, committed as a turn.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { createContextEngine, type ToolResultPart } from "@strata/core"
import { AnthropicPlacement, makeSimulator } from "@strata/providers"
import { makeFileStateStore, sessionKeyFor, stateStore } from "@strata/store"
import { TrackerLayer } from "@strata/tiers"
import { Effect, Layer, Schema } from "effect"
import { PROXY_REPOSITORY, storeSessionCatalog, type SessionCatalog } from "../src/index.ts"
import { ContextEditing, DEFAULT_CONTEXT_EDITING, RecordedRequest, type StateStore } from "@strata/core/effect"

export const MODEL = "claude-sonnet-4-5"

/** Content a page must show as text, never run: a script element and an image whose error handler runs code. */
export const XSS_SCRIPT = "<script>window.__pwned = 'script'</script>"
export const XSS_IMG = `<img src=x onerror="window.__pwned = 'img'">`

/** A repository with a few files to put in context. */
export const makeRepo = (root: string): void => {
  for (let i = 0; i < 4; i++) {
    writeFileSync(join(root, `module${i}.ts`), `// Module ${i}\n${Array.from({ length: 60 }, (_, j) => `export const value${i}_${j} = (x: number): number => x * ${j + 1} + ${i}\n`).join("")}`)
  }
}

export interface RecordOptions {
  readonly turns: number
  /** Seconds between requests (past the 5-minute lifetime: a miss). */
  readonly gaps?: (turn: number) => number
  /** Make every other request a tool exchange whose result holds the XSS strings. */
  readonly agent?: boolean
  /** Epoch seconds of the first request. */
  readonly start?: number
}

/** Record `turns` requests of session `name` in the file store of `root`. */
export const recordSession = async (root: string, name: string, options: RecordOptions): Promise<void> => {
  await using engine = createContextEngine({
    model: MODEL,
    repoRoot: root,
    store: stateStore("file"),
    session: name,
    tracker: TrackerLayer.memory(),
    provider: AnthropicPlacement(),
    // Agent sessions clear old tool results early, so a short session has a ledger.
    ...(options.agent === true ? { layers: [Layer.succeed(ContextEditing, { ...DEFAULT_CONTEXT_EDITING, triggerTokens: 2_000, keepToolUses: 1, clearAtLeastTokens: 200 })] } : {})
  })
  await engine.addFile("module0.ts")
  await engine.addFile("module1.ts")
  const sim = makeSimulator("anthropic", { model: MODEL })
  let t = options.start ?? 1_767_225_600
  let pending: ReadonlyArray<ToolResultPart> | undefined
  for (let i = 0; i < options.turns; i++) {
    t += options.gaps?.(i) ?? 30
    const turn = await engine.assemble(pending === undefined ? { prompt: `Question ${i}: explain value0_${i % 60}. ${XSS_SCRIPT}` } : { prompt: "", toolResults: pending })
    const sent = sim.send(turn.request, t, { outputTokens: 120 })
    const before = turn.record
    const expectedRead = before.last === null ? 0 : before.last.usage.cacheRead + before.last.usage.cacheWrite
    const missed = before.last !== null && sent.usage.cacheRead < expectedRead * 0.5
    const asksTool = options.agent === true && pending === undefined
    const id = `call_${name}_${i}`
    await turn.commit({
      reply: asksTool
        ? [{ role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: "module2.ts" } }] }]
        : `Answer ${i}. ${XSS_IMG}`,
      usage: sent.usage,
      usageSource: "simulated",
      at: t * 1000,
      ...(missed ? { lastMiss: `read ${sent.usage.cacheRead} of the ${expectedRead} cached tokens the previous request left ${XSS_IMG}` } : {})
    })
    pending = asksTool ? [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: `${XSS_SCRIPT}\n${XSS_IMG}\n${"const big = 1\n".repeat(400)}` } }] : undefined
  }
}

/** The file store of `root` and a catalog over its sessions, as `strata ui` builds them. */
export const openStore = async (root: string): Promise<{ readonly store: StateStore["Service"]; readonly catalog: SessionCatalog }> => {
  const key = await Effect.runPromise(sessionKeyFor(root, { create: false }))
  const store = await Effect.runPromise(makeFileStateStore({ repoRoot: root }))
  return { store, catalog: storeSessionCatalog(store, [key.repository, PROXY_REPOSITORY]) }
}

/**
 * A proxy session (`strata-proxy`, the proxy's own record) whose request summaries are those
 * of session `from`, each with an as-sent usage that reads nothing from the cache: what the
 * proxy commits, without running it. `requests`: that many, cycling through the source's.
 */
export const copyAsProxySession = async (store: StateStore["Service"], from: string, name: string, requests?: number): Promise<void> => {
  const source = (await Effect.runPromise(store.sessions())).find((s) => s.key.name === from)
  if (source === undefined) throw new Error(`no session ${from}`)
  const page = await Effect.runPromise(store.requests(source.key, { from: 1, limit: 1000 }))
  const key = { repository: PROXY_REPOSITORY, name }
  // `requests`: that many, cycling through the source's (a long session without recording one).
  const all = Array.from({ length: requests ?? page.requests.length }, (_, i) => page.requests[i % page.requests.length])
  for (const [i, stored] of all.entries()) {
    const r = Schema.decodeUnknownSync(RecordedRequest)(stored?.request)
    const u = r.usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
    const asSent = { input: u.input + u.cacheRead + u.cacheWrite, cacheRead: 0, cacheWrite: 0, output: u.output }
    await Effect.runPromise(store.commit({ session: key, baseVersion: i, turnId: `${name}-${i}`, append: [], patch: { record: { kind: "strata-proxy-session", id: name } }, request: Schema.encodeSync(RecordedRequest)({ ...r, source: "proxy", asSent }) }))
  }
}
