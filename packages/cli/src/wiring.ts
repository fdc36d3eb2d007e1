/**
 * Composes Strata's packages for one command on one repository: the tokenizer for the
 * model, the stability tracker (@strata/tiers; its state lives in the session's store),
 * the symbol index (@strata/symbols), the provider's placement plugin (@strata/providers),
 * the pipeline and prompts (@strata/core) and the session's `StateStore`. Also gathers a
 * request's input: the selected files and the prompts (the history is the store's).
 */
import { join } from "node:path"
import { Effect, Layer, Option, Schema } from "effect"
import {
  AssemblySession,
  Pipeline,
  Prompts,
  RepoFiles,
  requestLimits,
  StateStore,
  SymbolIndex,
  SymbolIndexError,
  Tokenizer,
  TrackerState,
  type AssemblyInput,
  type FileContent,
  type InvalidInput,
  PathOutsideRepo,
  type StageServices,
  type Placement,
  type StateStoreError,
  type Usage
} from "@strata/core/effect"
import { makeSimulator, placementLayerFor, type SimProvider } from "@strata/providers"
import { SymbolIndexer, type SymbolMap } from "@strata/symbols"
import { TrackerLayer } from "@strata/tiers"
import type { ProviderName } from "./config.ts"
import type { CommandContext } from "./context.ts"
import { readTextIfExists, writeTextAtomic } from "./fsutil.ts"
import { Output } from "./output.ts"
/** The placement plugin for a provider (the providers package's registry). */
export const placementLayer = (provider: ProviderName): Layer.Layer<Placement> => placementLayerFor(provider)

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
}

/** Every service a command's work may use. */
export type EngineServices = Tokenizer | SymbolIndex | Placement | AssemblySession | RepoFiles | Prompts | StageServices | TrackerState | StateStore

export interface Engine {
  /** Fails with `InvalidInput` if the tracker's configuration is malformed, `PathOutsideRepo` if its state file links out of the repository. */
  readonly layer: Layer.Layer<EngineServices, InvalidInput | PathOutsideRepo | StateStoreError>
  /** The symbol map of the last snapshot (after the pipeline or `symbolMap` ran). */
  readonly lastMap: () => SymbolMap | undefined
  /** Index the repository now (with a progress line on a terminal) and return the map. */
  readonly symbolMap: Effect.Effect<SymbolMap, SymbolIndexError | PathOutsideRepo, Output>
}

/**
 * Build the engine. The symbol indexer is created once, restoring the session's path
 * aliases so the legend stays byte-identical across invocations.
 */
export const makeEngine = (options: EngineOptions): Effect.Effect<Engine, SymbolIndexError> =>
  Effect.gen(function* () {
    const { ctx, aliases, dryRun } = options
    const { root, config } = ctx
    const indexer = yield* Effect.tryPromise({
      try: () =>
        SymbolIndexer.create(root, {
          maxFileBytes: config.budgets.maxFileBytes,
          cache: !dryRun,
          ...(aliases === null ? {} : { aliases })
        }),
      catch: (error) => new SymbolIndexError({ root, reason: error instanceof Error ? error.message : String(error) })
    })
    let last: SymbolMap | undefined
    const indexError = (error: unknown) => new SymbolIndexError({ root, reason: error instanceof Error ? error.message : String(error) })
    const refreshWith = (onProgress?: (parsed: number, toParse: number) => void) => Effect.tryPromise({
      try: async () => {
        last = await indexer.refresh(onProgress === undefined ? {} : { onProgress })
        // A command is short-lived: write the symbol cache's index now rather than lazily.
        indexer.flush()
        return last
      },
      // A symbol cache that links out of the repository keeps its own error (and exit code).
      catch: (error) => (error instanceof PathOutsideRepo ? error : indexError(error))
    })
    const refresh = refreshWith()
    // A map `symbolMap` just built is handed to the pipeline's next snapshot instead of
    // indexing twice in one command; later snapshots (chat's next turns) refresh.
    let fresh = false
    const symbolMap = Effect.gen(function* () {
      const output = yield* Output
      const progress = yield* output.progress(`Indexing ${root}`)
      // A cold index of a large repository parses for seconds: count the files as they go.
      const map = yield* refreshWith((parsed, toParse) => Effect.runSync(progress.update(parsed, toParse, "files parsed"))).pipe(
        Effect.onError(() => progress.finish())
      )
      yield* progress.finish(`Indexed ${map.stats.files} files (${map.stats.parsed} parsed, ${map.stats.reused + map.stats.rehashed} unchanged)`)
      fresh = true
      return map
    })
    const snapshot = Effect.suspend(() => {
      if (fresh && last !== undefined) {
        fresh = false
        return Effect.succeed(last)
      }
      return refresh.pipe(Effect.mapError((error) => (error instanceof SymbolIndexError ? error : indexError(error))))
    })
    const tokenizerLayer = Tokenizer.layer(config.model)
    // The tracker's state is the store's: each turn seeds a tracker from the snapshot.
    const trackerLayer = TrackerLayer.state({ config: { policy: config.policy, cacheTargetTokens: config.budgets.cacheTargetTokens } })
    const layer = Layer.mergeAll(
      Pipeline.layer,
      // The map budget and input limit: configured ones, or the model's (the pipeline derives them).
      requestLimits({
        ...(config.budgets.mapTokens === null ? {} : { mapTokens: config.budgets.mapTokens }),
        ...(config.budgets.maxInputTokens === null ? {} : { maxInputTokens: config.budgets.maxInputTokens })
      }),
      // Each turn brings its own session bookkeeping (from the store's snapshot).
      AssemblySession.layer,
      tokenizerLayer,
      Layer.succeed(SymbolIndex, {
        snapshot,
        // A turn switches to its session's recorded legend (another process may have fixed it).
        useAliases: (recorded) => Effect.promise(() => indexer.useAliases(recorded))
      }),
      placementLayer(config.provider),
      trackerLayer,
      RepoFiles.layer({ root, maxFileBytes: config.budgets.maxFileBytes }),
      // Prompt files must resolve inside the repository: a link out fails with PathOutsideRepo.
      Prompts.layer({ dir: config.prompts === null ? undefined : join(root, config.prompts), root }),
      options.store
    )
    return { layer, lastMap: () => last, symbolMap }
  })

/** The selected files' contents, read safely (paths inside the repository, text only, size limit). */
export const readSelected = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const files = yield* RepoFiles
    const out: Array<FileContent> = []
    for (const path of paths) out.push(yield* files.read(path))
    return out
  })

/** Normalize and de-duplicate `--file` arguments into sorted repository-relative paths. */
export const normalizeSelection = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const files = yield* RepoFiles
    const out = new Set<string>()
    for (const path of paths) out.add(yield* files.normalize(path))
    return [...out].sort()
  })

/** Everything one request is assembled from but the history (the turn takes it from the store): prompts and selected files. */
export const requestInput = (options: {
  readonly model: string
  readonly prompt: string
  readonly selected: ReadonlyArray<string>
}) =>
  Effect.gen(function* () {
    const prompts = yield* Prompts
    const system = yield* prompts.systemPrompt
    const reminder = yield* prompts.systemReminder
    const files = yield* readSelected(options.selected)
    const input: Omit<AssemblyInput, "history"> = {
      model: options.model,
      prompt: options.prompt,
      systemPrompt: system.text,
      systemReminder: reminder.text,
      files
    }
    return { input, warnings: [...system.warnings, ...reminder.warnings] }
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
 */
export const simulateUsage = (
  root: string,
  provider: ProviderName,
  model: string,
  body: unknown,
  atSeconds: number,
  /** Score against this request instead of the session's last one (chat --dry-run's previous turn). */
  before?: StoredRequest
) =>
  Effect.gen(function* () {
    const sim = simulatorFor(provider)
    if (sim === undefined) return undefined
    let previous: StoredRequest | undefined = before
    if (previous === undefined) {
      const text = yield* readTextIfExists(root, LAST_REQUEST_PATH).pipe(Effect.orElseSucceed(() => undefined))
      previous = text === undefined ? undefined : Option.getOrUndefined(decodeStoredRequest(text))
    }
    return yield* Effect.try({
      try: (): Usage => {
        const simulator = makeSimulator(sim, { model })
        let at = atSeconds
        if (previous !== undefined && previous.provider === provider && previous.model === model && previous.at <= atSeconds) {
          simulator.send(previous.body, previous.at)
          // A prompt follows the previous reply, so it cannot arrive before that reply's
          // cache writes are readable (the simulators wait ~1 s for the first token).
          at = Math.max(atSeconds, previous.at + 2)
        }
        const r = simulator.send(body, at)
        return { input: r.usage.input, cacheRead: r.usage.cacheRead, cacheWrite: r.usage.cacheWrite, output: r.usage.output }
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
