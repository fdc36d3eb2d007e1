/**
 * Composes Strata's packages for one command on one repository: core's engine layer
 * (`makeEngineLayer`: tokenizer, repository files, prompts, pipeline and request limits)
 * with the stability tracker (@strata/tiers; its state lives in the session's store), the
 * symbol index (@strata/symbols), the provider's placement plugin (@strata/providers) and
 * the session's `StateStore`; and what the CLI keeps of a request
 * (`.strata/last-request.json`) to simulate the next one's usage.
 */
import { join } from "node:path"
import { Effect, Layer, Option, Schema } from "effect"
import {
  type EngineServices,
  makeEngineLayer,
  type PromptPack,
  RepoFiles,
  StateStore,
  SymbolIndex,
  type SymbolIndexError,
  Tokenizer,
  TrackerState,
  type InvalidInput,
  type PathOutsideRepo,
  type Placement,
  type StateStoreError,
  type Usage,
  usageInPromptTokens
} from "@strata/core/effect"
import { makeSimulator, placementLayerFor, type SimProvider } from "@strata/providers"
import { makeSymbolIndex, type SymbolMap } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import type { ProviderName } from "./config.ts"
import type { CommandContext } from "./context.ts"
import { readTextIfExists, writeTextAtomic } from "./fsutil.ts"
import { Output } from "./output.ts"
/**
 * The placement plugin for a provider (the providers package's registry). `chat` streams
 * every reply, so the Anthropic body asks for the model's whole output limit
 * (`defaultMaxTokens(model, { stream: true })`, 64,000 for Claude 4 models); `assemble
 * --json` prints the same body (send it streamed, or set a `max_tokens` of at most 21,333
 * for a non-streaming call).
 */
export const providerPlacementLayer = (provider: ProviderName): Layer.Layer<Placement> =>
  provider === "anthropic" ? placementLayerFor("anthropic", { stream: true }) : placementLayerFor(provider)

/** The prompt-cache simulator that scores a provider's bodies, when there is one. */
export const simulatorFor = (provider: ProviderName): SimProvider | undefined =>
  provider === "anthropic" || provider === "bedrock" || provider === "openai" || provider === "gemini" ? provider : undefined

export interface EngineOptions {
  readonly ctx: CommandContext
  /** The session's path aliases (its record's), so the map's legend is the session's. */
  readonly aliases: ReadonlyArray<{ readonly token: string; readonly prefix: string }> | null
  /** The session's store (or a read-only copy of it). */
  readonly store: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo>
  /**
   * Nothing under .strata/ may be written: the symbol index runs without its disk cache.
   * (Committing the tracker and saving the session are the caller's; read-only commands
   * such as `hud` keep the cache, which only changes when the repository did.)
   */
  readonly dryRun: boolean
  /** The bundled prompt pack behind the prompts folder (default `default`; `chat` reads only: `read-only`). */
  readonly promptPack?: PromptPack | undefined
}

/** Every service a command's work may use: the engine's, and what the CLI composes beside them. */
export type CliServices = EngineServices | SymbolIndex | Placement | TrackerState

export interface Engine {
  /** Fails with `InvalidInput` if the tracker's configuration is malformed, `PathOutsideRepo` if its state file links out of the repository. */
  readonly layer: Layer.Layer<CliServices, InvalidInput | PathOutsideRepo | StateStoreError>
  /** The symbol map of the last snapshot (after the pipeline or `symbolMap` ran). */
  readonly lastMap: () => SymbolMap | undefined
  /** Index the repository now (with a progress line on a terminal) and return the map. */
  readonly symbolMap: Effect.Effect<SymbolMap, SymbolIndexError | PathOutsideRepo, Output>
}

/**
 * Build the engine. The symbol index (@strata/symbols) is created once, restoring the
 * session's path aliases so the legend stays byte-identical across invocations.
 */
export const makeEngine = (options: EngineOptions): Effect.Effect<Engine, SymbolIndexError> =>
  Effect.gen(function* () {
    const { ctx, aliases, dryRun } = options
    const { root, config } = ctx
    const index = yield* makeSymbolIndex(root, {
      maxFileBytes: config.budgets.maxFileBytes,
      ...(config.map.include.length === 0 ? {} : { include: config.map.include }),
      ...(config.map.exclude.length === 0 ? {} : { exclude: config.map.exclude }),
      cache: !dryRun,
      ...(aliases === null ? {} : { aliases }),
      // A command is short-lived: write the symbol cache's index now rather than lazily.
      flushEachRefresh: true
    })
    // The pipeline's next snapshot reuses the map this builds instead of indexing twice in one command.
    const symbolMap = Effect.gen(function* () {
      const output = yield* Output
      const progress = yield* output.progress(`Indexing ${root}`)
      // A cold index of a large repository parses for seconds: count the files as they go.
      const map = yield* index.build((parsed, toParse) => Effect.runSync(progress.update(parsed, toParse, "files parsed"))).pipe(
        Effect.onError(() => progress.finish())
      )
      yield* progress.finish(`Indexed ${map.stats.files} files (${map.stats.parsed} parsed, ${map.stats.reused + map.stats.rehashed} unchanged)`)
      return map
    })
    // The tracker's state is the store's: each turn seeds a tracker from the snapshot.
    const trackerLayer = TrackerLayer.state({ config: { policy: config.policy, cacheTargetTokens: config.budgets.cacheTargetTokens } })
    const layer = Layer.mergeAll(
      makeEngineLayer({
        model: config.model,
        repoRoot: root,
        maxFileBytes: config.budgets.maxFileBytes,
        // The map budget and input limit: configured ones, or the model's (the pipeline derives them).
        ...(config.budgets.mapTokens === null ? {} : { mapTokens: config.budgets.mapTokens }),
        ...(config.budgets.maxInputTokens === null ? {} : { maxInputTokens: config.budgets.maxInputTokens }),
        mapRanking: config.map.ranking,
        // Prompt files must resolve inside the repository: a link out fails with PathOutsideRepo.
        ...(config.prompts === null ? {} : { promptsDir: join(root, config.prompts) }),
        ...(options.promptPack === undefined ? {} : { prompts: options.promptPack })
      }),
      // A turn switches to its session's recorded legend (another process may have fixed it).
      Layer.succeed(SymbolIndex, index),
      providerPlacementLayer(config.provider),
      trackerLayer,
      // The session's store (or a read-only copy), in place of the engine's memory store.
      options.store
    )
    return { layer, lastMap: index.latest, symbolMap }
  })

/** Normalize and de-duplicate `--file` arguments into sorted repository-relative paths. */
export const normalizeSelection = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const files = yield* RepoFiles
    const out = new Set<string>()
    for (const path of paths) out.add(yield* files.normalize(path))
    return [...out].sort()
  })

/** Where the last request's native body is kept, so the next one can be scored against it. */
export const LAST_REQUEST_PATH = join(".strata", "last-request.json")

/** A request as the simulator needs it (`.strata/last-request.json`): provider, model, send time in seconds, native body. */
export const StoredRequest = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  /** Seconds since the epoch. */
  at: Schema.Number,
  body: Schema.Unknown
})
export type StoredRequest = typeof StoredRequest.Type

const decodeStoredRequest = Schema.decodeUnknownOption(Schema.fromJsonString(StoredRequest))

/**
 * Predict the usage the provider would report for `body` sent at `atSeconds`, with the
 * provider's prompt-cache simulator primed by the previous request of the session.
 * `undefined` for providers without a simulator.
 *
 * One count per request: the simulator counts with the session's tokenizer and its split
 * (where reads and writes end) is expressed in `promptTokens`, the request's tokens as
 * the report counts them, so read + write + uncached is the number `assemble`, the HUD,
 * the breakdown and the session record show (`usageInPromptTokens`).
 */
export const simulateUsage = (
  root: string,
  provider: ProviderName,
  model: string,
  request: {
    readonly body: unknown
    readonly promptTokens: number
    /** The prefix tokens of the request's breakpoints, where a marker-based cache's reads and writes end. */
    readonly breakpoints: ReadonlyArray<number>
  },
  atSeconds: number,
  /** Score against this request instead of the session's last one (chat --dry-run's previous turn). */
  before?: StoredRequest
) =>
  Effect.gen(function* () {
    const sim = simulatorFor(provider)
    if (sim === undefined) return undefined
    const tokenizer = yield* Tokenizer
    const body = request.body
    let previous: StoredRequest | undefined = before
    if (previous === undefined) {
      const text = yield* readTextIfExists(root, LAST_REQUEST_PATH).pipe(Effect.orElseSucceed(() => undefined))
      previous = text === undefined ? undefined : Option.getOrUndefined(decodeStoredRequest(text))
    }
    return yield* Effect.try({
      try: (): Usage => {
        const simulator = makeSimulator(sim, { model, countTokens: (text) => tokenizer.count(text) })
        let at = atSeconds
        if (previous !== undefined && previous.provider === provider && previous.model === model && previous.at <= atSeconds) {
          simulator.send(previous.body, previous.at)
          // A prompt follows the previous reply, so it cannot arrive before that reply's
          // cache writes are readable (the simulators wait ~1 s for the first token).
          at = Math.max(atSeconds, previous.at + 2)
        }
        const r = simulator.send(body, at)
        return usageInPromptTokens({ input: r.usage.input, cacheRead: r.usage.cacheRead, cacheWrite: r.usage.cacheWrite, output: r.usage.output }, request.promptTokens, sim === "anthropic" || sim === "bedrock" ? request.breakpoints : [])
      },
      catch: (error) => error
    }).pipe(Effect.orElseSucceed(() => undefined))
  })

/** Where the request before the last one is kept, for `strata explain` and the HUD's miss reason. */
export const PREVIOUS_REQUEST_PATH = join(".strata", "previous-request.json")

/** Remember this request's body for the next simulation; the one it replaces becomes the previous request. */
export const rememberRequest = (root: string, provider: ProviderName, model: string, body: unknown, atSeconds: number) =>
  Effect.gen(function* () {
    const last = yield* readTextIfExists(root, LAST_REQUEST_PATH)
    if (last !== undefined) yield* writeTextAtomic(root, PREVIOUS_REQUEST_PATH, last)
    yield* writeTextAtomic(root, LAST_REQUEST_PATH, JSON.stringify({ provider, model, at: atSeconds, body } satisfies StoredRequest))
  })
