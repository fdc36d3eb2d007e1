/**
 * The work of `strata assemble` (loaded when it runs): one request through the pipeline,
 * printed as the provider's body (`--json`) or a readable summary (tiers, breakpoints,
 * simulated cache usage, tier changes), recorded in the session unless `--dry-run`.
 */
import { Clock, Effect, Ref } from "effect"
import { AssemblySession, renderCacheBlocks, renderTierChanges, SessionStore, formatTokens, Tokenizer, type AssemblyResult, type JournalSummary, type TierReport } from "@strata/core/effect"
import type { Message, PlacementResult } from "@strata/core"
import { assemble, normalizeSelection, rememberRequest, requestInput, simulateUsage, type Engine } from "../engine.ts"
import { UsageError } from "../errors.ts"
import { opt } from "../flags.ts"
import { Output, type Style } from "../output.ts"
import { addUsage, emptyUsage, saveJournal, saveSession, type SessionFile, type Usage } from "../session.ts"
import { prepare, warn } from "./shared.ts"
import type { Option } from "effect"
import type { PolicyName, ProviderName } from "../config.ts"
import type { CommandContext } from "../context.ts"

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

export interface TurnRecord {
  readonly ctx: CommandContext
  readonly session: SessionFile
  readonly engine: Engine
  readonly selected: ReadonlyArray<string>
  /** The request that was sent (or simulated); its tracker update is committed here. */
  readonly result: AssemblyResult
  readonly usage: Usage | undefined
  readonly usageSource: "provider" | "simulated" | "none"
  /**
   * What the turn adds to the history: a prompt and its reply, or the messages of one
   * round of a tool loop (its prompt, the assistant message with its calls and the tool
   * message answering them, stored in one write so a call never lands without its result).
   */
  readonly exchange: { readonly user: string; readonly assistant: string } | { readonly messages: ReadonlyArray<Message> } | undefined
  readonly atMs: number
}

/**
 * Persist one finished turn: commit the request's tracker update, then the history
 * exchange, the session file, the journal memory and the last request.
 */
export const recordTurn = (t: TurnRecord) =>
  Effect.gen(function* () {
    yield* t.result.commit
    const report = t.result.report
    let historyId = t.session.historyId
    if (t.exchange !== undefined) {
      const store = yield* SessionStore
      if (historyId === null) historyId = yield* store.create
      if (!("messages" in t.exchange)) yield* store.appendExchange(historyId, { role: "user", content: t.exchange.user }, { role: "assistant", content: t.exchange.assistant })
      else {
        // The last two (a call and its results) go in one synced write.
        const messages = t.exchange.messages
        const [last, beforeLast] = [messages.at(-1), messages.at(-2)]
        for (const m of messages.slice(0, beforeLast === undefined ? -1 : -2)) yield* store.append(historyId, m)
        if (beforeLast !== undefined && last !== undefined) yield* store.appendExchange(historyId, beforeLast, last)
        else if (last !== undefined) yield* store.append(historyId, last)
      }
    }
    const usage = t.usage ?? emptyUsage
    const map = t.engine.lastMap()
    const next: SessionFile = {
      ...t.session,
      historyId,
      selected: [...t.selected],
      turns: t.session.turns + 1,
      emptyTiersTotal: t.session.emptyTiersTotal + report.emptyTiers,
      totals: addUsage(t.session.totals, usage),
      last: {
        provider: t.ctx.config.provider,
        model: t.ctx.config.model,
        at: t.atMs,
        promptTokens: report.totalTokens,
        usage,
        usageSource: t.usage === undefined ? "none" : t.usageSource,
        changes: report.changes,
        emptyTiers: report.emptyTiers
      },
      aliases: t.session.aliases ?? (map === undefined ? null : map.aliases.map((a) => ({ token: a.token, prefix: a.prefix })))
    }
    yield* saveSession(t.ctx.root, next)
    const journal = yield* Ref.get((yield* AssemblySession).journal)
    if (journal !== undefined) yield* saveJournal(t.ctx.root, journal, (yield* Tokenizer).encoding)
    yield* rememberRequest(t.ctx.root, t.ctx.config.provider, t.ctx.config.model, t.result.placed.body, Math.floor(t.atMs / 1000))
    return next
  })

export interface AssembleFlags {
  readonly prompt: string
  readonly file: ReadonlyArray<string>
  readonly noFiles: boolean
  readonly reply: Option.Option<string>
  readonly provider: Option.Option<ProviderName>
  readonly model: Option.Option<string>
  readonly policy: Option.Option<PolicyName>
  readonly dryRun: boolean
}

export const runAssemble = (flags: AssembleFlags) =>
  Effect.gen(function* () {
    if (flags.noFiles && flags.file.length > 0) return yield* new UsageError({ reason: "--no-files and --file cannot be used together" })
    const { ctx, session, engine } = yield* prepare(
      { provider: opt(flags.provider), model: opt(flags.model), policy: opt(flags.policy) },
      { dryRun: flags.dryRun }
    )
    const output = yield* Output
    yield* Effect.gen(function* () {
      const selected = flags.noFiles ? [] : flags.file.length > 0 ? yield* normalizeSelection(flags.file) : session.selected
      yield* engine.symbolMap
      const { input, warnings } = yield* requestInput({ model: ctx.config.model, prompt: flags.prompt, selected, session })
      const result = yield* assemble(input)
      yield* warn([...warnings, ...result.warnings])
      const atMs = yield* Clock.currentTimeMillis
      const usage = yield* simulateUsage(ctx.root, ctx.config.provider, ctx.config.model, result.placed.body, Math.floor(atMs / 1000))
      if (!flags.dryRun) {
        const reply = opt(flags.reply)
        yield* recordTurn({
          ctx,
          session,
          engine,
          selected,
          result,
          usage,
          usageSource: "simulated",
          exchange: reply === undefined ? undefined : { user: result.userText, assistant: reply },
          atMs
        })
      }
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
        s.dim(flags.dryRun ? "Dry run: nothing in .strata/ was changed." : `Turn ${session.turns + 1} recorded in .strata/ (--dry-run leaves it untouched).`)
      )
    }).pipe(Effect.provide(engine.layer))
  })
