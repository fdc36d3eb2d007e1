/**
 * The `cache_report` text: a Strata session read through core's `StateStore` (files under
 * `.strata/` by default, or the store `STRATA_STORE` names), with its cost from the
 * providers' price tables and the last request's miss explanation.
 */
import { decodeSessionRecord, type SessionRecord, StateStore } from "@strata/core/effect"
import { costOf, type ProviderId } from "@strata/providers"
import { sessionKeyFor, storeLayer } from "@strata/store"
import { Effect } from "effect"
import { RepositoryUnavailable } from "./internal/errors.ts"

const PROVIDERS: ReadonlyArray<ProviderId> = ["anthropic", "bedrock", "openai", "gemini"]
const providerId = (name: string): ProviderId | undefined => PROVIDERS.find((p) => p === name)

const int = (n: number): string => Math.round(n).toLocaleString("en-US")

/** The report text of a session record (pure). */
export const formatCacheReport = (name: string, record: SessionRecord): string => {
  const t = record.totals
  const input = t.input + t.cacheRead + t.cacheWrite
  const lines = [
    `# Strata session "${name}": ${record.turns} turn${record.turns === 1 ? "" : "s"}`,
    `input tokens: ${int(input)} (cache read ${int(t.cacheRead)}, cache write ${int(t.cacheWrite)}, uncached ${int(t.input)}); output ${int(t.output)}`,
    `cache read share of input: ${input === 0 ? "n/a" : `${((100 * t.cacheRead) / input).toFixed(1)}%`}`
  ]
  const last = record.last
  if (last !== null) {
    const provider = providerId(last.provider)
    const cost = provider === undefined ? undefined : costOf(provider, last.model, t)
    lines.push(cost === undefined ? `cost: unknown for ${last.provider}/${last.model}` : `cost: $${cost.total.toFixed(4)} at ${last.provider}/${last.model} prices (without caching: $${cost.uncachedTotal.toFixed(4)})`)
    const u = last.usage
    lines.push(`last request: ${int(last.promptTokens)} prompt tokens; read ${int(u.cacheRead)}, wrote ${int(u.cacheWrite)}, uncached ${int(u.input)} (${last.usageSource})`)
    lines.push(`last miss: ${last.lastMiss ?? "none recorded"}`)
  }
  if (record.selected.length > 0) lines.push(`files in context: ${record.selected.join(", ")}`)
  return `${lines.join("\n")}\n`
}

/**
 * The cache report of session `name` (default "default") of the repository at `root`,
 * or undefined when nothing was ever committed to it. `store` is a store spec (`file`,
 * `memory`, a `postgres://` URL; default `STRATA_STORE`, else files).
 */
export const cacheReport = (root: string, name: string | undefined, store: string | undefined): Effect.Effect<string | undefined, RepositoryUnavailable> =>
  Effect.gen(function* () {
    const session = name ?? "default"
    const key = yield* sessionKeyFor(root, { name: session, create: false })
    const loaded = yield* Effect.gen(function* () {
      const stateStore = yield* StateStore
      return yield* stateStore.load(key)
    }).pipe(Effect.provide(storeLayer(store ?? "file", { repoRoot: root })))
    if (loaded.snapshot.version === 0) return undefined
    const { record, warning } = decodeSessionRecord(loaded.snapshot.record)
    const text = formatCacheReport(session, record)
    return warning === undefined ? text : `${text}# ${warning}\n`
  }).pipe(Effect.mapError((error) => new RepositoryUnavailable({ root, reason: error.message })))
