/**
 * Running the pipeline. `assemble` builds one request with its report and a pending
 * tracker update (run `commit` once the provider call succeeded); `getContextBreakdown`
 * runs the same stages up to the layout and returns the breakdown JSON. Without a
 * `Tracker` service a request falls back to flat assembly.
 */
import { Effect, Option, Ref } from "effect"
import { imagePart, limitUrls } from "../assembly/normalize.ts"
import { FILE_TREE_HEADER, REPO_MAP_HEADER } from "../assembly/headers.ts"
import { counted, countedTools, SECTION_SEPARATOR, syntheticMessages, toolsPart, type LayoutBlock } from "../assembly/parts.ts"
import { contextBreakdown, type ContextBreakdown } from "../breakdown/index.ts"
import { tierReport, type LayoutSummary, type TierReport } from "../breakdown/report.ts"
import type { NeutralRequest } from "../domain/Block.ts"
import { ItemKeys, type TierChange } from "../domain/Item.ts"
import { DEFAULT_THRESHOLDS } from "../domain/Tier.ts"
import { unknownModelWarning } from "../models/modelTable.ts"
import { Placement, type PlacementResult } from "../services/Placement.ts"
import { SymbolIndex } from "../services/SymbolIndex.ts"
import { Tracker, type TrackerConflict, type TrackerPersistError, type TrackerSnapshot } from "../services/Tracker.ts"
import { LIST_OVERHEAD_TOKENS, type TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { AssemblySession } from "./assemblySession.ts"
import { pipelineStages, type StageServices } from "./index.ts"
import type { ContextEditMemory } from "./base/contextEditMemory.ts"
import type { JournalMemory, RebuildReason } from "./base/journalMemory.ts"
import { assembleMessages } from "./seed/flat.ts"
import { LAYOUTS, LayoutMode } from "./layouts.ts"
import { seedLayout } from "./seed/seed.ts"
import { cutMap, mapRanking } from "./symbolMap/mapBudget.ts"
import {
  leftOutAnything,
  mapCutWarning,
  RequestLimits,
  resolveRequestLimits,
  type RequestLimitSettings,
  type ResolvedLimits
} from "./inputLimit/requestLimits.ts"
import { seedPlacement } from "./seed/seedPlacement.ts"
import { selectedFiles } from "./stages/activeFiles.ts"
import { shedWarning } from "./inputLimit/internal/shedWarning.ts"
import type { LeftOutItem } from "../breakdown/report.ts"
import { PlacementStage } from "./stages/providerPlacement.ts"
import { initialState, RequestTooLarge, StageError, type AssemblyError, type AssemblyInput, type FileContent, type AssemblyState, type Layout, type PipelineServices, type Stage } from "./base/state.ts"

/** One assembled request; `Body` is the provider body's type when the plugin is known (see the turn API). */
export interface AssemblyResult<Body = unknown> {
  /** `flat` when no `Tracker` was provided. */
  readonly mode: "tiered" | "flat"
  /** Provider-neutral blocks, messages and breakpoints. */
  readonly request: NeutralRequest
  /** The provider's request body, from the `Placement` service. */
  readonly placed: PlacementResult<Body>
  readonly report: TierReport
  /** The same layout as the context breakdown JSON (promotions are this request's). */
  readonly breakdown: ContextBreakdown
  /** URLs cut, missing symbol index...: say these to the user. */
  readonly warnings: ReadonlyArray<string>
  /** The prompt without the system reminder, to store in history. */
  readonly userText: string
  /** Journal layout only: why this request rebuilt (undefined: it appended) and the journal's size. */
  readonly journal?: JournalSummary
  /**
   * Commit this request's tracker update. Run it when the request succeeded; a failed
   * request skips it and leaves the tracker untouched. Fails with `TrackerConflict` when
   * another commit happened since this request read the tracker.
   */
  readonly commit: Effect.Effect<void, TrackerConflict | TrackerPersistError>
}

/** What the journal layout did in one request. */
export interface JournalSummary {
  readonly rebuild: RebuildReason
  /** Tokens in the journal (L3): history and updates. */
  readonly journalTokens: number
  /** Tokens of superseded copies the request still carries. */
  readonly staleTokens: number
}

/** Services `assemble` and `getContextBreakdown` need (a `Tracker`, `SymbolIndex` and `AssemblySession` are optional). */
export type AssemblyServices = StageServices | Tokenizer

/** A tracker that knows nothing, for flat assembly and breakdowns without a tracker. */
export const EMPTY_TRACKER: TrackerSnapshot = {
  version: 0,
  baseVersion: 0,
  initialized: false,
  thresholds: DEFAULT_THRESHOLDS,
  get: () => undefined,
  tierOf: () => undefined,
  itemsIn: () => [],
  initialize: () => ({ snapshot: EMPTY_TRACKER, changes: [] }),
  update: () => ({ snapshot: EMPTY_TRACKER, changes: [] })
}

/** URLs cut to 3 (with a warning), counted, and images as parts; an unknown model is named in every result. */
const normalize = (input: AssemblyInput, counter: TokenCounter) => {
  const { urls, warning } = limitUrls(input.urls ?? [])
  const modelWarning = unknownModelWarning(input.model)
  return {
    warnings: [...(modelWarning === undefined ? [] : [modelWarning]), ...(warning === undefined ? [] : [warning])],
    urls: urls.map((u) => ({ url: u.url, key: ItemKeys.url(u.url), content: counted(u.content, counter) })),
    images: (input.images ?? []).map(imagePart)
  }
}

const runStages = (stages: ReadonlyArray<Stage>, start: AssemblyState): Effect.Effect<AssemblyState, AssemblyError> =>
  Effect.gen(function* () {
    let state = start
    for (const stage of stages) state = yield* stage.run(state)
    return state
  })

/** The stages a breakdown runs: everything before the request is built. */
const layoutStages = (stages: ReadonlyArray<Stage>): ReadonlyArray<Stage> => {
  const end = stages.findIndex((s) => s.name === "placement" || s.name === "track")
  return end < 0 ? stages : stages.slice(0, end)
}

interface Setup {
  readonly counter: TokenCounter
  readonly services: PipelineServices
  readonly tracker: Option.Option<Tracker["Service"]>
  readonly session: AssemblySession["Service"] | undefined
  readonly emptyTiersBefore: number
  readonly stages: ReadonlyArray<Stage>
  readonly layout: { readonly layout: Layout; readonly memory: JournalMemory | undefined; readonly edits: ContextEditMemory | undefined }
  readonly limits: RequestLimitSettings
}

/** The layout mode and the memories of the last committed request (context editing's also travels in the journal's, for a restored session). */
const layoutMemory = (session: AssemblySession["Service"] | undefined) =>
  Effect.gen(function* () {
    const layout = LAYOUTS[yield* LayoutMode]
    if (session === undefined) return { layout, memory: undefined, edits: undefined }
    const memory = yield* Ref.get(session.journal)
    return { layout, memory, edits: (yield* Ref.get(session.contextEdits)) ?? memory?.edits }
  })

const setup: Effect.Effect<Setup, StageError, AssemblyServices> = Effect.gen(function* () {
  const session = Option.getOrUndefined(yield* Effect.serviceOption(AssemblySession))
  const symbolIndex = yield* Effect.serviceOption(SymbolIndex)
  const placement = yield* Effect.serviceOption(Placement)
  return {
    counter: yield* Tokenizer,
    services: {
      symbolIndex: Option.getOrUndefined(symbolIndex),
      placement: Option.getOrElse(placement, () => seedPlacement)
    },
    tracker: yield* Effect.serviceOption(Tracker),
    session,
    emptyTiersBefore: session === undefined ? 0 : yield* Ref.get(session.emptyTiers),
    stages: yield* pipelineStages,
    layout: yield* layoutMemory(session),
    limits: yield* RequestLimits
  }
})

/**
 * Flat fallback (`assembleMessages`, docs/pipeline.md): the whole request as one uncached block,
 * with the symbol map in the system message when an index is provided.
 */
const flatState = Effect.fnUntraced(function* (input: AssemblyInput, counter: TokenCounter, services: PipelineServices, settings: RequestLimitSettings) {
  const normalized = normalize(input, counter)
  const state = initialState(input, counter, services, EMPTY_TRACKER, normalized, { layout: seedLayout, memory: undefined })
  const index = services.symbolIndex
  const map = input.useRepoMap === false || index === undefined ? undefined : yield* index.snapshot
  const files = selectedFiles(input.files ?? [])
  const selected = new Set(files.map((f) => f.path))
  // The map within its budget, as the tiered pipeline's symbolData stage cuts it.
  const limits = resolveRequestLimits(input.model, settings)
  const separator = counter.count(SECTION_SEPARATOR)
  const blocks = new Map<string, number>()
  for (const path of map?.symbolFiles ?? []) {
    const block = map?.block(path)
    if (block !== undefined && block.length > 1) blocks.set(path, counter.count(block) + separator)
  }
  const treeTokens = map === undefined || map.fileTree.length === 0 ? 0 : counter.count(map.fileTree) + counter.count(FILE_TREE_HEADER)
  const cut = map === undefined
    ? undefined
    : cutMap({ blocks, ranked: () => (settings.mapRanking === "focus" ? map.rankFor?.({ files: files.map((f) => f.path) }) : undefined) ?? mapRanking(map), legendTokens: counter.count(map.legend) + counter.count(REPO_MAP_HEADER), treeTokens, budgetTokens: limits.mapTokens })
  const symbolMap = map?.symbolFiles
    .filter((p) => !selected.has(p) && (cut?.files === undefined || cut.files.has(p)))
    .flatMap((p) => map.block(p)?.replace(/\n$/, "") ?? [])
    .join("\n\n")
  const mapLeftOut = cut === undefined
    ? undefined
    : { budgetTokens: limits.mapTokens, budget: limits.mapBudget, mapTokens: cut.mapTokens, files: cut.leftOutFiles, fileTokens: cut.leftOutTokens, treeTokens: cut.treeLeftOut ? treeTokens : 0 }
  const warning = mapLeftOut === undefined ? undefined : mapCutWarning(mapLeftOut, limits)
  const layOut = (kept: ReadonlyArray<FileContent>) => {
    const messages = assembleMessages({
      systemPrompt: input.systemPrompt,
      symbolLegend: map?.legend,
      symbolMap,
      fileTree: cut?.treeLeftOut === true ? undefined : map?.fileTree,
      urlContext: normalized.urls.map((u) => u.content.text),
      files: kept,
      history: input.history ?? [],
      prompt: input.prompt,
      systemReminder: input.systemReminder ?? "",
      images: normalized.images
    })
    return { messages, tokens: counter.countMessages(messages) - LIST_OVERHEAD_TOKENS }
  }
  const laid = layOut(files)
  const shed = shedFlatFiles(files, laid, layOut, limits, counter)
  const { messages, tokens } = shed.laid
  const block: LayoutBlock = {
    tier: "active",
    parts: [...toolsPart(countedTools(input.tools, counter)), { name: "flat", messages, tokens, contents: [{ type: "messages", count: messages.length, tokens }], items: [] }]
  }
  return {
    ...state,
    blocks: [block],
    leftOut: { ...state.leftOut, map: mapLeftOut, files: shed.files },
    warnings: [...state.warnings, ...(warning === undefined ? [] : [warning]), ...(shed.warning === undefined ? [] : [shed.warning])]
  }
})

/**
 * The flat request's pre-request shedding, by the `inputLimit` stage's rule
 * (docs/configuration.md): over the shedding line (with the output reserve), the largest
 * files leave, until it fits or none is left. Only the flat messages are laid out again.
 */
const shedFlatFiles = <L extends { readonly tokens: number }>(
  files: ReadonlyArray<FileContent>,
  laid: L,
  layOut: (kept: ReadonlyArray<FileContent>) => L,
  limits: ResolvedLimits,
  counter: TokenCounter
): { readonly laid: L; readonly files: ReadonlyArray<LeftOutItem>; readonly warning?: string } => {
  const allowed = limits.shedLimitTokens - limits.outputReserveTokens
  if (laid.tokens <= allowed) return { laid, files: [] }
  const largestFirst = files
    .map((f) => ({ path: f.path, tokens: counter.count(f.content) }))
    .sort((a, b) => b.tokens - a.tokens || (a.path < b.path ? -1 : 1))
  const out: Array<LeftOutItem> = []
  let now = laid
  for (const file of largestFirst) {
    if (now.tokens <= allowed) break
    out.push(file)
    const gone = new Set(out.map((f) => f.path))
    now = layOut(files.filter((f) => !gone.has(f.path)))
  }
  return { laid: now, files: out, warning: shedWarning(limits, laid.tokens, now.tokens, { files: out, symbols: [], treeTokens: 0 }) }
}

const summaryOf = (state: AssemblyState, mode: "tiered" | "flat", changes: ReadonlyArray<TierChange>, emptyTiersBefore: number): LayoutSummary => ({
  model: state.input.model,
  mode,
  blocks: state.blocks,
  thresholds: state.tracker.thresholds,
  changes,
  emptyTiersBefore,
  contextEdits: state.contextEdits,
  // A flat request is one part: its acknowledgements are not told apart from the history's replies.
  ...(mode === "tiered" ? { synthetic: syntheticMessages(state.blocks, state.counter) } : {}),
  ...(leftOutAnything(state.leftOut) ? { leftOut: state.leftOut } : {})
})

/**
 * The runner's last word on size: a request whose tokens and output reserve pass the
 * model's input limit is refused, whatever the stages did (a replaced stage, an extra
 * one adding content, flat assembly, history too large to shed).
 */
const withinInputLimit = (report: TierReport, limits: ResolvedLimits): Effect.Effect<void, RequestTooLarge> => {
  if (report.totalTokens + limits.outputReserveTokens <= limits.maxInputTokens) return Effect.void
  const c = report.categories
  const mapTokens = c.legend + c.symbols + c.tree
  return Effect.fail(
    new RequestTooLarge({
      model: limits.model,
      maxInputTokens: limits.maxInputTokens,
      outputReserveTokens: limits.outputReserveTokens,
      requestTokens: report.totalTokens,
      historyTokens: c.history,
      fileTokens: c.files,
      mapTokens,
      otherTokens: report.totalTokens - c.history - c.files - mapTokens
    })
  )
}

/**
 * Assemble one request through the pipeline's stages.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { assemble, Pipeline, Tokenizer } from "@strata/core/effect"
 * import { TrackerLayer } from "@strata/tiers"
 * const program = Effect.gen(function* () {
 *   const result = yield* assemble({ model: "gpt-4o", prompt: "Hi", systemPrompt: "Be brief." })
 *   // ... send result.placed.body; on success:
 *   yield* result.commit
 *   return result.report
 * }).pipe(Effect.provide(Layer.mergeAll(Pipeline.layer, Tokenizer.layerEstimate, TrackerLayer.memory())))
 * const report = await Effect.runPromise(program)
 * ```
 */
export const assemble = Effect.fn("Strata.assemble")(function* (input: AssemblyInput) {
  const { counter, services, tracker, session, emptyTiersBefore, stages, layout, limits } = yield* setup
  const resolved = resolveRequestLimits(input.model, limits)
  if (Option.isNone(tracker)) {
    const flat = yield* flatState(input, counter, services, limits)
    const state = yield* (yield* PlacementStage).run(flat)
    const summary = summaryOf(state, "flat", [], emptyTiersBefore)
    const report = tierReport(summary)
    yield* withinInputLimit(report, resolved)
    return yield* result(state, "flat", summary, Effect.void, report)
  }
  const current = yield* tracker.value.current
  const state = yield* runStages(stages, initialState(input, counter, services, current, normalize(input, counter), layout))
  const pending = state.pending
  // Context editing's memory learns whether the breakpoints asked for the long cache (its expiry test).
  const edits = state.contextEdits === undefined ? undefined : { ...state.contextEdits.memory, longTtl: state.request?.breakpoints.some((b) => b.ttl === "1h") ?? false }
  const journal = state.journal === undefined ? undefined : { ...state.journal.memory, edits }
  const summary = summaryOf(state, "tiered", pending?.changes ?? state.changes, emptyTiersBefore)
  const report = tierReport(summary)
  yield* withinInputLimit(report, resolved)
  const commit = pending === undefined
    ? Effect.void
    : Effect.gen(function* () {
      yield* tracker.value.commit(pending.snapshot)
      if (session === undefined) return
      yield* Ref.update(session.emptyTiers, (n) => n + report.emptyTiers)
      yield* Ref.set(session.lastChanges, pending.changes)
      yield* Ref.set(session.journal, journal)
      yield* Ref.set(session.contextEdits, edits)
    })
  return yield* result(state, "tiered", summary, commit, report)
})

const result = (
  state: AssemblyState,
  mode: "tiered" | "flat",
  summary: LayoutSummary,
  commit: Effect.Effect<void, TrackerConflict | TrackerPersistError>,
  report: TierReport = tierReport(summary)
): Effect.Effect<AssemblyResult, StageError> =>
  state.request === undefined || state.placed === undefined
    ? Effect.fail(new StageError({ stage: "placement", reason: "no stage produced a request; keep a stage named \"placement\" in the pipeline" }))
    : Effect.succeed({
      mode,
      request: state.request,
      placed: state.placed,
      report,
      breakdown: contextBreakdown(summary),
      warnings: state.warnings,
      userText: state.input.prompt,
      commit,
      ...(state.journal === undefined ? {} : {
        journal: {
          rebuild: state.journal.rebuild,
          journalTokens: state.journal.journal.reduce((n, p) => n + p.tokens, 0),
          staleTokens: state.journal.memory.staleTokens
        }
      })
    })

/**
 * The context breakdown of what `assemble(input)` would send now: the same stages up to
 * the layout, nothing committed. Promotions and demotions are the last committed update's.
 *
 * @example
 * ```ts
 * import { getContextBreakdown } from "@strata/core/effect"
 * // yield* getContextBreakdown(input) -> { blocks, total_tokens, cached_share, ... }
 * ```
 */
export const getContextBreakdown = Effect.fn("Strata.getContextBreakdown")(function* (input: AssemblyInput) {
  const { counter, services, tracker, session, emptyTiersBefore, stages, layout, limits } = yield* setup
  const lastChanges = session === undefined ? [] : yield* Ref.get(session.lastChanges)
  if (Option.isNone(tracker)) {
    const state = yield* flatState(input, counter, services, limits)
    return contextBreakdown(summaryOf(state, "flat", lastChanges, emptyTiersBefore))
  }
  const current = yield* tracker.value.current
  const state = yield* runStages(layoutStages(stages), initialState(input, counter, services, current, normalize(input, counter), layout))
  return contextBreakdown(summaryOf(state, "tiered", lastChanges, emptyTiersBefore))
})
