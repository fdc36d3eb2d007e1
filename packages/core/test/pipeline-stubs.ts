// Stub Layers for the services whose real implementations live in leaf packages core
// cannot import (@strata/tiers, @strata/symbols): fixed tier assignments and a symbol
// map built from plain data. Shared by the pipeline, tiered and breakdown tests.
import { Effect, Layer, Ref } from "effect"
import {
  DEFAULT_THRESHOLDS,
  makeCustomCounter,
  sha256,
  SymbolIndex,
  Tokenizer,
  Tracker,
  TrackerConflict,
  type InitialPlacementInput,
  type SymbolMapSnapshot,
  type Tier,
  type TierChange,
  type TrackerSnapshot,
  type TrackerUpdateInput,
  type TrackedItem,
  type ItemKey
} from "../src/effect.ts"
import { LayoutMode, Pipeline } from "../src/effect.ts"

/** A repository as the stub index serves it. */
export interface StubRepo {
  readonly files: ReadonlyArray<string>
  /** Symbol block per path (ending with a newline, as the index renders them). */
  readonly blocks: Readonly<Record<string, string>>
  readonly legend?: string
  readonly components?: ReadonlyArray<ReadonlyArray<string>>
  readonly refCounts?: Readonly<Record<string, number>>
}

export const stubMap = (repo: StubRepo): SymbolMapSnapshot => {
  const files = [...repo.files].sort()
  return {
    files,
    symbolFiles: Object.keys(repo.blocks).sort(),
    block: (p) => repo.blocks[p],
    blockHash: (p) => (repo.blocks[p] === undefined ? undefined : sha256(repo.blocks[p] ?? "")),
    legend: repo.legend ?? "",
    fileTree: files.length === 0 ? "" : `# File Tree (${files.length} files)\n\n${files.join("\n")}`,
    fileTreeHash: sha256(files.join("\n")),
    components: repo.components ?? [],
    refCounts: new Map(Object.entries(repo.refCounts ?? {})),
    problems: []
  }
}

/** A symbol index serving `repo()` (a function, so a test can change the repository between turns). */
export const stubSymbolIndex = (repo: () => StubRepo): Layer.Layer<SymbolIndex> =>
  Layer.succeed(SymbolIndex, { snapshot: Effect.sync(() => stubMap(repo())) })

/** What the stub tracker was asked to do. */
export interface TrackerLog {
  readonly initialized: Array<InitialPlacementInput>
  readonly updates: Array<TrackerUpdateInput>
}

export interface StubTrackerOptions {
  /** Fixed tier per item key; anything else is untracked. */
  readonly assignments?: Readonly<Record<string, Tier>>
  readonly initialized?: boolean
  /** Tiers the first request's initial placement gives (default: none). */
  readonly place?: (input: InitialPlacementInput) => Readonly<Record<string, Tier>>
  /** Tracked content hash per key (default `""`, a placeholder taken as unchanged). */
  readonly hashes?: Readonly<Record<string, string>>
  /** Changes every update reports. */
  readonly changes?: ReadonlyArray<TierChange>
  readonly log?: TrackerLog
}

export const newLog = (): TrackerLog => ({ initialized: [], updates: [] })

export const stubSnapshot = (options: StubTrackerOptions, version = 0, baseVersion = version): TrackerSnapshot => {
  const assignments = options.assignments ?? {}
  const log = options.log ?? newLog()
  const get = (key: string): TrackedItem | undefined => {
    const tier = assignments[key]
    if (tier === undefined) return undefined
    return { key: key as ItemKey, tier, n: tier === "active" ? 0 : DEFAULT_THRESHOLDS[tier], hash: options.hashes?.[key] ?? "", tokens: 0 }
  }
  const self: TrackerSnapshot = {
    version,
    baseVersion,
    initialized: options.initialized ?? true,
    thresholds: DEFAULT_THRESHOLDS,
    get,
    tierOf: (key) => assignments[key],
    itemsIn: (tier) => Object.keys(assignments).sort().flatMap((k) => (assignments[k] === tier ? [get(k)!] : [])),
    initialize: (input) => {
      if (self.initialized) return { snapshot: self, changes: [] }
      log.initialized.push(input)
      const placed = options.place?.(input) ?? {}
      const changes = Object.entries(placed).map(([key, to]): TierChange => ({ key: key as ItemKey, from: null, to, reason: "graduated" }))
      return { snapshot: stubSnapshot({ ...options, log, initialized: true, assignments: { ...assignments, ...placed } }, version, baseVersion), changes }
    },
    update: (input) => {
      log.updates.push(input)
      return { snapshot: stubSnapshot({ ...options, log }, version + 1, version), changes: options.changes ?? [] }
    }
  }
  return self
}

/** A Tracker service over a stub snapshot, with compare-and-set commits. */
export const stubTracker = (options: StubTrackerOptions = {}) =>
  Effect.gen(function* () {
    const ref = yield* Ref.make(stubSnapshot(options))
    const commits = yield* Ref.make(0)
    const service: Tracker["Service"] = {
      current: Ref.get(ref),
      commit: (next) =>
        Effect.gen(function* () {
          const now = yield* Ref.get(ref)
          if (next.baseVersion !== now.version) return yield* new TrackerConflict({ expected: next.baseVersion, actual: now.version })
          yield* Ref.set(ref, next)
          yield* Ref.update(commits, (n) => n + 1)
        }),
      remove: () => Effect.succeed([]),
      purgeHistory: Effect.succeed([])
    }
    return { service, ref, commits }
  })

export const stubTrackerLayer = (options: StubTrackerOptions = {}): Layer.Layer<Tracker> =>
  Layer.effect(Tracker, Effect.map(stubTracker(options), (t) => t.service))

/** One token per character: additive, so piecewise counts equal whole-string counts. */
export const charCounter = () => makeCustomCounter("chars", (text) => text.length)

type TestLayers = ReadonlyArray<Layer.Layer<never, never, never> | Layer.Layer<Tracker> | Layer.Layer<SymbolIndex>>

/**
 * Pipeline in the tiered layout (the one these tests check tier by tier), a per-char
 * tokenizer, and the given tracker/index layers.
 */
export const testLayer = (...layers: TestLayers) =>
  Layer.mergeAll(Pipeline.layer, Tokenizer.layerFrom(charCounter()), Layer.succeed(LayoutMode, "seed"), ...layers)

/** The same in the default journal layout. */
export const journalTestLayer = (...layers: TestLayers) =>
  Layer.mergeAll(Pipeline.layer, Tokenizer.layerFrom(charCounter()), ...layers)
