/**
 * The journal layout (`LayoutMode` "journal", the default): how a Strata request keeps its
 * cached prefix when the repository changes under it.
 *
 * The tiered layout (docs/pipeline.md#the-tiered-layout) rewrites a tier whenever one of its items changes, and everything
 * after it too, so one edited file busts the symbol map and the history behind it; in a
 * replayed coding session that happens almost every turn. The journal layout freezes
 * the stable tiers instead and appends what changed:
 *
 * - L0, L1 and L2 are *frozen*: at a rebuild they take the tracker's tiers (symbols
 *   and reference files; the tracker's L3 and newer entries go to L2, with the file
 *   tree), then they render byte-identically until the next rebuild.
 * - L3 is the *journal*: every history message as soon as it exists, and after it, per
 *   request, one update pair with the symbol blocks that changed since the model last
 *   saw them (and files added or removed), and the selected files new or changed since
 *   it saw them, once each. It only grows, so the previous request's prefix stays cached
 *   and each request writes only what is new.
 * - The active block keeps the prompt and, in a chat turn, the Working Files: selected
 *   files shown for the first time since they entered or changed (they are journaled
 *   when they come back unchanged; in an agent's loop at once).
 *
 * When to rebuild and what to append is planned by `journalPlan.ts`.
 */
import { Clock, Effect } from "effect"
import {
  conversationalBlocks,
  neutralRequest,
  NOTHING,
  promptPart,
  sectionOf,
  systemPart,
  tierContentPart,
  toolsPart,
  treePart,
  urlsPart,
  workingFilesPart,
  type LayoutBlock
} from "../../assembly/parts.ts"
import { ItemKeys } from "../../domain/Item.ts"
import type { JournalPlan } from "../base/journalMemory.ts"
import type { AssemblyState, Layout } from "../base/state.ts"
import { CacheExpiryMillis, CachePrices } from "../base/providerCache.ts"
import { AdaptiveTtl, planJournal } from "./journalPlan.ts"
import { promptOf, seedLayout, systemPromptOf, toolsOf } from "../seed/seed.ts"

/** The journal layout's request, top to bottom, as this request's plan has it. */
export const journalBlocks = (state: AssemblyState, plan: JournalPlan): ReadonlyArray<LayoutBlock> => {
  const c = state.counter
  // After the first history message no section is acknowledged by a synthetic turn: the
  // journal's updates and the active sections ride in the user messages around them.
  return conversationalBlocks([
    // Frozen at the last rebuild: byte-identical until the next one.
    { tier: "L0", parts: [...toolsPart(toolsOf(state)), ...systemPart({ ...plan.frozen.L0, system: systemPromptOf(state), systemItems: [ItemKeys.system], legend: state.symbols.legend }, c)] },
    { tier: "L1", parts: tierContentPart("L1", plan.frozen.L1, c) },
    { tier: "L2", parts: [...tierContentPart("L2", plan.frozen.L2, c), ...treePart(plan.tree ?? NOTHING, c)] },
    // The journal: history and update pairs, append-only.
    { tier: "L3", parts: plan.journal },
    {
      tier: "active",
      parts: [
        ...urlsPart(state.urls, c),
        ...workingFilesPart(sectionOf(plan.workingFiles, c), c),
        promptPart(promptOf(state), state.images)
      ]
    }
  ], c)
}

/** What `journalBlocks` read to build a plan's blocks, and the blocks. */
interface BuiltBlocks {
  readonly input: AssemblyState["input"]
  readonly counter: AssemblyState["counter"]
  readonly legend: AssemblyState["symbols"]["legend"]
  readonly urls: AssemblyState["urls"]
  readonly images: AssemblyState["images"]
  readonly blocks: ReadonlyArray<LayoutBlock>
}

// The block stages (and `inputLimit`'s measure) each ask for the layout's blocks of the same
// state: built once per plan, and again only when something else they are built from is not
// the very same value. Keyed weakly by the plan, which lives as long as its request.
const built = new WeakMap<JournalPlan, BuiltBlocks>()

const planBlocks = (state: AssemblyState, plan: JournalPlan): ReadonlyArray<LayoutBlock> => {
  const last = built.get(plan)
  if (
    last !== undefined && last.input === state.input && last.counter === state.counter && last.legend === state.symbols.legend &&
    last.urls === state.urls && last.images === state.images
  ) return last.blocks
  const blocks = journalBlocks(state, plan)
  built.set(plan, { input: state.input, counter: state.counter, legend: state.symbols.legend, urls: state.urls, images: state.images, blocks })
  return blocks
}

/** The journal layout in the pipeline: `plan` decides rebuild or append at the clock's time. */
export const journalLayout: Layout = {
  name: "journal",
  plan: (state) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const prices = (yield* CachePrices)(state.input.model)
      return { ...state, journal: planJournal(state, state.journalMemory, now, yield* CacheExpiryMillis, yield* AdaptiveTtl, prices) }
    }),
  // Without a plan (a `layoutPlan` stage that plans nothing) the request is the tiered layout's (docs/pipeline.md#the-tiered-layout).
  blocks: (state) => (state.journal === undefined ? seedLayout.blocks(state) : planBlocks(state, state.journal)),
  request: (state) => {
    const request = neutralRequest(state.input.model, state.blocks)
    // After a long gap the breakpoints ask for the long cache (`AdaptiveTtl`).
    return state.journal?.ttl === "1h" ? { ...request, breakpoints: request.breakpoints.map((b) => ({ ...b, ttl: "1h" as const })) } : request
  }
}
