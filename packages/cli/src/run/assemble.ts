/**
 * The work of `strata assemble` (loaded when it runs): one request through the pipeline,
 * printed as the provider's body (`--json`) or a readable summary (tiers, breakpoints,
 * simulated cache usage, tier changes), recorded in the session unless `--dry-run`.
 */
import { Clock, Effect } from "effect"
import { beginTurn, renderCacheBlocks, renderTierChanges, formatTokens, selectedFilesInput, type JournalSummary, type TierReport, type Turn, type Usage } from "@strata/core/effect"
import type { Message, PlacementResult, ToolDefinition } from "@strata/core"
import { UsageError } from "../support/errors.ts"
import { opt } from "../support/flags.ts"
import { Output, type Style } from "../support/output.ts"
import { normalizeSelection, rememberRequest, simulateUsage } from "../support/wiring.ts"
import { REPO_TOOLS } from "../tools/index.ts"
import { prepare, warn, type Prepared } from "./shared.ts"
import type { Option } from "effect"
import type { PolicyName, ProviderName } from "../support/config.ts"

/**
 * Conflicts a turn's commit re-assembles and retries before giving up: each retry means
 * another process committed in between, so this many processes can record at once.
 */
export const COMMIT_RETRIES = 32

/** Breakpoint lines: where each landed, and why any were dropped. Pure. */
export const describeBreakpoints = (placed: PlacementResult): ReadonlyArray<string> => [
  ...placed.breakpoints.map((b) => `breakpoint ${b.tier} at ${b.location} (prefix ${formatTokens(b.prefixTokens)} tokens${b.ttl ? `, ttl ${b.ttl}` : ""})`),
  ...placed.dropped.map((d) => `no breakpoint for ${d.tier}: ${d.reason}`)
]

/**
 * The journal layout's line: whether this request rebuilt the frozen tiers (and why) or
 * appended to the journal, with the journal's size and the superseded tokens it carries.
 * Nothing in seed layout. Pure.
 */
export const describeJournal = (journal: JournalSummary | undefined): ReadonlyArray<string> =>
  journal === undefined
    ? []
    : [`journal (L3): ${journal.rebuild === undefined ? "appended" : `rebuilt (${journal.rebuild})`}, ${formatTokens(journal.journalTokens)} tokens, ${formatTokens(journal.staleTokens)} superseded`]

/**
 * Context editing's line, when the history holds tool results: how many are shown as
 * placeholders and the tokens that saves (and how many this request cleared). Pure.
 */
export const describeContextEditing = (edits: TierReport["contextEditing"]): ReadonlyArray<string> =>
  edits === undefined
    ? []
    : [`context editing: ${edits.clearedResults} of ${edits.toolResults} tool results cleared (${formatTokens(edits.clearedTokens)} tokens)${edits.newlyClearedResults > 0 ? `, ${edits.newlyClearedResults} by this request` : ""}`]

/** The usage line of a summary. Pure. */
export const describeUsage = (usage: Usage | undefined, source: "provider" | "simulated", provider: string): string =>
  usage === undefined
    ? source === "provider"
      ? `${provider} reported no usage for this request; cached share above is Strata's estimate`
      : `no cache simulator for ${provider}; cached share above is Strata's estimate`
    : `${source === "simulated" ? `simulated ${provider} cache` : provider}: read ${formatTokens(usage.cacheRead)}, write ${formatTokens(usage.cacheWrite)}, uncached ${formatTokens(usage.input)}${
        usage.output > 0 ? `, output ${formatTokens(usage.output)}` : ""
      }`

/** Colour the HUD's change lines: promotions green, demotions yellow. */
export const colourChanges = (lines: ReadonlyArray<string>, s: Style): ReadonlyArray<string> =>
  lines.map((l) => (/Promoted|Initial/.test(l) ? s.green(l) : /Demoted|Removed/.test(l) ? s.yellow(l) : l))

/**
 * Begin the session's next turn: the request assembled from the store's snapshot (history,
 * tracker, journal memory and record, all of one version) with the selected files, and
 * `tools` offered to the model when given.
 */
export const beginCliTurn = (prepared: Prepared, prompt: string, selected: ReadonlyArray<string>, tools?: ReadonlyArray<ToolDefinition>) =>
  Effect.gen(function* () {
    const { ctx, state } = prepared
    const { input, warnings } = yield* selectedFilesInput({ model: ctx.config.model, prompt, selected })
    const turn = yield* beginTurn({ session: state.key, input: tools === undefined ? input : { ...input, tools } }, { tracker: "store" })
    yield* warn([...warnings, ...turn.warnings, ...turn.assembly.warnings])
    return turn
  })

/**
 * Record a finished turn as ONE commit to the session's store: the exchange (when there is
 * a reply: a text, or a tool round's messages, the calls with their results), the tracker,
 * the journal memory and the record. Another process committing
 * first makes the turn re-assemble from the new state and commit again (the reply is
 * kept). Then the request's body is remembered for the next simulation.
 */
export const recordCliTurn = (
  prepared: Prepared,
  turn: Turn,
  outcome: { readonly reply: string | ReadonlyArray<Message> | undefined; readonly usage: Usage | undefined; readonly usageSource: "provider" | "simulated"; readonly atMs: number }
) =>
  Effect.gen(function* () {
    const committed = yield* turn.commit(
      {
        ...(outcome.reply === undefined ? {} : { reply: typeof outcome.reply === "string" ? [{ role: "assistant" as const, content: outcome.reply }] : outcome.reply }),
        usage: outcome.usage,
        usageSource: outcome.usageSource,
        at: outcome.atMs,
        source: "cli"
      },
      { retries: COMMIT_RETRIES }
    )
    const { ctx } = prepared
    // After the commit: a lost body only costs the next simulation, but a link out of the
    // repository where it goes still fails the command (PathOutsideRepo), as every state file does.
    yield* rememberRequest(ctx.root, ctx.config.provider, ctx.config.model, turn.assembly.placed.body, Math.floor(outcome.atMs / 1000))
    yield* warn(committed.warnings)
    return committed
  })

export interface AssembleFlags {
  readonly prompt: string
  readonly file: ReadonlyArray<string>
  readonly noFiles: boolean
  /** Leave out the repository tools chat offers (they lead the prefix: chat's cache is then not shared). */
  readonly noTools: boolean
  readonly reply: Option.Option<string>
  readonly provider: Option.Option<ProviderName>
  readonly model: Option.Option<string>
  readonly policy: Option.Option<PolicyName>
  readonly dryRun: boolean
}

export const runAssemble = (flags: AssembleFlags) =>
  Effect.gen(function* () {
    if (flags.noFiles && flags.file.length > 0) return yield* new UsageError({ reason: "--no-files and --file cannot be used together" })
    const prepared = yield* prepare(
      { provider: opt(flags.provider), model: opt(flags.model), policy: opt(flags.policy) },
      { dryRun: flags.dryRun }
    )
    const { ctx, state, engine } = prepared
    const output = yield* Output
    yield* Effect.gen(function* () {
      const selected = flags.noFiles ? [] : flags.file.length > 0 ? yield* normalizeSelection(flags.file) : state.record.selected
      yield* engine.symbolMap
      const turn = yield* beginCliTurn(prepared, flags.prompt, selected, flags.noTools ? undefined : REPO_TOOLS)
      const result = turn.assembly
      const atMs = yield* Clock.currentTimeMillis
      const usage = yield* simulateUsage(ctx.root, ctx.config.provider, ctx.config.model, { body: result.placed.body, promptTokens: result.report.totalTokens, breakpoints: result.placed.breakpoints.map((b) => b.prefixTokens) }, Math.floor(atMs / 1000))
      const committed = flags.dryRun ? undefined : yield* recordCliTurn(prepared, turn, { reply: opt(flags.reply), usage, usageSource: "simulated", atMs })
      if (ctx.json) {
        yield* output.out(JSON.stringify(result.placed.body, null, 2))
        return
      }
      const s = output.style
      const messages = result.request.messages.length
      yield* output.out(
        s.bold(`${ctx.config.provider} request for ${ctx.config.model}: ${messages} messages, ${formatTokens(result.report.totalTokens)} tokens`) +
          (result.mode === "flat" ? s.yellow(" (flat: no tracker)") : "")
      )
      for (const line of renderCacheBlocks(result.report)) yield* output.out(line)
      for (const line of describeBreakpoints(result.placed)) yield* output.out(s.dim(line))
      for (const line of describeJournal(result.journal)) yield* output.out(s.dim(line))
      for (const line of describeContextEditing(result.report.contextEditing)) yield* output.out(s.dim(line))
      yield* output.out(describeUsage(usage, "simulated", ctx.config.provider))
      for (const line of colourChanges(renderTierChanges(result.report), s)) yield* output.out(line)
      yield* output.out(
        s.dim(committed === undefined ? "Dry run: nothing in .strata/ was changed." : `Turn ${committed.record.turns} recorded in the session (--dry-run records nothing).`)
      )
    }).pipe(Effect.provide(engine.layer))
  })
