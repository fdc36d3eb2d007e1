/**
 * The turn API: one request of a session, assembled from ONE snapshot of its state in a
 * `StateStore` (history, tracker, journal memory, record) and committed as ONE atomic
 * `TurnCommit` with compare-and-set on the snapshot's version. Everything a turn changes
 * lives in services made for that turn, so a turn never committed changes nothing, not
 * even in memory. A conflict (another process committed first) is retried by re-loading
 * and re-assembling under the same turn id.
 */
import { Clock, Effect, Exit, Option, Ref, Schema } from "effect"
import type { ContextBreakdown } from "../breakdown/index.ts"
import { InvalidInput, type PathOutsideRepo } from "../domain/errors.ts"
import type { TierChange } from "../domain/Item.ts"
import { historyProblems, type Message, type ToolResultPart } from "../domain/Message.ts"
import type { Usage } from "../domain/Usage.ts"
import { assemble, getContextBreakdown, type AssemblyResult, type AssemblyServices } from "../pipeline/assemble.ts"
import { AssemblySession } from "../pipeline/assemblySession.ts"
import { decodeJournalMemory, encodeJournalMemory } from "../pipeline/journal/journalCodec.ts"
import type { JournalMemory } from "../pipeline/base/journalMemory.ts"
import type { ContextEditMemory } from "../pipeline/base/contextEditMemory.ts"
import type { AssemblyError, AssemblyInput } from "../pipeline/base/state.ts"
import { Placement, type PlacementResult, type ProviderPlugin, PlacementError } from "../services/Placement.ts"
import {
  formatSessionKey,
  StateStore,
  TurnCommit,
  type CommitResult,
  type SessionKey,
  type StatePatch,
  StateConflict,
  type StateSnapshot,
  type StateStoreError,
  type TurnId
} from "../services/StateStore.ts"
import { SymbolIndex, type PathAlias } from "../services/SymbolIndex.ts"
import { Tracker, TrackerState, type SeededTracker, type TrackerSnapshot } from "../services/Tracker.ts"
import { Tokenizer } from "../tokens/Tokenizer.ts"
import { decodeSessionRecord, RecordedRequest, recordedRequest, recordTurn, requestShape, type RecordedTurn, type RequestSource, type SessionRecord, type UsageSource } from "./record.ts"

/**
 * `commit` was called on a turn that is already committed. A turn is stored once: the
 * first commit's reply is the one the history keeps. Begin a new turn for a new reply.
 */
export class TurnAlreadyCommitted extends Schema.TaggedError<TurnAlreadyCommitted>()("TurnAlreadyCommitted", {
  turnId: Schema.String,
  version: Schema.Number
}) {
  override get message(): string {
    return `Turn ${this.turnId} was already committed (session version ${this.version}); its first reply is the one stored. Assemble a new turn for another request.`
  }
}

/**
 * The turn was assembled on a state that another commit has since changed (another turn,
 * a history edit, another process): its reply never saw those changes, so it is not
 * appended after them. Nothing was written. Assemble the request again and send it, or
 * opt in to re-assembling on commit (`commit(outcome, { retries })`) when the reply stays
 * right whatever came in between.
 */
export class StaleTurn extends Schema.TaggedError<StaleTurn>()("StaleTurn", {
  session: Schema.String,
  turnId: Schema.String,
  assembledAt: Schema.Number,
  current: Schema.Number
}) {
  override get message(): string {
    return `Turn ${this.turnId} of session ${this.session} was assembled from version ${this.assembledAt}, but the session is at version ${this.current} now: another commit changed it, and the reply never saw that change, so nothing was stored. Assemble the turn again and resend it, or commit with { retries } to re-assemble it on the new state.`
  }
}

/** What a caller asks of one turn; the history comes from the store. */
export interface TurnRequest {
  readonly session: SessionKey
  /** Everything a request is assembled from but the history: model, prompt, prompts, files, images, URLs. */
  readonly input: Omit<AssemblyInput, "history">
  /**
   * Results answering the tool calls the stored history ends with. They go into the
   * request (and, on commit, the history) as one `tool` message before the prompt; an
   * agent's follow-up request may leave the prompt empty.
   */
  readonly toolResults?: ReadonlyArray<ToolResultPart> | undefined
  /** The turn's id, kept across retries so a turn is stored once. Default: a random UUID. */
  readonly turnId?: TurnId | undefined
}

/** How a turn is assembled. */
export interface TurnOptions<Body = unknown> {
  /**
   * Render with this provider plugin, so the turn's body is typed `Body`. Default: the
   * `Placement` service in context (body `unknown`; the seeds' format without one).
   */
  readonly plugin?: ProviderPlugin<Body> | undefined
  /**
   * Where the tracker's state lives. `"store"`: in the snapshot, seeded per turn through
   * `TrackerState` (the default when it is provided). `"service"`: the `Tracker` in context
   * keeps it (a persistent tracker file, or memory), advanced after the store commit.
   * Without either service the request is flat.
   */
  readonly tracker?: "store" | "service" | undefined
}

/** What came back for a turn, already decoded (the Promise API decodes provider replies into this). */
export interface TurnOutcome {
  /**
   * The reply's messages (text, reasoning, tool calls; tool messages of a multi-step
   * result). With a reply the turn appends its tool results, its prompt and the reply;
   * without one (a request that was not sent) it appends nothing and still advances the
   * tracker, the journal and the record.
   */
  readonly reply?: ReadonlyArray<Message> | undefined
  /** The request's usage; undefined when unknown (nothing is added to the totals). */
  readonly usage?: Usage | undefined
  /** Where `usage` came from; default `provider`. */
  readonly usageSource?: Exclude<UsageSource, "none"> | undefined
  /** Commit time in milliseconds since the epoch; default the `Clock`'s now. */
  readonly at?: number | undefined
  /** Why the request read less from the cache than the one before left there, for the HUD. */
  readonly lastMiss?: string | undefined
  /** What sent the request, for its summary (the dashboard's sessions list); default `api`. */
  readonly source?: Exclude<RequestSource, "proxy"> | undefined
}

/** How a commit retries. */
export interface CommitOptions {
  /**
   * When another commit changed the session since the turn was assembled: load it again,
   * re-assemble the same request and commit the same outcome, at most this many times
   * (then `StateConflict`). Default 0: the commit fails with `StaleTurn`, so a reply is
   * never appended after turns it did not see unless the caller opts in.
   */
  readonly retries?: number | undefined
}

/** A committed turn. */
export interface TurnCommitted {
  /** The session's version after the commit. */
  readonly version: number
  /** The turn id was already stored (a retry of a turn that landed): nothing was written. */
  readonly duplicate: boolean
  /** The messages this turn appended to the history. */
  readonly appended: ReadonlyArray<Message>
  /** The session record after the turn. */
  readonly record: SessionRecord
  /** Things to tell the user (e.g. a tracker file another process changed). */
  readonly warnings: ReadonlyArray<string>
}

/** Errors of beginning a turn. */
export type TurnError = AssemblyError | StateStoreError | PathOutsideRepo | InvalidInput

/** Errors of committing a turn (a retry re-assembles, so it can fail as a begin does). */
export type TurnCommitError = TurnError | StateConflict | StaleTurn | TurnAlreadyCommitted

/** The services a turn needs: a `StateStore`, the pipeline's stages and a `Tokenizer` (a `Tracker` or `TrackerState`, a `SymbolIndex` and a `Placement` are used when provided). */
export type TurnServices = StateStore | AssemblyServices

/** The assembled request of a turn, with its provider body typed. */
export interface TurnAssembly<Body = unknown> extends Omit<AssemblyResult, "commit" | "placed"> {
  readonly placed: PlacementResult<Body>
}

/**
 * One turn: the request assembled from the snapshot at `baseVersion`. Send `assembly.placed.body`,
 * then `commit` the outcome; never committed, it changes nothing.
 */
export interface Turn<Body = unknown> {
  readonly id: TurnId
  readonly session: SessionKey
  /** The version of the snapshot the request was assembled from. */
  readonly baseVersion: number
  readonly assembly: TurnAssembly<Body>
  /** The session record as loaded (the HUD's totals before this turn). */
  readonly record: SessionRecord
  /** The history the request was assembled from, this turn's tool results included. */
  readonly history: ReadonlyArray<Message>
  /** Loading the state needed repairs (a torn write set aside, an unusable tracker or record). */
  readonly warnings: ReadonlyArray<string>
  /** Store the turn: one `TurnCommit` against `baseVersion`. */
  readonly commit: (outcome?: TurnOutcome, options?: CommitOptions) => Effect.Effect<TurnCommitted, TurnCommitError>
}

// ---------------------------------------------------------------------------------
// The state a turn starts from.

/** A tracker whose commit is held until the turn commits: the pipeline's commit records it here. */
const deferredTracker = (base: Tracker["Service"], held: Ref.Ref<TrackerSnapshot | undefined>): Tracker["Service"] => ({
  current: base.current,
  commit: (next) => Ref.set(held, next),
  remove: base.remove,
  purgeHistory: base.purgeHistory
})

interface TrackerSource {
  readonly mode: "store" | "service"
  readonly tracker: Tracker["Service"]
  /** The seeded tracker (store mode): commit into it, then encode its state. */
  readonly seeded: SeededTracker | undefined
}

const trackerSource = Effect.fnUntraced(function* (mode: "store" | "service" | undefined, snapshot: StateSnapshot) {
  const state = yield* Effect.serviceOption(TrackerState)
  const ambient = yield* Effect.serviceOption(Tracker)
  const chosen = mode ?? (Option.isSome(state) ? "store" : "service")
  if (chosen === "store") {
    if (Option.isNone(state)) {
      return yield* new InvalidInput({ what: "turn", issue: "the tracker's state is to live in the store, but no TrackerState is provided (use a TrackerLayer from @strata/tiers)" })
    }
    const seeded = yield* state.value.seed(snapshot.tracker)
    return { mode: "store", tracker: seeded.tracker, seeded } satisfies TrackerSource
  }
  return Option.isSome(ambient) ? ({ mode: "service", tracker: ambient.value, seeded: undefined } satisfies TrackerSource) : undefined
})

/** The tool message a turn's results make, or undefined. */
const toolMessage = (results: ReadonlyArray<ToolResultPart> | undefined): Message | undefined =>
  results === undefined || results.length === 0 ? undefined : { role: "tool", content: [...results] }

/**
 * The history a request is assembled from: the stored one plus this turn's tool message.
 * The stored history may end with tool calls only when this turn answers them.
 */
const requestHistory = (stored: ReadonlyArray<Message>, tool: Message | undefined): Effect.Effect<ReadonlyArray<Message>, InvalidInput> => {
  const history = tool === undefined ? stored : [...stored, tool]
  const problem = historyProblems(history).find((p) => p.index >= stored.length - 1)
  if (problem === undefined) return Effect.succeed(history)
  const hint = tool === undefined ? "; pass the tool results of the turn (toolResults) or add them to the history first" : ""
  return Effect.fail(new InvalidInput({ what: "turn", issue: `${problem.issue}${hint}` }))
}

/** The messages a committed turn appends before its reply: its tool message and its prompt. */
const promptMessages = (request: TurnRequest, tool: Message | undefined): ReadonlyArray<Message> => {
  const images = request.input.images ?? []
  const text = request.input.prompt
  const prompt: Message | undefined = text === "" && images.length === 0
    ? undefined
    : images.length === 0
      ? { role: "user", content: text }
      : { role: "user", content: [...(text === "" ? [] : [{ type: "text" as const, text }]), ...images.map((i) => (typeof i === "string" ? { type: "image" as const, url: i } : i))] }
  return [...(tool === undefined ? [] : [tool]), ...(prompt === undefined ? [] : [prompt])]
}

/** The index, recording the path aliases of each snapshot it hands out. */
const recordingIndex = (index: SymbolIndex["Service"], aliases: Ref.Ref<ReadonlyArray<PathAlias> | undefined>): SymbolIndex["Service"] => ({
  snapshot: Effect.tap(index.snapshot, (map) => Ref.set(aliases, map.aliases)),
  useAliases: index.useAliases
})

/** Everything a turn (or a breakdown) is assembled with, from one loaded snapshot. */
interface Prepared {
  readonly snapshot: StateSnapshot
  readonly history: ReadonlyArray<Message>
  readonly tool: Message | undefined
  readonly record: SessionRecord
  readonly source: TrackerSource | undefined
  readonly encoding: string
  readonly session: AssemblySession["Service"]
  readonly held: Ref.Ref<TrackerSnapshot | undefined>
  /** The symbol index, recording the path aliases its last snapshot rendered with. */
  readonly index: SymbolIndex["Service"] | undefined
  readonly aliases: Ref.Ref<ReadonlyArray<PathAlias> | undefined>
  readonly warnings: ReadonlyArray<string>
}

const prepare = Effect.fnUntraced(function* (request: TurnRequest, options: Pick<TurnOptions, "tracker">) {
  const store = yield* StateStore
  const loaded = yield* store.load(request.session)
  const snapshot = loaded.snapshot
  const tool = toolMessage(request.toolResults)
  const history = yield* requestHistory(snapshot.history, tool)
  const { record, warning: recordWarning } = decodeSessionRecord(snapshot.record)
  const source = yield* trackerSource(options.tracker, snapshot)
  const encoding = (yield* Tokenizer).encoding
  const journal = snapshot.journal === null ? undefined : decodeJournalMemory(snapshot.journal, encoding)
  const index = Option.getOrUndefined(yield* Effect.serviceOption(SymbolIndex))
  // The legend of the session's first turn, so every process renders the same one.
  if (record.aliases !== null && index?.useAliases !== undefined) yield* index.useAliases(record.aliases)
  const aliases = yield* Ref.make<ReadonlyArray<PathAlias> | undefined>(undefined)
  const session: AssemblySession["Service"] = {
    emptyTiers: yield* Ref.make(record.emptyTiersTotal),
    lastChanges: yield* Ref.make<ReadonlyArray<TierChange>>(record.last?.changes ?? []),
    journal: yield* Ref.make<JournalMemory | undefined>(journal),
    // Context editing's memory travels in the journal's (the seed layout keeps none between turns).
    contextEdits: yield* Ref.make<ContextEditMemory | undefined>(journal?.edits)
  }
  return {
    snapshot,
    history,
    tool,
    record,
    source,
    encoding,
    session,
    held: yield* Ref.make<TrackerSnapshot | undefined>(undefined),
    index: index === undefined ? undefined : recordingIndex(index, aliases),
    aliases,
    warnings: [
      ...loaded.warnings,
      ...(recordWarning === undefined ? [] : [recordWarning]),
      ...(source?.seeded?.warnings ?? []),
      ...(snapshot.journal !== null && journal === undefined ? ["The session's journal memory was written by another format or tokenizer; this request rebuilds the cached prefix."] : [])
    ]
  } satisfies Prepared
})

/** Run `effect` with the turn's own tracker and session bookkeeping in place of the context's. */
const withTurnServices = <A, E, R>(prepared: Prepared, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let out: Effect.Effect<A, E, R> = Effect.provideService(effect, AssemblySession, prepared.session)
  const index = prepared.index
  if (index !== undefined) out = Effect.provideService(out, SymbolIndex, index)
  const source = prepared.source
  if (source !== undefined) out = Effect.provideService(out, Tracker, deferredTracker(source.tracker, prepared.held))
  return out
}

// ---------------------------------------------------------------------------------
// Placement with a typed body.

/**
 * A `Placement` over `plugin` that keeps the typed result of the last placement, so the
 * turn can hand back the body with the plugin's type (the pipeline's service is untyped).
 */
const capturingPlacement = <Body>(plugin: ProviderPlugin<Body>) => {
  let last: PlacementResult<Body> | undefined
  const service: Placement["Service"] = {
    provider: plugin.provider,
    place: (request) =>
      Effect.try({
        try: () => {
          last = plugin.place(request)
          return last
        },
        catch: (error) => (error instanceof PlacementError ? error : new PlacementError({ provider: plugin.provider, reason: error instanceof Error ? error.message : String(error) }))
      })
  }
  /** The typed result behind `placed`, or undefined when `placed` came from elsewhere. */
  const typed = (placed: PlacementResult): PlacementResult<Body> | undefined => (last !== undefined && last === placed ? last : undefined)
  return { service, typed }
}

/** How a turn's request is assembled: the pipeline, and the placed body with its type. */
type Assembler<Body> = (input: AssemblyInput) => Effect.Effect<{ readonly result: AssemblyResult; readonly placed: PlacementResult<Body> }, AssemblyError, AssemblyServices>

/** With the context's `Placement`: the body is `unknown`. */
const untypedAssembler: Assembler<unknown> = (input) => Effect.map(assemble(input), (result) => ({ result, placed: result.placed }))

/** With `plugin`: the body has the plugin's type. */
const pluginAssembler = <Body>(plugin: ProviderPlugin<Body>): Assembler<Body> => (input) =>
  Effect.gen(function* () {
    const capture = capturingPlacement(plugin)
    const result = yield* Effect.provideService(assemble(input), Placement, capture.service)
    const placed = capture.typed(result.placed)
    if (placed === undefined) return yield* new PlacementError({ provider: plugin.provider, reason: "a stage replaced the placement's result; keep the \"placement\" stage's output as it is" })
    return { result, placed }
  })

// ---------------------------------------------------------------------------------
// Beginning and committing.

/**
 * The patch a commit writes, computed once per turn: the pipeline's commit runs into the
 * turn's own services, which are then encoded. Nothing outside the turn changes.
 */
const makePatch = (prepared: Prepared, result: AssemblyResult, record: SessionRecord) =>
  Effect.gen(function* () {
    // Neither commit can conflict: the held one only records, and the seeded tracker is
    // this turn's own, at the version the update was derived from.
    yield* Effect.orDie(withTurnServices(prepared, result.commit))
    const next = yield* Ref.get(prepared.held)
    const journal = yield* Ref.get(prepared.session.journal)
    const seeded = prepared.source?.seeded
    if (seeded !== undefined && next !== undefined) yield* Effect.orDie(seeded.tracker.commit(next))
    const patch: StatePatch = {
      ...(seeded === undefined ? {} : { tracker: yield* seeded.state }),
      journal: journal === undefined ? null : toJson(encodeJournalMemory(journal, prepared.encoding)),
      record: toJson(record)
    }
    return { patch, next }
  })

const encodeRecordedRequest = (request: RecordedRequest): Schema.Json => toJson(Schema.encodeSync(RecordedRequest)(request))

/** Plain data as `Schema.Json`: the types say so; the identity keeps the compiler checking it. */
const toJson = (value: Schema.Json): Schema.Json => value

/**
 * Begin a turn: load the session's snapshot once, assemble the request from it (tracker
 * and journal seeded from the snapshot), and return it with its `commit`. A turn that is
 * never committed changes nothing.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { beginTurn, type AssemblyInput, type SessionKey } from "@strata/core/effect"
 *
 * declare const session: SessionKey
 * declare const input: Omit<AssemblyInput, "history">
 * const program = Effect.gen(function* () {
 *   const turn = yield* beginTurn({ session, input })
 *   // ... send turn.assembly.placed.body to the provider ...
 *   return yield* turn.commit({ reply: [{ role: "assistant", content: "Done." }] }, { retries: 3 })
 * })
 * ```
 */
export function beginTurn<Body>(
  request: TurnRequest,
  options: TurnOptions<Body> & { readonly plugin: ProviderPlugin<Body> }
): Effect.Effect<Turn<Body>, TurnError, TurnServices>
export function beginTurn(request: TurnRequest, options?: TurnOptions<unknown>): Effect.Effect<Turn<unknown>, TurnError, TurnServices>
export function beginTurn<Body>(request: TurnRequest, options: TurnOptions<Body> = {}): Effect.Effect<Turn<Body> | Turn<unknown>, TurnError, TurnServices> {
  const { plugin, ...rest } = options
  return plugin === undefined ? begin(request, rest, untypedAssembler) : begin(request, rest, pluginAssembler(plugin))
}

const begin = Effect.fn("Strata.beginTurn")(function* <Body>(
  request: TurnRequest,
  options: Omit<TurnOptions, "plugin">,
  assembler: Assembler<Body>
) {
  const turnId = request.turnId ?? crypto.randomUUID()
  const prepared = yield* prepare(request, options)
  const input: AssemblyInput = { ...request.input, history: prepared.history }
  const { result, placed } = yield* withTurnServices(prepared, assembler(input))
  const context = yield* Effect.context<TurnServices>()
  const provider = placed.provider
  const aliases = yield* Ref.get(prepared.aliases)
  // Computed at most once, so a commit retried after a store error writes the same turn.
  let prepatched: { readonly patch: StatePatch; readonly next: TrackerSnapshot | undefined; readonly record: SessionRecord; readonly append: ReadonlyArray<Message>; readonly request: Schema.Json | undefined } | undefined
  // A turn is committed once: a commit under way or done refuses another.
  let committing: "open" | "running" | { readonly version: number } = "open"
  const assembly: TurnAssembly<Body> = {
    mode: result.mode,
    request: result.request,
    placed,
    report: result.report,
    breakdown: result.breakdown,
    warnings: result.warnings,
    userText: result.userText,
    ...(result.journal === undefined ? {} : { journal: result.journal })
  }
  const turn: Turn<Body> = {
    id: turnId,
    session: request.session,
    baseVersion: prepared.snapshot.version,
    assembly,
    record: prepared.record,
    history: prepared.history,
    warnings: prepared.warnings,
    commit: (outcome: TurnOutcome = {}, commitOptions: CommitOptions = {}) =>
      Effect.suspend(() => {
        if (committing !== "open") {
          return Effect.fail(new TurnAlreadyCommitted({ turnId, version: committing === "running" ? prepared.snapshot.version : committing.version }))
        }
        committing = "running"
        return commitOnce(outcome, commitOptions.retries ?? 0, false).pipe(
          Effect.onExit((exit) => Effect.sync(() => {
            committing = Exit.isSuccess(exit) ? { version: exit.value.version } : "open"
          }))
        )
      })
  }
  const commitOnce = (outcome: TurnOutcome, retries: number, retried: boolean): Effect.Effect<TurnCommitted, TurnCommitError> =>
      Effect.gen(function* () {
        if (prepatched === undefined) {
          const append = outcome.reply === undefined ? [] : [...promptMessages(request, prepared.tool), ...outcome.reply]
          const problem = historyProblems([...prepared.snapshot.history, ...append], { pending: true }).find((p) => p.index >= prepared.snapshot.history.length - 1)
          if (problem !== undefined) return yield* new InvalidInput({ what: "reply", issue: problem.issue })
          const recorded: RecordedTurn = {
            provider,
            model: request.input.model,
            at: outcome.at ?? (yield* Clock.currentTimeMillis),
            promptTokens: result.report.totalTokens,
            usage: outcome.usage,
            usageSource: outcome.usageSource ?? "provider",
            changes: result.report.changes,
            emptyTiers: result.report.emptyTiers,
            selected: (request.input.files ?? []).map((f) => f.path).sort(),
            aliases,
            lastMiss: outcome.lastMiss,
            shape: requestShape(result.request, result.report),
            source: outcome.source ?? "api"
          }
          const record = recordTurn(prepared.record, recorded)
          const summary = recordedRequest(prepared.record, recorded)
          const { patch, next } = yield* makePatch(prepared, result, record)
          prepatched = { patch, next, record, append, request: summary === undefined ? undefined : encodeRecordedRequest(summary) }
        }
        const { patch, next, record, append, request: summary } = prepatched
        const store = yield* StateStore
        // The store's own schema: what this commit accepts is what a later load decodes.
        const commit = yield* Effect.mapError(
          decodeTurnCommit({ session: request.session, baseVersion: prepared.snapshot.version, turnId, append, patch, ...(summary === undefined ? {} : { request: summary }) }),
          (error) => new InvalidInput({ what: "turn commit", issue: error.message })
        )
        const committed = yield* Effect.exit(store.commit(commit))
        if (Exit.isFailure(committed)) {
          const conflict = Exit.findErrorOption(committed).pipe(Option.filter((e) => e instanceof StateConflict))
          if (Option.isNone(conflict)) return yield* Effect.failCause(committed.cause)
          if (retries <= 0) {
            if (retried) return yield* Effect.failCause(committed.cause)
            return yield* new StaleTurn({ session: formatSessionKey(request.session), turnId, assembledAt: conflict.value.expected, current: conflict.value.actual })
          }
          const again = yield* begin({ ...request, turnId }, options, assembler)
          return yield* again.commitAgain(outcome, retries - 1)
        }
        const warnings = yield* afterCommit(prepared, next, committed.value)
        return { version: committed.value.version, duplicate: committed.value.duplicate, appended: committed.value.duplicate ? [] : append, record, warnings } satisfies TurnCommitted
      }).pipe(Effect.provideContext(context))
  return Object.assign(turn, { commitAgain: (outcome: TurnOutcome, retries: number) => commitOnce(outcome, retries, true) })
})

const decodeTurnCommit = Schema.decodeUnknownEffect(TurnCommit)

/** Service mode: the context's tracker advances once the store holds the turn (a conflict there is a warning). */
const afterCommit = (prepared: Prepared, next: TrackerSnapshot | undefined, committed: CommitResult): Effect.Effect<ReadonlyArray<string>> => {
  const source = prepared.source
  if (source === undefined || source.mode !== "service" || next === undefined || committed.duplicate) return Effect.succeed([])
  return source.tracker.commit(next).pipe(
    Effect.as([] as ReadonlyArray<string>),
    Effect.catch((error) => Effect.succeed([`The turn was stored, but the tracker did not advance: ${error.message}`]))
  )
}

/**
 * Begin a turn, send it, commit what came back: on a conflict the request is re-assembled
 * from the new state and the same outcome committed (the request is not sent again), at
 * most `retries` times (default 3).
 *
 * @example
 * ```ts no-run
 * import { Effect } from "effect"
 * import { runTurn, type AssemblyInput, type SessionKey } from "@strata/core/effect"
 *
 * declare const session: SessionKey
 * declare const input: Omit<AssemblyInput, "history">
 * declare const send: (body: unknown) => Effect.Effect<string>
 * const program = runTurn({ session, input }, (turn) =>
 *   Effect.map(send(turn.assembly.placed.body), (text) => ({ reply: [{ role: "assistant" as const, content: text }] }))
 * )
 * ```
 */
export function runTurn<Body, E, R>(
  request: TurnRequest,
  send: (turn: Turn<Body>) => Effect.Effect<TurnOutcome, E, R>,
  options: TurnOptions<Body> & CommitOptions & { readonly plugin: ProviderPlugin<Body> }
): Effect.Effect<TurnCommitted, TurnCommitError | E, TurnServices | R>
export function runTurn<E, R>(
  request: TurnRequest,
  send: (turn: Turn<unknown>) => Effect.Effect<TurnOutcome, E, R>,
  options?: TurnOptions<unknown> & CommitOptions
): Effect.Effect<TurnCommitted, TurnCommitError | E, TurnServices | R>
export function runTurn<E, R>(
  request: TurnRequest,
  send: (turn: Turn<unknown>) => Effect.Effect<TurnOutcome, E, R>,
  options: TurnOptions<unknown> & CommitOptions = {}
): Effect.Effect<TurnCommitted, TurnCommitError | E, TurnServices | R> {
  const { plugin, retries, ...rest } = options
  return Effect.gen(function* () {
    const turn = plugin === undefined ? yield* begin(request, rest, untypedAssembler) : yield* begin(request, rest, pluginAssembler(plugin))
    const outcome = yield* send(turn)
    return yield* turn.commit(outcome, { retries: retries ?? 3 })
  })
}

/**
 * The context breakdown (docs/pipeline.md) of the session's next request, from the stored state, without
 * sending or committing anything. Promotions are the last committed request's.
 *
 * @example
 * ```ts
 * import { turnBreakdown } from "@strata/core/effect"
 * // yield* turnBreakdown({ session, input: { model, prompt: "", systemPrompt } })
 * ```
 */
export const turnBreakdown: (
  request: TurnRequest,
  options?: Pick<TurnOptions, "tracker">
) => Effect.Effect<ContextBreakdown, TurnError, TurnServices> = Effect.fn("Strata.turnBreakdown")(function* (
  request: TurnRequest,
  options: Pick<TurnOptions, "tracker"> = {}
) {
  const prepared = yield* prepare(request, options)
  return yield* withTurnServices(prepared, getContextBreakdown({ ...request.input, history: prepared.history }))
})
