/**
 * The Layer behind `createContextEngine`: tokenizer, repository files, prompts, history
 * compactor and context manager, the session's state store (memory unless a `store` is
 * given) and the values the caller composes in from the leaf packages: a `tracker`
 * (`@strata/tiers`), a `symbols` index (`@strata/symbols`), a `provider` plugin
 * (`@strata/providers`) and a `store` (`@strata/store`), plus any other layers.
 */
import { Context, Effect, Layer, Option, Ref, Result, Schema } from "effect"
import type { CompactionConfig } from "../compaction/algorithm.ts"
import { HistoryCompactor } from "../compaction/HistoryCompactor.ts"
import { compactionModelFromFunction, type CompactionModelFunction } from "../compaction/promiseModel.ts"
import { ContextManager } from "../context/ContextManager.ts"
import { requestLimits } from "../pipeline/inputLimit/requestLimits.ts"
import { RepoFiles } from "../context/FileContext.ts"
import { InvalidInput, type PathOutsideRepo } from "../domain/errors.ts"
import { EMPTY_TRACKER } from "../pipeline/assemble.ts"
import type { AssemblySession } from "../pipeline/assemblySession.ts"
import { Pipeline, type StageServices } from "../pipeline/index.ts"
import { PROMPT_PACKS, Prompts, type PromptPack } from "../prompts/Prompts.ts"
import { Placement, PlacementError, type ProviderPlugin } from "../services/Placement.ts"
import { StateStore, type SessionKey, type StateStoreError, type StateStorePlugin } from "../services/StateStore.ts"
import type { SymbolIndex } from "../services/SymbolIndex.ts"
import { Tracker } from "../services/Tracker.ts"
import { SessionStore } from "../session/SessionStore.ts"
import type { TokenCounter } from "../tokens/TokenCounter.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { MemoryStateStore } from "../turn/MemoryStateStore.ts"

/** Options of `createContextEngine` and `makeEngineLayer`. `Body` is the provider plugin's request body. */
export interface ContextEngineOptions<Body = unknown> {
  /** Model id; picks the tokenizer and the input limit (`gpt-4o`, `claude-sonnet-4-6`...). */
  readonly model: string
  /** Repository root; file paths are relative to it. Default: the current directory. */
  readonly repoRoot?: string | undefined
  /**
   * The stability tracker: `TrackerLayer.memory()` or `TrackerLayer.persistent({ repoRoot })`
   * from `@strata/tiers`. With a `store`, its state lives in the store (the layer gives the
   * configuration; no tracker file is written). Without a tracker, requests are flat.
   */
  readonly tracker?: Layer.Layer<Tracker, unknown> | undefined
  /** The symbol map: `symbolIndexLayer(repoRoot)` from `@strata/symbols`. */
  readonly symbols?: Layer.Layer<SymbolIndex, unknown> | undefined
  /**
   * The provider plugin from `@strata/providers` (`AnthropicPlacement`, `OpenAIPlacement`,
   * `BedrockPlacement`, `GeminiPlacement`, `OpenAICompatiblePlacement`, `AiSdkPlacement`,
   * each callable with options). It types the turn's `request` and decodes replies.
   * Default: the seeds' OpenAI-compatible body, `unknown` to TypeScript.
   */
  readonly provider?: ProviderPlugin<Body> | undefined
  /**
   * Where the session's state lives between processes: `stateStore()` from `@strata/store`
   * (`STRATA_STORE`, else files under `.strata/state`), `stateStore("postgres://...")`.
   * Default: memory, for the engine's lifetime.
   */
  readonly store?: StateStorePlugin | undefined
  /**
   * The session to continue, by name or id (letters, digits, `.`, `_`, `-`): the one a
   * previous engine showed on `engine.sessionId`, or a name of your own. Without it every
   * engine starts a new session (a fresh id), so two engines on one `store` never see each
   * other's history; continuing one is always explicit.
   */
  readonly session?: string | undefined
  /**
   * Opt in to re-assembly: how often a turn's commit re-assembles the request on the new
   * state and retries when another commit changed the session since the turn was
   * assembled. Default 0: such a commit fails with `StaleTurn` (its reply never saw the
   * change, so it is not appended after it). History edits (`addMessage`...) always retry.
   */
  readonly commitRetries?: number | undefined
  /** Largest file `addFile` reads from disk, in bytes. Default 1 MiB. */
  readonly maxFileBytes?: number | undefined
  /** Override the model's input limit used for budgets, shedding and the refusal of requests over it. */
  readonly maxInputTokens?: number | undefined
  /**
   * Token budget of the repository map (legend, file tree, symbol blocks) in assembled
   * requests. Default: derived from the input limit (`defaultMapTokens`).
   */
  readonly mapTokens?: number | undefined
  /**
   * Which blocks a map over its budget keeps: `"references"` (default) the most
   * referenced files, `"focus"` the files ranked around the files in context.
   */
  readonly mapRanking?: "references" | "focus" | undefined
  /** Tokens kept free for the reply when checking a request against the input limit. Default: 8,192 (less for a model with a small output limit or input limit). */
  readonly outputReserveTokens?: number | undefined
  /**
   * Folder with your prompt files (`system.md`, `workflow.md`, `system_extra.md`,
   * `system_reminder.md`, `compaction.md`): a file there replaces the pack's, an empty
   * one drops that prompt; a missing one comes from the `prompts` pack.
   */
  readonly promptsDir?: string | undefined
  /**
   * The bundled prompt pack: `default` (neutral, for sessions with tools; no reminder),
   * `edit-blocks` (a chat without tools whose app applies edit blocks from the replies,
   * with a reminder after each prompt) or `read-only` (reads, proposes diffs).
   */
  readonly prompts?: PromptPack | undefined
  /** Compaction settings (trigger, verbatim window, ...); defaults as in `DEFAULT_COMPACTION_CONFIG`. */
  readonly compaction?: Partial<CompactionConfig> | undefined
  /**
   * The compaction detection model as an async function from the prompt to the model's
   * text; its signal aborts at the compaction timeout. Takes precedence over a
   * `CompactionModel` in `layers`. Without a model, compaction drops old messages unsummarized.
   */
  readonly compactionModel?: CompactionModelFunction | undefined
  /**
   * Also record every message in a JSONL log: `true` for `<repoRoot>/.strata/sessions/`,
   * or a directory. Enables `resumeSession` and `listSessions`. Default: off.
   */
  readonly sessions?: boolean | string | undefined
  /** Count tokens with this counter instead of the model's tokenizer. */
  readonly tokenCounter?: TokenCounter | undefined
  /**
   * More services for the engine: a `CompactionModel`, stage overrides, a `LayoutMode`...
   * (a `Tracker`, `SymbolIndex` or `Placement` here works too; the options above are the
   * documented way). They are visible to the engine's own services.
   */
  readonly layers?: ReadonlyArray<Layer.Layer<never, unknown>> | undefined
}

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonBlank = Schema.String.check(Schema.makeFilter((s: string) => s.trim() !== "" || "Expected a non-empty string"))

/** The plain-data fields of `ContextEngineOptions`, checked before anything is built. */
const EngineOptionsFields = Schema.Struct({
  model: NonBlank,
  repoRoot: Schema.optional(NonBlank),
  maxFileBytes: Schema.optional(PositiveInt),
  maxInputTokens: Schema.optional(PositiveInt),
  mapTokens: Schema.optional(PositiveInt),
  mapRanking: Schema.optional(Schema.Literals(["references", "focus"])),
  outputReserveTokens: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  promptsDir: Schema.optional(NonBlank),
  prompts: Schema.optional(Schema.Literals(PROMPT_PACKS)),
  sessions: Schema.optional(Schema.Union([Schema.Boolean, NonBlank])),
  session: Schema.optional(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9._-]+$/))),
  commitRetries: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})
const decodeOptions = Schema.decodeUnknownResult(EngineOptionsFields)

/** "field: problem" from a Schema error message (`Expected ...\n  at ["field"]`). */
const fieldIssue = (message: string): string => {
  const lines = message.split("\n").map((l) => l.trim()).filter((l) => l !== "")
  const at = lines.find((l) => l.startsWith("at "))
  const what = lines.filter((l) => !l.startsWith("at ")).join("; ")
  const field = at === undefined ? undefined : [...at.matchAll(/\["([^"]+)"\]/g)].map((m) => m[1]).join(".")
  return field === undefined || field === "" ? what : `${field}: ${what}`
}

/**
 * Check the options of `createContextEngine` / `makeEngineLayer`: a non-empty `model`,
 * positive integer limits, non-empty paths. Fails with `InvalidInput` naming the field.
 *
 * @example
 * ```ts
 * import { validateEngineOptions } from "@strata/core"
 * validateEngineOptions({ model: "gpt-4o", maxInputTokens: -5 }) // Result.fail(InvalidInput: "maxInputTokens: Expected a value greater than 0")
 * ```
 */
export const validateEngineOptions = <Body>(options: ContextEngineOptions<Body>): Result.Result<ContextEngineOptions<Body>, InvalidInput> => {
  const decoded = decodeOptions(options)
  return Result.isSuccess(decoded)
    ? Result.succeed(options)
    : Result.fail(new InvalidInput({ what: "createContextEngine options", issue: fieldIssue(decoded.failure.message) }))
}

/**
 * The session an engine works on: its key in the store, where its tracker's state lives,
 * how often a commit retries, and the JSONL log it also records to (`sessions`).
 */
export class EngineSession extends Context.Service<EngineSession, {
  readonly key: SessionKey
  /**
   * Where the tracker's state lives: `service` without a store (the `Tracker` keeps it, in
   * memory or its own file); with a store, undefined: in the store when a `TrackerState`
   * is provided (the `TrackerLayer`s provide one).
   */
  readonly tracker: "service" | undefined
  /** Re-assemblies a turn's commit may do after a conflict (`commitRetries`, default 0: `StaleTurn`). */
  readonly retries: number
  /** Retries of history edits (append, replace, compact) after a conflict: they apply to any state. */
  readonly historyRetries: number
  /** The JSONL session new messages are recorded to, once there is one. */
  readonly log: Ref.Ref<string | undefined>
}>()("@strata/core/EngineSession") {}

/** Services every engine runtime provides. */
export type EngineServices =
  | ContextManager
  | HistoryCompactor
  | Tokenizer
  | RepoFiles
  | Prompts
  | StageServices
  | AssemblySession
  | StateStore
  | EngineSession

/** A tracker that holds nothing and writes nothing: with a store, the tracker in context must not persist. */
const inertTracker: Tracker["Service"] = {
  current: Effect.succeed(EMPTY_TRACKER),
  commit: () => Effect.void,
  remove: () => Effect.succeed([]),
  purgeHistory: Effect.succeed([])
}

/** A provider plugin as core's `Placement` service. */
export const placementOf = <Body>(plugin: ProviderPlugin<Body>): Layer.Layer<Placement> =>
  Layer.succeed(Placement, {
    provider: plugin.provider,
    place: (request) =>
      Effect.try({
        try: () => plugin.place(request),
        catch: (error) => (error instanceof PlacementError ? error : new PlacementError({ provider: plugin.provider, reason: error instanceof Error ? error.message : String(error) }))
      })
  })

/** Conflicts a history edit retries (each means another writer committed in between). */
const HISTORY_RETRIES = 5

/**
 * A new session's id: `s-` and a random UUID, a valid session name. An engine given no
 * `session` starts one, so sessions never mix.
 *
 * @example
 * ```ts
 * import { newSessionId } from "@strata/core"
 * /^s-[0-9a-f-]{36}$/.test(newSessionId()) // true
 * ```
 */
export const newSessionId = (): string => `s-${crypto.randomUUID()}`

const sessionLayer = <Body>(options: ContextEngineOptions<Body>, root: string): Layer.Layer<EngineSession, StateStoreError> =>
  Layer.effect(
    EngineSession,
    Effect.gen(function* () {
      const name = options.session ?? newSessionId()
      const key = options.store === undefined ? { repository: "memory", name } : yield* options.store.sessionKey(root, name)
      return {
        key,
        tracker: options.store === undefined ? "service" : undefined,
        retries: options.commitRetries ?? 0,
        historyRetries: HISTORY_RETRIES,
        log: yield* Ref.make<string | undefined>(undefined)
      }
    })
  )

/**
 * Options with nothing composed in from other packages (no `tracker`, `symbols` or extra
 * `layers`): the engine's own services, whose failures are known. A caller composing its
 * own tracker, index or store (the CLI) merges them beside this layer.
 */
export interface EngineOwnOptions {
  readonly tracker?: undefined
  readonly symbols?: undefined
  readonly layers?: undefined
}

/** What building the engine's own services may fail with: malformed options, a prompts folder or store outside the repository, a store that cannot open. */
export type EngineLayerError = InvalidInput | PathOutsideRepo | StateStoreError

/**
 * Build the engine's Layer. Effect users can provide it directly instead of using the
 * Promise facade.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ContextManager, makeEngineLayer } from "@strata/core/effect"
 * const program = Effect.gen(function* () {
 *   const manager = yield* ContextManager
 *   yield* manager.addFile("README.md")
 *   return yield* manager.getFiles
 * }).pipe(Effect.provide(makeEngineLayer({ model: "gpt-4o", repoRoot: "." })))
 * ```
 */
export function makeEngineLayer<Body = unknown>(options: ContextEngineOptions<Body> & EngineOwnOptions): Layer.Layer<EngineServices, EngineLayerError>
export function makeEngineLayer<Body = unknown>(options: ContextEngineOptions<Body>): Layer.Layer<EngineServices, unknown>
export function makeEngineLayer<Body = unknown>(options: ContextEngineOptions<Body>): Layer.Layer<EngineServices, unknown> {
  const valid = validateEngineOptions(options)
  if (Result.isFailure(valid)) return Layer.unwrap(Effect.fail(valid.failure))
  const tokenizer = options.tokenCounter === undefined
    ? Tokenizer.layer(options.model)
    : Tokenizer.layerFrom(options.tokenCounter)
  const root = options.repoRoot ?? process.cwd()
  const sessions = options.sessions === true
    ? [SessionStore.layer(root)]
    : typeof options.sessions === "string" ? [SessionStore.layerDirectory(options.sessions)] : []
  const store: Layer.Layer<StateStore, StateStoreError | PathOutsideRepo> = options.store === undefined ? MemoryStateStore.layer : options.store.layer(root)
  const base = Layer.mergeAll(
    tokenizer,
    RepoFiles.layer({ root, maxFileBytes: options.maxFileBytes }),
    // Prompt files must resolve inside the repository (or inside a folder outside it chosen here).
    Prompts.layer({ dir: options.promptsDir, root, pack: options.prompts }),
    // The assembly pipeline's default stages; the composed values and extras (stage overrides) come later and win.
    Pipeline.layer,
    requestLimits({ maxInputTokens: options.maxInputTokens, mapTokens: options.mapTokens, mapRanking: options.mapRanking, outputReserveTokens: options.outputReserveTokens }),
    store,
    sessionLayer(options, root),
    ...sessions,
    ...(options.tracker === undefined ? [] : [options.tracker]),
    ...(options.symbols === undefined ? [] : [options.symbols]),
    ...(options.provider === undefined ? [] : [placementOf(options.provider)]),
    ...(options.layers ?? []),
    // With a store the tracker's state is the store's: the context's own tracker (a
    // persistent one would write its file on a purge) holds and writes nothing.
    ...(options.tracker !== undefined && options.store !== undefined ? [Layer.succeed(Tracker, inertTracker)] : []),
    ...(options.compactionModel === undefined ? [] : [compactionModelFromFunction(options.compactionModel)])
  )
  // The engine's history rewrites purge the tracker once their commit is stored: the
  // compactor reads the tracker (for the cache impact) but leaves the purge to them.
  const compactorTracker = Layer.unwrap(Effect.map(Effect.serviceOption(Tracker), (tracker) =>
    Option.isNone(tracker) ? Layer.empty : Layer.succeed(Tracker, { ...tracker.value, purgeHistory: Effect.succeed([]) })))
  const compactor = HistoryCompactor.layer({ config: options.compaction ?? {} }).pipe(Layer.provide(compactorTracker), Layer.provideMerge(base))
  return ContextManager.layer({ maxInputTokens: options.maxInputTokens, compaction: options.compaction }).pipe(
    Layer.provideMerge(compactor)
  )
}
