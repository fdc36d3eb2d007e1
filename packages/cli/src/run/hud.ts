/**
 * The work of `strata hud` and `strata breakdown` (loaded when they run): the session's
 * current state as the cache-block diagram with the token breakdown, or as the context breakdown
 * breakdown JSON. Both run the pipeline's stages with an empty prompt and change nothing.
 */
import { Effect } from "effect"
import { formatTokens, selectedFilesInput, sessionHudLines, turnBreakdown, type ContextBreakdown, type SessionRecord, type TierReport } from "@strata/core/effect"
import { opt } from "../support/flags.ts"
import type { Option } from "effect"
import type { ProviderName } from "../support/config.ts"
import { jsonDocument, Output } from "../support/output.ts"
import { beginCliTurn, colourChanges } from "./assemble.ts"
import { lastMissReason } from "./explain.ts"
import { prepare, warn } from "./shared.ts"
import { REPO_TOOLS } from "../tools/index.ts"

/** The HUD text for a report and the session's usage; `width` fits the box to a terminal. Pure. */
export const hudLines = (
  report: TierReport,
  session: SessionRecord,
  options: {
    readonly ascii?: boolean
    readonly width?: number | undefined
    readonly lastMiss?: string | undefined
    /** `budgets.maxInputTokens` when configured (null: the model's). */
    readonly maxInputTokens?: number | null | undefined
  } = {}
): ReadonlyArray<string> => {
  const { ascii, width, lastMiss, maxInputTokens } = options
  return sessionHudLines(report, session, {
    ...(ascii === undefined ? {} : { ascii }),
    ...(width === undefined ? {} : { width }),
    lastMiss,
    ...(maxInputTokens === undefined || maxInputTokens === null ? {} : { maxInputTokens })
  })
}

export interface HudFlags {
  readonly provider: Option.Option<ProviderName>
  readonly model: Option.Option<string>
  readonly ascii: boolean
}

export const runHud = (flags: HudFlags) =>
  Effect.gen(function* () {
    const prepared = yield* prepare({ provider: opt(flags.provider), model: opt(flags.model) }, { dryRun: false, records: false })
    const { ctx, engine } = prepared
    const session = prepared.state.record
    const output = yield* Output
    // A turn on the read-only copy, never committed: the next request as it would be.
    const report = yield* Effect.gen(function* () {
      yield* engine.symbolMap
      // With the tools chat and assemble offer: the session's next request, as they would send it.
      return (yield* beginCliTurn(prepared, "", session.selected, REPO_TOOLS)).assembly.report
    }).pipe(Effect.provide(engine.layer))
    const lastMiss = yield* lastMissReason(ctx.root, session)
    if (ctx.json) {
      yield* output.out(jsonDocument({ report, session: { turns: session.turns, totals: session.totals, last: session.last }, lastMiss: lastMiss ?? null }, 2))
      return
    }
    const s = output.style
    yield* output.out(s.bold(`Strata HUD for ${ctx.root}`) + s.dim(session.turns === 0 ? " (no requests yet: the first request would look like this)" : ` (after ${session.turns} request${session.turns === 1 ? "" : "s"})`))
    for (const line of colourChanges(hudLines(report, session, { ascii: flags.ascii, width: output.columns, lastMiss, maxInputTokens: ctx.config.budgets.maxInputTokens }), s)) yield* output.out(line)
  })

/** The readable form of a breakdown. Pure. */
export const breakdownLines = (b: ContextBreakdown): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const block of b.blocks) {
    const head = `${block.tier.padEnd(6)} ${block.name.padEnd(18)} ${formatTokens(block.tokens).padStart(9)} tokens${block.cached ? `  cached (${block.threshold}+)` : ""}${block.contents.length === 0 ? "  (empty)" : ""}`
    lines.push(head)
    for (const c of block.contents) {
      const count = c.count === undefined ? "" : ` x${c.count}`
      const files = c.files === undefined || c.files.length === 0 ? "" : `: ${c.files.slice(0, 6).join(", ")}${c.files.length > 6 ? `, +${c.files.length - 6} more` : ""}`
      lines.push(`         ${`${c.type}${count}`.padEnd(16)} ${formatTokens(c.tokens).padStart(9)}${files}`)
    }
  }
  lines.push(`Total ${formatTokens(b.total_tokens)} tokens, ${formatTokens(b.cached_tokens)} in cached blocks (${Math.round(b.cached_share * 100)}%)`)
  const edits = b.context_editing
  if (edits !== undefined) lines.push(`Context editing: ${edits.cleared_results} of ${edits.tool_results} tool results cleared (${formatTokens(edits.cleared_tokens)} tokens)`)
  if (b.synthetic_messages !== undefined) lines.push(`Synthetic turns ("Ok."): ${b.synthetic_messages} (${formatTokens(b.synthetic_tokens ?? 0)} tokens), all before the conversation`)
  if (b.promotions.length > 0) lines.push(`Promoted last request: ${b.promotions.join(", ")}`)
  if (b.demotions.length > 0) lines.push(`Demoted last request: ${b.demotions.join(", ")}`)
  lines.push(`Empty tiers: ${b.empty_tiers_this_request} now, ${b.empty_tiers_session_total} this session`)
  return lines
}

export const runBreakdown = (flags: Omit<HudFlags, "ascii">) =>
  Effect.gen(function* () {
    const { ctx, state, engine } = yield* prepare({ provider: opt(flags.provider), model: opt(flags.model) }, { dryRun: false, records: false })
    const output = yield* Output
    const result = yield* Effect.gen(function* () {
      yield* engine.symbolMap
      const { input, warnings } = yield* selectedFilesInput({ model: ctx.config.model, prompt: "", selected: state.record.selected })
      yield* warn(warnings)
      return yield* turnBreakdown({ session: state.key, input: { ...input, tools: REPO_TOOLS } }, { tracker: "store" })
    }).pipe(Effect.provide(engine.layer))
    if (ctx.json) {
      yield* output.out(jsonDocument(result, 2))
      return
    }
    for (const line of breakdownLines(result)) yield* output.out(line)
  })
