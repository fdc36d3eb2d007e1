/**
 * The work of `strata explain` (loaded when it runs): why the session's last request
 * read less from the provider's prompt cache than the request before it left there, or
 * the same for two request files. Also the one-line reason the HUD shows.
 */
import { isAbsolute, relative, resolve } from "node:path"
import { Effect, Option, Result, Schema } from "effect"
import { formatTokens, type SessionRecord } from "@strata/core"
import { describeMissReason, explainMiss, type BodyFormat, type MissExplanation } from "@strata/providers"
import { commandContext } from "../support/context.ts"
import { LAST_REQUEST_PATH, PREVIOUS_REQUEST_PATH, StoredRequest } from "../support/wiring.ts"
import { UsageError } from "../support/errors.ts"
import { readTextIfExists, type StateFileError } from "../support/fsutil.ts"
import { jsonDocument, Output } from "../support/output.ts"
import { readSession } from "../support/sessionState.ts"
import { warn } from "./shared.ts"

/** A request to compare: a stored request, or a bare body from `--before`/`--after`. */
export interface RequestFile {
  readonly path: string
  readonly provider: string | undefined
  readonly model: string | undefined
  readonly at: number | undefined
  readonly body: unknown
}

const decodeStored = Schema.decodeUnknownResult(StoredRequest)

/** Parse a request file's text: the stored wrapper when it is one, else the body itself. Pure. */
export const parseRequestFile = (path: string, text: string): RequestFile | { readonly problem: string } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problem: `${path} is not valid JSON` }
  }
  const stored = decodeStored(json)
  if (Result.isSuccess(stored)) return { path, ...stored.success }
  return { path, provider: undefined, model: undefined, at: undefined, body: json }
}

/** The body format a CLI provider name emits, when the name decides it. */
const formatOf = (provider: string | undefined, model: string | undefined): BodyFormat | undefined => {
  switch (provider) {
    case "anthropic":
      return "anthropic"
    case "bedrock":
      return "bedrock-converse"
    case "gemini":
      return "gemini"
    case "ai-sdk":
      return "ai-sdk"
    case "openai-compatible":
      // Gateways forward Chat bodies with cache_control parts to Claude as Messages.
      return model !== undefined && /claude/i.test(model) ? "anthropic" : "openai-chat"
    default:
      return undefined
  }
}

/** The result of comparing two requests: an explanation, or why there is none. */
export type Comparison =
  | { readonly kind: "explained"; readonly before: RequestFile; readonly after: RequestFile; readonly explanation: MissExplanation }
  | { readonly kind: "provider-changed"; readonly before: RequestFile; readonly after: RequestFile }

/** Compare two requests (pure: the simulators run offline). `reported` is the provider's usage for the second. */
export const compareRequests = (before: RequestFile, after: RequestFile, reported?: SessionRecord["totals"]): Comparison => {
  if (before.provider !== undefined && after.provider !== undefined && before.provider !== after.provider) {
    return { kind: "provider-changed", before, after }
  }
  const format = formatOf(after.provider, after.model)
  const explanation = explainMiss(before.body, after.body, {
    ...(format === undefined ? {} : { format }),
    ...(after.model === undefined ? {} : { model: after.model }),
    ...(before.at === undefined || after.at === undefined ? {} : { previousAt: before.at, nextAt: Math.max(after.at, before.at) }),
    ...(reported === undefined ? {} : { reported })
  })
  return { kind: "explained", before, after, explanation }
}

/** The readable form of a comparison. Pure. */
export const explainLines = (c: Comparison): ReadonlyArray<string> => {
  if (c.kind === "provider-changed") {
    return [`miss: the provider changed (${c.before.provider} -> ${c.after.provider}); caches are per provider, so nothing could be read`]
  }
  const e = c.explanation
  const lines = [e.summary]
  const gap = c.before.at !== undefined && c.after.at !== undefined ? `, sent ${formatTokens(c.after.at - c.before.at)} s apart` : ""
  lines.push(`requests: ${e.provider} ${e.model || "(model not named)"}${gap}`)
  const change = e.firstDifference
  if (change !== undefined) {
    lines.push(`first difference: ${change.type} ${change.kind} at ${change.path} (block ${e.divergence}; the ${e.shared.blocks} blocks before it, ~${formatTokens(e.shared.tokens)} tokens, are the same)`)
    if (change.before !== undefined) lines.push(`  before: ${change.before}`)
    if (change.after !== undefined) lines.push(`  after:  ${change.after}`)
  }
  const u = e.usage.expected
  lines.push(
    `expected (simulated): read ${formatTokens(u.cacheRead)}, write ${formatTokens(u.cacheWrite)}, uncached ${formatTokens(u.input)}` +
      (e.readThrough === undefined ? "" : `; the read ends at ${e.readThrough}`) +
      (e.usage.attainable > u.cacheRead ? `; ${formatTokens(e.usage.attainable)} was attainable` : "")
  )
  const r = e.usage.reported
  if (r !== undefined) lines.push(`reported by the provider: read ${formatTokens(r.cacheRead)}, write ${formatTokens(r.cacheWrite)}, uncached ${formatTokens(r.input)}`)
  if (e.discrepancy !== undefined) lines.push(`note: ${e.discrepancy}`)
  return lines
}

const readRequest = (root: string, path: string, missing: string, hint?: string): Effect.Effect<RequestFile, UsageError | StateFileError> =>
  Effect.gen(function* () {
    const text = yield* readTextIfExists(root, path)
    if (text === undefined) return yield* new UsageError(hint === undefined ? { reason: missing } : { reason: missing, hint })
    const parsed = parseRequestFile(path, text)
    if ("problem" in parsed) return yield* new UsageError({ reason: parsed.problem })
    return parsed
  })

/** The provider-reported usage of the session's last request, when it is that stored request's. */
const reportedFor = (session: SessionRecord, after: RequestFile): SessionRecord["totals"] | undefined => {
  const last = session.last
  if (last === null || last.usageSource !== "provider" || after.at === undefined) return undefined
  return Math.floor(last.at / 1000) === after.at && last.provider === after.provider ? last.usage : undefined
}

/**
 * The HUD's line: why the last request missed, from the two stored requests; undefined
 * when there are not two, or the last one read everything the previous one cached.
 */
export const lastMissReason = (root: string, session: SessionRecord): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const previous = yield* readTextIfExists(root, PREVIOUS_REQUEST_PATH)
    const last = yield* readTextIfExists(root, LAST_REQUEST_PATH)
    if (previous === undefined || last === undefined) return undefined
    const before = parseRequestFile(PREVIOUS_REQUEST_PATH, previous)
    const after = parseRequestFile(LAST_REQUEST_PATH, last)
    if ("problem" in before || "problem" in after) return undefined
    const c = compareRequests(before, after, reportedFor(session, after))
    if (c.kind === "provider-changed") return `provider changed (${c.before.provider} -> ${c.after.provider})`
    return c.explanation.verdict === "hit" ? undefined : describeMissReason(c.explanation.reason)
  }).pipe(Effect.orElseSucceed(() => undefined))

export interface ExplainFlags {
  readonly before: Option.Option<string>
  readonly after: Option.Option<string>
}

export const runExplain = (flags: ExplainFlags) =>
  Effect.gen(function* () {
    const ctx = yield* commandContext({})
    const output = yield* Output
    const beforePath = Option.getOrUndefined(flags.before)
    const afterPath = Option.getOrUndefined(flags.after)
    if ((beforePath === undefined) !== (afterPath === undefined)) {
      return yield* new UsageError({ reason: "--before and --after go together: pass both files, or neither to compare the session's last two requests" })
    }
    // Request files are read from inside the repository only, like every file the CLI reads.
    const inRepo = (given: string) =>
      Effect.gen(function* () {
        const path = isAbsolute(given) ? given : resolve(given)
        const rel = relative(ctx.root, path)
        if (rel.startsWith("..") || isAbsolute(rel)) {
          return yield* new UsageError({ reason: `${given} is outside the repository ${ctx.root}`, hint: "save request files inside the repository (e.g. strata assemble --json > request.json)" })
        }
        return path
      })
    const loaded = yield* readSession(ctx)
    yield* warn(loaded.warnings)
    const never = "the session has fewer than two recorded requests"
    const hint = "run `strata assemble` (or `strata chat`) twice, or pass --before A.json --after B.json"
    const before = beforePath === undefined
      ? yield* readRequest(ctx.root, PREVIOUS_REQUEST_PATH, never, hint)
      : yield* readRequest(ctx.root, yield* inRepo(beforePath), `${beforePath} does not exist`)
    const after = afterPath === undefined
      ? yield* readRequest(ctx.root, LAST_REQUEST_PATH, never, hint)
      : yield* readRequest(ctx.root, yield* inRepo(afterPath), `${afterPath} does not exist`)
    const comparison = compareRequests(before, after, beforePath === undefined ? reportedFor(loaded.record, after) : undefined)
    if (ctx.json) {
      const json = comparison.kind === "explained"
        ? comparison.explanation
        : { verdict: "miss", reason: { kind: "provider-changed", from: comparison.before.provider, to: comparison.after.provider } }
      yield* output.out(jsonDocument(json, 2))
      return
    }
    const s = output.style
    const [head, ...rest] = explainLines(comparison)
    const verdict = comparison.kind === "explained" ? comparison.explanation.verdict : "miss"
    const colour = verdict === "hit" ? s.green : verdict === "partial" ? s.yellow : s.red
    yield* output.out(colour(head ?? ""))
    for (const line of rest) yield* output.out(s.dim(line))
  })
