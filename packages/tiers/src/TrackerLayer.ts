/**
 * Layers for core's `Tracker` service: an in-memory one, and a persistent one that keeps
 * state in `<repo>/.strata/tracker.json`. Commits are compare-and-set on a version
 * stored in the file, checked under a short lock file, so two processes on one
 * repository can never silently overwrite each other's update.
 */
import {
  createInsideRepo,
  InvalidInput,
  keepDamagedCopy,
  PathOutsideRepo,
  processAlive,
  readInsideRepo,
  removeInsideRepo,
  statInsideRepo,
  Tracker,
  TrackerConflict,
  TrackerPersistError,
  TrackerState,
  writeInsideRepo,
  type SeededTracker,
  type TrackerSnapshot
} from "@strata/core"
import { Clock, Effect, Layer, Semaphore } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { configOf, resolveConfig, type ResolvedConfig, type StabilityTrackerConfig } from "./model/config.ts"
import { decodeTrackerFile, decodeTrackerState, encodeTrackerFile, encodeTrackerState, type TrackerFileProblem } from "./persistence.ts"
import { stateOf, toSnapshot } from "./snapshot.ts"
import { StabilityTracker, type TrackerResult } from "./StabilityTracker.ts"

/** A committed state and its version. */
interface Committed {
  readonly tracker: StabilityTracker
  readonly version: number
}

/** Where committed state lives. The in-memory store does nothing; the file store persists. */
interface Store {
  /** Bring `mem` up to date with what other processes committed. */
  readonly refresh: (mem: Committed) => Effect.Effect<Committed>
  /** Run `body` holding the cross-process lock. */
  readonly exclusive: <A, E>(body: Effect.Effect<A, E>) => Effect.Effect<A, E | TrackerPersistError>
  readonly write: (next: Committed) => Effect.Effect<void, TrackerPersistError>
}

type TrackerService = Tracker["Service"]

/** The service, and its committed state (for the trackers a `StateStore` holds). */
const makeTracker = (config: ResolvedConfig, store: Store, initial: Committed): { readonly service: TrackerService; readonly committed: () => Committed } => {
  // One permit: commits, removals and refreshes of this process never interleave.
  const permit = Semaphore.makeUnsafe(1)
  let mem = initial
  const refresh = Effect.gen(function* () {
    mem = yield* store.refresh(mem)
    return mem
  })
  const apply = (op: (tracker: StabilityTracker) => TrackerResult) =>
    permit.withPermit(
      store.exclusive(
        Effect.gen(function* () {
          const base = yield* refresh
          const { tracker, changes } = op(base.tracker)
          if (changes.length === 0) return changes
          const next = { tracker, version: base.version + 1 }
          yield* store.write(next)
          mem = next
          return changes
        })
      )
    )
  const service: TrackerService = {
    current: permit.withPermit(Effect.map(refresh, (c): TrackerSnapshot => toSnapshot(c.tracker, c.version))).pipe(
      Effect.withSpan("Tracker.current")
    ),
    commit: Effect.fn("Tracker.commit")(function* (next: TrackerSnapshot) {
      yield* permit.withPermit(
        store.exclusive(
          Effect.gen(function* () {
            const base = yield* refresh
            if (next.baseVersion !== base.version) {
              return yield* Effect.fail(new TrackerConflict({ expected: next.baseVersion, actual: base.version }))
            }
            const committed = { tracker: stateOf(next, config), version: base.version + 1 }
            yield* store.write(committed)
            mem = committed
          })
        )
      )
    }),
    remove: Effect.fn("Tracker.remove")(function* (keys: ReadonlyArray<string>) {
      return yield* apply((tracker) => StabilityTracker.remove(tracker, keys))
    }),
    purgeHistory: apply((tracker) => StabilityTracker.purgeHistory(tracker)).pipe(Effect.withSpan("Tracker.purgeHistory"))
  }
  return { service, committed: () => mem }
}

const makeService = (config: ResolvedConfig, store: Store, initial: Committed): TrackerService => makeTracker(config, store, initial).service

/** Committed state that lives in memory only. */
const inMemory: Store = { refresh: Effect.succeed, exclusive: (body) => body, write: () => Effect.void }

const configFrom = (config: StabilityTrackerConfig | undefined): Effect.Effect<ResolvedConfig, InvalidInput> =>
  Effect.try({
    try: () => resolveConfig(config),
    catch: (error) => (error instanceof InvalidInput ? error : new InvalidInput({ what: "tracker config", issue: String(error) }))
  })

/** Options of the in-memory tracker. */
export interface MemoryTrackerOptions {
  readonly config?: StabilityTrackerConfig | undefined
  /** Start from this state instead of an empty tracker. */
  readonly initial?: StabilityTracker | undefined
}

/**
 * An in-memory `Tracker`: state lives as long as the layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tracker } from "@strata/core"
 * import { makeMemoryTracker } from "@strata/tiers"
 * const tracker = Effect.runSync(makeMemoryTracker({ config: { policy: "gated" } }))
 * ```
 */
export const makeMemoryTracker = (options: MemoryTrackerOptions = {}): Effect.Effect<TrackerService, InvalidInput> =>
  Effect.map(configFrom(options.config), (config) =>
    makeService(config, inMemory, { tracker: options.initial ?? StabilityTracker.make(configOf(config)), version: 0 })
  )

/** A tracker file that could not be used; the tracker rebuilt from scratch. */
export interface TrackerStateWarning {
  readonly path: string
  readonly kind: TrackerFileProblem["kind"] | "unreadable"
  readonly message: string
  /** Where the unusable file was copied, when the copy succeeded. */
  readonly backup?: string | undefined
}

/** Options of the persistent tracker. */
export interface PersistentTrackerOptions {
  /** The repository root; state goes to `<repoRoot>/.strata/<fileName>`. */
  readonly repoRoot: string
  readonly config?: StabilityTrackerConfig | undefined
  /** Default `tracker.json`. */
  readonly fileName?: string | undefined
  /** How long a commit waits for another process's lock before refusing. Default 5000 ms. */
  readonly lockTimeoutMs?: number | undefined
  /** A lock older than this whose owner cannot be checked is taken over. Default 30000 ms. */
  readonly staleLockMs?: number | undefined
  /** Called for every unusable state file (besides a logged warning). */
  readonly onWarning?: ((warning: TrackerStateWarning) => void) | undefined
}

interface Stamp {
  readonly ino: number
  readonly size: number
  readonly mtimeMs: number
}

const sameStamp = (a: Stamp | undefined, b: Stamp | undefined): boolean =>
  a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs

/** The file's stamp (links resolved inside the repository), undefined when missing; a link out fails. */
const statOf = (root: string, file: string): Effect.Effect<Stamp | undefined, PathOutsideRepo> =>
  statInsideRepo(root, file).pipe(
    Effect.map((s): Stamp | undefined => (s === undefined ? undefined : { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs })),
    Effect.catchIf((error): error is Exclude<typeof error, PathOutsideRepo> => error._tag !== "PathOutsideRepo", () => Effect.succeed(undefined))
  )

/** How the lock file is judged: this host, and how long to wait for or trust a holder. */
interface LockTiming {
  readonly host: string
  readonly lockTimeoutMs: number
  readonly staleLockMs: number
}

/**
 * The cross-process lock: a file created exclusively with the holder's pid, host and
 * time. A lock whose owner is dead (same host) or that is older than `staleLockMs` is
 * taken over; waiting longer than `lockTimeoutMs` fails naming the holder.
 */
const fileLock = (root: string, lockFile: string, timing: LockTiming, persistError: (reason: string) => TrackerPersistError) => {
  const { host, lockTimeoutMs, staleLockMs } = timing
  // The lock's content ("" when unreadable or gone), read without following a link out or blocking on a FIFO.
  const readLock = readInsideRepo(root, lockFile).pipe(Effect.map((text) => text ?? ""), Effect.orElseSucceed(() => ""))
  const removeLock = removeInsideRepo(root, lockFile).pipe(Effect.ignore)
  const acquire = Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const token = JSON.stringify({ pid: process.pid, host, at: now })
      // Created exclusively inside the repository, never through a link.
      const created = yield* createInsideRepo(root, lockFile, token).pipe(
        Effect.mapError((error) => persistError(`cannot create lock file ${lockFile}: ${error.message}`))
      )
      if (created) return token
      const holder = yield* readLock
      let owner: { pid?: unknown; host?: unknown; at?: unknown } = {}
      try {
        owner = JSON.parse(holder) as typeof owner
      } catch {
        owner = {}
      }
      const pid = typeof owner.pid === "number" ? owner.pid : undefined
      const at = typeof owner.at === "number" ? owner.at : 0
      const deadOwner = pid !== undefined && owner.host === host && !processAlive(pid)
      if (deadOwner || now - at > staleLockMs) {
        // Taken over only if it still holds the same content we judged stale.
        if ((yield* readLock) === holder) yield* removeLock
        continue
      }
      if (now - start >= lockTimeoutMs) {
        const who = pid === undefined ? "another process" : `process ${pid}${owner.host === host ? "" : ` on ${String(owner.host)}`}`
        return yield* Effect.fail(
          persistError(
            `${who} is saving tracker state (lock file ${lockFile}); try again, or delete the lock file if no Strata process is running`
          )
        )
      }
      yield* Effect.sleep(15)
    }
  })

  const release = (token: string) =>
    Effect.gen(function* () {
      if ((yield* readLock) === token) yield* removeLock
    })
  return { acquire, release }
}

/**
 * A `Tracker` persisted under `<repoRoot>/.strata/`. On start it loads the file; a
 * corrupt, truncated or foreign-version file is reported (logged warning and
 * `onWarning`), copied to `<file>.bad`, and the tracker starts empty. Each commit, under
 * a lock file held for milliseconds, re-reads the file if another process replaced it
 * and fails with `TrackerConflict` when the snapshot was derived from an older version;
 * otherwise it writes a temporary file, syncs it and renames it over the old one.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tracker } from "@strata/core"
 * import { TrackerLayer } from "@strata/tiers"
 * const program = Effect.gen(function* () {
 *   const tracker = yield* Tracker
 *   const current = yield* tracker.current
 *   const { snapshot } = current.update({ items: [{ key: "file:src/a.ts", hash: "h", tokens: 50 }] })
 *   yield* tracker.commit(snapshot)
 * }).pipe(Effect.provide(TrackerLayer.persistent({ repoRoot: "." })))
 * ```
 */
export const makePersistentTracker = (options: PersistentTrackerOptions): Effect.Effect<TrackerService, InvalidInput | PathOutsideRepo> =>
  Effect.gen(function* () {
    const config = yield* configFrom(options.config)
    // Every read and write checks the path against the repository: a link out fails with PathOutsideRepo.
    const root = path.resolve(options.repoRoot)
    const file = path.join(root, ".strata", options.fileName ?? "tracker.json")
    const lockFile = `${file}.lock`
    const lockTimeoutMs = options.lockTimeoutMs ?? 5000
    const staleLockMs = options.staleLockMs ?? 30_000
    const host = os.hostname()
    const fresh = (): Committed => ({ tracker: StabilityTracker.make(configOf(config)), version: 0 })
    // The stamp of the file our memory reflects; a different stamp means someone else wrote it.
    let seen: Stamp | undefined

    const warn = (kind: TrackerStateWarning["kind"], detail: string, text: string | undefined) =>
      Effect.gen(function* () {
        let backup: string | undefined
        // Numbered copies (<file>.bad.1, .bad.2, ...): a later damaged file never overwrites an earlier one.
        if (text !== undefined) backup = yield* keepDamagedCopy(root, file, text).pipe(Effect.orElseSucceed(() => undefined))
        const message =
          `Tracker state ${file} is unusable (${kind}: ${detail}); starting from empty tiers` +
          (backup === undefined ? "." : `. The old file was copied to ${backup}.`)
        options.onWarning?.({ path: file, kind, message, backup })
        yield* Effect.logWarning(message)
      })

    /** Read the file if it changed since `seen`; undefined when it did not (or is missing). */
    const load = (fallback: Committed) =>
      Effect.gen(function* () {
        const stamp = yield* statOf(root, file)
        if (stamp === undefined || sameStamp(stamp, seen)) return undefined
        const read = yield* readInsideRepo(root, file).pipe(
          Effect.map((text) => ({ ok: true as const, text })),
          Effect.catchIf((error): error is Exclude<typeof error, PathOutsideRepo> => error._tag !== "PathOutsideRepo", (error) => Effect.succeed({ ok: false as const, error }))
        )
        seen = stamp
        if (!read.ok) {
          yield* warn("unreadable", read.error.message, undefined)
          return fallback
        }
        if (read.text === undefined) return undefined
        const decoded = decodeTrackerFile(read.text)
        if (decoded._tag === "Problem") {
          yield* warn(decoded.problem.kind, decoded.problem.detail, read.text)
          return fallback
        }
        const tracker = StabilityTracker.restore(config, {
          initialized: decoded.file.initialized,
          items: decoded.file.items,
          pending: decoded.file.pending
        })
        return { tracker, version: decoded.file.version }
      })

    const persistError = (reason: string) => new TrackerPersistError({ path: file, reason })

    const lock = fileLock(root, lockFile, { host, lockTimeoutMs, staleLockMs }, persistError)

    const store: Store = {
      // A link out appearing after start: reported like an unreadable file, memory kept.
      refresh: (mem) =>
        Effect.map(load(mem), (loaded) => loaded ?? mem).pipe(
          Effect.catchTag("PathOutsideRepo", (error) => Effect.as(warn("unreadable", error.message, undefined), mem))
        ),
      exclusive: (body) => Effect.acquireUseRelease(lock.acquire, () => body, lock.release),
      write: (next) =>
        Effect.gen(function* () {
          // Temporary file in the real directory (never through a link), synced, renamed over the file.
          yield* writeInsideRepo(root, file, encodeTrackerFile(next.tracker, next.version), { sync: true }).pipe(Effect.mapError((error) => persistError(error.message)))
          seen = yield* statOf(root, file).pipe(Effect.orElseSucceed(() => undefined))
        })
    }

    const initial = (yield* load(fresh())) ?? fresh()
    return makeService(config, store, initial)
  })

/** Options of the trackers whose state a `StateStore` holds. */
export interface StateTrackerOptions {
  readonly config?: StabilityTrackerConfig | undefined
}

/**
 * Core's `TrackerState`: trackers seeded from a stored JSON state (`encodeTrackerState`'s
 * value, or `null` for a new session), held in memory, their committed state given back
 * as JSON for the store's next commit. Nothing is written to disk: the store owns
 * persistence. State that does not decode (another schema version, damaged) starts an
 * empty tracker with a warning.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TrackerState } from "@strata/core"
 * import { makeTrackerState } from "@strata/tiers"
 * const program = Effect.gen(function* () {
 *   const states = yield* makeTrackerState({ config: { policy: "gated" } })
 *   const seeded = yield* states.seed(null)
 *   return yield* seeded.state // { format: "strata-tracker", version: 0, items: [], ... }
 * })
 * ```
 */
export const makeTrackerState = (options: StateTrackerOptions = {}): Effect.Effect<TrackerState["Service"], InvalidInput> =>
  Effect.map(configFrom(options.config), (config) => ({
    seed: (json) =>
      Effect.sync((): SeededTracker => {
        const decoded = json === null ? undefined : decodeTrackerState(json)
        const problem = decoded?._tag === "Problem" ? decoded.problem : undefined
        const initial: Committed = decoded?._tag === "File"
          ? { tracker: StabilityTracker.restore(config, decoded.file), version: decoded.file.version }
          : { tracker: StabilityTracker.make(configOf(config)), version: 0 }
        const { service, committed } = makeTracker(config, inMemory, initial)
        return {
          tracker: service,
          state: Effect.sync(() => {
            const c = committed()
            return encodeTrackerState(c.tracker, c.version)
          }),
          warnings: problem === undefined ? [] : [`The session's tracker state is unusable (${problem.kind}: ${problem.detail}); starting from empty tiers.`]
        }
      })
  }))

/**
 * Layers for core's `Tracker` service, each also providing `TrackerState` with the same
 * configuration: a turn whose session lives in a `StateStore` seeds its tracker from the
 * store (and writes no tracker file); other callers use the `Tracker` as before.
 *
 * - `memory`: state lives as long as the layer.
 * - `persistent`: state in `<repoRoot>/.strata/tracker.json`, compare-and-set between processes.
 * - `state`: only `TrackerState`, for sessions whose state a `StateStore` holds.
 *
 * @example
 * ```ts
 * import { TrackerLayer } from "@strata/tiers"
 * const inMemory = TrackerLayer.memory({ config: { policy: "flux" } })
 * const onDisk = TrackerLayer.persistent({ repoRoot: "/path/to/repo", config: { policy: "gated", cacheTargetTokens: 1126 } })
 * const inTheStore = TrackerLayer.state({ config: { policy: "flux" } })
 * ```
 */
export const TrackerLayer = {
  memory: (options: MemoryTrackerOptions = {}): Layer.Layer<Tracker | TrackerState, InvalidInput> =>
    Layer.mergeAll(Layer.effect(Tracker, makeMemoryTracker(options)), Layer.effect(TrackerState, makeTrackerState({ config: options.config }))),
  persistent: (options: PersistentTrackerOptions): Layer.Layer<Tracker | TrackerState, InvalidInput | PathOutsideRepo> =>
    Layer.mergeAll(Layer.effect(Tracker, makePersistentTracker(options)), Layer.effect(TrackerState, makeTrackerState({ config: options.config }))),
  state: (options: StateTrackerOptions = {}): Layer.Layer<TrackerState, InvalidInput> => Layer.effect(TrackerState, makeTrackerState(options))
} as const
