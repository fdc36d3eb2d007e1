/**
 * Stage 6, `inputLimit`: keeps the request within the model's input limit (seed 004,
 * "Pre-Request Shedding"). When the request and its output reserve pass 90% of the limit,
 * selected files leave the request, largest first, then the symbol map's least
 * referenced blocks, then the file tree. History is never shed here (compaction's job),
 * so a tool call is never parted from its result. A request still over the limit is
 * refused by the runner with `RequestTooLarge`.
 */
import { Context, Effect, Layer } from "effect"
import { blockTokens } from "../../assembly/parts.ts"
import { CACHED_TIERS } from "../../domain/Tier.ts"
import type { FileEntry, SymbolEntry } from "../entries.ts"
import type { LeftOutItem } from "../../breakdown/report.ts"
import { RequestLimits, resolveRequestLimits, type ResolvedLimits } from "../requestLimits.ts"
import type { AssemblyState, Stage } from "../state.ts"

/** Replace this stage with `Layer.succeed(InputLimitStage, myStage)`. */
export class InputLimitStage extends Context.Service<InputLimitStage, Stage>()("@strata/core/pipeline/InputLimit") {
  static readonly layer: Layer.Layer<InputLimitStage> = Layer.sync(InputLimitStage, () => inputLimit)
}

/**
 * The default stage. A request under the line is passed on as it is (no byte changes).
 * Over it, each step leaves out just enough (by the items' counts), lays the request out
 * again and measures it, until it is under or nothing of that kind is left. With the
 * layout's memory set aside first when that makes the request smaller (the journal
 * layout then rebuilds its frozen tiers: superseded copies and journaled files go).
 */
export const inputLimit: Stage = {
  name: "inputLimit",
  run: (state) =>
    Effect.gen(function* () {
      const limits = resolveRequestLimits(state.input.model, yield* RequestLimits)
      const allowed = limits.shedLimitTokens - limits.outputReserveTokens
      const before = requestTokens(state)
      if (before <= allowed) return state
      let s = state
      let tokens = before
      // Planned without the layout's memory (a rebuild), when that is smaller: say why.
      let forgot = false
      const because = (planned: AssemblyState): AssemblyState =>
        forgot && planned.journal !== undefined ? { ...planned, journal: { ...planned.journal, rebuild: "over the input limit" } } : planned
      if (s.journalMemory !== undefined) {
        const fresh = yield* s.layout.plan({ ...s, journalMemory: undefined })
        const freshTokens = requestTokens(fresh)
        if (freshTokens < tokens) {
          forgot = true
          s = because(fresh)
          tokens = freshTokens
        }
      }
      const replan = (next: AssemblyState) => Effect.map(next.layout.plan(next), because)
      const shedFiles: Array<LeftOutItem> = []
      const files = [...s.files].sort((a, b) => b.tokens - a.tokens || (a.path < b.path ? -1 : 1))
      while (tokens > allowed && shedFiles.length < files.length) {
        const dropped = enough(files.slice(shedFiles.length), tokens - allowed)
        shedFiles.push(...dropped.map((f) => ({ path: f.path, tokens: f.tokens })))
        s = yield* replan(withoutFiles(s, new Set(shedFiles.map((f) => f.path))))
        tokens = requestTokens(s)
      }
      const shedSymbols: Array<LeftOutItem> = []
      const blocks = leastReferencedFirst(s)
      while (tokens > allowed && shedSymbols.length < blocks.length) {
        const dropped = enough(blocks.slice(shedSymbols.length), tokens - allowed)
        shedSymbols.push(...dropped.map((e) => ({ path: e.path, tokens: e.tokens })))
        s = yield* replan(withoutSymbols(s, new Set(shedSymbols.map((e) => e.path))))
        tokens = requestTokens(s)
      }
      let treeTokens = 0
      const tree = s.symbols.tree
      if (tokens > allowed && tree !== undefined) {
        s = yield* replan({ ...s, symbols: { ...s.symbols, tree: undefined } })
        treeTokens = Math.max(0, tokens - requestTokens(s))
        tokens = requestTokens(s)
      }
      const leftOut = { ...s.leftOut, files: shedFiles, symbols: shedSymbols, treeTokens }
      return { ...s, leftOut, warnings: [...s.warnings, shedWarning(limits, before, tokens, leftOut)] }
    })
}

/** The request's tokens as the layout would send it now (the review context, added after the layout, counted too). */
const requestTokens = (state: AssemblyState): number => {
  let tokens = 0
  for (const block of state.layout.blocks(state)) tokens += blockTokens(block)
  const review = state.input.review ?? ""
  return review === "" ? tokens : tokens + state.counter.count(review)
}

/** The first items whose tokens cover `excess` (at least one). */
const enough = <A extends { readonly tokens: number }>(items: ReadonlyArray<A>, excess: number): ReadonlyArray<A> => {
  let covered = 0
  let n = 0
  while (n < items.length && (n === 0 || covered < excess)) covered += items[n++]!.tokens
  return items.slice(0, n)
}

const withoutFiles = (state: AssemblyState, shed: ReadonlySet<string>): AssemblyState => {
  const keep = (files: ReadonlyArray<FileEntry>) => files.filter((f) => !shed.has(f.path))
  const t = state.fileTiers
  return { ...state, files: keep(state.files), fileTiers: { L0: keep(t.L0), L1: keep(t.L1), L2: keep(t.L2), L3: keep(t.L3), active: keep(t.active) } }
}

const withoutSymbols = (state: AssemblyState, shed: ReadonlySet<string>): AssemblyState => {
  const keep = (entries: ReadonlyArray<SymbolEntry>) => entries.filter((e) => !shed.has(e.path))
  const t = state.symbols.tiers
  return { ...state, symbols: { ...state.symbols, entries: keep(state.symbols.entries), tiers: { L0: keep(t.L0), L1: keep(t.L1), L2: keep(t.L2), L3: keep(t.L3) } } }
}

/** The rendered symbol blocks, least referenced first (reverse path order without a ranking). */
const leastReferencedFirst = (state: AssemblyState): ReadonlyArray<SymbolEntry> => {
  const rendered = new Map<string, SymbolEntry>()
  for (const t of CACHED_TIERS) for (const e of state.symbols.tiers[t]) rendered.set(e.path, e)
  const order = state.symbols.ranked?.() ?? state.symbols.entries.map((e) => e.path)
  const out: Array<SymbolEntry> = []
  for (let i = order.length - 1; i >= 0; i--) {
    const e = rendered.get(order[i]!)
    if (e === undefined) continue
    out.push(e)
    rendered.delete(e.path)
  }
  // Blocks the ranking does not know go first.
  return [...[...rendered.values()].reverse(), ...out]
}

const fmt = (n: number): string => n.toLocaleString("en-US")

/** What shedding did, for the user. */
const shedWarning = (
  limits: ResolvedLimits,
  before: number,
  after: number,
  leftOut: { readonly files: ReadonlyArray<LeftOutItem>; readonly symbols: ReadonlyArray<LeftOutItem>; readonly treeTokens: number }
): string => {
  const share = Math.round(100 * (limits.shedLimitTokens / limits.maxInputTokens))
  const head = `The request (${fmt(before)} tokens, with ${fmt(limits.outputReserveTokens)} more kept for the reply) is over ${share}% of ${limits.model}'s ${fmt(limits.maxInputTokens)}-token input limit`
  const named = (items: ReadonlyArray<LeftOutItem>, max: number) =>
    items.slice(0, max).map((i) => `${i.path} (${fmt(i.tokens)} tokens)`).join(", ") + (items.length > max ? `, and ${items.length - max} more` : "")
  const sum = (items: ReadonlyArray<LeftOutItem>) => items.reduce((n, i) => n + i.tokens, 0)
  const parts = [
    ...(leftOut.files.length > 0 ? [`the files ${named(leftOut.files, 5)}`] : []),
    ...(leftOut.symbols.length > 0 ? [`the symbol blocks of the ${fmt(leftOut.symbols.length)} least referenced files (${fmt(sum(leftOut.symbols))} tokens)`] : []),
    ...(leftOut.treeTokens > 0 ? [`the file tree (${fmt(leftOut.treeTokens)} tokens)`] : [])
  ]
  const did = parts.length === 0 ? "" : `; left out of this request: ${parts.join(", ")}`
  const still = after + limits.outputReserveTokens > limits.shedLimitTokens
    ? `. It is still ${fmt(after)} tokens: compact or clear the history, or shorten the prompt`
    : `, ${fmt(after)} tokens remain`
  return `${head}${did}${still}.`
}
