/**
 * Stage 6, `inputLimit`: keeps the request within the model's input limit
 * (pre-request shedding, docs/configuration.md). When the request and its output reserve pass 90% of the limit,
 * selected files leave the request, largest first, then the symbol map's least
 * referenced blocks, then the file tree. History is never shed here (compaction's job),
 * so a tool call is never parted from its result. A request still over the limit is
 * refused by the runner with `RequestTooLarge`.
 */
import { Context, Effect, Layer } from "effect"
import { blockTokens } from "../../assembly/parts.ts"
import { CACHED_TIERS } from "../../domain/Tier.ts"
import type { FileEntry, SymbolEntry } from "../base/entries.ts"
import type { LeftOutItem } from "../../breakdown/report.ts"
import { RequestLimits, resolveRequestLimits } from "./requestLimits.ts"
import { shedWarning } from "./internal/shedWarning.ts"
import type { AssemblyState, Stage } from "../base/state.ts"

/** Replace this stage with `Layer.succeed(InputLimitStage, myStage)`. */
export class InputLimitStage extends Context.Service<InputLimitStage, Stage>()("@strata/core/pipeline/InputLimit") {
  static readonly layer: Layer.Layer<InputLimitStage> = Layer.sync(InputLimitStage, () => inputLimit)
}

/**
 * The default stage. A request under the line is passed on as it is (no byte changes).
 * Over it, each step leaves out just enough (by the items' counts), lays the request out
 * again and measures it, until it is under or nothing of that kind is left.
 *
 * A layout with memory (the journal's frozen tiers and journal) shows what it froze
 * whatever the state says, so shedding a frozen block changes nothing there. Such a
 * request is first planned afresh (a rebuild drops superseded copies) and taken when
 * that alone fits; else files are shed from this request (its Working Files and its
 * journal update) without a rebuild; and only when that is not enough is it rebuilt and
 * shed in full. A rebuild for this says
 * `over the input limit`.
 */
export const inputLimit: Stage = {
  name: "inputLimit",
  run: (state) =>
    Effect.gen(function* () {
      const limits = resolveRequestLimits(state.input.model, yield* RequestLimits)
      const allowed = limits.shedLimitTokens - limits.outputReserveTokens
      const before = requestTokens(state)
      if (before <= allowed) return state
      let shed: Shed
      if (state.journalMemory === undefined) {
        shed = yield* shedAll(state, allowed, (s) => s.layout.plan(s))
      } else {
        // Planned without the layout's memory: the journal layout rebuilds, and says why.
        const afresh = (s: AssemblyState) =>
          Effect.map(s.layout.plan({ ...s, journalMemory: undefined }), (planned) =>
            planned.journal === undefined ? planned : { ...planned, journal: { ...planned.journal, rebuild: "over the input limit" as const } })
        const fresh = yield* afresh(state)
        const appended = fits(fresh, allowed) ? undefined : yield* shedFiles(state, allowed, (s) => s.layout.plan(s))
        shed = fits(fresh, allowed)
          ? { state: fresh, files: [], symbols: [], treeTokens: 0 }
          : appended !== undefined && fits(appended.state, allowed)
          ? appended
          : yield* shedAll(fresh, allowed, afresh)
      }
      const tokens = requestTokens(shed.state)
      const leftOut = { ...shed.state.leftOut, files: shed.files, symbols: shed.symbols, treeTokens: shed.treeTokens }
      return { ...shed.state, leftOut, warnings: [...shed.state.warnings, shedWarning(limits, before, tokens, leftOut)] }
    })
}

/** A state with what was shed to reach it. */
interface Shed {
  readonly state: AssemblyState
  readonly files: ReadonlyArray<LeftOutItem>
  readonly symbols: ReadonlyArray<LeftOutItem>
  readonly treeTokens: number
}

type Plan = (state: AssemblyState) => Effect.Effect<AssemblyState>

const fits = (state: AssemblyState, allowed: number): boolean => requestTokens(state) <= allowed

/** Selected files out, largest first (ties by path), until the request fits or none is left. */
const shedFiles = Effect.fnUntraced(function* (state: AssemblyState, allowed: number, plan: Plan) {
  let s = state
  let tokens = requestTokens(s)
  const files = [...s.files].sort((a, b) => b.tokens - a.tokens || (a.path < b.path ? -1 : 1))
  const out: Array<LeftOutItem> = []
  while (tokens > allowed && out.length < files.length) {
    for (const f of enough(files.slice(out.length), tokens - allowed)) out.push({ path: f.path, tokens: f.tokens })
    s = yield* plan(withoutFiles(s, new Set(out.map((f) => f.path))))
    tokens = requestTokens(s)
  }
  return { state: s, files: out, symbols: [], treeTokens: 0 } satisfies Shed
})

/** Files, then the least referenced symbol blocks, then the file tree, until the request fits. */
const shedAll = Effect.fnUntraced(function* (state: AssemblyState, allowed: number, plan: Plan) {
  const afterFiles = yield* shedFiles(state, allowed, plan)
  let s = afterFiles.state
  let tokens = requestTokens(s)
  const symbols: Array<LeftOutItem> = []
  const blocks = leastReferencedFirst(s)
  while (tokens > allowed && symbols.length < blocks.length) {
    for (const e of enough(blocks.slice(symbols.length), tokens - allowed)) symbols.push({ path: e.path, tokens: e.tokens })
    s = yield* plan(withoutSymbols(s, new Set(symbols.map((e) => e.path))))
    tokens = requestTokens(s)
  }
  let treeTokens = 0
  if (tokens > allowed && s.symbols.tree !== undefined) {
    s = yield* plan({ ...s, symbols: { ...s.symbols, tree: undefined } })
    treeTokens = Math.max(0, tokens - requestTokens(s))
  }
  return { state: s, files: afterFiles.files, symbols, treeTokens } satisfies Shed
})

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
