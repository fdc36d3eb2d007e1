/**
 * What chat and agent strategies share: a neutral request from blocks, the symbol map as
 * flat assembly shows it, the map changes a transcript shows since it last showed them,
 * the pipeline's layers over the current request, and a Strata session (core's pipeline
 * with the tiers tracker) that both session kinds drive with their own input.
 */
import { Clock, Effect, Layer, ManagedRuntime } from "effect"
import {
  assemble,
  FILE_TREE_HEADER,
  LayoutMode,
  Pipeline,
  REPO_MAP_CONTINUATION,
  REPO_MAP_HEADER,
  SymbolIndex,
  Tokenizer,
  Tracker,
  type AssemblyInput,
  type AssemblyResult,
  type Block,
  type Breakpoint,
  type Message,
  type NeutralRequest,
  type SymbolMapSnapshot,
  type TokenCounter,
  type ToolDefinition
} from "@strata/core/effect"
import { placementLayer, placeWith } from "@strata/providers"
import { DEFAULT_POLICY, TrackerLayer, type PolicyName } from "@strata/tiers"
import type { ReplayProvider, Strategy, StrategyCounts, StrategyName } from "./strategyTypes.ts"

const tokensOf = (messages: ReadonlyArray<Message>, counter: TokenCounter): number =>
  messages.reduce((sum, m) => sum + counter.countMessage(m), 0)

/** A neutral request from blocks, with a breakpoint closing every non-empty cached block. */
export const requestOf = (
  model: string,
  blocks: ReadonlyArray<{ readonly tier: Block["tier"]; readonly messages: ReadonlyArray<Message> }>,
  counter: TokenCounter
): NeutralRequest => {
  const out: Array<Block> = []
  const messages: Array<Message> = []
  const breakpoints: Array<Breakpoint> = []
  for (const b of blocks) {
    if (b.messages.length === 0) continue
    messages.push(...b.messages)
    out.push({ tier: b.tier, messages: b.messages, items: [], tokens: tokensOf(b.messages, counter) })
    if (b.tier !== "active") breakpoints.push({ tier: b.tier, messageIndex: messages.length - 1 })
  }
  return { model, blocks: out, messages, breakpoints }
}

/** The request with the session's tools (none: unchanged). */
export const withTools = (request: NeutralRequest, tools: ReadonlyArray<ToolDefinition>): NeutralRequest =>
  tools.length === 0 ? request : { ...request, tools }

/** Every file's symbol block without its final newline, by path (files with an empty block left out), in map order. */
export const blocksOf = (map: SymbolMapSnapshot): Map<string, string> => {
  const out = new Map<string, string>()
  for (const path of map.symbolFiles) {
    const block = map.block(path)?.replace(/\n$/, "")
    if (block !== undefined && block !== "") out.set(path, block)
  }
  return out
}

/** The map's blocks of files not in context, in path order (what flat assembly shows). */
export const mapBlocks = (map: SymbolMapSnapshot, selected: ReadonlySet<string>): ReadonlyArray<string> =>
  [...blocksOf(map)].flatMap(([path, block]) => (selected.has(path) ? [] : [block]))

/** The symbol map as flat assembly shows it: header, legend, the blocks of files not in context. */
export const mapText = (map: SymbolMapSnapshot, selected: ReadonlySet<string>): string =>
  REPO_MAP_HEADER + [map.legend.trimEnd(), ...mapBlocks(map, selected)].filter((s) => s.trim() !== "").join("\n\n")

/** A map with nothing in it, for sessions without a repository. */
export const EMPTY_MAP: SymbolMapSnapshot = {
  files: [],
  symbolFiles: [],
  block: () => undefined,
  blockHash: () => undefined,
  legend: "",
  fileTree: "",
  fileTreeHash: "",
  components: [],
  refCounts: new Map(),
  problems: []
}

/** The map a transcript showed at its start: every symbol block and the file tree. */
export interface MapStart {
  readonly blocks: ReadonlyMap<string, string>
  readonly tree: string
}

export const mapStartOf = (map: SymbolMapSnapshot | undefined): MapStart =>
  map === undefined ? { blocks: new Map(), tree: "" } : { blocks: blocksOf(map), tree: map.fileTree }

/**
 * What an append-only transcript has shown of the symbol map (its blocks and the file
 * tree), and the tokens of the copies it superseded by showing a changed one again.
 */
export class ShownMap {
  private blocks = new Map<string, string>()
  private tree = ""
  /** Tokens of superseded copies: blocks and file trees shown again, changed. */
  superseded = 0

  private readonly counter: TokenCounter

  constructor(counter: TokenCounter) {
    this.counter = counter
  }

  /** Back to what the transcript's head shows (after a compaction, or at the start). */
  reset(start: MapStart): void {
    this.blocks = new Map(start.blocks)
    this.tree = start.tree
    this.superseded = 0
  }

  /**
   * The map's changes since last shown, as text sections (the changed blocks of files not
   * in `exclude` and the paths of files gone; the file tree when it changed); records
   * them as shown.
   */
  delta(map: SymbolMapSnapshot, exclude: ReadonlySet<string>): ReadonlyArray<string> {
    const blocks = blocksOf(map)
    const changed = [...blocks].filter(([path, block]) => !exclude.has(path) && this.blocks.get(path) !== block)
    const present = new Set(map.files)
    const gone = [...this.blocks.keys()].filter((path) => !blocks.has(path) && !present.has(path))
    const sections = [
      changed.length + gone.length === 0 ? "" : `${REPO_MAP_CONTINUATION}${[...changed.map(([, block]) => block), ...gone.map((path) => `${path}: (deleted)`)].join("\n\n")}`,
      map.fileTree === this.tree ? "" : FILE_TREE_HEADER + map.fileTree
    ].filter((s) => s !== "")
    for (const [path, block] of changed) {
      const old = this.blocks.get(path)
      if (old !== undefined) this.superseded += this.counter.count(old)
      this.blocks.set(path, block)
    }
    for (const path of gone) this.blocks.delete(path)
    if (map.fileTree !== this.tree && this.tree !== "") this.superseded += this.counter.count(this.tree)
    this.tree = map.fileTree
    return sections
  }
}

/** What the pipeline's layers read of the request being assembled (set before each assembly). */
export interface RequestState {
  map: SymbolMapSnapshot
  tools: ReadonlyArray<ToolDefinition>
}

/** The pipeline's layers as the CLI composes them, over the request's map, with its tools rendered by the provider's plugin. */
export const pipelineLayer = (provider: ReplayProvider, counter: TokenCounter, state: RequestState) =>
  Layer.mergeAll(
    Pipeline.layer,
    Tokenizer.layerFrom(counter),
    Layer.succeed(SymbolIndex, { snapshot: Effect.sync(() => state.map) }),
    placementLayer(provider, (request) => placeWith(provider, withTools(request, state.tools)))
  )

/** A clock stopped at `ms` (epoch milliseconds). */
export const clockAt = (ms: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => ms,
  currentTimeMillis: Effect.succeed(ms),
  currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
  monotonicTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
  sleep: () => Effect.void
})

/** Strata's strategies in both session kinds: a tracker policy in the session's layout, or the tiered layout (docs/pipeline.md#the-tiered-layout). */
export type StrataStrategyName = "strata-threshold" | "strata-gated" | "strata-flux" | "strata-seed"

/** The policy and layout a Strata strategy runs with. Pure. */
export const strataVariant = (name: StrataStrategyName, layout: LayoutMode): { readonly policy: PolicyName; readonly layout: LayoutMode } =>
  name === "strata-seed" ? { policy: DEFAULT_POLICY, layout: "seed" } : { policy: name === "strata-threshold" ? "threshold" : name === "strata-gated" ? "gated" : "flux", layout }

/** The flat pipeline (no tracker) over a request state: `none`'s layout. */
export const flatAssembler = (provider: ReplayProvider, counter: TokenCounter) => {
  const state: RequestState = { map: EMPTY_MAP, tools: [] }
  const runtime = ManagedRuntime.make(pipelineLayer(provider, counter, state))
  return {
    state,
    assemble: (input: AssemblyInput): Promise<AssemblyResult> => runtime.runPromise(assemble(input)),
    dispose: () => runtime.dispose()
  }
}

/** What a session kind tells a Strata strategy about one of its requests. */
export interface StrataDriver<I> {
  readonly provider: ReplayProvider
  readonly counter: TokenCounter
  readonly cacheTargetTokens: number
  /** The map and tools of the request. */
  readonly state: (input: I) => RequestState
  readonly assemblyInput: (input: I) => AssemblyInput
  /** Seconds since the session started (the pipeline's clock, so cache expiry follows the session). */
  readonly t: (input: I) => number
  /** The conversation was compacted or rewritten since the previous request: the tracker's history entries go. */
  readonly compacted: (input: I) => boolean
  /** What the strategy counts beside the body. */
  readonly counts: (input: I, result: AssemblyResult) => StrategyCounts
}

/**
 * `strata-<policy>`: core's tiered pipeline with the `@strata/tiers` tracker under one
 * promotion policy, the request's map and tools and the provider's placement plugin, in
 * the session's layout (`strata-seed`: the default policy in the tiered layout, every
 * tier re-rendered from the tracker each request). The tracker update is committed once
 * the request is answered, as in a live session, and its history entries are purged when
 * the conversation is compacted.
 */
export const strataStrategy = <I>(name: StrataStrategyName, layout: LayoutMode, driver: StrataDriver<I>): Strategy<I> => {
  const variant = strataVariant(name, layout)
  const state: RequestState = { map: EMPTY_MAP, tools: [] }
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      pipelineLayer(driver.provider, driver.counter, state),
      TrackerLayer.memory({ config: { policy: variant.policy, cacheTargetTokens: driver.cacheTargetTokens } }),
      Layer.succeed(LayoutMode, variant.layout)
    )
  )
  let commit: Effect.Effect<void, unknown> | undefined
  let last: AssemblyResult | undefined
  return {
    name,
    inspect: () => last,
    request: async (input) => {
      const now = driver.state(input)
      state.map = now.map
      state.tools = now.tools
      if (driver.compacted(input)) await runtime.runPromise(Effect.gen(function* () {
        yield* (yield* Tracker).purgeHistory
      }))
      const result = await runtime.runPromise(assemble(driver.assemblyInput(input)).pipe(Effect.provideService(Clock.Clock, clockAt(driver.t(input) * 1000))))
      commit = result.commit
      last = result
      return { body: result.placed.body, ...driver.counts(input, result) }
    },
    answered: async () => {
      if (commit !== undefined) await runtime.runPromise(commit)
      commit = undefined
    },
    dispose: () => runtime.dispose()
  }
}

/** A strategy whose request is a pure function of its input. */
export const statelessStrategy = <I>(name: StrategyName, request: (input: I) => { readonly body: unknown } & StrategyCounts): Strategy<I> => ({
  name,
  request: (input) => Promise.resolve(request(input)),
  answered: async () => {},
  dispose: async () => {}
})
